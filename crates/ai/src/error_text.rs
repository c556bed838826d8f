//! The error texts both HTTP callers (the chat driver in [`crate::http`] and the embeddings
//! client) write the same way: the human part of an error body, the `HTTP <code> <reason>:
//! <detail>` line, an error with its causes, the key and rate-limit hints, and excerpts.

use serde_json::Value;

use crate::error::ErrorKind;

/// The human part of an error body: `error.message`, `error` or `message`, then each of
/// `more_pointers` (JSON pointers), else the text itself; at most 500 bytes.
pub(crate) fn error_detail(body: &str, more_pointers: &[&str]) -> String {
    if let Ok(json) = serde_json::from_str::<Value>(body) {
        let found = json
            .pointer("/error/message")
            .or_else(|| json.get("error").filter(|e| e.is_string()))
            .or_else(|| json.get("message"))
            .or_else(|| more_pointers.iter().find_map(|p| json.pointer(p)))
            .and_then(Value::as_str);
        if let Some(text) = found {
            return excerpt(text, 500);
        }
    }
    excerpt(body.trim(), 500)
}

/// `<label>: HTTP <code>[ <reason>][: <detail>]`.
pub(crate) fn status_message(label: &str, status: reqwest::StatusCode, detail: &str) -> String {
    format!(
        "{label}: HTTP {}{}{}",
        status.as_u16(),
        status
            .canonical_reason()
            .map(|r| format!(" {r}"))
            .unwrap_or_default(),
        if detail.is_empty() {
            String::new()
        } else {
            format!(": {detail}")
        },
    )
}

/// The hint for a key or rate-limit failure, which every caller words the same; `None` for
/// other kinds. `no_key_vars` words the key hint for a provider with no key variables.
pub(crate) fn key_or_rate_hint(
    kind: &ErrorKind,
    key_provider: &str,
    no_key_vars: impl FnOnce() -> String,
) -> Option<String> {
    match kind {
        // Bedrock signs with the AWS credential chain unless it has an API key.
        ErrorKind::Auth if key_provider == "amazon-bedrock" => Some(
            "; check the AWS credentials (AWS_PROFILE, AWS_ACCESS_KEY_ID, …) and the model's access in the Bedrock console, or set AWS_BEARER_TOKEN_BEDROCK".into(),
        ),
        ErrorKind::Auth => {
            let vars = crate::env::api_key_vars(key_provider);
            Some(if vars.is_empty() {
                no_key_vars()
            } else {
                format!("; check the API key ({})", vars.join(" or "))
            })
        }
        ErrorKind::RateLimited {
            retry_after: Some(d),
        } => Some(format!("; rate limited, retry after {} s", d.as_secs_f64())),
        ErrorKind::RateLimited { retry_after: None } => {
            Some("; rate limited, try again later".into())
        }
        _ => None,
    }
}

/// `error` and each of its causes not already in the text, joined by `: `.
pub(crate) fn error_chain(error: &dyn std::error::Error) -> String {
    let mut out = error.to_string();
    let mut source = error.source();
    while let Some(e) = source {
        let text = e.to_string();
        if !out.contains(&text) {
            out.push_str(": ");
            out.push_str(&text);
        }
        source = e.source();
    }
    out
}

/// At most `max` bytes of `text`, cut at a character boundary.
pub(crate) fn excerpt(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_owned();
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &text[..end])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_detail_prefers_provider_message() {
        assert_eq!(
            error_detail(r#"{"error":{"message":"bad key","type":"x"}}"#, &[]),
            "bad key"
        );
        assert_eq!(error_detail(r#"{"error":"nope"}"#, &[]), "nope");
        assert_eq!(error_detail("  plain text ", &[]), "plain text");
        let array = r#"[{"error":{"message":"in an array"}}]"#;
        assert_eq!(error_detail(array, &[]), array);
        assert_eq!(error_detail(array, &["/0/error/message"]), "in an array");
        assert_eq!(excerpt("ééé", 3), "é…");
    }

    #[test]
    fn status_message_names_code_reason_and_detail() {
        let status = reqwest::StatusCode::UNAUTHORIZED;
        assert_eq!(
            status_message("openai/gpt", status, "bad key"),
            "openai/gpt: HTTP 401 Unauthorized: bad key"
        );
        let unknown = reqwest::StatusCode::from_u16(599).unwrap();
        assert_eq!(status_message("x", unknown, ""), "x: HTTP 599");
    }
}

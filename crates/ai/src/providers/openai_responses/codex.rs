//! The `openai-codex-responses` wire API: the Responses protocol as ChatGPT's Codex backend
//! speaks it, used with the access token of an openai-codex sign-in (pi-ai's
//! `openai-codex-responses.ts`). The stream decodes exactly like `openai-responses`; the
//! request differs:
//!
//! - `POST {baseUrl}/codex/responses`, base `https://chatgpt.com/backend-api`;
//! - the system prompt travels as `instructions`, not as a developer message;
//! - `store: false`, no `max_output_tokens` (the backend refuses it), `text.verbosity`
//!   `medium`, and `include: ["reasoning.encrypted_content"]` so reasoning survives turns;
//! - headers `chatgpt-account-id` (read from the token's JWT claims),
//!   `OpenAI-Beta: responses=experimental`, `originator: codex_cli_rs`, and `session_id`
//!   (the prompt-cache key) when the call has a session.

use serde_json::{Value, json};

use super::{decoder, request};
use crate::http::HttpCall;
use crate::model::{Model, apis};
use crate::options::StreamOptions;
use crate::providers::openai_shared::request_headers;
use crate::providers::{RequestInput, join_url};
use crate::types::Context;

/// The claim OpenAI puts its account data under, and the account id inside it.
const AUTH_CLAIM: &str = "https://api.openai.com/auth";
const ACCOUNT_ID_FIELD: &str = "chatgpt_account_id";
const ORIGINATOR: &str = "codex_cli_rs";
const LOGIN_HINT: &str = "run `pincer auth login openai-codex`";

wire_api! {
    /// The `openai-codex-responses` wire API. Only the request differs from
    /// `openai-responses`; the stream decodes the same.
    OpenAiCodexResponses: apis::OPENAI_CODEX_RESPONSES => build_request, decoder::Decoder::new
}

/// The key must be a ChatGPT sign-in whose token names the account; the Codex headers
/// replace any the model or caller set.
fn build_request(input: RequestInput<'_>) -> Result<HttpCall, String> {
    let token = input.api_key.filter(|k| !k.is_empty()).ok_or_else(|| {
        format!(
            "{} needs a ChatGPT sign-in: {LOGIN_HINT}",
            input.model.provider
        )
    })?;
    let account_id = chatgpt_account_id(token).ok_or_else(|| {
        format!(
            "the {} access token names no ChatGPT account; {LOGIN_HINT} again",
            input.model.provider
        )
    })?;
    let mut headers = request_headers(input.model, input.context, input.options, Some(token));
    let mut set = |name: &str, value: String| {
        headers.retain(|(n, _)| !n.eq_ignore_ascii_case(name));
        headers.push((name.to_owned(), value));
    };
    set("chatgpt-account-id", account_id);
    set("OpenAI-Beta", "responses=experimental".to_owned());
    set("originator", ORIGINATOR.to_owned());
    if let Some(session) = input
        .options
        .session_id
        .as_deref()
        .filter(|s| !s.is_empty())
    {
        set("session_id", session.to_owned());
    }
    Ok(HttpCall::sse(
        codex_url(&input.model.base_url),
        headers,
        codex_body(input.model, input.context, input.options),
    ))
}

/// `{base}/codex/responses`, also when the base already ends in `/codex`.
fn codex_url(base: &str) -> String {
    let base = base.trim_end_matches('/');
    if base.ends_with("/codex") {
        join_url(base, "responses")
    } else {
        join_url(base, "codex/responses")
    }
}

/// The openai-responses body, reshaped for the Codex backend.
fn codex_body(model: &Model, context: &Context, options: &StreamOptions) -> Value {
    let mut body = request::build_body(model, context, options);
    let Some(fields) = body.as_object_mut() else {
        return body;
    };
    let prompt = context
        .system_prompt
        .as_deref()
        .filter(|p| !p.is_empty())
        .unwrap_or_default();
    // build_body puts a non-empty system prompt first in `input`; here it is `instructions`.
    if !prompt.is_empty()
        && let Some(Value::Array(input)) = fields.get_mut("input")
        && input.first().and_then(|i| i.get("content")) == Some(&json!(prompt))
    {
        input.remove(0);
    }
    fields.insert("instructions".into(), json!(prompt));
    fields.insert("store".into(), json!(false));
    fields.remove("max_output_tokens");
    fields.remove("prompt_cache_retention");
    fields.insert("text".into(), json!({"verbosity": "medium"}));
    fields.insert("include".into(), json!(["reasoning.encrypted_content"]));
    body
}

/// The ChatGPT account id in an access token's (unverified) JWT payload.
fn chatgpt_account_id(token: &str) -> Option<String> {
    let mut parts = token.split('.');
    let (Some(_), Some(payload), Some(_), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return None;
    };
    let claims: Value = serde_json::from_slice(&base64url_decode(payload)?).ok()?;
    claims
        .get(AUTH_CLAIM)?
        .get(ACCOUNT_ID_FIELD)?
        .as_str()
        .filter(|id| !id.is_empty())
        .map(str::to_owned)
}

/// Decodes base64url with or without padding; `None` on any other character. Small enough
/// to keep a base64 dependency out of this crate for one JWT field.
fn base64url_decode(text: &str) -> Option<Vec<u8>> {
    let digits = text.trim_end_matches('=');
    let mut out = Vec::with_capacity(digits.len() * 3 / 4);
    let mut buffer = 0u32;
    let mut bits = 0u32;
    for byte in digits.bytes() {
        let value = match byte {
            b'A'..=b'Z' => byte - b'A',
            b'a'..=b'z' => byte - b'a' + 26,
            b'0'..=b'9' => byte - b'0' + 52,
            b'-' => 62,
            b'_' => 63,
            _ => return None,
        };
        buffer = (buffer << 6) | u32::from(value);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push(((buffer >> bits) & 0xff) as u8);
        }
    }
    // One leftover digit (6 bits) cannot come from whole bytes.
    (bits < 6).then_some(out)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use crate::http::Framing;
    use crate::test_support::{model, try_request};
    use crate::types::{Message, ThinkingLevel, Tool};

    /// An unsigned JWT whose payload is `claims` (base64url by hand, mirroring the decoder).
    fn jwt(claims: &Value) -> String {
        const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
        let bytes = claims.to_string().into_bytes();
        let mut encoded = String::new();
        for chunk in bytes.chunks(3) {
            let n = chunk
                .iter()
                .enumerate()
                .fold(0u32, |acc, (i, b)| acc | (u32::from(*b) << (16 - 8 * i)));
            for i in 0..=chunk.len() {
                encoded.push(ALPHABET[((n >> (18 - 6 * i)) & 63) as usize] as char);
            }
        }
        format!("eyJhbGciOiJub25lIn0.{encoded}.sig")
    }

    fn token() -> String {
        jwt(&json!({AUTH_CLAIM: {ACCOUNT_ID_FIELD: "acct-123"}, "exp": 1}))
    }

    fn codex_model(extra: Value) -> Model {
        model(
            apis::OPENAI_CODEX_RESPONSES,
            "openai-codex",
            "https://chatgpt.com/backend-api",
            extra,
        )
    }

    fn context() -> Context {
        Context {
            system_prompt: Some("You are Pincer.".into()),
            messages: vec![Message::user("hi")],
            tools: vec![],
        }
    }

    #[test]
    fn request_is_exact() {
        let m = codex_model(json!({"reasoning": true}));
        let options = StreamOptions {
            max_tokens: Some(4096),
            reasoning: Some(ThinkingLevel::Low),
            session_id: Some("sess-1".into()),
            ..StreamOptions::default()
        };
        let token = token();
        let call = try_request(
            &OpenAiCodexResponses,
            &m,
            &context(),
            &options,
            Some(&token),
        )
        .unwrap();
        assert_eq!(call.url, "https://chatgpt.com/backend-api/codex/responses");
        assert!(matches!(call.framing, Framing::Sse));
        let header = |name: &str| {
            call.headers
                .iter()
                .filter(|(n, _)| n.eq_ignore_ascii_case(name))
                .map(|(_, v)| v.as_str())
                .collect::<Vec<_>>()
        };
        assert_eq!(header("authorization"), [format!("Bearer {token}")]);
        assert_eq!(header("chatgpt-account-id"), ["acct-123"]);
        assert_eq!(header("openai-beta"), ["responses=experimental"]);
        assert_eq!(header("originator"), ["codex_cli_rs"]);
        assert_eq!(header("session_id"), ["sess-1"]);
        assert_eq!(header("accept"), ["text/event-stream"]);
        assert_eq!(
            call.body,
            json!({
                "model": "gpt-test",
                "stream": true,
                "store": false,
                "instructions": "You are Pincer.",
                "prompt_cache_key": "sess-1",
                "reasoning": {"effort": "low", "summary": "auto"},
                "include": ["reasoning.encrypted_content"],
                "text": {"verbosity": "medium"},
                "input": [{"role": "user", "content": [{"type": "input_text", "text": "hi"}]}],
            })
        );
    }

    #[test]
    fn tools_stay_and_an_empty_prompt_is_empty_instructions() {
        let m = codex_model(json!({"baseUrl": "http://127.0.0.1:9/backend-api/codex/"}));
        let mut ctx = context();
        ctx.system_prompt = None;
        ctx.tools = vec![Tool {
            name: "read".into(),
            description: "Read a file".into(),
            parameters: json!({"type": "object", "properties": {}}),
        }];
        let call = try_request(
            &OpenAiCodexResponses,
            &m,
            &ctx,
            &StreamOptions::default(),
            Some(&token()),
        )
        .unwrap();
        assert_eq!(call.url, "http://127.0.0.1:9/backend-api/codex/responses");
        assert_eq!(call.body["instructions"], "");
        assert_eq!(call.body["tools"][0]["name"], "read");
        assert_eq!(call.body["input"].as_array().unwrap().len(), 1);
        assert!(!call.headers.iter().any(|(n, _)| n == "session_id"));
    }

    #[test]
    fn a_missing_or_foreign_token_is_a_clear_error() {
        let m = codex_model(json!({}));
        let build = |key: Option<&str>| {
            try_request(
                &OpenAiCodexResponses,
                &m,
                &context(),
                &StreamOptions::default(),
                key,
            )
            .unwrap_err()
        };
        assert_eq!(
            build(None),
            "openai-codex needs a ChatGPT sign-in: run `pincer auth login openai-codex`"
        );
        assert_eq!(build(Some("")), build(None));
        let foreign = "the openai-codex access token names no ChatGPT account; run `pincer auth login openai-codex` again";
        for key in [
            "sk-plain-api-key".to_owned(),
            "a.b".to_owned(),
            "a.b.c.d".to_owned(),
            "a.!!.c".to_owned(),
            "a.W10.c".to_owned(),
            jwt(&json!({"sub": "x"})),
            jwt(&json!({AUTH_CLAIM: {ACCOUNT_ID_FIELD: ""}})),
            jwt(&json!({AUTH_CLAIM: {ACCOUNT_ID_FIELD: 7}})),
        ] {
            assert_eq!(build(Some(&key)), foreign, "{key}");
        }
    }

    #[test]
    fn base64url_decodes_padded_and_unpadded_and_refuses_junk() {
        assert_eq!(base64url_decode("aGk").unwrap(), b"hi");
        assert_eq!(base64url_decode("aGk=").unwrap(), b"hi");
        assert_eq!(base64url_decode("_-8").unwrap(), [0xff, 0xef]);
        assert_eq!(base64url_decode("").unwrap(), b"");
        assert_eq!(base64url_decode("a"), None);
        assert_eq!(base64url_decode("aG+k"), None);
        assert_eq!(base64url_decode("aG k"), None);
    }
}

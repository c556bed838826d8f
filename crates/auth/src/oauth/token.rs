//! The token endpoint: posting a form (code exchange or refresh) and parsing its answer.
//! Answers are read up to 64 KiB and checked field by field; a malformed answer is a typed
//! error that describes what is wrong without quoting any token.

use std::time::Duration;

use serde_json::Value;

use super::OAuthError;
use crate::secret::Secret;

/// Token answers larger than this are refused (real ones are a few KiB).
const MAX_ANSWER_BYTES: usize = 64 * 1024;
/// Error descriptions are cut to this many characters before they reach a message.
const MAX_DESCRIPTION_CHARS: usize = 200;
/// `expires_in` above ten years is not a lifetime any server means.
const MAX_EXPIRES_IN_SECS: u64 = 10 * 365 * 24 * 3600;

/// The tokens a token endpoint granted. `Debug` is derived: both tokens are [`Secret`]s.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TokenGrant {
    pub access: Secret,
    /// `None` when a refresh answer kept the old refresh token (RFC 6749 §6 allows it).
    pub refresh: Option<Secret>,
    /// When `access` expires, epoch ms.
    pub expires: u64,
}

/// Parses a success answer: `access_token` (non-empty string), `refresh_token` (string,
/// optional), `expires_in` (seconds, a positive number); the expiry is `now_ms +
/// expires_in`.
pub fn parse_token_response(body: &[u8], now_ms: u64) -> Result<TokenGrant, OAuthError> {
    let malformed = |what: &str| OAuthError::MalformedTokenResponse(what.to_owned());
    let value: Value = serde_json::from_slice(body).map_err(|_| malformed("not JSON"))?;
    let Value::Object(fields) = value else {
        return Err(malformed("not a JSON object"));
    };
    let access = match fields.get("access_token") {
        Some(Value::String(s)) if !s.is_empty() => Secret::new(s.clone()),
        Some(_) => return Err(malformed("access_token is not a non-empty string")),
        None => return Err(malformed("access_token is missing")),
    };
    let refresh = match fields.get("refresh_token") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) if !s.is_empty() => Some(Secret::new(s.clone())),
        Some(_) => return Err(malformed("refresh_token is not a non-empty string")),
    };
    let expires_in = fields
        .get("expires_in")
        .ok_or_else(|| malformed("expires_in is missing"))?
        .as_f64()
        .filter(|secs| secs.is_finite() && *secs > 0.0)
        .ok_or_else(|| malformed("expires_in is not a positive number"))?;
    // Whole milliseconds; bounded so the sum cannot overflow.
    let expires_in_ms = (expires_in.min(MAX_EXPIRES_IN_SECS as f64) * 1000.0) as u64;
    Ok(TokenGrant {
        access,
        refresh,
        expires: now_ms.saturating_add(expires_in_ms),
    })
}

/// The `(code, description)` of an error answer, in either shape seen in the wild:
/// RFC 6749's `{"error":"invalid_grant","error_description":"…"}` or OpenAI's
/// `{"error":{"code":"refresh_token_reused","message":"…"}}`. Anything else gives `(None,
/// None)`.
pub fn parse_token_error(body: &[u8]) -> (Option<String>, Option<String>) {
    let Ok(Value::Object(fields)) = serde_json::from_slice::<Value>(body) else {
        return (None, None);
    };
    let text = |v: Option<&Value>| {
        v.and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .map(|s| s.chars().take(MAX_DESCRIPTION_CHARS).collect::<String>())
    };
    match fields.get("error") {
        Some(Value::String(_)) => (
            text(fields.get("error")),
            text(fields.get("error_description")),
        ),
        Some(Value::Object(inner)) => (
            text(inner.get("code")).or_else(|| text(inner.get("type"))),
            text(inner.get("message")),
        ),
        _ => (None, None),
    }
}

/// An answer of the token endpoint: status and (bounded) body.
pub(crate) struct TokenAnswer {
    pub status: u16,
    pub body: Vec<u8>,
}

/// Posts `form` (URL-encoded) to `url` and reads the answer.
pub(crate) async fn post_form(
    http: &reqwest::Client,
    url: &str,
    form: &[(&str, &str)],
    timeout: Duration,
) -> Result<TokenAnswer, OAuthError> {
    let body = url::form_urlencoded::Serializer::new(String::new())
        .extend_pairs(form)
        .finish();
    let network = |source: reqwest::Error| OAuthError::Network {
        url: url.to_owned(),
        source: source.without_url(),
    };
    let mut response = http
        .post(url)
        .header(
            reqwest::header::CONTENT_TYPE,
            "application/x-www-form-urlencoded",
        )
        .header(reqwest::header::ACCEPT, "application/json")
        .timeout(timeout)
        .body(body)
        .send()
        .await
        .map_err(network)?;
    let status = response.status().as_u16();
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(network)? {
        if body.len() + chunk.len() > MAX_ANSWER_BYTES {
            return Err(OAuthError::MalformedTokenResponse(
                "the answer is larger than 64 KiB".into(),
            ));
        }
        body.extend_from_slice(&chunk);
    }
    Ok(TokenAnswer { status, body })
}

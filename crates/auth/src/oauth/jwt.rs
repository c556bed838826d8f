//! Reading claims from a JWT access token without verifying it: the token came straight
//! from the token endpoint over TLS, and Pincer only reads which account it is for (the
//! provider verifies the signature when the token is used). Malformed tokens are errors,
//! never panics; errors never quote the token.

use base64::Engine as _;
use base64::engine::general_purpose::{URL_SAFE, URL_SAFE_NO_PAD};
use serde_json::{Map, Value};

/// The claim OpenAI puts its account data under.
pub const OPENAI_AUTH_CLAIM: &str = "https://api.openai.com/auth";
/// The ChatGPT account id inside [`OPENAI_AUTH_CLAIM`].
const ACCOUNT_ID_FIELD: &str = "chatgpt_account_id";
/// Tokens longer than this are refused before decoding (real ones are a few KiB).
const MAX_TOKEN_BYTES: usize = 64 * 1024;

/// Why a token's claims cannot be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum JwtError {
    #[error("not a JWT (expected three dot-separated parts)")]
    NotAJwt,
    #[error("the token is longer than 64 KiB")]
    TooLong,
    #[error("the JWT payload is not base64url")]
    BadBase64,
    #[error("the JWT payload is not a JSON object")]
    NotAnObject,
    #[error(
        "the token has no ChatGPT account id (claim \"https://api.openai.com/auth\".chatgpt_account_id)"
    )]
    MissingAccountId,
}

/// The payload (claims) of a JWT, unverified.
pub fn decode_jwt_payload(token: &str) -> Result<Map<String, Value>, JwtError> {
    if token.len() > MAX_TOKEN_BYTES {
        return Err(JwtError::TooLong);
    }
    let parts: Vec<&str> = token.split('.').collect();
    let [_, payload, _] = parts.as_slice() else {
        return Err(JwtError::NotAJwt);
    };
    if payload.is_empty() {
        return Err(JwtError::NotAJwt);
    }
    // Encoders differ on padding; accept both.
    let bytes = URL_SAFE_NO_PAD
        .decode(payload)
        .or_else(|_| URL_SAFE.decode(payload))
        .map_err(|_| JwtError::BadBase64)?;
    match serde_json::from_slice::<Value>(&bytes) {
        Ok(Value::Object(claims)) => Ok(claims),
        _ => Err(JwtError::NotAnObject),
    }
}

/// The ChatGPT account id of an openai-codex access token (pi-ai's
/// `getChatgptAccountIdFromAccessToken`).
pub fn chatgpt_account_id(access_token: &str) -> Result<String, JwtError> {
    decode_jwt_payload(access_token)?
        .get(OPENAI_AUTH_CLAIM)
        .and_then(|auth| auth.get(ACCOUNT_ID_FIELD))
        .and_then(Value::as_str)
        .filter(|id| !id.is_empty())
        .map(str::to_owned)
        .ok_or(JwtError::MissingAccountId)
}

//! Sending one embedding request: POST with a timeout, retries of retryable failures (429,
//! 5xx, network) honouring `Retry-After` / `retry-after-ms` like the chat driver, error
//! classification with [`classify_status`], a cap on the answer's size, and the API key
//! scrubbed from every message (servers sometimes echo it back).

use std::time::Duration;

use futures_util::StreamExt;
use tokio_util::sync::CancellationToken;

use super::wire::EmbedCall;
use super::{EmbeddingConfig, EmbeddingError};
use crate::error::{ErrorKind, classify_status};
use crate::error_text::{error_chain, error_detail, key_or_rate_hint, status_message};
use crate::http::retry_after;
use crate::options::NoRetry;

/// Largest answer accepted: 2048 vectors of 3072 numbers in JSON text is about 130 MB.
const MAX_ANSWER_BYTES: usize = 256 * 1024 * 1024;
/// Largest error body read.
const MAX_ERROR_BYTES: usize = 64 * 1024;

/// Sends `call` and returns the body of a successful answer.
pub(super) async fn send(
    http: &reqwest::Client,
    config: &EmbeddingConfig,
    label: &str,
    call: EmbedCall,
    cancel: &CancellationToken,
) -> Result<Vec<u8>, EmbeddingError> {
    let scrub = |message: String| {
        scrub_key(
            message,
            config.api_key.as_ref().map(pincer_base::Secret::expose),
        )
    };
    let body = serde_json::to_vec(&call.body).map_err(|e| {
        EmbeddingError::new(
            ErrorKind::Config,
            format!("{label}: cannot encode request: {e}"),
        )
    })?;
    let timeout = config.timeout.unwrap_or(EmbeddingConfig::DEFAULT_TIMEOUT);
    let policy = &config.retry;
    let aborted = || {
        EmbeddingError::new(
            ErrorKind::Aborted,
            format!("{label}: embedding request aborted"),
        )
    };
    let mut attempt = 0u32;
    loop {
        let mut request = http
            .post(&call.url)
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .body(body.clone());
        for (name, value) in &call.headers {
            request = request.header(name, value);
        }
        let outcome = tokio::select! {
            biased;
            () = cancel.cancelled() => return Err(aborted()),
            outcome = tokio::time::timeout(timeout, attempt_once(request, label, &call.url)) => outcome,
        };
        let (kind, message, retry_after) = match outcome {
            Ok(Ok(body)) => return Ok(body),
            Ok(Err(failure)) => failure,
            Err(_) => (
                ErrorKind::Timeout,
                format!("{label}: no answer within {} s", timeout.as_secs_f64()),
                None,
            ),
        };
        let message = scrub(message);
        let hint = || hint(&kind, config);
        match policy
            .wait_after_failure(attempt, &kind, retry_after, &message, hint, label, cancel)
            .await
        {
            Ok(()) => attempt += 1,
            Err(NoRetry::GiveUp(message)) => return Err(EmbeddingError::new(kind, message)),
            Err(NoRetry::Cancelled) => return Err(aborted()),
        }
    }
}

type Failure = (ErrorKind, String, Option<Duration>);

/// One try: the answer's body, or what went wrong and how long the server asked to wait.
async fn attempt_once(
    request: reqwest::RequestBuilder,
    label: &str,
    url: &str,
) -> Result<Vec<u8>, Failure> {
    let response = request.send().await.map_err(|e| {
        let kind = if e.is_timeout() {
            ErrorKind::Timeout
        } else {
            ErrorKind::Network
        };
        let shown = url.split('?').next().unwrap_or(url);
        (
            kind,
            format!(
                "{label}: cannot reach {shown} ({}); check the base URL and your network",
                error_chain(&e)
            ),
            None,
        )
    })?;
    let status = response.status();
    if status.is_success() {
        return read_body(response, MAX_ANSWER_BYTES)
            .await
            .map_err(|e| match e {
                BodyError::TooLarge => (
                    ErrorKind::Protocol,
                    format!(
                        "{label}: the answer is larger than {} MB",
                        MAX_ANSWER_BYTES >> 20
                    ),
                    None,
                ),
                BodyError::Broken(text) => (
                    ErrorKind::Network,
                    format!(
                        "{label}: connection lost while reading the answer ({text}); try again"
                    ),
                    None,
                ),
            });
    }
    let retry_after = retry_after(response.headers());
    let text = match read_body(response, MAX_ERROR_BYTES).await {
        Ok(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
        Err(_) => String::new(),
    };
    let kind = classify_status(status.as_u16(), &text, retry_after);
    let detail = error_detail(&text, &[]);
    let message = status_message(label, status, &detail);
    Err((kind, message, retry_after))
}

enum BodyError {
    TooLarge,
    Broken(String),
}

async fn read_body(response: reqwest::Response, limit: usize) -> Result<Vec<u8>, BodyError> {
    let mut stream = response.bytes_stream();
    let mut bytes = Vec::new();
    while let Some(chunk) = stream.next().await {
        let chunk = chunk.map_err(|e| BodyError::Broken(error_chain(&e)))?;
        if bytes.len() + chunk.len() > limit {
            return Err(BodyError::TooLarge);
        }
        bytes.extend_from_slice(&chunk);
    }
    Ok(bytes)
}

fn hint(kind: &ErrorKind, config: &EmbeddingConfig) -> String {
    if let Some(hint) = key_or_rate_hint(kind, config.provider.key_provider(), || {
        "; check the API key of the embedding provider".into()
    }) {
        return hint;
    }
    match kind {
        ErrorKind::BadRequest => "; check the embedding model name and settings".into(),
        _ => String::new(),
    }
}

/// Replaces every occurrence of the key in `message`.
fn scrub_key(message: String, key: Option<&str>) -> String {
    match key {
        Some(key) if key.len() >= 4 => message.replace(key, "<redacted>"),
        _ => message,
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;

    #[test]
    fn keys_are_scrubbed() {
        assert_eq!(
            scrub_key("bad key sk-secret-1 given".into(), Some("sk-secret-1")),
            "bad key <redacted> given"
        );
        assert_eq!(scrub_key("abc abc".into(), Some("abc")), "abc abc");
        assert_eq!(scrub_key("abc".into(), None), "abc");
    }
}

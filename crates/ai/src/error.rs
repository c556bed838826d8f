//! Typed failures of an LLM call. Every stream failure is also delivered as an `error` event
//! whose message names the provider, the model and what the user can do about it.

use std::time::Duration;

/// What kind of failure ended a stream (drives retry, compaction and user messages).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ErrorKind {
    /// HTTP 429: too many requests. `retry_after` is what the server asked for.
    RateLimited { retry_after: Option<Duration> },
    /// HTTP 401/403 or no API key at all.
    Auth,
    /// HTTP 400/404/422 that is not a context overflow: the request itself is wrong.
    BadRequest,
    /// The prompt does not fit the model's context window.
    ContextOverflow,
    /// The provider is overloaded (HTTP 529, 503, or an `overloaded_error`).
    Overloaded,
    /// Any other HTTP 5xx.
    Server,
    /// Connection refused, reset, DNS, TLS, a dropped stream.
    Network,
    /// No data arrived for longer than the idle timeout.
    Timeout,
    /// The server sent something that is not the protocol (bad SSE, bad JSON, wrong content type).
    Protocol,
    /// The caller cancelled the request.
    Aborted,
    /// The provider refused or filtered the content (content_filter, refusal, safety).
    Refused,
    /// Pincer cannot even send the request (unknown API, bad model config).
    Config,
}

impl ErrorKind {
    /// Whether sending the same request again may succeed.
    pub fn is_retryable(&self) -> bool {
        matches!(
            self,
            Self::RateLimited { .. }
                | Self::Overloaded
                | Self::Server
                | Self::Network
                | Self::Timeout
        )
    }

    /// Short machine-readable name, used in logs and RPC payloads.
    pub fn code(&self) -> &'static str {
        match self {
            Self::RateLimited { .. } => "rate_limited",
            Self::Auth => "auth",
            Self::BadRequest => "bad_request",
            Self::ContextOverflow => "context_overflow",
            Self::Overloaded => "overloaded",
            Self::Server => "server",
            Self::Network => "network",
            Self::Timeout => "timeout",
            Self::Protocol => "protocol",
            Self::Aborted => "aborted",
            Self::Refused => "refused",
            Self::Config => "config",
        }
    }
}

/// A failed LLM call: its kind and a message a user can act on. The partial reply (whatever
/// streamed before the failure) is kept so nothing is lost.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{message}")]
pub struct AiError {
    pub kind: ErrorKind,
    pub message: String,
    pub partial: Box<crate::types::AssistantMessage>,
}

/// Classify an HTTP error response by status and body text.
pub(crate) fn classify_status(status: u16, body: &str, retry_after: Option<Duration>) -> ErrorKind {
    let lower = body.to_ascii_lowercase();
    if is_context_overflow(&lower) {
        return ErrorKind::ContextOverflow;
    }
    match status {
        401 | 403 => ErrorKind::Auth,
        429 => ErrorKind::RateLimited { retry_after },
        529 => ErrorKind::Overloaded,
        503 if lower.contains("overload") => ErrorKind::Overloaded,
        500..=599 => ErrorKind::Server,
        _ if lower.contains("overloaded") => ErrorKind::Overloaded,
        _ => ErrorKind::BadRequest,
    }
}

/// The phrases providers use when a prompt is too long (pi's `isContextOverflow`).
pub(crate) fn is_context_overflow(lower_body: &str) -> bool {
    const PATTERNS: &[&str] = &[
        "prompt is too long",
        "context_length_exceeded",
        "context length exceeded",
        "maximum context length",
        "exceeds the context window",
        "input is too long",
        "too many tokens",
        "exceeds the maximum number of tokens",
        "request too large",
        "context window",
    ];
    PATTERNS.iter().any(|p| lower_body.contains(p))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses_map_to_kinds() {
        assert_eq!(classify_status(401, "", None), ErrorKind::Auth);
        assert_eq!(
            classify_status(429, "", Some(Duration::from_secs(2))),
            ErrorKind::RateLimited {
                retry_after: Some(Duration::from_secs(2))
            }
        );
        assert_eq!(classify_status(529, "", None), ErrorKind::Overloaded);
        assert_eq!(
            classify_status(503, "Overloaded", None),
            ErrorKind::Overloaded
        );
        assert_eq!(classify_status(502, "bad gateway", None), ErrorKind::Server);
        assert_eq!(
            classify_status(
                400,
                r#"{"error":{"message":"prompt is too long: 250000 tokens"}}"#,
                None
            ),
            ErrorKind::ContextOverflow
        );
        assert_eq!(
            classify_status(400, "bad field", None),
            ErrorKind::BadRequest
        );
        assert!(ErrorKind::Server.is_retryable());
        assert!(!ErrorKind::Auth.is_retryable());
    }
}

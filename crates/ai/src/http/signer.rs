//! Per-attempt request signing for the HTTP driver: APIs that authenticate each request
//! over its exact bytes (AWS SigV4) rather than with a fixed key header plug a
//! [`RequestSigner`] into the [`HttpCall`](super::HttpCall). The driver signs every attempt
//! afresh (a retry after a wait gets a new timestamp) and, when the server refuses the
//! credentials, lets the signer refresh them once before giving up.

use futures_util::future::BoxFuture;

use crate::error::ErrorKind;

/// Why a request could not be signed (no credentials, a credential source that failed).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct SignError {
    pub kind: ErrorKind,
    pub message: String,
}

impl SignError {
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        Self {
            kind,
            message: message.into(),
        }
    }
}

/// Authenticates each attempt of a request.
pub trait RequestSigner: Send + Sync + std::fmt::Debug {
    /// The headers that authenticate one `POST url` whose body is `body` (the exact bytes
    /// sent) and whose other headers are `headers`.
    fn sign<'a>(
        &'a self,
        url: &'a str,
        headers: &'a [(String, String)],
        body: &'a [u8],
    ) -> BoxFuture<'a, Result<Vec<(String, String)>, SignError>>;

    /// The server refused the credentials (HTTP `status`, 401 or 403, answering `body`):
    /// drop what is cached and fetch fresh credentials. True when that worked and the
    /// request should be signed and sent once more.
    fn refresh<'a>(&'a self, status: u16, body: &'a str) -> BoxFuture<'a, bool>;
}

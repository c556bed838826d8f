//! Downloading a file someone named by URL (an image for the model, one for the `image`
//! tool) without trusting the server: an explicit timeout for the whole exchange, a bounded
//! number of redirects, and a size cap checked against the declared length first and then
//! against the bytes as they arrive (a server may not declare it, or lie).

use std::time::Duration;

/// How a capped download may go.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FetchLimits {
    /// The most bytes taken.
    pub max_bytes: u64,
    /// The whole exchange, connecting to the last byte.
    pub timeout: Duration,
    pub max_redirects: usize,
}

/// Why a download failed.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum FetchError {
    #[error("no answer within {} s", .0.as_secs())]
    Timeout(Duration),
    #[error("{0}")]
    Failed(String),
    #[error("HTTP {0}")]
    Status(u16),
    /// Larger than the cap: `declared` is the length the server announced, if it did.
    #[error("larger than {limit} bytes")]
    TooLarge { declared: Option<u64>, limit: u64 },
}

/// The body of `GET url`, within `limits`.
pub async fn fetch_capped(url: &str, limits: FetchLimits) -> Result<Vec<u8>, FetchError> {
    let client = reqwest::Client::builder()
        .user_agent(concat!("pincer/", env!("CARGO_PKG_VERSION")))
        .timeout(limits.timeout)
        .redirect(reqwest::redirect::Policy::limited(limits.max_redirects))
        .build()
        .map_err(|e| FetchError::Failed(crate::error_text::error_chain(&e)))?;
    fetch_capped_with(&client, url, limits).await
}

/// [`fetch_capped`] on a client the caller built (one that checks where it connects, say);
/// `limits.timeout` bounds the whole exchange here, whatever the client's own settings, and
/// its redirect policy is the client's.
pub async fn fetch_capped_with(
    client: &reqwest::Client,
    url: &str,
    limits: FetchLimits,
) -> Result<Vec<u8>, FetchError> {
    match tokio::time::timeout(limits.timeout, fetch_body(client, url, limits)).await {
        Ok(result) => result,
        Err(_) => Err(FetchError::Timeout(limits.timeout)),
    }
}

async fn fetch_body(
    client: &reqwest::Client,
    url: &str,
    limits: FetchLimits,
) -> Result<Vec<u8>, FetchError> {
    let failed = |e: reqwest::Error| {
        if e.is_timeout() {
            FetchError::Timeout(limits.timeout)
        } else {
            FetchError::Failed(crate::error_text::error_chain(&e))
        }
    };
    let mut response = client.get(url).send().await.map_err(failed)?;
    let status = response.status();
    if !status.is_success() {
        return Err(FetchError::Status(status.as_u16()));
    }
    let limit = limits.max_bytes;
    if let Some(size) = response.content_length().filter(|size| *size > limit) {
        return Err(FetchError::TooLarge {
            declared: Some(size),
            limit,
        });
    }
    let mut bytes = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(failed)? {
        if (bytes.len() + chunk.len()) as u64 > limit {
            return Err(FetchError::TooLarge {
                declared: None,
                limit,
            });
        }
        bytes.extend_from_slice(&chunk);
    }
    Ok(bytes)
}

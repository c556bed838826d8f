//! The HTTP round trip every provider shares: one attempt bounded by the timeout (body
//! included) and a size cap, short 429 waits and one 5xx retried, and the status turned
//! into a [`SearchError`]. Redirects are not followed: Brave's key travels in a custom
//! header that an HTTP client does not strip when a redirect leaves the host.

use std::time::Duration;

use bytes::Bytes;
use reqwest::header::{HeaderMap, HeaderValue, RETRY_AFTER};
use reqwest::{Client, RequestBuilder, StatusCode};
use url::Url;

use super::{ProviderKind, SearchError, SearchOptions};

/// Largest answer body read (a Brave page with every extra is a few hundred KiB).
pub(crate) const MAX_BODY_BYTES: usize = 2 * 1024 * 1024;

/// A 429 that asks for at most this long is waited out here; longer waits are the model's.
pub(crate) const MAX_SHORT_WAIT: Duration = Duration::from_secs(5);

/// The pause before retrying a 5xx.
const SERVER_RETRY_PAUSE: Duration = Duration::from_millis(250);

/// Most characters of a provider's error message quoted in ours.
const DETAIL_MAX_CHARS: usize = 200;

/// One provider's client, limits and key (kept to redact it from quoted errors).
pub(crate) struct Transport {
    client: Client,
    provider: ProviderKind,
    timeout: Duration,
    max_retries: u32,
    key: String,
}

/// A status and body the provider answered with.
struct Answer {
    status: StatusCode,
    headers: HeaderMap,
    body: Bytes,
}

impl Transport {
    pub(crate) fn new(options: &SearchOptions, key: &str) -> Result<Self, SearchError> {
        let client = Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .connect_timeout(options.timeout.min(Duration::from_secs(10)))
            .user_agent(concat!("pincer/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| SearchError::Client(e.without_url().to_string()))?;
        Ok(Self {
            client,
            provider: options.provider,
            timeout: options.timeout,
            max_retries: options.max_retries,
            key: key.to_owned(),
        })
    }

    /// The key as a header value that debug output does not show.
    pub(crate) fn secret(&self, value: &str) -> Result<HeaderValue, SearchError> {
        let mut header = HeaderValue::from_str(value).map_err(|_| SearchError::MissingKey {
            provider: self.provider,
        })?;
        header.set_sensitive(true);
        Ok(header)
    }

    /// Sends the request `build` makes (once per attempt) and returns the 2xx body.
    pub(crate) async fn send(
        &self,
        build: impl Fn(&Client) -> RequestBuilder,
    ) -> Result<Bytes, SearchError> {
        let mut retries = 0;
        let mut server_retried = false;
        loop {
            let answer = match tokio::time::timeout(self.timeout, self.attempt(&build)).await {
                Ok(answer) => answer?,
                Err(_) => return Err(self.timed_out()),
            };
            let status = answer.status;
            if status.is_success() {
                return Ok(answer.body);
            }
            let detail = provider_detail(&answer.body, &self.key);
            let code = status.as_u16();
            let provider = self.provider;
            let quota_words = detail.to_ascii_lowercase();
            let quota = quota_words.contains("quota")
                || quota_words.contains("usage limit")
                || quota_words.contains("credit");
            let detail = if detail.is_empty() {
                String::new()
            } else {
                format!(", {detail:?}")
            };
            match code {
                429 if quota => {
                    return Err(SearchError::Quota {
                        provider,
                        status: code,
                        detail,
                    });
                }
                429 => {
                    let wait = retry_after(&answer.headers);
                    if let Some(wait) = wait.filter(|w| *w <= MAX_SHORT_WAIT)
                        && retries < self.max_retries
                    {
                        retries += 1;
                        tracing::debug!(provider = %provider, ?wait, "web_search: 429, waiting");
                        tokio::time::sleep(wait).await;
                        continue;
                    }
                    return Err(SearchError::RateLimited {
                        provider,
                        retry_after: wait,
                        detail,
                    });
                }
                401 | 403 => {
                    return Err(SearchError::KeyRefused {
                        provider,
                        status: code,
                        detail,
                    });
                }
                402 | 432 | 433 => {
                    return Err(SearchError::Quota {
                        provider,
                        status: code,
                        detail,
                    });
                }
                500..=599 => {
                    if !server_retried && retries < self.max_retries {
                        server_retried = true;
                        retries += 1;
                        tracing::debug!(provider = %provider, code, "web_search: server error, retrying");
                        tokio::time::sleep(SERVER_RETRY_PAUSE).await;
                        continue;
                    }
                    return Err(SearchError::Server {
                        provider,
                        status: code,
                        detail,
                    });
                }
                _ => {
                    return Err(SearchError::Rejected {
                        provider,
                        status: code,
                        detail,
                    });
                }
            }
        }
    }

    async fn attempt(
        &self,
        build: &impl Fn(&Client) -> RequestBuilder,
    ) -> Result<Answer, SearchError> {
        let mut response = build(&self.client)
            .timeout(self.timeout)
            .send()
            .await
            .map_err(|e| self.transport_error(&e))?;
        let status = response.status();
        let headers = response.headers().clone();
        if response
            .content_length()
            .is_some_and(|n| n > MAX_BODY_BYTES as u64)
        {
            return Err(self.too_large());
        }
        let mut body = Vec::new();
        while let Some(chunk) = response
            .chunk()
            .await
            .map_err(|e| self.transport_error(&e))?
        {
            if body.len() + chunk.len() > MAX_BODY_BYTES {
                return Err(self.too_large());
            }
            body.extend_from_slice(&chunk);
        }
        Ok(Answer {
            status,
            headers,
            body: body.into(),
        })
    }

    fn transport_error(&self, error: &reqwest::Error) -> SearchError {
        if error.is_timeout() {
            return self.timed_out();
        }
        let reason = if error.is_connect() {
            "the connection failed (is the address right and the service up?)".to_owned()
        } else {
            // Without the URL: the query string is the user's, and a base URL may carry
            // credentials in its user-info part.
            let mut text = error_chain(error);
            text.truncate(DETAIL_MAX_CHARS);
            text
        };
        SearchError::Unreachable {
            provider: self.provider,
            reason,
        }
    }

    fn timed_out(&self) -> SearchError {
        SearchError::Timeout {
            provider: self.provider,
            timeout: self.timeout,
        }
    }

    fn too_large(&self) -> SearchError {
        SearchError::TooLarge {
            provider: self.provider,
            limit: MAX_BODY_BYTES,
        }
    }
}

/// The error and its sources, without the URL reqwest puts in its own message.
fn error_chain(error: &reqwest::Error) -> String {
    use std::error::Error as _;
    let mut text = String::from("the request failed");
    let mut source = error.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

/// A `Retry-After` in seconds, else Brave's `X-RateLimit-Reset` (seconds until each of its
/// windows resets, the shortest first). An HTTP date is not worth a parser here: it means
/// "later", which is what `None` says too.
pub(crate) fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    let seconds = |value: &HeaderValue| -> Option<Duration> {
        let text = value.to_str().ok()?;
        let first = text.split(',').next()?.trim();
        first.parse::<u64>().ok().map(Duration::from_secs)
    };
    headers
        .get(RETRY_AFTER)
        .and_then(seconds)
        .or_else(|| headers.get("x-ratelimit-reset").and_then(seconds))
}

/// A provider's own error message out of its error body, short and without the key:
/// Brave's `error.detail` (+ `error.code`), Tavily's `detail.error` / `detail`, OpenAI-style
/// `error.message` (Perplexity), SearXNG's `error`. Anything else is not quoted: an HTML
/// error page says nothing useful to a model.
pub(crate) fn provider_detail(body: &[u8], key: &str) -> String {
    let Ok(json) = serde_json::from_slice::<serde_json::Value>(body) else {
        return String::new();
    };
    let error = &json["error"];
    let detail = &json["detail"];
    let message = text(&error["detail"])
        .map(|d| match text(&error["code"]) {
            Some(code) => format!("{code}: {d}"),
            None => d.to_owned(),
        })
        .or_else(|| text(&error["message"]).map(str::to_owned))
        .or_else(|| text(&detail["error"]).map(str::to_owned))
        .or_else(|| text(detail).map(str::to_owned))
        .or_else(|| text(error).map(str::to_owned))
        .or_else(|| text(&json["message"]).map(str::to_owned))
        .unwrap_or_default();
    let mut message = message.replace(['\n', '\r'], " ");
    if !key.is_empty() {
        message = message.replace(key, "[key]");
    }
    if message.chars().count() > DETAIL_MAX_CHARS {
        message = message.chars().take(DETAIL_MAX_CHARS).collect::<String>() + "…";
    }
    message
}

/// A non-blank JSON string, trimmed.
fn text(v: &serde_json::Value) -> Option<&str> {
    v.as_str().map(str::trim).filter(|s| !s.is_empty())
}

/// A configured base URL, checked: http(s) with a host. The API path is appended to it.
pub(crate) fn parse_base(raw: &str) -> Result<Url, SearchError> {
    let bad = || SearchError::BadBaseUrl {
        url: redact_userinfo(raw),
    };
    let url = Url::parse(raw.trim()).map_err(|_| bad())?;
    if !matches!(url.scheme(), "http" | "https") || url.host_str().is_none() {
        return Err(bad());
    }
    Ok(url)
}

/// `base` with `path` appended to its path (a proxy base may have one of its own).
pub(crate) fn endpoint(base: &Url, path: &str) -> Url {
    let mut url = base.clone();
    let joined = format!("{}{path}", base.path().trim_end_matches('/'));
    url.set_path(&joined);
    url.set_query(None);
    url.set_fragment(None);
    url
}

/// `scheme://host[:port]` of a URL (what status lines show: no user-info, path or query).
pub(crate) fn origin_of(raw: &str) -> String {
    match Url::parse(raw.trim()) {
        Ok(url) => match url.host_str() {
            Some(host) => match url.port() {
                Some(port) => format!("{}://{host}:{port}", url.scheme()),
                None => format!("{}://{host}", url.scheme()),
            },
            None => "(an invalid URL)".to_owned(),
        },
        Err(_) => "(an invalid URL)".to_owned(),
    }
}

/// `raw` without a `user:password@` part.
fn redact_userinfo(raw: &str) -> String {
    let Some((scheme, rest)) = raw.split_once("://") else {
        return raw.to_owned();
    };
    let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    match rest[..authority_end].rfind('@') {
        Some(at) => format!("{scheme}://…@{}", &rest[at + 1..]),
        None => raw.to_owned(),
    }
}

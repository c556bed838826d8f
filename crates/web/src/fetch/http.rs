//! The GET itself: a reqwest client whose DNS and redirects go through the SSRF policy (no
//! proxy from the environment, which would connect to addresses nobody checked), honest
//! headers, a connect timeout, one deadline for the whole exchange, and a body read chunk by
//! chunk up to a byte cap. A body cut by the cap or the deadline is kept and marked; a
//! response with no body before the deadline is an error.

use std::time::Duration;

use futures_util::StreamExt as _;
use reqwest::header::{ACCEPT, ACCEPT_LANGUAGE, CONTENT_TYPE, LOCATION};
use tokio::time::{Instant, timeout_at};
use url::Url;

use super::extract::{ContentKind, kind_of, media_type};
use crate::ssrf::{NetworkPolicy, find_ssrf_error};

/// The longest a connection may take to open (within the total timeout).
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// What web_fetch asks for: Markdown first (some sites serve it), then HTML, then anything.
const ACCEPT_VALUE: &str =
    "text/markdown, text/html;q=0.9, application/xhtml+xml;q=0.9, text/plain;q=0.8, */*;q=0.1";

/// A response as far as it was read.
#[derive(Debug)]
pub struct RawResponse {
    pub final_url: Url,
    pub status: u16,
    pub content_type: Option<String>,
    /// The Location of a redirect that was not followed (another scheme).
    pub location: Option<String>,
    pub body: Vec<u8>,
    /// Why the body is incomplete, when it is.
    pub cut: Option<Cut>,
}

/// Why a body was not read to its end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cut {
    /// It reached the byte cap.
    Size(u64),
    /// The deadline passed while it was still arriving.
    Time(Duration),
    /// The connection failed before the end.
    Broken,
}

impl Cut {
    /// Said in the result's header.
    pub fn describe(self) -> String {
        match self {
            Self::Size(cap) => {
                format!("the response was cut at {cap} bytes, the most web_fetch reads")
            }
            Self::Time(limit) => format!(
                "the response was still arriving after {} s and was cut there",
                limit.as_secs_f64()
            ),
            Self::Broken => "the connection failed before the response was complete".to_owned(),
        }
    }
}

/// Why the GET failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HttpError {
    #[error("{0}")]
    Refused(String),
    #[error("cannot fetch {url}: {reason}")]
    Failed { url: String, reason: String },
    #[error("no response from {url} within {} s", .limit.as_secs_f64())]
    Timeout { url: String, limit: Duration },
    #[error(
        "{url} is {media_type}, a binary type web_fetch does not read (it reads HTML, text, Markdown, JSON and PDF)"
    )]
    Binary { url: String, media_type: String },
    #[error("the web client could not be built: {0}")]
    Client(String),
}

/// Limits of one GET.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    pub timeout: Duration,
    pub max_bytes: u64,
    /// The cap for a PDF (bigger: a truncated PDF is unreadable).
    pub max_pdf_bytes: u64,
}

/// The client web_fetch uses under `policy`.
pub fn client(
    policy: &NetworkPolicy,
    user_agent: &str,
    timeout: Duration,
) -> Result<reqwest::Client, HttpError> {
    reqwest::Client::builder()
        .dns_resolver(policy.resolver())
        .redirect(policy.redirect_policy())
        .no_proxy()
        .connect_timeout(CONNECT_TIMEOUT.min(timeout))
        .user_agent(user_agent)
        .build()
        .map_err(|e| HttpError::Client(pincer_base::error_chain(&e)))
}

/// GETs `url` (already checked with `check_url`) within `limits`. The caller drops the
/// future when the call is aborted.
pub async fn get(
    client: &reqwest::Client,
    url: &Url,
    limits: Limits,
) -> Result<RawResponse, HttpError> {
    let deadline = Instant::now() + limits.timeout;
    let timed_out = || HttpError::Timeout {
        url: url.to_string(),
        limit: limits.timeout,
    };
    let request = client
        .get(url.clone())
        .header(ACCEPT, ACCEPT_VALUE)
        .header(ACCEPT_LANGUAGE, "en-US,en;q=0.9");
    let response = timeout_at(deadline, request.send())
        .await
        .map_err(|_| timed_out())?
        .map_err(|e| send_error(url, &e))?;
    let final_url = response.url().clone();
    let status = response.status().as_u16();
    let content_type = response
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let location = response
        .status()
        .is_redirection()
        .then(|| response.headers().get(LOCATION))
        .flatten()
        .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned());
    let kind = content_type.as_deref().map(|ct| kind_of(&media_type(ct)));
    let max_bytes = match kind {
        Some(ContentKind::Binary) if response.status().is_success() => {
            return Err(HttpError::Binary {
                url: final_url.to_string(),
                media_type: content_type.as_deref().map(media_type).unwrap_or_default(),
            });
        }
        Some(ContentKind::Pdf) => limits.max_pdf_bytes.max(limits.max_bytes),
        _ => limits.max_bytes,
    };
    let cap = usize::try_from(max_bytes).unwrap_or(usize::MAX);
    let mut body = Vec::new();
    let mut cut = None;
    let mut stream = response.bytes_stream();
    loop {
        match timeout_at(deadline, stream.next()).await {
            Err(_) => {
                cut = Some(Cut::Time(limits.timeout));
                break;
            }
            Ok(None) => break,
            Ok(Some(Err(e))) => {
                // A connection dropped mid-body: keep what came, if anything did.
                if body.is_empty() {
                    return Err(send_error(&final_url, &e));
                }
                cut = Some(Cut::Broken);
                break;
            }
            Ok(Some(Ok(chunk))) => {
                let room = cap - body.len();
                if chunk.len() > room {
                    body.extend_from_slice(&chunk[..room]);
                    cut = Some(Cut::Size(max_bytes));
                    break;
                }
                body.extend_from_slice(&chunk);
            }
        }
    }
    if body.is_empty() && matches!(cut, Some(Cut::Time(_))) {
        return Err(timed_out());
    }
    Ok(RawResponse {
        final_url,
        status,
        content_type,
        location,
        body,
        cut,
    })
}

/// A failed send said plainly: the SSRF refusal as it is, else the error and its causes.
fn send_error(url: &Url, error: &reqwest::Error) -> HttpError {
    if let Some(refused) = find_ssrf_error(error) {
        return HttpError::Refused(refused.to_string());
    }
    HttpError::Failed {
        url: url.to_string(),
        reason: pincer_base::error_chain(error),
    }
}

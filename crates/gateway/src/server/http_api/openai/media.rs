//! Images in the user message of `POST /v1/chat/completions`: OpenAI's
//! `{type: "image_url", image_url: {url, detail?}}` parts, taken from a `data:<mime>;base64,`
//! URL or fetched from an `http(s)://` one, checked, and saved in the agent's workspace inbox
//! so the turn gets them as [`InboundMedia`] (named in the message, sent to a model that takes
//! images: [`pincer_turns::media_input`]).
//!
//! Everything is checked before anything is written or a run starts: a malformed part, a
//! file over `agents.defaults.mediaMaxMb`, bytes that are not a PNG, JPEG, GIF or WebP
//! image (by their first bytes, whatever the URL declared), or a URL that cannot be
//! fetched is the request's 400. At most [`MAX_IMAGE_PARTS`] images per request (OpenClaw's
//! limit), and the request body may hold one image of the largest size plus
//! [`BODY_SLACK`] of text.

use std::path::PathBuf;
use std::time::Duration;

use axum::http::StatusCode;
use axum::response::Response;
use base64::Engine as _;
use pincer_ai::fetch::{FetchError, FetchLimits, fetch_capped};
use pincer_channel_port::InboundMedia;
use pincer_turns::media_input::{MediaLimits, size_text, sniff_mime};
use serde_json::Value;

use crate::server::Gateway;
use crate::server::runtime::on_blocking_pool;

/// Most `image_url` parts one request may carry (OpenClaw's limit).
pub(in crate::server::http_api) const MAX_IMAGE_PARTS: usize = 8;
/// Room in the request body beyond one image of the largest size, for the text.
pub(in crate::server::http_api) const BODY_SLACK: usize = 1024 * 1024;
/// How long fetching one URL may take, body included (OpenClaw's 10 s).
const FETCH_TIMEOUT: Duration = Duration::from_secs(10);
/// Redirects followed when fetching a URL (OpenClaw's 3).
const FETCH_REDIRECTS: usize = 3;
/// The image types every wire API takes; anything else is refused here.
const IMAGE_TYPES: &[(&str, &str)] = &[
    ("image/png", "png"),
    ("image/jpeg", "jpg"),
    ("image/gif", "gif"),
    ("image/webp", "webp"),
];

/// Why the images of a request were refused.
#[derive(Debug, thiserror::Error)]
pub(in crate::server::http_api) enum ImageError {
    #[error("image_url part is missing a valid URL")]
    MissingUrl,
    #[error("too many image_url parts ({0}; limit {MAX_IMAGE_PARTS})")]
    TooMany(usize),
    #[error("image_url must be a data: URL or an http(s):// URL")]
    Scheme,
    #[error("image_url data URL must be base64 encoded (data:<mime>;base64,<data>)")]
    NotBase64,
    #[error("image_url data URL has no data")]
    NoData,
    #[error("image_url data URL is not valid base64")]
    BadBase64,
    #[error("image_url is not a PNG, JPEG, GIF or WebP image")]
    NotImage,
    #[error("image is {}, over the limit of {} (agents.defaults.mediaMaxMb)", size_text(*.size), size_text(*.limit))]
    TooLarge { size: u64, limit: u64 },
    #[error("image is over the limit of {} (agents.defaults.mediaMaxMb)", size_text(*.limit))]
    TooLargeStream { limit: u64 },
    #[error("image_url could not be fetched: {0}")]
    Fetch(String),
    #[error("the agent has no workspace to save the image in")]
    NoWorkspace,
    #[error("cannot save the image in the agent's workspace: {0}")]
    Save(String),
}

impl ImageError {
    /// The error as the endpoint answers it: the request's fault is a 400, the gateway's a 500.
    pub(in crate::server::http_api) fn response(&self) -> Response {
        let message = self.to_string();
        let (status, kind, code) = match self {
            Self::TooMany(_) => (
                StatusCode::BAD_REQUEST,
                "invalid_request_error",
                "too_many_images",
            ),
            Self::TooLarge { .. } | Self::TooLargeStream { .. } => (
                StatusCode::BAD_REQUEST,
                "invalid_request_error",
                "image_too_large",
            ),
            Self::Fetch(_) => (
                StatusCode::BAD_REQUEST,
                "invalid_request_error",
                "image_fetch_failed",
            ),
            Self::NoWorkspace | Self::Save(_) => (
                StatusCode::INTERNAL_SERVER_ERROR,
                "api_error",
                "internal_error",
            ),
            _ => (
                StatusCode::BAD_REQUEST,
                "invalid_request_error",
                "invalid_image_url",
            ),
        };
        super::error(status, &message, kind, code)
    }
}

/// The URLs of the `image_url` parts of a message's `content` (none for a string). A part
/// may give its URL as `image_url: {url}` or, as some clients send, `image_url: "<url>"`.
pub(in crate::server::http_api) fn image_urls(content: &Value) -> Result<Vec<String>, ImageError> {
    let Value::Array(parts) = content else {
        return Ok(Vec::new());
    };
    let urls = parts
        .iter()
        .filter(|part| part.get("type").and_then(Value::as_str) == Some("image_url"))
        .map(|part| {
            let image_url = part.get("image_url");
            image_url
                .and_then(|u| u.get("url"))
                .or(image_url)
                .and_then(Value::as_str)
                .map(str::trim)
                .filter(|url| !url.is_empty())
                .map(str::to_owned)
                .ok_or(ImageError::MissingUrl)
        })
        .collect::<Result<Vec<_>, _>>()?;
    if urls.len() > MAX_IMAGE_PARTS {
        return Err(ImageError::TooMany(urls.len()));
    }
    Ok(urls)
}

/// One file sent inline (an image here, any file in `/v1/responses`), checked, not yet
/// saved.
#[derive(Debug)]
pub(in crate::server::http_api) struct InlineFile {
    pub bytes: Vec<u8>,
    pub mime: String,
    pub name: String,
}

/// Why files could not be saved in the agent's workspace (the gateway's fault, not the
/// request's).
#[derive(Debug)]
pub(in crate::server::http_api) enum SaveFailure {
    NoWorkspace,
    Save(String),
}

impl From<SaveFailure> for ImageError {
    fn from(failure: SaveFailure) -> Self {
        match failure {
            SaveFailure::NoWorkspace => Self::NoWorkspace,
            SaveFailure::Save(why) => Self::Save(why),
        }
    }
}

impl From<FetchError> for ImageError {
    fn from(e: FetchError) -> Self {
        match e {
            FetchError::TooLarge {
                declared: Some(size),
                limit,
            } => Self::TooLarge { size, limit },
            FetchError::TooLarge { limit, .. } => Self::TooLargeStream { limit },
            other => Self::Fetch(other.to_string()),
        }
    }
}

/// The images at `urls`, decoded or fetched and checked against `limits`.
pub(in crate::server::http_api) async fn load(
    urls: &[String],
    limits: &MediaLimits,
) -> Result<Vec<InlineFile>, ImageError> {
    let mut images = Vec::with_capacity(urls.len());
    for url in urls {
        let (bytes, name) = if let Some(data) = strip_prefix_ignore_case(url, "data:") {
            (decode_data_url(data)?, None)
        } else if is_http(url) {
            (fetch(url, limits.media_max_bytes).await?, file_name_of(url))
        } else {
            return Err(ImageError::Scheme);
        };
        let size = bytes.len() as u64;
        if size > limits.media_max_bytes {
            return Err(ImageError::TooLarge {
                size,
                limit: limits.media_max_bytes,
            });
        }
        let head = &bytes[..bytes.len().min(16)];
        let sniffed = sniff_mime(head, None, "");
        let Some(&(mime, ext)) = IMAGE_TYPES.iter().find(|(mime, _)| *mime == sniffed) else {
            return Err(ImageError::NotImage);
        };
        let name = name.unwrap_or_else(|| format!("image.{ext}"));
        images.push(InlineFile {
            bytes,
            mime: mime.to_owned(),
            name,
        });
    }
    Ok(images)
}

/// Saves `files` in `agent_id`'s workspace inbox (on the blocking pool) and returns them
/// as the turn's media. A failure removes nothing already saved: the files are the user's.
pub(in crate::server::http_api) async fn save(
    gw: &Gateway,
    agent_id: &str,
    files: Vec<InlineFile>,
) -> Result<Vec<InboundMedia>, SaveFailure> {
    if files.is_empty() {
        return Ok(Vec::new());
    }
    let agent_id = agent_id.to_owned();
    #[expect(clippy::disallowed_methods, reason = "inside on_blocking_pool")]
    on_blocking_pool(&gw.runtime, move |runtime| {
        let workspace: PathBuf = runtime
            .workspace(&agent_id)
            .ok_or(SaveFailure::NoWorkspace)?;
        files
            .into_iter()
            .map(|file| {
                let path =
                    pincer_turns::media_inbox::save_to_inbox(&workspace, &file.name, &file.bytes)
                        .map_err(|e| SaveFailure::Save(e.to_string()))?;
                Ok(InboundMedia {
                    path,
                    size: file.bytes.len() as u64,
                    mime: Some(file.mime),
                    file_name: Some(file.name),
                })
            })
            .collect()
    })
    .await
    .map_err(|e| SaveFailure::Save(e.to_string()))?
}

fn strip_prefix_ignore_case<'a>(text: &'a str, prefix: &str) -> Option<&'a str> {
    let head = text.get(..prefix.len())?;
    head.eq_ignore_ascii_case(prefix)
        .then(|| &text[prefix.len()..])
}

fn is_http(url: &str) -> bool {
    strip_prefix_ignore_case(url, "http://").is_some()
        || strip_prefix_ignore_case(url, "https://").is_some()
}

/// The bytes of a data URL's `<meta>,<data>` (after `data:`); only base64 is taken.
fn decode_data_url(rest: &str) -> Result<Vec<u8>, ImageError> {
    let (meta, data) = rest.split_once(',').ok_or(ImageError::NotBase64)?;
    if !meta
        .split(';')
        .any(|part| part.trim().eq_ignore_ascii_case("base64"))
    {
        return Err(ImageError::NotBase64);
    }
    let data = data.trim();
    if data.is_empty() {
        return Err(ImageError::NoData);
    }
    base64::engine::general_purpose::STANDARD
        .decode(data)
        .map_err(|_| ImageError::BadBase64)
}

/// The last path segment of `url`, if it names a file.
pub(in crate::server::http_api) fn file_name_of(url: &str) -> Option<String> {
    let parsed = reqwest::Url::parse(url).ok()?;
    let last = parsed.path_segments()?.next_back()?;
    (!last.is_empty()).then(|| last.to_owned())
}

/// GETs `url`, at most `limit` bytes, within OpenClaw's timeout and redirects
/// ([`pincer_ai::fetch::fetch_capped`]).
pub(in crate::server::http_api) async fn fetch(
    url: &str,
    limit: u64,
) -> Result<Vec<u8>, FetchError> {
    let limits = FetchLimits {
        max_bytes: limit,
        timeout: FETCH_TIMEOUT,
        max_redirects: FETCH_REDIRECTS,
    };
    fetch_capped(url, limits).await
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn image_parts_give_their_urls_and_a_part_without_one_is_refused() {
        let content = json!([
            {"type": "text", "text": "hi"},
            {"type": "image_url", "image_url": {"url": " data:image/png;base64,AA== ", "detail": "low"}},
            {"type": "image_url", "image_url": "https://example.com/a.png"},
        ]);
        assert_eq!(
            image_urls(&content).unwrap(),
            ["data:image/png;base64,AA==", "https://example.com/a.png"]
        );
        assert!(image_urls(&json!("text")).unwrap().is_empty());
        let missing = json!([{"type": "image_url", "image_url": {"detail": "low"}}]);
        assert!(matches!(image_urls(&missing), Err(ImageError::MissingUrl)));
        let many = Value::Array(vec![
            json!({"type": "image_url", "image_url": {"url": "data:,"}});
            MAX_IMAGE_PARTS + 1
        ]);
        assert!(matches!(image_urls(&many), Err(ImageError::TooMany(9))));
    }

    #[test]
    fn data_urls_must_be_base64() {
        assert_eq!(decode_data_url("image/png;base64,aGk=").unwrap(), b"hi");
        assert_eq!(decode_data_url("image/png;BASE64,aGk=").unwrap(), b"hi");
        assert!(matches!(
            decode_data_url("image/png,hi"),
            Err(ImageError::NotBase64)
        ));
        assert!(matches!(
            decode_data_url("image/png;base64"),
            Err(ImageError::NotBase64)
        ));
        assert!(matches!(
            decode_data_url("image/png;base64, "),
            Err(ImageError::NoData)
        ));
        assert!(matches!(
            decode_data_url("image/png;base64,@@@"),
            Err(ImageError::BadBase64)
        ));
    }

    #[test]
    fn a_url_names_its_file_by_its_last_segment() {
        assert_eq!(
            file_name_of("https://example.com/pics/cat.png?x=1").as_deref(),
            Some("cat.png")
        );
        assert_eq!(file_name_of("https://example.com/"), None);
    }
}

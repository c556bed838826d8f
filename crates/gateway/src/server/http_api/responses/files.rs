//! `input_file` parts of `POST /v1/responses`: OpenAI's `{file_data, filename}` (a
//! `data:<mime>;base64,` URL or bare base64) or `{file_url}`, and OpenResponses'
//! `source` (`{type:"base64", media_type, data, filename?}` or `{type:"url", url}`). Each
//! file is decoded or fetched (10 s, 3 redirects, the cap enforced as bytes arrive), held
//! to `agents.defaults.mediaMaxMb`, and saved in the agent's workspace inbox, so the turn
//! gets it as media like any received file: a PDF's or text file's text is read into the
//! message, an image is shown to a model that takes images
//! ([`pincer_turns::media_input`]). Everything is checked before anything is saved.

use axum::http::StatusCode;
use axum::response::Response;
use base64::Engine as _;
use pincer_ai::fetch::FetchError;
use pincer_turns::media_input::{MediaLimits, size_text, sniff_mime};
use serde_json::Value;

use super::super::openai::media::{InlineFile, SaveFailure, fetch, file_name_of};

/// Where an `input_file` part's bytes are.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum FileSource {
    /// Base64 data, with the type the caller declared, if any.
    Base64 {
        data: String,
        mime: Option<String>,
        name: Option<String>,
    },
    /// An `http(s)://` URL to fetch.
    Url { url: String, name: Option<String> },
}

/// Why a file was refused.
#[derive(Debug, thiserror::Error)]
pub(super) enum FileError {
    #[error("input_file is not valid base64")]
    BadBase64,
    #[error("input_file has no data")]
    NoData,
    #[error("input_file URL must be an http(s):// URL")]
    Scheme,
    #[error("file is {}, over the limit of {} (agents.defaults.mediaMaxMb)", size_text(*.size), size_text(*.limit))]
    TooLarge { size: u64, limit: u64 },
    #[error("file is over the limit of {} (agents.defaults.mediaMaxMb)", size_text(*.limit))]
    TooLargeStream { limit: u64 },
    #[error("input_file could not be fetched: {0}")]
    Fetch(String),
    #[error("the agent has no workspace to save the file in")]
    NoWorkspace,
    #[error("cannot save the file in the agent's workspace: {0}")]
    Save(String),
}

impl FileError {
    /// The error as the endpoint answers it: the request's fault is a 400, the gateway's a 500.
    pub(super) fn response(&self) -> Response {
        let (status, kind, code) = match self {
            Self::TooLarge { .. } | Self::TooLargeStream { .. } => (
                StatusCode::BAD_REQUEST,
                "invalid_request_error",
                "file_too_large",
            ),
            Self::Fetch(_) => (
                StatusCode::BAD_REQUEST,
                "invalid_request_error",
                "file_fetch_failed",
            ),
            Self::NoWorkspace | Self::Save(_) => (
                StatusCode::INTERNAL_SERVER_ERROR,
                "api_error",
                "internal_error",
            ),
            _ => (
                StatusCode::BAD_REQUEST,
                "invalid_request_error",
                "invalid_file",
            ),
        };
        super::super::openai::error(status, &self.to_string(), kind, code)
    }
}

/// The source of an `input_file` part, `None` when it names none this gateway can read
/// (a `file_id` included: there is no file store to look it up in).
pub(super) fn source(part: &Value) -> Option<FileSource> {
    let text = |v: Option<&Value>| {
        v.and_then(Value::as_str)
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_owned)
    };
    let name = text(part.get("filename"));
    if let Some(data) = text(part.get("file_data")) {
        // A data URL carries its type; bare base64 leaves it to the bytes and the name.
        return Some(match data.strip_prefix("data:") {
            Some(rest) => {
                let (meta, data) = rest.split_once(',').unwrap_or(("", rest));
                let mime = meta.split(';').next().filter(|m| m.contains('/'));
                FileSource::Base64 {
                    data: data.to_owned(),
                    mime: mime.map(str::to_owned),
                    name,
                }
            }
            None => FileSource::Base64 {
                data,
                mime: None,
                name,
            },
        });
    }
    if let Some(url) = text(part.get("file_url")) {
        return Some(FileSource::Url { url, name });
    }
    let source = part.get("source")?;
    let name = text(source.get("filename")).or(name);
    match source.get("type").and_then(Value::as_str)? {
        "base64" => Some(FileSource::Base64 {
            data: text(source.get("data"))?,
            mime: text(source.get("media_type")),
            name,
        }),
        "url" => Some(FileSource::Url {
            url: text(source.get("url"))?,
            name,
        }),
        _ => None,
    }
}

impl From<SaveFailure> for FileError {
    fn from(failure: SaveFailure) -> Self {
        match failure {
            SaveFailure::NoWorkspace => Self::NoWorkspace,
            SaveFailure::Save(why) => Self::Save(why),
        }
    }
}

impl From<FetchError> for FileError {
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

/// The files at `sources`, decoded or fetched and held to `limits`.
pub(super) async fn load(
    sources: &[FileSource],
    limits: &MediaLimits,
) -> Result<Vec<InlineFile>, FileError> {
    let mut files = Vec::with_capacity(sources.len());
    for source in sources {
        let (bytes, declared, name) = match source {
            FileSource::Base64 { data, mime, name } => {
                let data = data.trim();
                if data.is_empty() {
                    return Err(FileError::NoData);
                }
                let bytes = base64::engine::general_purpose::STANDARD
                    .decode(data)
                    .map_err(|_| FileError::BadBase64)?;
                (bytes, mime.clone(), name.clone())
            }
            FileSource::Url { url, name } => {
                let lower = url.to_ascii_lowercase();
                if !lower.starts_with("http://") && !lower.starts_with("https://") {
                    return Err(FileError::Scheme);
                }
                let bytes = fetch(url, limits.media_max_bytes).await?;
                (bytes, None, name.clone().or_else(|| file_name_of(url)))
            }
        };
        let size = bytes.len() as u64;
        if size > limits.media_max_bytes {
            return Err(FileError::TooLarge {
                size,
                limit: limits.media_max_bytes,
            });
        }
        let name = name.unwrap_or_else(|| "file".to_owned());
        let mime = sniff_mime(&bytes[..bytes.len().min(16)], declared.as_deref(), &name);
        files.push(InlineFile { bytes, mime, name });
    }
    Ok(files)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn sources_in_openai_and_openresponses_shapes() {
        let b64 = |data: &str, mime: Option<&str>, name: Option<&str>| FileSource::Base64 {
            data: data.to_owned(),
            mime: mime.map(str::to_owned),
            name: name.map(str::to_owned),
        };
        assert_eq!(
            source(&json!({"file_data": "data:application/pdf;base64,QUJD", "filename": "a.pdf"})),
            Some(b64("QUJD", Some("application/pdf"), Some("a.pdf")))
        );
        assert_eq!(
            source(&json!({"file_data": "QUJD"})),
            Some(b64("QUJD", None, None))
        );
        assert_eq!(
            source(
                &json!({"source": {"type": "base64", "media_type": "text/plain", "data": "aGk=", "filename": "n.txt"}})
            ),
            Some(b64("aGk=", Some("text/plain"), Some("n.txt")))
        );
        assert_eq!(
            source(&json!({"file_url": "https://e.x/d/r.pdf"})),
            Some(FileSource::Url {
                url: "https://e.x/d/r.pdf".to_owned(),
                name: None
            })
        );
        assert_eq!(source(&json!({"file_id": "file-1"})), None);
        assert_eq!(
            source(&json!({"source": {"type": "base64", "data": ""}})),
            None
        );
    }
}

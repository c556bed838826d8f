//! What the adapters share: private atomic file writes (update offsets, received files),
//! reading an outbound file for upload, ids as parts of file names, and
//! multipart/form-data bodies for uploads. The bodies are built by hand: reqwest's
//! `multipart` feature would add a MIME-guessing dependency for what is a few text fields
//! and one file.

// A build with only some channels (e.g. only Slack, which uploads raw bytes) leaves some
// of these unused.
#![cfg_attr(
    not(all(
        feature = "telegram",
        feature = "discord",
        feature = "slack",
        feature = "feishu"
    )),
    allow(dead_code)
)]

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use pincer_channel_port::{ChannelError, InboundMedia};

/// Implements [`ChannelAdapter`](pincer_channel_port::ChannelAdapter) for an adapter by its
/// inherent async methods: `$receive` (the `run` loop, until `stop`), `send_message` and
/// `show_typing`; its channel is `$channel` and its account `self.$settings.account_id`.
/// What the trait adds around them, boxing each future, is the same for every adapter.
macro_rules! channel_adapter {
    ($adapter:ty, channel: $channel:expr, settings: $($settings:ident).+, receive: $receive:ident
     $(, more: { $($more:tt)* })?) => {
        impl pincer_channel_port::ChannelAdapter for $adapter {
            fn channel(&self) -> &str {
                $channel
            }

            fn account_id(&self) -> Option<&str> {
                self.$($settings).+.account_id.as_deref()
            }

            fn run<'a>(
                &'a self,
                inbound: &'a pincer_channel_port::InboundSink,
                stop: &'a tokio_util::sync::CancellationToken,
            ) -> futures_util::future::BoxFuture<'a, Result<(), ChannelError>> {
                Box::pin(self.$receive(inbound, stop))
            }

            fn send<'a>(
                &'a self,
                message: &'a pincer_channel_port::Outbound,
            ) -> futures_util::future::BoxFuture<'a, Result<Vec<String>, ChannelError>> {
                Box::pin(self.send_message(message))
            }

            fn typing<'a>(
                &'a self,
                chat: &'a pincer_channel_port::ChatRef,
            ) -> futures_util::future::BoxFuture<'a, Result<(), ChannelError>> {
                Box::pin(self.show_typing(chat))
            }

            // The adapter's own `react` / `edit` / `delete`, where it has them.
            $($($more)*)?
        }
    };
}

/// How long one file upload or download may take.
pub(crate) const FILE_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(120);

/// A transport failure of `channel`'s API; the URL is left out (it may hold a token).
pub(crate) fn connection_error(channel: &str, e: reqwest::Error) -> ChannelError {
    ChannelError::Connection {
        channel: channel.into(),
        message: e.without_url().to_string(),
    }
}

/// Sends `request` (a GET of a file, `what` naming it in errors) and reads at most `max`
/// bytes of the answer: more is refused, not truncated.
pub(crate) async fn download_capped(
    channel: &str,
    request: reqwest::RequestBuilder,
    what: &str,
    max: u64,
) -> Result<Vec<u8>, ChannelError> {
    let response = request
        .timeout(FILE_TIMEOUT)
        .send()
        .await
        .map_err(|e| connection_error(channel, e))?;
    if !response.status().is_success() {
        return Err(ChannelError::Api {
            channel: channel.into(),
            message: format!("{what} download failed with HTTP {}", response.status()),
        });
    }
    read_capped(response, max)
        .await
        .map_err(|e| connection_error(channel, e))?
        .ok_or_else(|| ChannelError::Api {
            channel: channel.into(),
            message: format!("the file is over the {max}-byte limit"),
        })
}

/// `request` with a multipart/form-data body of `texts` then `file`, and [`FILE_TIMEOUT`].
pub(crate) fn with_multipart(
    request: reqwest::RequestBuilder,
    texts: &[TextPart<'_>],
    file: &FilePart<'_>,
) -> reqwest::RequestBuilder {
    let boundary = boundary();
    request
        .header(
            reqwest::header::CONTENT_TYPE,
            format!("multipart/form-data; boundary={boundary}"),
        )
        .body(multipart_body(&boundary, texts, file))
        .timeout(FILE_TIMEOUT)
}

/// A file of an outbound message, read for upload.
pub(crate) struct OutboundFile {
    /// The file's own name (`file` when the path has none).
    pub name: String,
    pub bytes: Vec<u8>,
}

/// Reads `path` for an upload by `channel`'s adapter; a file that cannot be read is the
/// channel's API error, as a refused upload would be.
pub(crate) async fn read_outbound_file(
    channel: &str,
    path: &Path,
) -> Result<OutboundFile, ChannelError> {
    let bytes = tokio::fs::read(path).await.map_err(|e| ChannelError::Api {
        channel: channel.into(),
        message: format!("cannot read {}: {e}", path.display()),
    })?;
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "file".into());
    Ok(OutboundFile { name, bytes })
}

/// Saves a received file as `target` and describes it for the inbound message; on failure
/// the error is logged and the `Err` is what to tell the sender.
pub(crate) async fn store_received(
    target: PathBuf,
    bytes: impl AsRef<[u8]> + Send + 'static,
    mime: Option<String>,
    file_name: String,
) -> Result<InboundMedia, String> {
    match save_file(&target, bytes).await {
        Ok(size) => Ok(InboundMedia {
            size,
            path: target,
            mime,
            file_name: Some(file_name),
        }),
        Err(e) => {
            tracing::error!(error = %e, "cannot save a received file");
            Err("I could not store that file; please try again.".into())
        }
    }
}

/// What the sender is told of a file over the limit of `max` bytes (in whole MB).
pub(crate) fn too_big_note(max: u64) -> String {
    format!(
        "That file is too big for me (the limit is {} MB); send a smaller one or a link.",
        max / (1024 * 1024)
    )
}

/// What the sender is told of a file `platform` would not give.
pub(crate) fn fetch_failed_note(platform: &str) -> String {
    format!("I could not fetch that file from {platform}; please send it again.")
}

/// The files of one received message as they are fetched: those stored, and what to tell
/// the sender of the last one refused (the others still come through).
pub(crate) struct ReceivedFiles {
    platform: &'static str,
    max: u64,
    /// What the sender is told of a file over the limit.
    too_big: String,
    media: Vec<InboundMedia>,
    refused: Option<String>,
}

/// Why a received file could not be downloaded: over the size limit, or a failure.
pub(crate) trait FetchError: std::fmt::Display {
    fn is_too_big(&self) -> bool;
}

/// [`download_capped`] refuses a file over the limit with an API error naming the limit.
impl FetchError for ChannelError {
    fn is_too_big(&self) -> bool {
        matches!(self, ChannelError::Api { message, .. } if message.contains("limit"))
    }
}

impl ReceivedFiles {
    /// For files from `platform` (named in refusals) of at most `max` bytes.
    pub(crate) fn new(platform: &'static str, max: u64) -> Self {
        Self {
            platform,
            max,
            too_big: too_big_note(max),
            media: Vec::new(),
            refused: None,
        }
    }

    /// With `note` told of a file over the limit instead of [`too_big_note`].
    pub(crate) fn with_too_big_note(self, note: String) -> Self {
        Self {
            too_big: note,
            ..self
        }
    }

    /// Refuses a file of `size` bytes when it is over the limit; whether it was.
    pub(crate) fn over_limit(&mut self, size: u64) -> bool {
        let over = size > self.max;
        if over {
            self.too_big();
        }
        over
    }

    /// Refuses a file found over the limit.
    pub(crate) fn too_big(&mut self) {
        self.refuse(self.too_big.clone());
    }

    /// The downloaded file, or `None` with the file refused (a failure is logged).
    pub(crate) fn fetched<T>(&mut self, download: Result<T, impl FetchError>) -> Option<T> {
        match download {
            Ok(file) => Some(file),
            Err(e) if e.is_too_big() => {
                self.too_big();
                None
            }
            Err(e) => {
                tracing::warn!(platform = self.platform, error = %e, "a received file could not be downloaded");
                self.failed();
                None
            }
        }
    }

    /// Refuses a file the platform would not give ([`fetch_failed_note`]).
    pub(crate) fn failed(&mut self) {
        self.refuse(fetch_failed_note(self.platform));
    }

    /// Refuses a file, `why` being what the sender is told.
    pub(crate) fn refuse(&mut self, why: String) {
        self.refused = Some(why);
    }

    /// Saves a fetched file as `target` ([`store_received`]); refused when it cannot be.
    pub(crate) async fn store(
        &mut self,
        target: PathBuf,
        bytes: impl AsRef<[u8]> + Send + 'static,
        mime: Option<String>,
        file_name: String,
    ) {
        match store_received(target, bytes, mime, file_name).await {
            Ok(item) => self.media.push(item),
            Err(why) => self.refuse(why),
        }
    }

    /// The files stored, and the last refusal.
    pub(crate) fn finish(self) -> (Vec<InboundMedia>, Option<String>) {
        (self.media, self.refused)
    }
}

/// User id → DM channel id of a bot's direct chats: learnt from the DMs received (or
/// opened), so a direct chat addressed by user id is answered in its DM.
#[derive(Debug, Default)]
pub(crate) struct DmChannels(Mutex<HashMap<String, String>>);

impl DmChannels {
    fn map(&self) -> std::sync::MutexGuard<'_, HashMap<String, String>> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub(crate) fn remember(&self, user: String, channel: String) {
        self.map().insert(user, channel);
    }

    /// The DM channel of `user`, if known.
    pub(crate) fn of(&self, user: &str) -> Option<String> {
        self.map().get(user).cloned()
    }

    /// Whether `id` is a DM channel known (rather than a user).
    pub(crate) fn is_channel(&self, id: &str) -> bool {
        self.map().values().any(|c| c == id)
    }
}

/// An id (or Slack ts) as part of a file name: its ASCII letters and digits, at most 32.
pub(crate) fn safe_id(id: &str) -> String {
    id.chars()
        .filter(char::is_ascii_alphanumeric)
        .take(32)
        .collect()
}

/// A JSON `null` read as the field's default (platforms send `null` for an empty list).
pub(crate) fn null_as_default<'de, D, T>(deserializer: D) -> Result<T, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Default + serde::Deserialize<'de>,
{
    Ok(<Option<T> as serde::Deserialize>::deserialize(deserializer)?.unwrap_or_default())
}

/// The header `name` of `response`, if it is there and plain text.
pub(crate) fn header_text(
    response: &reqwest::Response,
    name: impl reqwest::header::AsHeaderName,
) -> Option<&str> {
    response.headers().get(name).and_then(|v| v.to_str().ok())
}

/// The number in the header `name` of `response` (`retry-after` and the like), if any.
pub(crate) fn header_number<T: std::str::FromStr>(
    response: &reqwest::Response,
    name: impl reqwest::header::AsHeaderName,
) -> Option<T> {
    header_text(response, name).and_then(|v| v.trim().parse().ok())
}

/// A text part of a multipart body: name, optional content type, value.
pub(crate) struct TextPart<'a> {
    pub name: &'a str,
    pub content_type: Option<&'a str>,
    pub value: &'a str,
}

/// Plain text parts (no content type), one a `(name, value)` field.
pub(crate) fn text_parts<'a, V: AsRef<str>>(fields: &'a [(&'a str, V)]) -> Vec<TextPart<'a>> {
    fields
        .iter()
        .map(|(name, value)| TextPart {
            name,
            content_type: None,
            value: value.as_ref(),
        })
        .collect()
}

/// The file part of a multipart body.
pub(crate) struct FilePart<'a> {
    pub field: &'a str,
    pub file_name: &'a str,
    pub bytes: &'a [u8],
}

/// A multipart/form-data body with `texts` then `file`, delimited by `boundary`.
pub(crate) fn multipart_body(
    boundary: &str,
    texts: &[TextPart<'_>],
    file: &FilePart<'_>,
) -> Vec<u8> {
    let mut body = Vec::new();
    for part in texts {
        let content_type = part
            .content_type
            .map(|t| format!("Content-Type: {t}\r\n"))
            .unwrap_or_default();
        body.extend_from_slice(
            format!(
                "--{boundary}\r\nContent-Disposition: form-data; name=\"{}\"\r\n{content_type}\r\n{}\r\n",
                part.name, part.value
            )
            .as_bytes(),
        );
    }
    body.extend_from_slice(
        format!(
            "--{boundary}\r\nContent-Disposition: form-data; name=\"{}\"; filename=\"{}\"\r\nContent-Type: application/octet-stream\r\n\r\n",
            file.field,
            safe_header_name(file.file_name)
        )
        .as_bytes(),
    );
    body.extend_from_slice(file.bytes);
    body.extend_from_slice(format!("\r\n--{boundary}--\r\n").as_bytes());
    body
}

/// Quotes and line breaks cannot be escaped in a header: they are replaced.
pub(crate) fn safe_header_name(name: &str) -> String {
    name.chars()
        .map(|c| if c == '"' || c.is_control() { '_' } else { c })
        .collect()
}

/// A boundary that will not occur in a file by chance.
pub(crate) fn boundary() -> String {
    format!("pincer-{}", pincer_base::id::hex_id16())
}

/// [`pincer_base::write_atomic`] (0600, parent directories 0700, durable) on the blocking
/// pool, for the adapters' async code; the number of bytes written.
pub(crate) async fn save_file(
    path: &Path,
    bytes: impl AsRef<[u8]> + Send + 'static,
) -> std::io::Result<u64> {
    let path = path.to_path_buf();
    #[expect(clippy::disallowed_methods, reason = "inside spawn_blocking")]
    let written = tokio::task::spawn_blocking(move || {
        let bytes = bytes.as_ref();
        pincer_base::write_atomic(&path, bytes).map(|()| bytes.len() as u64)
    })
    .await;
    written.map_err(std::io::Error::other)?
}

/// The body of `response`, or `None` as soon as it grows past `max` bytes (what is over the
/// limit is refused, never truncated, and never read to the end).
pub(crate) async fn read_capped(
    mut response: reqwest::Response,
    max: u64,
) -> Result<Option<Vec<u8>>, reqwest::Error> {
    let mut out = Vec::new();
    while let Some(chunk) = response.chunk().await? {
        out.extend_from_slice(&chunk);
        if out.len() as u64 > max {
            return Ok(None);
        }
    }
    Ok(Some(out))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn multipart_shape() {
        let body = multipart_body(
            "B",
            &[
                TextPart {
                    name: "chat_id",
                    content_type: None,
                    value: "5",
                },
                TextPart {
                    name: "payload_json",
                    content_type: Some("application/json"),
                    value: "{}",
                },
            ],
            &FilePart {
                field: "document",
                file_name: "a\"b.txt",
                bytes: b"hi",
            },
        );
        assert_eq!(
            String::from_utf8(body).unwrap(),
            "--B\r\nContent-Disposition: form-data; name=\"chat_id\"\r\n\r\n5\r\n\
             --B\r\nContent-Disposition: form-data; name=\"payload_json\"\r\nContent-Type: application/json\r\n\r\n{}\r\n\
             --B\r\nContent-Disposition: form-data; name=\"document\"; filename=\"a_b.txt\"\r\nContent-Type: application/octet-stream\r\n\r\nhi\r\n--B--\r\n"
        );
    }
}

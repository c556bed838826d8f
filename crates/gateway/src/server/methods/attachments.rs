//! Files sent inline with `chat.send` and `agent`: OpenClaw's `attachments` param,
//! `[{type?, mimeType?, fileName?, content}]` with `content` base64 (the Control UI sends
//! `type: "image"` or `"file"`, the MIME type and the bytes; a `data:<mime>;base64,` URL is
//! taken too, as OpenClaw does). `type` only names an attachment that has no `fileName`
//! (OpenClaw does not act on it either).
//!
//! Every attachment of a message is checked before anything is written: at most
//! [`MAX_ATTACHMENTS`], each one's content padded standard base64, its decoded size within
//! `agents.defaults.mediaMaxMb` ([`super::super::runtime::Runtime::media_limits`], checked
//! from the base64 length before decoding). A bad one fails the request with
//! `INVALID_REQUEST` naming it (by `fileName`, else `type`, else `attachment-<n>`), and no
//! run starts. Then they are written into the agent's workspace inbox
//! ([`pincer_turns::media_inbox::save_to_inbox`]) on the blocking pool, and go to the turn
//! as [`InboundMedia`] with workspace-relative paths; if one cannot be written, the ones
//! already written are removed and the request fails `UNAVAILABLE`.

use std::path::{Path, PathBuf};

use base64::Engine as _;
use base64::engine::{DecodePaddingMode, GeneralPurpose, GeneralPurposeConfig};
use pincer_channel_port::InboundMedia;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

use super::super::Gateway;
use super::super::frames::MethodError;
use super::super::runtime::on_blocking_pool;
use super::params::parse;

/// The most attachments one message may carry. OpenClaw sets no count for `chat.send`;
/// this bounds what one request can make the gateway write.
pub const MAX_ATTACHMENTS: usize = 10;

/// Padded standard base64, as OpenClaw checks it; the unused bits of the last character
/// are not checked (Node's decoder ignores them, so OpenClaw's clients may set them).
const BASE64: GeneralPurpose = GeneralPurpose::new(
    &base64::alphabet::STANDARD,
    GeneralPurposeConfig::new()
        .with_decode_padding_mode(DecodePaddingMode::RequireCanonical)
        .with_decode_allow_trailing_bits(true),
);

/// One attachment as OpenClaw's clients send it.
#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct AttachmentParam {
    /// `image` or `file` from the Control UI; names the attachment when `fileName` is absent.
    #[serde(rename = "type")]
    #[expect(
        dead_code,
        reason = "the wire shape: the label is read before the params are"
    )]
    kind: Option<String>,
    /// The MIME type the client declares (the file's first bytes win when they are known).
    mime_type: Option<String>,
    /// The name the file is saved under (made safe) in the inbox.
    file_name: Option<String>,
    /// The bytes: padded standard base64, or a `data:<mime>;base64,<data>` URL.
    content: Option<String>,
}

/// The `attachments` param: each element is read by [`decode`], so a bad one is reported
/// by its name instead of failing the whole params object.
#[derive(Deserialize, Default)]
#[serde(transparent)]
pub(crate) struct Attachments(Vec<Value>);

impl JsonSchema for Attachments {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        Vec::<AttachmentParam>::schema_name()
    }

    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        Vec::<AttachmentParam>::json_schema(generator)
    }
}

impl Attachments {
    pub(crate) fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// An attachment read from the request, not yet written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Attachment {
    /// The name it is saved under (before [`save_to_inbox`] makes it safe).
    ///
    /// [`save_to_inbox`]: pincer_turns::media_inbox::save_to_inbox
    pub file_name: String,
    /// What the client said it is (`mimeType`, else the data URL's type).
    pub mime: Option<String>,
    pub bytes: Vec<u8>,
}

/// Why an attachment was refused (the request's `INVALID_REQUEST` message).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AttachmentError {
    #[error("at most {MAX_ATTACHMENTS} attachments per message, got {0}")]
    TooMany(usize),
    #[error("attachment {0}: must be an object")]
    NotObject(String),
    /// A field of the wrong type (`mimeType must be a string`).
    #[error("attachment {label}: {message}")]
    Field { label: String, message: String },
    #[error("attachment {0}: content must be a base64 string")]
    NoContent(String),
    #[error("attachment {0}: content is empty")]
    Empty(String),
    #[error("attachment {0}: content is not valid base64")]
    Base64(String),
    #[error(
        "attachment {label}: {size} bytes is over the limit of {max} bytes (agents.defaults.mediaMaxMb)"
    )]
    TooLarge { label: String, size: u64, max: u64 },
}

/// Every attachment of a message read and checked, in order; the first bad one (or too
/// many) is the error. Nothing is decoded past the count check or an oversize attachment.
pub fn decode_all(items: &[Value], max_bytes: u64) -> Result<Vec<Attachment>, AttachmentError> {
    if items.len() > MAX_ATTACHMENTS {
        return Err(AttachmentError::TooMany(items.len()));
    }
    items
        .iter()
        .enumerate()
        .map(|(index, item)| decode(index, item, max_bytes))
        .collect()
}

/// Attachment `index` (from 0) of a message, its bytes at most `max_bytes`.
pub fn decode(index: usize, item: &Value, max_bytes: u64) -> Result<Attachment, AttachmentError> {
    let fallback = format!("attachment-{}", index + 1);
    let named = |key: &str| {
        item.get(key)
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
    };
    let label = named("fileName")
        .or_else(|| named("type"))
        .unwrap_or(&fallback)
        .to_owned();
    if !item.is_object() {
        return Err(AttachmentError::NotObject(label));
    }
    let param: AttachmentParam = parse(item).map_err(|e| AttachmentError::Field {
        label: label.clone(),
        message: e.message,
    })?;
    let content = param
        .content
        .ok_or_else(|| AttachmentError::NoContent(label.clone()))?;
    let (data_url_mime, base64) = split_data_url(content.trim());
    if base64.is_empty() {
        return Err(AttachmentError::Empty(label));
    }
    let size = decoded_len(base64);
    if size > max_bytes {
        return Err(AttachmentError::TooLarge {
            label,
            size,
            max: max_bytes,
        });
    }
    let bytes = BASE64
        .decode(base64)
        .map_err(|_| AttachmentError::Base64(label.clone()))?;
    let mime = param
        .mime_type
        .map(|m| m.trim().to_owned())
        .filter(|m| !m.is_empty())
        .or(data_url_mime.map(str::to_owned));
    let file_name = param
        .file_name
        .filter(|n| !n.trim().is_empty())
        .unwrap_or_else(|| default_name(&fallback, &bytes, mime.as_deref()));
    Ok(Attachment {
        file_name,
        mime,
        bytes,
    })
}

/// `data:<mime>;base64,<data>` as its type and data; anything else as is.
fn split_data_url(content: &str) -> (Option<&str>, &str) {
    let Some((header, data)) = content
        .strip_prefix("data:")
        .and_then(|rest| rest.split_once(','))
    else {
        return (None, content);
    };
    match header.strip_suffix(";base64") {
        Some(mime) if !mime.is_empty() && !mime.contains([';', ',']) => (Some(mime), data),
        _ => (None, content),
    }
}

/// How many bytes `base64` decodes to (exact for valid input), without decoding it.
fn decoded_len(base64: &str) -> u64 {
    let padding = base64.bytes().rev().take(2).filter(|&b| b == b'=').count();
    (base64.len() as u64 / 4 * 3 + (base64.len() as u64 % 4) * 3 / 4).saturating_sub(padding as u64)
}

/// A name for an attachment without one: `attachment-<n>` with the extension of its type.
fn default_name(fallback: &str, bytes: &[u8], declared: Option<&str>) -> String {
    let head = &bytes[..bytes.len().min(16)];
    let mime = pincer_turns::media_input::sniff_mime(head, declared, "");
    let ext = match mime.as_str() {
        "image/png" => ".png",
        "image/jpeg" => ".jpg",
        "image/gif" => ".gif",
        "image/webp" => ".webp",
        "application/pdf" => ".pdf",
        "text/plain" => ".txt",
        _ => "",
    };
    format!("{fallback}{ext}")
}

/// The attachments of run `run_id`'s message checked, then written into `agent_id`'s
/// workspace inbox: the files the turn gets. A retry of a run the gateway knows writes
/// nothing again (the run is not started twice either); no attachments, no trip to the
/// blocking pool.
pub(super) async fn receive(
    gw: &Gateway,
    run_id: &str,
    agent_id: &str,
    attachments: Attachments,
) -> Result<Vec<InboundMedia>, MethodError> {
    if attachments.is_empty() || gw.runs.state(run_id).is_some() {
        return Ok(Vec::new());
    }
    let agent_id = agent_id.to_owned();
    on_blocking_pool(&gw.runtime, move |rt| {
        let decoded = decode_all(&attachments.0, rt.media_limits().media_max_bytes)
            .map_err(|e| MethodError::invalid(e.to_string()))?;
        let workspace = rt.workspace(&agent_id).ok_or_else(|| {
            MethodError::unavailable(format!("agent {agent_id} has no workspace for attachments"))
        })?;
        save_all(&workspace, decoded)
    })
    .await
    .map_err(|e| MethodError::unavailable(format!("saving attachments failed: {e}")))?
}

/// Writes `attachments` into `workspace`'s inbox; on a failure removes the ones written.
/// Blocking.
#[expect(
    clippy::disallowed_methods,
    reason = "runs on the blocking pool: save (on_blocking_pool)"
)]
fn save_all(
    workspace: &Path,
    attachments: Vec<Attachment>,
) -> Result<Vec<InboundMedia>, MethodError> {
    let mut saved = Vec::with_capacity(attachments.len());
    for attachment in attachments {
        let size = attachment.bytes.len() as u64;
        match pincer_turns::media_inbox::save_to_inbox(
            workspace,
            &attachment.file_name,
            &attachment.bytes,
        ) {
            Ok(path) => saved.push(InboundMedia {
                path,
                mime: attachment.mime,
                file_name: Some(attachment.file_name),
                size,
            }),
            Err(e) => {
                remove_saved(workspace, saved.iter().map(|m| &m.path));
                return Err(MethodError::unavailable(format!(
                    "cannot save attachment {}: {e}",
                    attachment.file_name
                )));
            }
        }
    }
    Ok(saved)
}

#[expect(
    clippy::disallowed_methods,
    reason = "blocking by contract: save_all runs on the blocking pool"
)]
fn remove_saved<'a>(workspace: &Path, paths: impl Iterator<Item = &'a PathBuf>) {
    for path in paths {
        if let Err(e) = std::fs::remove_file(workspace.join(path)) {
            tracing::warn!(error = %e, path = %path.display(), "a saved attachment was not removed");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const PNG: &[u8] = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR";

    fn b64(bytes: &[u8]) -> String {
        base64::engine::general_purpose::STANDARD.encode(bytes)
    }

    #[test]
    fn the_control_ui_shape_and_a_data_url_decode() {
        let sent = json!({"type": "image", "mimeType": "image/png", "fileName": "cat.png",
                          "content": b64(PNG)});
        assert_eq!(
            decode(0, &sent, 100),
            Ok(Attachment {
                file_name: "cat.png".into(),
                mime: Some("image/png".into()),
                bytes: PNG.to_vec(),
            })
        );
        let url = json!({"content": format!("data:image/png;base64,{}", b64(PNG))});
        assert_eq!(
            decode(2, &url, 100),
            Ok(Attachment {
                file_name: "attachment-3.png".into(),
                mime: Some("image/png".into()),
                bytes: PNG.to_vec(),
            })
        );
    }

    #[test]
    fn bad_attachments_are_named_in_their_error() {
        let refused = |item: Value, max: u64| decode(0, &item, max).unwrap_err().to_string();
        assert_eq!(
            refused(json!({"type": "image", "content": "no!"}), 100),
            "attachment image: content is not valid base64"
        );
        assert_eq!(
            refused(json!({"fileName": "a.txt", "content": "YWJj"}), 2),
            "attachment a.txt: 3 bytes is over the limit of 2 bytes (agents.defaults.mediaMaxMb)"
        );
        assert_eq!(
            refused(json!({"type": "file"}), 100),
            "attachment file: content must be a base64 string"
        );
        assert_eq!(
            refused(json!({"content": "YWJj", "mimeType": 5}), 100),
            "attachment attachment-1: mimeType must be a string"
        );
        assert_eq!(
            refused(json!({"content": " "}), 100),
            "attachment attachment-1: content is empty"
        );
        assert_eq!(
            refused(json!("YWJj"), 100),
            "attachment attachment-1: must be an object"
        );
        // Unpadded and URL-safe base64 are not what OpenClaw's clients send.
        assert_eq!(
            refused(json!({"content": "YWI"}), 100),
            "attachment attachment-1: content is not valid base64"
        );
        let many = vec![json!({"content": "YWJj"}); MAX_ATTACHMENTS + 1];
        assert_eq!(
            decode_all(&many, 100).unwrap_err(),
            AttachmentError::TooMany(11)
        );
    }

    #[test]
    fn the_size_is_known_before_decoding() {
        for bytes in [&b""[..], b"a", b"ab", b"abc", b"abcd", PNG] {
            assert_eq!(decoded_len(&b64(bytes)), bytes.len() as u64, "{bytes:?}");
        }
    }
}

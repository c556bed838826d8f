//! `chat.media.get {sessionKey, path}`: a file an agent's reply named in a `MEDIA:` line,
//! for a client that shows replies itself (the web chat renders pictures inline and other
//! files as downloads). Pincer's own method: OpenClaw's Control UI fetches its media over
//! HTTP with tickets of its own.
//!
//! Only what a channel would send may be fetched: a regular file inside the session agent's
//! workspace, symlinks resolved ([`pincer_turns::media_reply::check_media_paths`], without
//! the running turn's temp files), at most `agents.defaults.mediaMaxMb`. The answer is
//! `{path, fileName, mimeType, size, content}` with the bytes in base64; a refusal is
//! `INVALID_REQUEST` saying why, as the note a channel reply would carry.

use std::path::PathBuf;

use base64::Engine as _;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::super::Gateway;
use super::super::frames::MethodError;
use super::super::runtime::on_blocking_pool;
use super::agent_of_key;
use super::params::{NonEmpty, parse};

/// The params of `chat.media.get`.
#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ChatMediaGetParams {
    session_key: NonEmpty,
    /// As the `MEDIA:` line wrote it: relative to the workspace, or absolute inside it.
    path: NonEmpty,
}

/// `chat.media.get`'s answer.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct ChatMediaGetResponse {
    path: String,
    file_name: String,
    mime_type: String,
    size: u64,
    /// The bytes, standard base64.
    content: String,
}

pub(super) async fn get(gw: &Gateway, p: &Value) -> Result<ChatMediaGetResponse, MethodError> {
    let params: ChatMediaGetParams = parse(p)?;
    let agent_id = agent_of_key(gw, &params.session_key.0);
    let limit = gw.runtime.media_limits().media_max_bytes;
    let written = params.path.0;
    #[expect(clippy::disallowed_methods, reason = "inside on_blocking_pool")]
    let read = on_blocking_pool(&gw.runtime, move |runtime| {
        let workspace = runtime.workspace(&agent_id);
        let (allowed, notes) = pincer_turns::media_reply::check_media_paths(
            std::slice::from_ref(&written),
            workspace.as_deref(),
            None,
        );
        let Some(path) = allowed.into_iter().next() else {
            return Err(notes.join(" "));
        };
        read_capped(&path, limit).map(|bytes| (written, path, bytes))
    })
    .await
    .map_err(|e| MethodError::unavailable(format!("reading the file failed: {e}")))?;
    let (written, path, bytes) = read.map_err(MethodError::invalid)?;
    let file_name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let head = &bytes[..bytes.len().min(16)];
    Ok(ChatMediaGetResponse {
        mime_type: pincer_turns::media_input::sniff_mime(head, None, &file_name),
        size: bytes.len() as u64,
        content: base64::engine::general_purpose::STANDARD.encode(&bytes),
        path: written,
        file_name,
    })
}

/// The file's bytes if it is at most `limit` long. Blocking.
#[expect(
    clippy::disallowed_methods,
    reason = "runs on the blocking pool: get (on_blocking_pool)"
)]
fn read_capped(path: &PathBuf, limit: u64) -> Result<Vec<u8>, String> {
    use std::io::Read as _;
    let shown = path.display();
    let file = std::fs::File::open(path).map_err(|e| format!("(not sent: {shown}: {e})"))?;
    let mut bytes = Vec::new();
    file.take(limit + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("(not sent: {shown}: {e})"))?;
    if bytes.len() as u64 > limit {
        return Err(format!(
            "(not sent: {shown} is over the limit of {})",
            pincer_turns::media_input::size_text(limit)
        ));
    }
    Ok(bytes)
}

//! `write {path, content}`: create or overwrite a file, creating parent directories. The
//! content goes to a temporary file in the same directory which is then renamed over the
//! target, so readers never see a half-written file. An existing file keeps its permissions.

use std::path::Path;

use pincer_agent::{ToolError, ToolOutput};
use pincer_base::{AtomicWrite, FileMode};
use serde::Deserialize;
use serde_json::json;

use super::resolve_shown;
use crate::paths::PathPolicy;

/// Arguments of `write`.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct WriteArgs {
    /// Path of the file to write, relative to the workspace (or absolute inside it).
    pub path: String,
    /// The complete new content of the file.
    pub content: String,
}

const DESCRIPTION: &str = "Write content to a file, creating it (and its parent directories) \
if needed and replacing it completely if it exists. Use edit to change part of a file.";

path_tool! {
    /// The `write` tool.
    WriteTool {
        args: WriteArgs,
        name: "write",
        label: "Write",
        description: DESCRIPTION,
        blocking: write_file,
    }
}

fn write_file(policy: &PathPolicy, args: WriteArgs) -> Result<ToolOutput, ToolError> {
    let (path, shown) = resolve_shown(policy, &args.path)?;
    if path.is_dir() {
        return Err(ToolError::failed(format!(
            "{shown} is a directory; give a file path"
        )));
    }
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(|e| {
            ToolError::failed(format!("cannot create the directories for {shown}: {e}"))
        })?;
    }
    write_atomic(&path, args.content.as_bytes())
        .map_err(|e| ToolError::failed(format!("cannot write {shown}: {e}")))?;
    let bytes = args.content.len();
    Ok(ToolOutput::text(format!("Wrote {bytes} bytes to {shown}"))
        .with_details(json!({"path": shown, "bytes": bytes})))
}

/// Write `bytes` to `path` atomically (pincer-base: a temporary sibling, fsync, rename, fsync
/// of the directory). The temporary file is removed if anything fails. An existing target's
/// permissions carry over; a new file gets the umask's.
pub(crate) fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    AtomicWrite::new()
        .mode(FileMode::KeepExisting)
        .write(path, bytes)
}

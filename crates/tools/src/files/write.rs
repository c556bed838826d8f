//! `write {path, content}`: create or overwrite a file, creating parent directories. The
//! content goes to a temporary file in the same directory which is then renamed over the
//! target, so readers never see a half-written file. An existing file keeps its permissions.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use pincer_agent::{ToolContext, ToolError, ToolOutput, TypedTool};
use serde::Deserialize;
use serde_json::json;

use super::{blocking, resolve};
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

/// The `write` tool.
#[derive(Debug, Clone)]
pub struct WriteTool {
    policy: PathPolicy,
}

impl WriteTool {
    pub fn new(policy: PathPolicy) -> Self {
        Self { policy }
    }
}

const DESCRIPTION: &str = "Write content to a file, creating it (and its parent directories) \
if needed and replacing it completely if it exists. Use edit to change part of a file.";

impl TypedTool for WriteTool {
    type Args = WriteArgs;

    fn name(&self) -> &str {
        "write"
    }

    fn label(&self) -> &str {
        "Write"
    }

    fn description(&self) -> &str {
        DESCRIPTION
    }

    async fn run(&self, args: WriteArgs, _ctx: ToolContext) -> Result<ToolOutput, ToolError> {
        let policy = self.policy.clone();
        blocking(move || {
            let path = resolve(&policy, &args.path)?;
            let shown = policy.display(&path);
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
        })
        .await
    }
}

static TEMP_COUNTER: AtomicU64 = AtomicU64::new(0);

/// Write `bytes` to `path` through a temporary sibling and a rename. The temporary file is
/// removed if anything fails. An existing target's permissions carry over.
pub(crate) fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let temp = temp_sibling(path)?;
    let result = (|| {
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&temp)?;
        file.write_all(bytes)?;
        if let Ok(meta) = std::fs::metadata(path) {
            file.set_permissions(meta.permissions())?;
        }
        file.sync_all()?;
        drop(file);
        std::fs::rename(&temp, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&temp);
    }
    result
}

fn temp_sibling(path: &Path) -> std::io::Result<PathBuf> {
    let name = path.file_name().ok_or_else(|| {
        std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "the path has no file name",
        )
    })?;
    let unique = format!(
        ".{}.pincer-{}-{}.tmp",
        name.to_string_lossy(),
        std::process::id(),
        TEMP_COUNTER.fetch_add(1, Ordering::Relaxed)
    );
    Ok(path.with_file_name(unique))
}

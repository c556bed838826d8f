//! `ls {path?, limit=500}`: a directory's entries sorted case-insensitively, directories
//! with a trailing `/`, dotfiles included, with a note when the limit cut the list.

use std::path::Path;

use pincer_agent::{ToolError, ToolOutput};
use serde::Deserialize;
use serde_json::json;

use super::{io_error, resolve_shown};
use crate::paths::PathPolicy;

/// Default number of entries `ls` shows.
pub const DEFAULT_LS_LIMIT: usize = 500;

/// Arguments of `ls`.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct LsArgs {
    /// Directory to list, relative to the workspace (default: the workspace).
    #[serde(default)]
    pub path: Option<String>,
    /// Maximum number of entries to return (default 500).
    #[serde(default)]
    pub limit: Option<usize>,
}

const DESCRIPTION: &str = "List a directory's entries, sorted alphabetically, directories \
marked with a trailing '/', dotfiles included. Returns at most limit entries (default 500).";

path_tool! {
    /// The `ls` tool.
    LsTool {
        args: LsArgs,
        name: "ls",
        label: "List",
        description: DESCRIPTION,
        blocking: ls,
    }
}

fn ls(policy: &PathPolicy, args: LsArgs) -> Result<ToolOutput, ToolError> {
    let path = args.path.as_deref().unwrap_or(".");
    list_dir(policy, path, args.limit.unwrap_or(DEFAULT_LS_LIMIT).max(1))
}

/// List `user_path` (shared with lainclaw's `fs.list_dir`).
pub(crate) fn list_dir(
    policy: &PathPolicy,
    user_path: &str,
    limit: usize,
) -> Result<ToolOutput, ToolError> {
    let (path, shown) = resolve_shown(policy, user_path)?;
    let meta = std::fs::metadata(&path).map_err(|e| io_error("list", user_path, &e))?;
    if !meta.is_dir() {
        return Err(ToolError::failed(format!(
            "{shown} is not a directory; use read to see a file"
        )));
    }
    let mut entries = Vec::new();
    for entry in std::fs::read_dir(&path).map_err(|e| io_error("list", user_path, &e))? {
        let entry = entry.map_err(|e| io_error("list", user_path, &e))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        entries.push(if is_dir(&entry.path()) {
            format!("{name}/")
        } else {
            name
        });
    }
    entries.sort_by(|a, b| {
        a.to_lowercase()
            .cmp(&b.to_lowercase())
            .then_with(|| a.cmp(b))
    });
    let total = entries.len();
    if total == 0 {
        return Ok(ToolOutput::text("(empty directory)")
            .with_details(json!({"path": shown, "entries": 0, "truncated": false})));
    }
    let truncated = total > limit;
    entries.truncate(limit);
    let mut text = entries.join("\n");
    if truncated {
        text.push_str(&format!(
            "\n\n[{limit} of {total} entries shown. Use limit={} for more.]",
            limit.saturating_mul(2)
        ));
    }
    Ok(ToolOutput::text(text)
        .with_details(json!({"path": shown, "entries": total, "truncated": truncated})))
}

/// A directory, or a symlink to one.
fn is_dir(path: &Path) -> bool {
    std::fs::metadata(path).is_ok_and(|m| m.is_dir())
}

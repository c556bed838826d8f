//! `find {pattern, path?, limit=1000}`: files (and directories, with a trailing `/`) whose
//! path matches a glob, walked with `ignore` so `.gitignore` is respected. Like pi's `fd
//! --glob --hidden`, dotfiles are included (but `.git` is not). A pattern without `/`
//! matches file names (`*.rs`); one with `/` matches the path below the search directory
//! (`src/**/*.rs`). Results are workspace-relative and sorted.

use globset::GlobBuilder;
use ignore::WalkBuilder;
use pincer_agent::{ToolError, ToolOutput};
use serde::Deserialize;
use serde_json::json;
use tokio_util::sync::CancellationToken;

use super::{io_error, resolve};
use crate::paths::PathPolicy;

/// Default number of paths `find` returns.
pub const DEFAULT_FIND_LIMIT: usize = 1000;

/// Arguments of `find`.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FindArgs {
    /// Glob to match, e.g. `*.ts` (file names), `**/*.json` or `src/**/*.spec.ts` (paths
    /// below the search directory).
    pub pattern: String,
    /// Directory to search in, relative to the workspace (default: the workspace).
    #[serde(default)]
    pub path: Option<String>,
    /// Maximum number of results (default 1000).
    #[serde(default)]
    pub limit: Option<usize>,
}

const DESCRIPTION: &str = "Find files by glob pattern. A pattern without '/' matches file \
names (e.g. '*.rs'); with '/' it matches paths below the search directory (e.g. \
'src/**/*.ts'). Respects .gitignore. Returns sorted workspace-relative paths, at most limit \
(default 1000).";

path_tool! {
    /// The `find` tool.
    FindTool {
        args: FindArgs,
        name: "find",
        label: "Find",
        description: DESCRIPTION,
        cancellable: find_paths,
    }
}

fn find_paths(
    policy: &PathPolicy,
    args: FindArgs,
    cancel: &CancellationToken,
) -> Result<ToolOutput, ToolError> {
    let user_path = args.path.as_deref().unwrap_or(".");
    let root = resolve(policy, user_path)?;
    let meta = std::fs::metadata(&root).map_err(|e| io_error("search", user_path, &e))?;
    if !meta.is_dir() {
        return Err(ToolError::failed(format!(
            "{} is not a directory; find searches directories",
            policy.display(&root)
        )));
    }
    let pattern = args.pattern.trim_start_matches("./");
    let whole_path = pattern.contains('/');
    let glob = GlobBuilder::new(pattern)
        .literal_separator(whole_path)
        .build()
        .map_err(|e| ToolError::failed(format!("invalid glob {}: {e}", args.pattern)))?
        .compile_matcher();
    let limit = args.limit.unwrap_or(DEFAULT_FIND_LIMIT).max(1);

    let walker = WalkBuilder::new(&root)
        .hidden(false)
        .git_ignore(true)
        .require_git(false)
        .follow_links(false)
        .sort_by_file_path(|a, b| a.cmp(b))
        .filter_entry(|e| e.file_name() != ".git")
        .build();
    let mut found = Vec::new();
    let mut more = false;
    for entry in walker {
        if cancel.is_cancelled() {
            return Err(ToolError::Aborted);
        }
        let Ok(entry) = entry else { continue };
        if entry.depth() == 0 {
            continue;
        }
        let Ok(relative) = entry.path().strip_prefix(&root) else {
            continue;
        };
        let hit = if whole_path {
            glob.is_match(relative)
        } else {
            glob.is_match(entry.file_name())
        };
        if !hit {
            continue;
        }
        if found.len() == limit {
            more = true;
            break;
        }
        let mut shown = policy.display(entry.path());
        if entry.file_type().is_some_and(|t| t.is_dir()) {
            shown.push('/');
        }
        found.push(shown);
    }
    found.sort();
    if found.is_empty() {
        return Ok(
            ToolOutput::text(format!("No files found matching {}", args.pattern))
                .with_details(json!({"results": 0, "limitReached": false})),
        );
    }
    let mut text = found.join("\n");
    if more {
        text.push_str(&format!(
            "\n\n[{limit} results limit reached. Use limit={} for more, or refine the pattern]",
            limit.saturating_mul(2)
        ));
    }
    Ok(ToolOutput::text(text).with_details(json!({"results": found.len(), "limitReached": more})))
}

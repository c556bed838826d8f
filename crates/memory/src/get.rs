//! `memory_get`: reading a window of lines of one memory file. Only `MEMORY.md`,
//! `memory.md` and `memory/**/*.md` inside the workspace may be read: absolute paths, `..`,
//! backslashes and symlinks leading out of the workspace are refused with the reason.
//! Text is decoded like the indexer does (invalid UTF-8 becomes U+FFFD) so the line
//! numbers of search hits point at the same lines here.

use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::{Component, Path};

use serde::Serialize;

use crate::error::MemoryError;
use crate::scan::is_markdown;

/// At most this many characters are returned; the rest is cut and `truncated` set.
pub const MAX_GET_CHARS: usize = 100_000;

/// A window of a memory file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct MemoryText {
    /// The path as normalised (`memory/2026-01-02.md`).
    pub path: String,
    /// First line returned, 1-based.
    pub from: usize,
    /// Last line returned (`from - 1` when none was).
    pub to: usize,
    /// Lines in the file.
    pub total_lines: usize,
    /// The lines, joined with `\n`.
    pub text: String,
    /// Whether the window was cut at [`MAX_GET_CHARS`].
    pub truncated: bool,
}

/// Reads lines `from..from+lines` (1-based; `from` defaults to 1, `lines` to all) of a
/// memory file. Blocking (plain file reads); see [`read_memory_async`].
pub fn read_memory(
    workspace: &Path,
    path: &str,
    from: Option<usize>,
    lines: Option<usize>,
) -> Result<MemoryText, MemoryError> {
    let rel = check_path(path)?;
    let refuse = |reason: &str| MemoryError::PathRefused {
        path: path.to_owned(),
        reason: reason.to_owned(),
    };
    let root = std::fs::canonicalize(workspace)
        .map_err(|e| MemoryError::io("cannot open the workspace", workspace, e))?;
    let full = root.join(&rel);
    let real = match std::fs::canonicalize(&full) {
        Ok(real) => real,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(MemoryError::NotFound(rel));
        }
        Err(e) => return Err(MemoryError::io("cannot read", full, e)),
    };
    if !real.starts_with(&root) {
        return Err(refuse("it is a symlink leading outside the workspace"));
    }
    if !real.is_file() {
        return Err(refuse("it is not a file"));
    }
    let file = File::open(&real).map_err(|e| MemoryError::io("cannot read", &full, e))?;
    let from = from.unwrap_or(1).max(1);
    let last = lines.map_or(usize::MAX, |n| from.saturating_add(n).saturating_sub(1));
    let mut reader = BufReader::new(file);
    let mut buf = Vec::new();
    let (mut line_no, mut to, mut text, mut truncated) = (0usize, from - 1, String::new(), false);
    loop {
        buf.clear();
        let n = reader
            .read_until(b'\n', &mut buf)
            .map_err(|e| MemoryError::io("cannot read", &full, e))?;
        if n == 0 {
            break;
        }
        line_no += 1;
        if line_no < from || line_no > last || truncated {
            continue;
        }
        let mut line = String::from_utf8_lossy(&buf).into_owned();
        if line.ends_with('\n') {
            line.pop();
            if line.ends_with('\r') {
                line.pop();
            }
        }
        if text.len() + line.len() + 1 > MAX_GET_CHARS && line_no > from {
            truncated = true;
            continue;
        }
        if line_no > from {
            text.push('\n');
        }
        text.push_str(&line);
        to = line_no;
    }
    Ok(MemoryText {
        path: rel,
        from,
        to,
        total_lines: line_no,
        text,
        truncated,
    })
}

/// [`read_memory`] on a blocking thread.
pub async fn read_memory_async(
    workspace: &Path,
    path: &str,
    from: Option<usize>,
    lines: Option<usize>,
) -> Result<MemoryText, MemoryError> {
    let (workspace, path) = (workspace.to_path_buf(), path.to_owned());
    tokio::task::spawn_blocking(move || read_memory(&workspace, &path, from, lines))
        .await
        .map_err(|e| MemoryError::Worker(e.to_string()))?
}

/// Validates and normalises a requested path (lexically; symlinks are checked after).
fn check_path(path: &str) -> Result<String, MemoryError> {
    let refuse = |reason: &str| MemoryError::PathRefused {
        path: path.to_owned(),
        reason: reason.to_owned(),
    };
    if path.trim().is_empty() {
        return Err(refuse("the path is empty"));
    }
    if path.contains(['\\', '\0']) {
        return Err(refuse("backslashes and NUL are not allowed; use a/b"));
    }
    let mut parts = Vec::new();
    for component in Path::new(path).components() {
        match component {
            Component::Normal(p) => parts.push(p.to_str().ok_or_else(|| refuse("not UTF-8"))?),
            Component::CurDir => {}
            Component::ParentDir => return Err(refuse("`..` is not allowed")),
            Component::RootDir | Component::Prefix(_) => {
                return Err(refuse(
                    "absolute paths are not allowed; give a workspace-relative path",
                ));
            }
        }
    }
    let rel = parts.join("/");
    let allowed = rel == "MEMORY.md"
        || rel == "memory.md"
        || (parts.len() >= 2
            && parts[0] == "memory"
            && parts.last().is_some_and(|n| is_markdown(n)));
    if !allowed {
        return Err(refuse("only MEMORY.md and memory/**/*.md can be read"));
    }
    Ok(rel)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths() {
        assert_eq!(
            check_path("./memory/a.md").ok().as_deref(),
            Some("memory/a.md")
        );
        assert_eq!(check_path("MEMORY.md").ok().as_deref(), Some("MEMORY.md"));
        for bad in [
            "",
            "/etc/passwd",
            "../MEMORY.md",
            "memory/../../x.md",
            "memory/a.txt",
            "AGENTS.md",
            "memory\\a.md",
            "memory",
        ] {
            assert!(
                matches!(check_path(bad), Err(MemoryError::PathRefused { .. })),
                "{bad}"
            );
        }
    }
}

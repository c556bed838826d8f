//! Which files are memory, and reading them safely. Memory is `MEMORY.md` (or
//! `memory.md`) at the workspace root plus every `*.md` under `memory/` (recursively,
//! hidden entries skipped). Symlinks are followed only while they stay inside the
//! workspace. Reading classifies each file: binary (a NUL byte) and over-size files are
//! skipped and reported; invalid UTF-8 is indexed lossily (U+FFFD replacements, the same
//! conversion `memory_get` uses, so line numbers agree) and reported. Nothing here writes.

use std::collections::HashSet;
use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::UNIX_EPOCH;

/// Deeper directories under `memory/` are ignored (and loops through symlinks cut).
const MAX_DEPTH: usize = 16;

/// A memory file found by the scan.
#[derive(Debug, Clone)]
pub struct Candidate {
    /// Workspace-relative path with `/` separators (`memory/2026-01-02.md`).
    pub rel: String,
    /// The path on disk.
    pub abs: PathBuf,
    /// Size in bytes (of the target, for symlinks).
    pub size: u64,
    /// Modification time, nanoseconds since the epoch (0 when unknown).
    pub mtime_ns: i64,
}

/// Something wrong with one memory file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FileProblem {
    /// Contains NUL bytes: not text. Skipped.
    Binary,
    /// Bigger than the limit. Skipped.
    TooLarge {
        /// The file's size.
        size: u64,
        /// The limit.
        limit: u64,
    },
    /// Not valid UTF-8: indexed with replacement characters.
    InvalidUtf8 {
        /// Byte offset of the first invalid sequence.
        offset: usize,
    },
    /// A symlink pointing outside the workspace. Skipped.
    SymlinkOutside,
    /// Could not be read (permissions, vanished, ...). What was indexed before is kept.
    Unreadable(String),
}

impl FileProblem {
    /// Whether the file is left out of the index (as opposed to indexed with a warning).
    pub fn skips(&self) -> bool {
        !matches!(self, Self::InvalidUtf8 { .. })
    }

    /// A one-line description for status output.
    pub fn describe(&self) -> String {
        match self {
            Self::Binary => "binary file (contains NUL bytes); skipped".into(),
            Self::TooLarge { size, limit } => {
                format!("too large ({size} bytes, limit {limit}); skipped")
            }
            Self::InvalidUtf8 { offset } => {
                format!("invalid UTF-8 at byte {offset}; indexed with replacement characters")
            }
            Self::SymlinkOutside => "symlink leading outside the workspace; skipped".into(),
            Self::Unreadable(e) => format!("cannot read: {e}; previous index kept"),
        }
    }
}

/// The result of scanning a workspace.
#[derive(Debug, Default)]
pub struct Scan {
    /// Files to index, sorted by path.
    pub files: Vec<Candidate>,
    /// Paths found but refused before reading (symlinks out, unreadable entries).
    pub refused: Vec<(String, FileProblem)>,
}

/// Lists the memory files of a workspace. A missing workspace or `memory/` is no error.
pub fn scan(workspace: &Path) -> Scan {
    let mut out = Scan::default();
    let Ok(root) = fs::canonicalize(workspace) else {
        return out;
    };
    let mut seen = HashSet::new();
    for name in ["MEMORY.md", "memory.md"] {
        consider(
            &root,
            &root.join(name),
            name.to_owned(),
            &mut seen,
            &mut out,
        );
    }
    let dir = root.join("memory");
    let mut visited = HashSet::new();
    walk(&root, &dir, "memory", 0, &mut visited, &mut seen, &mut out);
    out.files.sort_by(|a, b| a.rel.cmp(&b.rel));
    out
}

/// Adds a file if it exists, is a regular file (after following symlinks inside the
/// workspace) and was not already added under another name (case-insensitive systems).
fn consider(root: &Path, path: &Path, rel: String, seen: &mut HashSet<PathBuf>, out: &mut Scan) {
    let Ok(link_meta) = fs::symlink_metadata(path) else {
        return;
    };
    let real = match fs::canonicalize(path) {
        Ok(real) => real,
        Err(e) => {
            if link_meta.file_type().is_symlink() {
                return; // a dangling link is simply not a file
            }
            out.refused
                .push((rel, FileProblem::Unreadable(e.to_string())));
            return;
        }
    };
    if !real.starts_with(root) {
        out.refused.push((rel, FileProblem::SymlinkOutside));
        return;
    }
    let Ok(meta) = fs::metadata(&real) else {
        return;
    };
    if !meta.is_file() || !seen.insert(real) {
        return;
    }
    let mtime_ns = meta
        .modified()
        .ok()
        .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
        .and_then(|d| i64::try_from(d.as_nanos()).ok())
        .unwrap_or(0);
    out.files.push(Candidate {
        rel,
        abs: path.to_path_buf(),
        size: meta.len(),
        mtime_ns,
    });
}

fn walk(
    root: &Path,
    dir: &Path,
    rel: &str,
    depth: usize,
    visited: &mut HashSet<PathBuf>,
    seen: &mut HashSet<PathBuf>,
    out: &mut Scan,
) {
    if depth > MAX_DEPTH {
        return;
    }
    let Ok(real) = fs::canonicalize(dir) else {
        return;
    };
    if !real.starts_with(root) {
        out.refused
            .push((rel.to_owned(), FileProblem::SymlinkOutside));
        return;
    }
    if !real.is_dir() || !visited.insert(real) {
        return;
    }
    let entries = match fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) => {
            out.refused
                .push((rel.to_owned(), FileProblem::Unreadable(e.to_string())));
            return;
        }
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        // Names that are not UTF-8 cannot be named by the tools either; skip them.
        let Some(name) = name.to_str() else {
            continue;
        };
        if name.starts_with('.') {
            continue;
        }
        let path = entry.path();
        let child_rel = format!("{rel}/{name}");
        if fs::metadata(&path).is_ok_and(|m| m.is_dir()) {
            walk(root, &path, &child_rel, depth + 1, visited, seen, out);
        } else if is_markdown(name) {
            consider(root, &path, child_rel, seen, out);
        }
    }
}

/// `*.md`, any case.
pub fn is_markdown(name: &str) -> bool {
    name.len() > 3
        && name
            .get(name.len() - 3..)
            .is_some_and(|ext| ext.eq_ignore_ascii_case(".md"))
}

/// A file's text as the index sees it.
#[derive(Debug)]
pub enum Content {
    /// Text to index, possibly with a problem to report (invalid UTF-8).
    Text {
        /// The text (lossily decoded).
        text: String,
        /// SHA-256 of the raw bytes, hex.
        sha256: String,
        /// Set when the text was not valid UTF-8.
        problem: Option<FileProblem>,
    },
    /// Not indexed.
    Skipped(FileProblem),
}

/// Reads and classifies one file; never more than `limit` + 1 bytes are read.
pub fn read(path: &Path, limit: u64) -> Content {
    let file = match fs::File::open(path) {
        Ok(file) => file,
        Err(e) => return Content::Skipped(FileProblem::Unreadable(e.to_string())),
    };
    let mut bytes = Vec::new();
    if let Err(e) = file.take(limit.saturating_add(1)).read_to_end(&mut bytes) {
        return Content::Skipped(FileProblem::Unreadable(e.to_string()));
    }
    if bytes.len() as u64 > limit {
        let size = fs::metadata(path).map_or(bytes.len() as u64, |m| m.len());
        return Content::Skipped(FileProblem::TooLarge { size, limit });
    }
    if bytes.contains(&0) {
        return Content::Skipped(FileProblem::Binary);
    }
    let sha256 = crate::chunk::sha256_hex(&bytes);
    match String::from_utf8(bytes) {
        Ok(text) => Content::Text {
            text,
            sha256,
            problem: None,
        },
        Err(e) => {
            let offset = e.utf8_error().valid_up_to();
            let text = String::from_utf8_lossy(e.as_bytes()).into_owned();
            Content::Text {
                text,
                sha256,
                problem: Some(FileProblem::InvalidUtf8 { offset }),
            }
        }
    }
}

/// The date of a dated note (`memory/YYYY-MM-DD*.md`, in any subdirectory), as days since
/// 1970-01-01; `None` for `MEMORY.md` and undated files (which never decay).
pub fn dated_note_day(rel: &str) -> Option<i64> {
    let rest = rel.strip_prefix("memory/")?;
    let name = rest.rsplit('/').next()?;
    let date = name.get(..10)?;
    let b = date.as_bytes();
    if b.get(4) != Some(&b'-') || b.get(7) != Some(&b'-') {
        return None;
    }
    let year: i64 = date.get(..4)?.parse().ok()?;
    let month: i64 = date.get(5..7)?.parse().ok()?;
    let day: i64 = date.get(8..10)?.parse().ok()?;
    if !(1..=31).contains(&day) {
        return None;
    }
    // Counted from the 1st so a day past the month's end rolls over (`02-30` is March 1st),
    // as it always has.
    Some(pincer_base::time::epoch_day(year, month, 1)? + day - 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dated_notes() {
        assert_eq!(dated_note_day("memory/1970-01-02.md"), Some(1));
        assert_eq!(dated_note_day("memory/2000-03-01-trip.md"), Some(11_017));
        assert_eq!(dated_note_day("memory/x/2024-02-29.md"), Some(19_782));
        assert_eq!(dated_note_day("MEMORY.md"), None);
        assert_eq!(dated_note_day("memory/notes.md"), None);
        assert_eq!(dated_note_day("memory/2024-13-01.md"), None);
        assert_eq!(dated_note_day("memory/2024-02-30.md"), Some(19_783));
        assert_eq!(dated_note_day("memory/2024-02-32.md"), None);
        assert_eq!(dated_note_day("memory/2024-00-10.md"), None);
        assert_eq!(dated_note_day("memory/2024-01-00.md"), None);
        assert_eq!(dated_note_day("memory/20x4-01-01.md"), None);
    }

    #[test]
    fn markdown_names() {
        assert!(is_markdown("a.md") && is_markdown("B.MD"));
        assert!(!is_markdown(".md") && !is_markdown("a.txt") && !is_markdown("md"));
    }
}

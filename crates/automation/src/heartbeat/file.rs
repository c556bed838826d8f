//! HEARTBEAT.md: reading it from an agent's workspace and OpenClaw's
//! `isHeartbeatContentEffectivelyEmpty`, which lets a tick skip the model call when the
//! checklist has nothing in it.
//!
//! OpenClaw's rule, kept here: only a file that exists and is effectively empty skips the
//! tick. A missing or unreadable file does not — the default prompt says "if it exists", so
//! the model decides — and pending system events always run (the runner checks them).
//! "Effectively empty" is the union of OpenClaw's versions: blank lines, ATX headings
//! (`# x`, not `#tag`), empty list items and checkboxes (`-`, `- [ ]`, `* [x]`), code fence
//! markers, and HTML comments (also multi-line), nothing else.

use std::fs::File;
use std::io::{ErrorKind, Read};
use std::path::Path;

/// The checklist's file name in an agent workspace.
pub const HEARTBEAT_FILENAME: &str = "HEARTBEAT.md";

/// At most this much of HEARTBEAT.md is read. The file is meant to be a tiny checklist;
/// a huge one is certainly not empty, and reading all of it would only cost memory.
pub const MAX_HEARTBEAT_FILE_BYTES: u64 = 1024 * 1024;

/// What the workspace holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HeartbeatFile {
    /// No HEARTBEAT.md.
    Missing,
    /// It exists but could not be read (a directory, no permission…): the reason.
    Unreadable(String),
    /// Its text (invalid UTF-8 replaced, as OpenClaw's `readFile(…, "utf-8")` does);
    /// `truncated` when it was longer than [`MAX_HEARTBEAT_FILE_BYTES`].
    Present { content: String, truncated: bool },
}

impl HeartbeatFile {
    /// Whether the file exists and holds no task. Missing and unreadable files are not
    /// empty (OpenClaw runs the tick then), nor is a truncated one.
    pub fn is_effectively_empty(&self) -> bool {
        match self {
            Self::Present { content, truncated } => {
                !truncated && is_heartbeat_content_effectively_empty(content)
            }
            Self::Missing | Self::Unreadable(_) => false,
        }
    }

    /// Whether a tick skips the model call (`empty-heartbeat-file`): an effectively empty
    /// file and no pending events to handle.
    pub fn skips_tick(&self, has_pending_events: bool) -> bool {
        !has_pending_events && self.is_effectively_empty()
    }
}

/// Reads `<workspace_dir>/HEARTBEAT.md`. Never fails: every outcome is a variant. Blocking
/// and small; async callers may run it on the blocking pool.
#[expect(
    clippy::disallowed_methods,
    reason = "runs on the blocking pool: the gateway heartbeat runner (spawn_blocking)"
)]
pub fn read_heartbeat_file(workspace_dir: &Path) -> HeartbeatFile {
    let path = workspace_dir.join(HEARTBEAT_FILENAME);
    let file = match File::open(&path) {
        Ok(file) => file,
        Err(e) if e.kind() == ErrorKind::NotFound => return HeartbeatFile::Missing,
        Err(e) => return HeartbeatFile::Unreadable(e.to_string()),
    };
    let mut bytes = Vec::new();
    // One byte past the cap tells a file of exactly the cap from a longer one.
    if let Err(e) = file
        .take(MAX_HEARTBEAT_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
    {
        return HeartbeatFile::Unreadable(e.to_string());
    }
    let cap = usize::try_from(MAX_HEARTBEAT_FILE_BYTES).unwrap_or(usize::MAX);
    let truncated = bytes.len() > cap;
    bytes.truncate(cap);
    HeartbeatFile::Present {
        content: String::from_utf8_lossy(&bytes).into_owned(),
        truncated,
    }
}

/// OpenClaw's `isHeartbeatContentEffectivelyEmpty` for a file that exists.
pub fn is_heartbeat_content_effectively_empty(content: &str) -> bool {
    strip_html_comments(content).split('\n').all(|line| {
        let line = line.trim();
        line.is_empty() || is_heading(line) || is_empty_list_item(line) || is_fence(line)
    })
}

/// `<!--[\s\S]*?-->` removed; an unclosed comment stays (the regex would not match it).
fn strip_html_comments(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(open) = rest.find("<!--") {
        let Some(close) = rest[open + 4..].find("-->") else {
            break;
        };
        out.push_str(&rest[..open]);
        rest = &rest[open + 4 + close + 3..];
    }
    out.push_str(rest);
    out
}

/// `^#+(\s|$)`: an ATX heading, not `#hashtag`.
fn is_heading(line: &str) -> bool {
    let after = line.trim_start_matches('#');
    after.len() < line.len() && after.chars().next().is_none_or(char::is_whitespace)
}

/// `^[-*+]\s*(\[[\sXx]?\]\s*)?$` on a trimmed line.
fn is_empty_list_item(line: &str) -> bool {
    let Some(rest) = line.strip_prefix(['-', '*', '+']) else {
        return false;
    };
    let rest = rest.trim_start();
    if rest.is_empty() {
        return true;
    }
    let Some(inner) = rest.strip_prefix('[').and_then(|r| r.strip_suffix(']')) else {
        return false;
    };
    let mut chars = inner.chars();
    match (chars.next(), chars.next()) {
        (None, _) => true,
        (Some(c), None) => c.is_whitespace() || c == 'x' || c == 'X',
        _ => false,
    }
}

/// `^```[A-Za-z0-9_-]*$`: a fence marker with an optional language.
fn is_fence(line: &str) -> bool {
    line.strip_prefix("```").is_some_and(|lang| {
        lang.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    #![allow(clippy::disallowed_methods, reason = "tests set up files directly")]

    use super::*;

    #[test]
    fn only_headings_checkboxes_comments_and_blanks_are_empty() {
        let empty = [
            "",
            "   ",
            "\n\n\n",
            "\t\t",
            "# HEARTBEAT.md",
            "# HEARTBEAT.md\r\n\r\n",
            "# Header\n# Another comment",
            "## Subheader\n### Another",
            "#",
            "- [ ]\n* [x]\n+ [X]\n- []\n-\n*   ",
            "<!-- add tasks below -->",
            "# Tasks\n<!--\nmulti-line\nguidance\n-->\n- [ ]",
            "```\n```markdown\n",
            // The template a new workspace gets (pincer-turns) must count as empty.
            include_str!("../../../turns/src/workspace/templates/HEARTBEAT.md"),
        ];
        for text in empty {
            assert!(is_heartbeat_content_effectively_empty(text), "{text:?}");
        }
        let content = [
            "- Check email",
            "# HEARTBEAT.md\n- Task 1",
            "Remind me to call mom",
            "# HEARTBEAT.md\n## Tasks\nCheck the server logs\n",
            "#TODO",
            "- [ ] water the plants",
            "---",
            "<!-- unclosed comment",
            "```js\nrun()\n```",
            "# HEARTBEAT.md\n\nKeep this file empty unless you want a tiny checklist.\n",
        ];
        for text in content {
            assert!(!is_heartbeat_content_effectively_empty(text), "{text:?}");
        }
    }

    #[test]
    fn reading_the_file_never_fails() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(read_heartbeat_file(dir.path()), HeartbeatFile::Missing);
        assert!(
            !HeartbeatFile::Missing.skips_tick(false),
            "a missing file still runs"
        );

        let path = dir.path().join(HEARTBEAT_FILENAME);
        std::fs::write(&path, "# Checklist\n- [ ]\n").unwrap();
        let file = read_heartbeat_file(dir.path());
        assert!(file.is_effectively_empty());
        assert!(file.skips_tick(false));
        assert!(!file.skips_tick(true), "pending events always run");

        std::fs::write(&path, b"\xff\xfe\x00binary\x00").unwrap();
        let file = read_heartbeat_file(dir.path());
        assert!(matches!(
            &file,
            HeartbeatFile::Present {
                truncated: false,
                ..
            }
        ));
        assert!(!file.is_effectively_empty());

        let huge = vec![b' '; usize::try_from(MAX_HEARTBEAT_FILE_BYTES).unwrap() + 10];
        std::fs::write(&path, huge).unwrap();
        let file = read_heartbeat_file(dir.path());
        assert!(matches!(
            &file,
            HeartbeatFile::Present {
                truncated: true,
                ..
            }
        ));
        assert!(
            !file.is_effectively_empty(),
            "an unread tail may hold tasks"
        );

        std::fs::remove_file(&path).unwrap();
        std::fs::create_dir(&path).unwrap();
        let file = read_heartbeat_file(dir.path());
        assert!(matches!(file, HeartbeatFile::Unreadable(_)), "{file:?}");
        assert!(!file.skips_tick(false));
    }
}

//! The errors of this crate. Every problem with a config file names the file and, where the
//! text is at hand, the line and column; problems with a key also name its path, so a user
//! can go straight to the spot (`/home/u/.pincer/pincer.json5:7:5: agents.defaults.model: …`).

use std::fmt;
use std::path::PathBuf;

use crate::keypath::KeyPath;

/// A place in the config text: 1-based line and column (columns count characters, and a
/// CR LF pair ends one line, as json5's own syntax errors count them).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SourcePosition {
    pub line: usize,
    pub column: usize,
}

impl SourcePosition {
    /// The position of byte `offset` in `text` (clamped to the text; never panics).
    pub fn at_offset(text: &str, offset: usize) -> Self {
        let mut offset = offset.min(text.len());
        while !text.is_char_boundary(offset) {
            offset -= 1;
        }
        let p = json5::Position::from_offset(offset, text);
        Self {
            line: p.line + 1,
            column: p.column + 1,
        }
    }
}

impl fmt::Display for SourcePosition {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.line, self.column)
    }
}

/// One problem with one key of the config.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigIssue {
    /// Where in the document (empty: the document itself).
    pub path: KeyPath,
    /// Where in the text, when the text is known (not for a value about to be saved).
    pub position: Option<SourcePosition>,
    /// What is wrong, for a person.
    pub message: String,
}

/// Everything that can go wrong finding, reading, checking, editing or writing the config.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// Neither `PINCER_HOME` nor `HOME` is set.
    #[error("cannot find the Pincer home: neither PINCER_HOME nor HOME is set")]
    NoHome,
    /// The file exists but cannot be read.
    #[error("cannot read {}: {source}", path.display())]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// The file is larger than any sane config.
    #[error("{}: the config file is larger than {limit} bytes", path.display())]
    TooLarge { path: PathBuf, limit: u64 },
    /// The text is not JSON5.
    #[error("{origin}:{position}: syntax error: {message}")]
    Syntax {
        origin: String,
        position: SourcePosition,
        message: String,
    },
    /// The text is JSON5 but not a valid config: unknown keys, wrong types, bad values,
    /// missing environment variables, broken cross-references. One line per issue.
    #[error("{}", display_issues(origin, issues))]
    Invalid {
        origin: String,
        issues: Vec<ConfigIssue>,
    },
    /// A key path given to get/set/unset is malformed or cannot be followed.
    #[error("key path `{path}`: {reason}")]
    KeyPath { path: String, reason: String },
    /// Writing the file failed (nothing was replaced).
    #[error("cannot write the config: {}: {source}", path.display())]
    Write {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

impl ConfigError {
    /// An `Invalid` error with a single issue.
    pub(crate) fn invalid(origin: &str, issue: ConfigIssue) -> Self {
        Self::Invalid {
            origin: origin.to_owned(),
            issues: vec![issue],
        }
    }
}

fn display_issues(origin: &str, issues: &[ConfigIssue]) -> String {
    let lines: Vec<String> = issues
        .iter()
        .map(|issue| {
            let mut line = origin.to_owned();
            if let Some(position) = issue.position {
                line.push_str(&format!(":{position}"));
            }
            line.push_str(": ");
            if !issue.path.is_root() {
                line.push_str(&format!("{}: ", issue.path));
            }
            line.push_str(&issue.message);
            line
        })
        .collect();
    lines.join("\n")
}

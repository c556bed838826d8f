//! Key paths: how errors name a key (`agents.list[0].id`) and how `pincer config get/set/unset`
//! address one. Keys are joined with `.`, array indices are `[n]`, and a key that contains
//! `.`, `[`, `]`, `"` or whitespace is written as a JSON string in brackets
//! (`session.identityLinks["a.b"]`), so every path prints in a form that parses back.

use std::fmt;
use std::str::FromStr;

use crate::error::ConfigError;

/// One step of a key path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PathSegment {
    /// A key of an object.
    Key(String),
    /// An index of an array.
    Index(usize),
}

/// A path from the document root to one value. The empty path is the root.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct KeyPath(Vec<PathSegment>);

impl KeyPath {
    /// The root of the document.
    pub fn root() -> Self {
        Self::default()
    }

    /// Whether this is the root.
    pub fn is_root(&self) -> bool {
        self.0.is_empty()
    }

    /// The steps, root first.
    pub fn segments(&self) -> &[PathSegment] {
        &self.0
    }

    /// This path extended by object key `key`.
    pub fn key(&self, key: &str) -> Self {
        let mut next = self.clone();
        next.0.push(PathSegment::Key(key.to_owned()));
        next
    }

    /// This path extended by array index `index`.
    pub fn index(&self, index: usize) -> Self {
        let mut next = self.clone();
        next.0.push(PathSegment::Index(index));
        next
    }

    pub(crate) fn from_segments(segments: Vec<PathSegment>) -> Self {
        Self(segments)
    }

    /// The path serde_path_to_error tracked; an `Unknown` step (a value serde could not
    /// name) ends it, so the path still points at the closest known ancestor.
    pub(crate) fn from_serde(path: &serde_path_to_error::Path) -> Self {
        use serde_path_to_error::Segment;
        let mut segments = Vec::new();
        for segment in path {
            match segment {
                Segment::Seq { index } => segments.push(PathSegment::Index(*index)),
                Segment::Map { key } => segments.push(PathSegment::Key(key.clone())),
                Segment::Enum { variant } => segments.push(PathSegment::Key(variant.clone())),
                Segment::Unknown => break,
            }
        }
        Self(segments)
    }

    /// Parses `agents.list[0].id`, `bindings[1].match.channel`, `a["key.with.dots"]`.
    pub fn parse(text: &str) -> Result<Self, ConfigError> {
        let fail = |reason: &str| ConfigError::KeyPath {
            path: text.to_owned(),
            reason: reason.to_owned(),
        };
        let mut segments = Vec::new();
        let mut rest = text;
        let mut expect_key = true; // at the start or right after a `.`
        while !rest.is_empty() || expect_key {
            let bracket_allowed = !expect_key || segments.is_empty();
            if let Some(after) = rest.strip_prefix('[').filter(|_| bracket_allowed) {
                let (segment, after) = parse_bracket(after).map_err(fail)?;
                segments.push(segment);
                rest = after;
                expect_key = false;
            } else if expect_key {
                let end = rest
                    .find(|c: char| !is_bare_key_char(c))
                    .unwrap_or(rest.len());
                if end == 0 {
                    return Err(fail(if text.is_empty() {
                        "the path is empty"
                    } else {
                        "expected a key name"
                    }));
                }
                segments.push(PathSegment::Key(rest[..end].to_owned()));
                rest = &rest[end..];
                expect_key = false;
            } else if let Some(after) = rest.strip_prefix('.') {
                rest = after;
                expect_key = true;
            } else {
                return Err(fail("expected `.` or `[` after a key"));
            }
        }
        Ok(Self(segments))
    }
}

/// `[12]` or `["a key"]`, after the `[`.
fn parse_bracket(text: &str) -> Result<(PathSegment, &str), &'static str> {
    if text.starts_with('"') {
        // Find the closing quote, stepping over escapes, then let serde_json decode them.
        let mut escaped = false;
        let mut close = None;
        for (i, c) in text.char_indices().skip(1) {
            match c {
                _ if escaped => escaped = false,
                '\\' => escaped = true,
                '"' => {
                    close = Some(i);
                    break;
                }
                _ => {}
            }
        }
        let close = close.ok_or("unterminated quoted key")?;
        let key: String =
            serde_json::from_str(&text[..=close]).map_err(|_| "invalid quoted key")?;
        let after = text[close + 1..]
            .strip_prefix(']')
            .ok_or("expected `]` after a quoted key")?;
        return Ok((PathSegment::Key(key), after));
    }
    let end = text.find(']').ok_or("expected `]`")?;
    let digits = &text[..end];
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err("an index must be a number, like [0]");
    }
    let index = digits.parse().map_err(|_| "the index is too large")?;
    Ok((PathSegment::Index(index), &text[end + 1..]))
}

fn is_bare_key_char(c: char) -> bool {
    !matches!(c, '.' | '[' | ']' | '"') && !c.is_whitespace() && !c.is_control()
}

impl FromStr for KeyPath {
    type Err = ConfigError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::parse(s)
    }
}

impl fmt::Display for KeyPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, segment) in self.0.iter().enumerate() {
            match segment {
                PathSegment::Index(index) => write!(f, "[{index}]")?,
                PathSegment::Key(key) if !key.is_empty() && key.chars().all(is_bare_key_char) => {
                    if i > 0 {
                        f.write_str(".")?;
                    }
                    f.write_str(key)?;
                }
                PathSegment::Key(key) => {
                    let quoted = serde_json::to_string(key).map_err(|_| fmt::Error)?;
                    write!(f, "[{quoted}]")?;
                }
            }
        }
        Ok(())
    }
}

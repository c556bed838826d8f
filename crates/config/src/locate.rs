//! Where a key path stands in JSON5 text. json5 reports line and column for its own syntax
//! errors but builds values without spans, and serde's errors (unknown key, wrong type) and
//! our own checks only know a key path; so this small scanner walks the text along the path
//! and returns the position of the key (for an object member) or of the element (for an
//! array index). It understands exactly what can sit between values in JSON5: whitespace,
//! `//` and `/* */` comments, quoted (single or double) and unquoted keys, escapes, trailing
//! commas. A span-keeping parser crate (json-five) would also do, but it is a second JSON5
//! grammar to trust for ~150 lines of scanning that never allocates a tree.
//!
//! It is best effort by design: on text that is not valid JSON5 it returns `None` or a
//! plausible spot, never panics and never loops (every step consumes input).

use json5::char::{is_json5_identifier, is_json5_line_terminator, is_json5_whitespace};

use crate::error::SourcePosition;
use crate::keypath::{KeyPath, PathSegment};

/// The line and column of `path` in `text`: the key of the object member it names, or the
/// start of the array element. The root path gives the start of the document's value.
/// Keys are unique in any document that loads; if one repeats, the first is found.
pub fn locate(text: &str, path: &KeyPath) -> Option<SourcePosition> {
    locate_offset(text, path, 0).map(|offset| SourcePosition::at_offset(text, offset))
}

/// Like [`locate`], but the last key of `path` is its `repeat`-th occurrence (0 is the
/// first): where a repeated key repeats.
pub(crate) fn locate_repeat(text: &str, path: &KeyPath, repeat: usize) -> Option<SourcePosition> {
    locate_offset(text, path, repeat).map(|offset| SourcePosition::at_offset(text, offset))
}

/// Stops at the wanted member instead of reading the whole object, so walking a path
/// costs one pass over the text before it, however deep the path.
fn locate_offset(text: &str, path: &KeyPath, repeat: usize) -> Option<usize> {
    let mut scanner = Scanner { text, pos: 0 };
    scanner.skip_trivia();
    let mut found = scanner.pos;
    let last = path.segments().len().saturating_sub(1);
    for (i, segment) in path.segments().iter().enumerate() {
        match segment {
            PathSegment::Key(key) => {
                let skip = if i == last { repeat } else { 0 };
                let (key_at, value_at) = scanner.find_member(key, skip)?;
                found = key_at;
                scanner.pos = value_at;
            }
            PathSegment::Index(index) => {
                found = scanner.find_element(*index)?;
                scanner.pos = found;
            }
        }
    }
    Some(found)
}

/// Whether `text` holds nothing but whitespace and complete comments (an empty config).
pub(crate) fn is_blank(text: &str) -> bool {
    let mut scanner = Scanner { text, pos: 0 };
    scanner.skip_trivia() && scanner.pos == text.len()
}

/// The offset of the first thing after the document's value that is not whitespace or a
/// comment, if any. Only called on text whose first value json5 has already parsed.
pub(crate) fn trailing_offset(text: &str) -> Option<usize> {
    let mut scanner = Scanner { text, pos: 0 };
    scanner.skip_trivia();
    scanner.skip_value()?;
    scanner.skip_trivia();
    (scanner.pos < text.len()).then_some(scanner.pos)
}

struct Scanner<'t> {
    text: &'t str,
    /// Byte offset, always on a char boundary.
    pos: usize,
}

impl Scanner<'_> {
    fn peek(&self) -> Option<char> {
        self.text[self.pos..].chars().next()
    }

    fn bump(&mut self) {
        if let Some(c) = self.peek() {
            self.pos += c.len_utf8();
        }
    }

    /// Skips whitespace and comments. False if a block comment never ends (then the
    /// scanner stands at the end of the text).
    fn skip_trivia(&mut self) -> bool {
        loop {
            let rest = &self.text[self.pos..];
            match self.peek() {
                Some(c) if is_json5_whitespace(c) => self.bump(),
                Some('/') if rest.starts_with("//") => {
                    let end = rest.find(is_json5_line_terminator).unwrap_or(rest.len());
                    self.pos += end;
                }
                Some('/') if rest.starts_with("/*") => match rest[2..].find("*/") {
                    Some(end) => self.pos += 2 + end + 2,
                    None => {
                        self.pos = self.text.len();
                        return false;
                    }
                },
                _ => return true,
            }
        }
    }

    /// At `{`: the key and value offsets of the member named `wanted`, after passing
    /// `skip` earlier members of that name.
    fn find_member(&mut self, wanted: &str, mut skip: usize) -> Option<(usize, usize)> {
        self.eat('{')?;
        loop {
            self.next_item('}')?;
            let key_at = self.pos;
            let key = self.read_key()?;
            self.skip_trivia();
            self.eat(':')?;
            self.skip_trivia();
            if key == wanted {
                if skip == 0 {
                    return Some((key_at, self.pos));
                }
                skip -= 1;
            }
            self.skip_value()?;
        }
    }

    /// At `[`: the offset of element `wanted`.
    fn find_element(&mut self, wanted: usize) -> Option<usize> {
        self.eat('[')?;
        let mut index = 0;
        loop {
            self.next_item(']')?;
            if index == wanted {
                return Some(self.pos);
            }
            self.skip_value()?;
            index += 1;
        }
    }

    /// Past `expected`; `None` if something else is next.
    fn eat(&mut self, expected: char) -> Option<()> {
        if self.peek()? != expected {
            return None;
        }
        self.bump();
        Some(())
    }

    /// Inside an object or array: past trivia and separating commas to the next item;
    /// `None` at `close` (the end of the container) or the end of the text.
    fn next_item(&mut self, close: char) -> Option<()> {
        loop {
            self.skip_trivia();
            match self.peek()? {
                c if c == close => return None,
                ',' => self.bump(),
                _ => return Some(()),
            }
        }
    }

    /// A quoted or unquoted (identifier) key, with escapes decoded as json5 decodes them.
    fn read_key(&mut self) -> Option<String> {
        let start = self.pos;
        if matches!(self.peek()?, '"' | '\'') {
            self.skip_string()?;
            return json5::from_str::<String>(&self.text[start..self.pos]).ok();
        }
        while let Some(c) = self.peek() {
            if c == '\\' || is_json5_identifier(c) {
                self.bump();
            } else {
                break;
            }
        }
        let key = &self.text[start..self.pos];
        if key.is_empty() {
            return None;
        }
        if !key.contains('\\') {
            return Some(key.to_owned());
        }
        // `\u0061b: 1` is the key "ab"; let json5 decode it as it did when parsing.
        let object: serde_json::Map<String, serde_json::Value> =
            json5::from_str(&format!("{{{key}:0}}")).ok()?;
        object.into_iter().next().map(|(key, _)| key)
    }

    /// At a quote: past the matching quote.
    fn skip_string(&mut self) -> Option<()> {
        let quote = self.peek()?;
        self.bump();
        loop {
            let c = self.peek()?;
            self.bump();
            if c == '\\' {
                self.peek()?;
                self.bump();
            } else if c == quote {
                return Some(());
            }
        }
    }

    /// Past one whole value: a string, a scalar, or an object/array with everything inside
    /// (iteratively, so nesting depth costs no stack).
    fn skip_value(&mut self) -> Option<()> {
        let mut depth = 0usize;
        loop {
            self.skip_trivia();
            match self.peek()? {
                '{' | '[' => {
                    self.bump();
                    depth += 1;
                }
                '}' | ']' => {
                    depth = depth.checked_sub(1)?;
                    self.bump();
                }
                ',' | ':' => {
                    if depth == 0 {
                        return None;
                    }
                    self.bump();
                }
                '"' | '\'' => self.skip_string()?,
                _ => self.skip_word(),
            }
            if depth == 0 {
                return Some(());
            }
        }
    }

    /// A number, literal or unquoted key: up to the next delimiter (at least one char).
    fn skip_word(&mut self) {
        self.bump();
        while let Some(c) = self.peek() {
            if is_json5_whitespace(c)
                || matches!(c, ',' | ':' | '[' | ']' | '{' | '}' | '"' | '\'' | '/')
            {
                break;
            }
            self.bump();
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    fn at(text: &str, path: &str) -> Option<String> {
        locate(text, &KeyPath::parse(path).unwrap()).map(|p| p.to_string())
    }

    #[test]
    fn finds_keys_through_comments_quotes_and_trailing_commas() {
        let text =
            "// head\n{\n  /* a: 1 */ a: { 'b': [1, /* ] */ {c: \"x}\"}, ], },\n  \"d\" : 2,\n}\n";
        assert_eq!(at(text, "a").as_deref(), Some("3:14"));
        assert_eq!(at(text, "a.b").as_deref(), Some("3:19"));
        assert_eq!(at(text, "a.b[0]").as_deref(), Some("3:25"));
        assert_eq!(at(text, "a.b[1]").as_deref(), Some("3:36"));
        assert_eq!(at(text, "a.b[1].c").as_deref(), Some("3:37"));
        assert_eq!(at(text, "d").as_deref(), Some("4:3"));
        assert_eq!(at(text, "a.b[2]"), None);
        assert_eq!(at(text, "zz"), None);
    }

    #[test]
    fn repeated_keys_and_escaped_keys() {
        let text = "{a: 1,\n a: 2, '\\u0062': 3, \\u0063d: 4}";
        assert_eq!(at(text, "a").as_deref(), Some("1:2"));
        let second = locate_repeat(text, &KeyPath::parse("a").unwrap(), 1);
        assert_eq!(second.map(|p| p.to_string()).as_deref(), Some("2:2"));
        assert_eq!(locate_repeat(text, &KeyPath::parse("a").unwrap(), 2), None);
        assert_eq!(at(text, "b").as_deref(), Some("2:8"));
        assert_eq!(at(text, "cd").as_deref(), Some("2:21"));
    }

    #[test]
    fn crlf_counts_as_one_line_break() {
        assert_eq!(at("{\r\n\r\n  x: 1}", "x").as_deref(), Some("3:3"));
    }

    #[test]
    fn blank_and_trailing() {
        assert!(is_blank(" // c\n /* x */ \n"));
        assert!(!is_blank("/* open"));
        assert!(!is_blank("{}"));
        assert_eq!(trailing_offset("{a: [1]} // ok\n"), None);
        assert_eq!(trailing_offset("{a: [1]} }"), Some(9));
    }

    #[test]
    fn garbage_never_panics() {
        for text in [
            "{",
            "[",
            "{a",
            "{a:",
            "{'a",
            "]]",
            "\\",
            "{\"\\",
            "[[[",
            "{a: 1 b: 2}",
        ] {
            let _ = at(text, "a");
            let _ = at(text, "a[3].b");
            let _ = trailing_offset(text);
            let _ = is_blank(text);
        }
    }
}

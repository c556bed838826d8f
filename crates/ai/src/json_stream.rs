//! Best-effort parsing of JSON that is still arriving (tool-call arguments mid-stream),
//! like pi's `parseStreamingJson`: complete JSON parses exactly; a truncated prefix yields
//! every value that is already certain, plus a string that is still growing.
//!
//! Hand-written because no maintained crate does "parse a prefix" and the job is small.

use serde_json::{Map, Number, Value};

const MAX_DEPTH: usize = 128;

/// Parse `text`, which may be a truncated JSON document. Never fails: input that is not
/// JSON at all yields an empty object, as pi does.
pub fn parse_partial_json(text: &str) -> Value {
    if let Ok(value) = serde_json::from_str::<Value>(text) {
        return value;
    }
    let mut parser = Parser {
        bytes: text.as_bytes(),
        text,
        pos: 0,
    };
    parser.skip_ws();
    match parser.value(0) {
        Some(value) => value,
        None => Value::Object(Map::new()),
    }
}

struct Parser<'a> {
    bytes: &'a [u8],
    text: &'a str,
    pos: usize,
}

/// Outcome of parsing one value from a prefix.
impl Parser<'_> {
    fn skip_ws(&mut self) {
        while self.pos < self.bytes.len() && self.bytes[self.pos].is_ascii_whitespace() {
            self.pos += 1;
        }
    }

    fn at_end(&self) -> bool {
        self.pos >= self.bytes.len()
    }

    /// A value, or `None` when nothing certain can be said about it yet (or it is invalid).
    fn value(&mut self, depth: usize) -> Option<Value> {
        if depth > MAX_DEPTH {
            self.pos = self.bytes.len();
            return None;
        }
        match *self.bytes.get(self.pos)? {
            b'{' => Some(self.object(depth)),
            b'[' => Some(self.array(depth)),
            b'"' => self.string().map(|(s, _)| Value::String(s)),
            b't' => self.literal("true", Value::Bool(true)),
            b'f' => self.literal("false", Value::Bool(false)),
            b'n' => self.literal("null", Value::Null),
            b'-' | b'0'..=b'9' => self.number(),
            _ => {
                self.pos = self.bytes.len();
                None
            }
        }
    }

    /// Moves to the next item of an object or array, past white space and commas. False
    /// where the input ends or `close` ends the container (consumed).
    fn before_item(&mut self, close: u8) -> bool {
        loop {
            self.skip_ws();
            match self.bytes.get(self.pos) {
                None => return false,
                Some(&b) if b == close => {
                    self.pos += 1;
                    return false;
                }
                Some(b',') => self.pos += 1,
                Some(_) => return true,
            }
        }
    }

    fn object(&mut self, depth: usize) -> Value {
        let mut map = Map::new();
        self.pos += 1;
        while let Some((key, value)) = self.member(depth) {
            map.insert(key, value);
        }
        Value::Object(map)
    }

    /// The next member of an object; None where the object ends, or the input ends or
    /// breaks off before the member is whole.
    fn member(&mut self, depth: usize) -> Option<(String, Value)> {
        if !self.before_item(b'}') {
            return None;
        }
        if self.bytes.get(self.pos) != Some(&b'"') {
            self.pos = self.bytes.len();
            return None;
        }
        let (key, complete) = self.string()?;
        if !complete {
            return None;
        }
        self.skip_ws();
        if self.bytes.get(self.pos) != Some(&b':') {
            self.pos = self.bytes.len();
            return None;
        }
        self.pos += 1;
        self.skip_ws();
        Some((key, self.value(depth + 1)?))
    }

    fn array(&mut self, depth: usize) -> Value {
        let mut items = Vec::new();
        self.pos += 1;
        while self.before_item(b']') {
            let Some(value) = self.value(depth + 1) else {
                break;
            };
            items.push(value);
        }
        Value::Array(items)
    }

    /// A string starting at `"`; returns its value and whether its closing quote arrived.
    fn string(&mut self) -> Option<(String, bool)> {
        let start = self.pos;
        self.pos += 1;
        let mut escaped = false;
        while self.pos < self.bytes.len() {
            let b = self.bytes[self.pos];
            if escaped {
                escaped = false;
            } else if b == b'\\' {
                escaped = true;
            } else if b == b'"' {
                self.pos += 1;
                let raw = &self.text[start..self.pos];
                return serde_json::from_str::<String>(raw).ok().map(|s| (s, true));
            }
            self.pos += 1;
        }
        // Truncated: drop a dangling escape (and a partial \uXXXX), then close the string.
        let mut body = &self.text[start + 1..];
        if let Some(cut) = body.rfind('\\') {
            let tail = &body[cut..];
            let complete_escape =
                tail.len() >= 2 && (tail.as_bytes()[1] != b'u' || tail.len() >= 6);
            if !complete_escape {
                body = &body[..cut];
            }
        }
        let mut quoted = String::with_capacity(body.len() + 2);
        quoted.push('"');
        quoted.push_str(body);
        quoted.push('"');
        let value = serde_json::from_str::<String>(&quoted).ok()?;
        Some((value, false))
    }

    fn literal(&mut self, word: &str, value: Value) -> Option<Value> {
        let rest = &self.bytes[self.pos..];
        if rest.starts_with(word.as_bytes()) {
            self.pos += word.len();
            Some(value)
        } else {
            // A prefix of the literal is not yet a value; anything else is invalid.
            self.pos = self.bytes.len();
            None
        }
    }

    fn number(&mut self) -> Option<Value> {
        let start = self.pos;
        while self.pos < self.bytes.len()
            && matches!(
                self.bytes[self.pos],
                b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9'
            )
        {
            self.pos += 1;
        }
        let raw = &self.text[start..self.pos];
        if self.at_end() {
            // The number may still be growing; only a complete-looking one is certain enough.
            return serde_json::from_str::<Number>(raw).ok().map(Value::Number);
        }
        serde_json::from_str::<Number>(raw).ok().map(Value::Number)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn complete_json_parses_exactly() {
        assert_eq!(
            parse_partial_json(r#"{"a":[1,2,{"b":null}]}"#),
            json!({"a":[1,2,{"b":null}]})
        );
    }

    #[test]
    fn prefixes_yield_what_is_certain() {
        assert_eq!(parse_partial_json(""), json!({}));
        assert_eq!(parse_partial_json("{"), json!({}));
        assert_eq!(parse_partial_json(r#"{"pa"#), json!({}));
        assert_eq!(parse_partial_json(r#"{"path""#), json!({}));
        assert_eq!(
            parse_partial_json(r#"{"path": "/tm"#),
            json!({"path": "/tm"})
        );
        assert_eq!(parse_partial_json(r#"{"a": 1, "b": tr"#), json!({"a": 1}));
        assert_eq!(
            parse_partial_json(r#"{"a": [1, 2, "x"#),
            json!({"a": [1, 2, "x"]})
        );
        assert_eq!(parse_partial_json(r#"{"a": "line\"#), json!({"a": "line"}));
        assert_eq!(parse_partial_json(r#"{"a": "caf\u00"#), json!({"a": "caf"}));
        assert_eq!(
            parse_partial_json(r#"{"a": "caf\u00e9"#),
            json!({"a": "café"})
        );
        assert_eq!(parse_partial_json(r#"{"n": -"#), json!({}));
        assert_eq!(parse_partial_json(r#"{"n": 12"#), json!({"n": 12}));
        assert_eq!(
            parse_partial_json(r#"{"o": {"p": true}, "#),
            json!({"o": {"p": true}})
        );
    }

    #[test]
    fn garbage_and_deep_nesting_never_panic() {
        assert_eq!(parse_partial_json("}{"), json!({}));
        assert_eq!(parse_partial_json("nonsense"), json!({}));
        let deep = "[".repeat(100_000);
        let _ = parse_partial_json(&deep);
        let deep_obj = "{\"a\":".repeat(50_000);
        let _ = parse_partial_json(&deep_obj);
    }

    proptest::proptest! {
        #[test]
        fn every_prefix_of_valid_json_parses_without_panic(cut in 0usize..200) {
            let doc = r#"{"path":"src/ma\"in.rs","edits":[{"oldText":"a\nb","newText":"ü€"}],"n":-1.5e3,"ok":true,"z":null}"#;
            let mut end = cut.min(doc.len());
            while !doc.is_char_boundary(end) { end -= 1; }
            let value = parse_partial_json(&doc[..end]);
            proptest::prop_assert!(value.is_object());
        }
    }
}

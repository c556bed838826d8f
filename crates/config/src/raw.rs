//! JSON5 text to a `serde_json::Value`, as written: the raw document every later step (env
//! substitution, typed loading, get/set/unset) works on. json5 builds the tree through our
//! own visitor so that three things a plain `json5::from_str::<Value>` lets through become
//! clear errors: nesting deeper than [`MAX_DEPTH`] (json5 recurses without a limit, so deep
//! `[[[[…` would overflow the stack), a repeated key (the first value would vanish silently),
//! and a number JSON cannot hold (`NaN`, `Infinity`, `1e999` would turn into `null`).

use std::cell::RefCell;
use std::fmt;

use serde::de::{self, DeserializeSeed, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Number, Value};

use crate::error::{ConfigError, ConfigIssue, SourcePosition};
use crate::keypath::{KeyPath, PathSegment};
use crate::locate::{is_blank, locate, locate_repeat, trailing_offset};

/// The deepest nesting of objects and arrays accepted. A real config is under 10 deep.
pub const MAX_DEPTH: usize = 64;

/// Parses JSON5 (plain JSON included) into the raw document. Blank text (only whitespace
/// and comments) is an empty object. `origin` names the text in errors (usually the
/// file's path). The document need not be an object here; typed loading checks that.
pub fn parse_raw(text: &str, origin: &str) -> Result<Value, ConfigError> {
    if is_blank(text) {
        return Ok(Value::Object(Map::new()));
    }
    let state = ParseState::default();
    let mut deserializer = json5::Deserializer::from_str(text);
    let parsed = ValueSeed {
        state: &state,
        depth: 0,
    }
    .deserialize(&mut deserializer);
    if let Some(failure) = state.failure.into_inner() {
        // One of our own checks stopped the parse: name the key it concerns (for a
        // repeated key, where it repeats).
        let fallback = parsed.err().and_then(|e| e.position());
        let path = failure.path;
        let located = match failure.kind {
            FailureKind::RepeatedKey => locate_repeat(text, &path, 1),
            FailureKind::Value => locate(text, &path),
        };
        let position = located.or_else(|| {
            fallback.map(|p| SourcePosition {
                line: p.line + 1,
                column: p.column + 1,
            })
        });
        return Err(ConfigError::invalid(
            origin,
            ConfigIssue {
                path,
                position,
                message: failure.message,
            },
        ));
    }
    let value = parsed.map_err(|e| syntax_error(text, origin, &e))?;
    if let Some(offset) = trailing_offset(text) {
        return Err(ConfigError::Syntax {
            origin: origin.to_owned(),
            position: SourcePosition::at_offset(text, offset),
            message: "unexpected text after the end of the document".to_owned(),
        });
    }
    Ok(value)
}

/// json5's message without its own " at line L column C" suffix (we print `file:L:C:`),
/// and end-of-file errors placed at the end of the text, where the user must add something.
fn syntax_error(text: &str, origin: &str, error: &json5::Error) -> ConfigError {
    use json5::ErrorCode as C;
    let start = error.position().map(|p| SourcePosition {
        line: p.line + 1,
        column: p.column + 1,
    });
    let eof_in = match error.code() {
        Some(C::EofParsingArray) => Some("an array"),
        Some(C::EofParsingBool) => Some("a boolean"),
        Some(C::EofParsingComment) => Some("a comment"),
        Some(C::EofParsingEscapeSequence) => Some("an escape sequence"),
        Some(C::EofParsingIdentifier) => Some("a key"),
        Some(C::EofParsingNull) => Some("null"),
        Some(C::EofParsingNumber) => Some("a number"),
        Some(C::EofParsingObject) => Some("an object"),
        Some(C::EofParsingString) => Some("a string"),
        Some(C::EofParsingValue) => Some("a value"),
        _ => None,
    };
    let end = SourcePosition::at_offset(text, text.len());
    let (position, message) = match (eof_in, start) {
        // json5 places an end-of-file error at the innermost `{`/`[` still open.
        (Some(what), Some(open)) if open != end => (
            end,
            format!("unexpected end of file in {what} (the bracket at {open} is not closed)"),
        ),
        (Some(what), _) => (end, format!("unexpected end of file in {what}")),
        (None, start) => {
            let message = match error.code() {
                Some(code) => code.to_string(),
                None => {
                    let full = error.to_string();
                    match full.rfind(" at line ") {
                        Some(cut) if start.is_some() => full[..cut].to_owned(),
                        _ => full,
                    }
                }
            };
            (start.unwrap_or(end), message)
        }
    };
    ConfigError::Syntax {
        origin: origin.to_owned(),
        position,
        message,
    }
}

/// What the visitor shares while json5 drives it: the path to the value being built, and
/// the first check that failed (serde errors carry only a message, so the path travels here).
#[derive(Default)]
struct ParseState {
    path: RefCell<Vec<PathSegment>>,
    failure: RefCell<Option<Failure>>,
}

struct Failure {
    path: KeyPath,
    kind: FailureKind,
    message: String,
}

enum FailureKind {
    /// The value at the path is refused (too deep, not a finite number).
    Value,
    /// The last key of the path appears a second time in its object.
    RepeatedKey,
}

impl ParseState {
    /// Runs `read` with `segment` on the path being read, so a failure inside names it.
    fn within<T>(&self, segment: PathSegment, read: impl FnOnce() -> T) -> T {
        self.path.borrow_mut().push(segment);
        let result = read();
        self.path.borrow_mut().pop();
        result
    }

    fn fail<E: de::Error>(&self, repeated_key: Option<String>, message: String) -> E {
        let mut segments = self.path.borrow().clone();
        let kind = match repeated_key {
            Some(key) => {
                segments.push(PathSegment::Key(key));
                FailureKind::RepeatedKey
            }
            None => FailureKind::Value,
        };
        let error = E::custom(&message);
        self.failure.borrow_mut().get_or_insert(Failure {
            path: KeyPath::from_segments(segments),
            kind,
            message,
        });
        error
    }
}

#[derive(Clone, Copy)]
struct ValueSeed<'s> {
    state: &'s ParseState,
    /// How many objects/arrays enclose this value.
    depth: usize,
}

impl<'de> DeserializeSeed<'de> for ValueSeed<'_> {
    type Value = Value;

    fn deserialize<D: de::Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl ValueSeed<'_> {
    fn enter<E: de::Error>(self) -> Result<Self, E> {
        if self.depth >= MAX_DEPTH {
            return Err(self
                .state
                .fail(None, format!("nested deeper than {MAX_DEPTH} levels")));
        }
        Ok(Self {
            state: self.state,
            depth: self.depth + 1,
        })
    }
}

impl<'de> Visitor<'de> for ValueSeed<'_> {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON5 value")
    }

    fn visit_unit<E: de::Error>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_none<E: de::Error>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Value, E> {
        Ok(Value::Number(v.into()))
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Value, E> {
        Ok(Value::Number(v.into()))
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Value, E> {
        Number::from_f64(v).map(Value::Number).ok_or_else(|| {
            self.state.fail(
                None,
                "not a finite number (NaN, Infinity and numbers beyond ±1.8e308 cannot be stored)"
                    .to_owned(),
            )
        })
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_owned()))
    }

    fn visit_string<E: de::Error>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let inner = self.enter()?;
        let mut items = Vec::new();
        loop {
            let item = self.state.within(PathSegment::Index(items.len()), || {
                seq.next_element_seed(inner)
            });
            match item? {
                Some(item) => items.push(item),
                None => return Ok(Value::Array(items)),
            }
        }
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let inner = self.enter()?;
        let mut object = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            if object.contains_key(&key) {
                let message = format!("duplicate key \"{key}\"");
                return Err(self.state.fail(Some(key), message));
            }
            let value = self
                .state
                .within(PathSegment::Key(key.clone()), || map.next_value_seed(inner));
            object.insert(key, value?);
        }
        Ok(Value::Object(object))
    }
}

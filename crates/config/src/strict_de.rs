//! Typed loading from the (substituted) raw document, stricter and clearer than
//! `serde_json::from_value`:
//! - a struct accepts only an object: serde's derived structs also take an array of the
//!   fields in order, so `peer: ["direct", "42"]` would load silently;
//! - messages speak JSON, not Rust (`expected an object, found an array`, not `expected
//!   struct PeerMatch`), list an enum's values as the example in the docs shows, and suggest
//!   the closest known key for an unknown one (`unknown key, did you mean `dmScope`?`).
//!
//! The error type is ours so that serde's `unknown_field`/`unknown_variant`/`invalid_type`
//! hooks can be overridden; serde_path_to_error wraps this deserializer for the key path.

use std::fmt::{self, Display};

use serde::de::value::BorrowedStrDeserializer;
use serde::de::{
    self, DeserializeSeed, Deserializer, Expected, IntoDeserializer, MapAccess, SeqAccess,
    Unexpected, Visitor,
};
use serde_json::{Map, Value};

/// A typed-loading error: only a message (the key path is tracked around it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct StrictError(pub(crate) String);

impl Display for StrictError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for StrictError {}

impl de::Error for StrictError {
    fn custom<T: Display>(msg: T) -> Self {
        Self(msg.to_string())
    }

    fn invalid_type(unexp: Unexpected<'_>, exp: &dyn Expected) -> Self {
        Self(format!(
            "expected {}, found {}",
            json_expected(exp),
            json_unexpected(&unexp)
        ))
    }

    fn invalid_value(unexp: Unexpected<'_>, exp: &dyn Expected) -> Self {
        Self::invalid_type(unexp, exp)
    }

    fn unknown_variant(variant: &str, expected: &'static [&'static str]) -> Self {
        Self(format!(
            "unknown variant \"{variant}\", expected one of {}",
            expected.join(", ")
        ))
    }

    fn unknown_field(field: &str, expected: &'static [&'static str]) -> Self {
        let hint = match closest(field, expected) {
            Some(near) => format!(", did you mean `{near}`?"),
            None if expected.is_empty() => " (this section takes no keys)".to_owned(),
            None => format!(" (known keys: {})", expected.join(", ")),
        };
        Self(format!("unknown key{hint}"))
    }

    fn missing_field(field: &'static str) -> Self {
        Self(format!("missing required key `{field}`"))
    }

    fn duplicate_field(field: &'static str) -> Self {
        Self(format!("duplicate key `{field}`"))
    }
}

/// The Rust-flavoured "expected" of a visitor, in JSON words.
fn json_expected(exp: &dyn Expected) -> String {
    let text = exp.to_string();
    match text.as_str() {
        "a map" => "an object".to_owned(),
        "a sequence" => "an array".to_owned(),
        "usize" | "u8" | "u16" | "u32" | "u64" | "u128" => "a whole number, 0 or more".to_owned(),
        "isize" | "i8" | "i16" | "i32" | "i64" | "i128" => "a whole number".to_owned(),
        "f32" | "f64" => "a number".to_owned(),
        _ if text.starts_with("struct ") => "an object".to_owned(),
        _ => text,
    }
}

fn json_unexpected(unexp: &Unexpected<'_>) -> String {
    match unexp {
        Unexpected::Unit => "null".to_owned(),
        Unexpected::Seq => "an array".to_owned(),
        Unexpected::Map => "an object".to_owned(),
        Unexpected::Str(s) => format!("the string \"{s}\""),
        Unexpected::Signed(n) => format!("the number {n}"),
        Unexpected::Unsigned(n) => format!("the number {n}"),
        Unexpected::Float(n) => format!("the number {n}"),
        Unexpected::Bool(b) => format!("the boolean {b}"),
        other => other.to_string(),
    }
}

/// The known key an unknown one most likely meant: the same but for case, or the unique
/// closest within a small edit distance (so `modle` gives `model`, `xyz` gives nothing).
fn closest(field: &str, known: &[&'static str]) -> Option<&'static str> {
    let lower = field.to_lowercase();
    if let Some(same) = known.iter().find(|k| k.to_lowercase() == lower) {
        return Some(same);
    }
    let limit = (field.chars().count() / 3).clamp(1, 3);
    let mut best: Option<(usize, &'static str)> = None;
    let mut tie = false;
    for candidate in known {
        let distance = edit_distance(&lower, &candidate.to_lowercase());
        if distance > limit {
            continue;
        }
        match best {
            Some((d, _)) if distance > d => {}
            Some((d, _)) if distance == d => tie = true,
            _ => {
                best = Some((distance, candidate));
                tie = false;
            }
        }
    }
    best.filter(|_| !tie).map(|(_, k)| k)
}

/// Optimal-string-alignment distance: insertions, deletions, substitutions and swaps of
/// neighbours each cost 1 (`modle` is one swap from `model`).
fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let width = b.len() + 1;
    let mut d = vec![0usize; (a.len() + 1) * width];
    for (i, row) in d.chunks_mut(width).enumerate() {
        row[0] = i;
    }
    for (j, cell) in d.iter_mut().take(width).enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut best = (d[(i - 1) * width + j] + 1)
                .min(d[i * width + j - 1] + 1)
                .min(d[(i - 1) * width + j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                best = best.min(d[(i - 2) * width + j - 2] + 1);
            }
            d[i * width + j] = best;
        }
    }
    d[a.len() * width + b.len()]
}

/// Deserialises from a borrowed JSON value with the rules above.
#[derive(Clone, Copy)]
pub(crate) struct StrictValue<'v>(pub(crate) &'v Value);

impl<'de> Deserializer<'de> for StrictValue<'de> {
    type Error = StrictError;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, StrictError> {
        match self.0 {
            Value::Null => visitor.visit_unit(),
            Value::Bool(b) => visitor.visit_bool(*b),
            Value::Number(n) => {
                if let Some(u) = n.as_u64() {
                    visitor.visit_u64(u)
                } else if let Some(i) = n.as_i64() {
                    visitor.visit_i64(i)
                } else {
                    // A Number that is neither u64 nor i64 is an f64 (no arbitrary precision).
                    visitor.visit_f64(n.as_f64().unwrap_or(f64::NAN))
                }
            }
            Value::String(s) => visitor.visit_borrowed_str(s),
            Value::Array(items) => visitor.visit_seq(StrictSeq(items.iter())),
            Value::Object(map) => visitor.visit_map(StrictMap::new(map)),
        }
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, StrictError> {
        match self.0 {
            Value::Null => visitor.visit_none(),
            _ => visitor.visit_some(self),
        }
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, StrictError> {
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, StrictError> {
        match self.0 {
            Value::Object(map) => visitor.visit_map(StrictMap::new(map)),
            other => Err(de::Error::invalid_type(unexpected(other), &"an object")),
        }
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, StrictError> {
        // Every enum of the config is a plain name; a variant with data is not written.
        match self.0 {
            Value::String(s) => visitor.visit_enum(s.as_str().into_deserializer()),
            other => Err(StrictError(format!(
                "expected one of {}, found {}",
                variants.join(", "),
                json_unexpected(&unexpected(other))
            ))),
        }
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
        bytes byte_buf unit unit_struct seq tuple tuple_struct map identifier ignored_any
    }
}

fn unexpected(value: &Value) -> Unexpected<'_> {
    match value {
        Value::Null => Unexpected::Unit,
        Value::Bool(b) => Unexpected::Bool(*b),
        Value::Number(n) => match (n.as_u64(), n.as_i64()) {
            (Some(u), _) => Unexpected::Unsigned(u),
            (None, Some(i)) => Unexpected::Signed(i),
            _ => Unexpected::Float(n.as_f64().unwrap_or(f64::NAN)),
        },
        Value::String(s) => Unexpected::Str(s),
        Value::Array(_) => Unexpected::Seq,
        Value::Object(_) => Unexpected::Map,
    }
}

struct StrictSeq<'v>(std::slice::Iter<'v, Value>);

impl<'de> SeqAccess<'de> for StrictSeq<'de> {
    type Error = StrictError;

    fn next_element_seed<T: DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, StrictError> {
        self.0
            .next()
            .map(|value| seed.deserialize(StrictValue(value)))
            .transpose()
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.0.len())
    }
}

struct StrictMap<'v> {
    entries: serde_json::map::Iter<'v>,
    value: Option<&'v Value>,
}

impl<'v> StrictMap<'v> {
    fn new(map: &'v Map<String, Value>) -> Self {
        Self {
            entries: map.iter(),
            value: None,
        }
    }
}

impl<'de> MapAccess<'de> for StrictMap<'de> {
    type Error = StrictError;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, StrictError> {
        let Some((key, value)) = self.entries.next() else {
            return Ok(None);
        };
        self.value = Some(value);
        seed.deserialize(BorrowedStrDeserializer::new(key))
            .map(Some)
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(
        &mut self,
        seed: V,
    ) -> Result<V::Value, StrictError> {
        match self.value.take() {
            Some(value) => seed.deserialize(StrictValue(value)),
            None => Err(de::Error::custom("a value was asked for before its key")),
        }
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.entries.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggestions_are_obvious_or_absent() {
        let known = &[
            "scope",
            "dmScope",
            "mainKey",
            "identityLinks",
            "maintenance",
        ];
        assert_eq!(closest("dmscope", known), Some("dmScope"));
        assert_eq!(closest("mainkye", known), Some("mainKey"));
        assert_eq!(closest("scop", known), Some("scope"));
        assert_eq!(closest("xyz", known), None);
        assert_eq!(edit_distance("modle", "model"), 1);
        assert_eq!(edit_distance("", "abc"), 3);
    }
}

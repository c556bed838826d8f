//! Reading a request's `params` into a method's `#[derive(Deserialize)]` struct with the
//! protocol's own error messages (`missing parameter sessionKey`, `limit must be a
//! non-negative integer`, …), which clients see and tests pin.
//!
//! A derived struct read from a JSON object sees the keys in the object's (sorted) order and
//! reports missing fields only at the end, so its first error would depend on key names.
//! [`parse`] instead hands the struct its declared fields in declaration order, each one
//! present or absent, so the first field that is missing or of the wrong type is the one
//! reported: declaring the fields in the order a method checks them keeps its errors.
//! Keys the struct does not declare are ignored (OpenClaw's clients send fields Pincer does
//! not model), and `params` that is not an object reads as `{}`.
//!
//! A field's message comes from its type: `Option<T>` is optional (absent or `null`), any
//! other type is required; a type that rejects a value says what it expected, and the
//! message is `<name> must be <expected>` (`a string`, `a boolean`, `a non-empty string`, …).

use std::borrow::Cow;
use std::fmt;
use std::marker::PhantomData;

use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::de::value::{MapDeserializer, SeqDeserializer};
use serde::de::{self, DeserializeOwned, IntoDeserializer, MapAccess, Visitor};
use serde::{Deserialize, Deserializer, forward_to_deserialize_any};
use serde_json::{Map, Value};

use super::super::frames::MethodError;

/// Reads `params` into `T`, the first bad field (in `T`'s declaration order) as the error.
pub(crate) fn parse<T: DeserializeOwned>(params: &Value) -> Result<T, MethodError> {
    static EMPTY: std::sync::OnceLock<Map<String, Value>> = std::sync::OnceLock::new();
    let map = params
        .as_object()
        .unwrap_or_else(|| EMPTY.get_or_init(Map::new));
    T::deserialize(Params(map)).map_err(|e| MethodError::invalid(e.into_message()))
}

/// Why a field could not be read; named by the field it belongs to (see [`ParamError::named`]).
#[derive(Debug)]
pub(crate) enum ParamError {
    /// The value is not what the type expects (the type's `expecting` text).
    Expected(String),
    /// The field is required and absent.
    Missing,
    /// A complete message, shown as is.
    Message(String),
}

impl ParamError {
    fn named(self, name: &str) -> Self {
        match self {
            Self::Expected(expected) => Self::Message(format!("{name} must be {expected}")),
            Self::Missing => Self::Message(format!("missing parameter {name}")),
            message @ Self::Message(_) => message,
        }
    }

    fn into_message(self) -> String {
        match self {
            Self::Expected(expected) => format!("params must be {expected}"),
            Self::Missing => "missing parameter".to_owned(),
            Self::Message(message) => message,
        }
    }
}

impl fmt::Display for ParamError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Expected(expected) => write!(f, "expected {expected}"),
            Self::Missing => f.write_str("missing"),
            Self::Message(message) => f.write_str(message),
        }
    }
}

impl std::error::Error for ParamError {}

impl de::Error for ParamError {
    fn custom<T: fmt::Display>(msg: T) -> Self {
        Self::Message(msg.to_string())
    }

    fn invalid_type(_: de::Unexpected<'_>, expected: &dyn de::Expected) -> Self {
        Self::Expected(expected.to_string())
    }

    fn invalid_value(_: de::Unexpected<'_>, expected: &dyn de::Expected) -> Self {
        Self::Expected(expected.to_string())
    }
}

/// The whole `params` object; only a struct can be read from it.
struct Params<'a>(&'a Map<String, Value>);

impl<'de> Deserializer<'de> for Params<'_> {
    type Error = ParamError;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ParamError> {
        visitor.visit_map(MapDeserializer::new(
            self.0.iter().map(|(k, v)| (k.as_str(), Raw(v))),
        ))
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, ParamError> {
        visitor.visit_map(InOrder {
            map: self.0,
            fields: fields.iter(),
            current: None,
        })
    }

    forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
        option unit unit_struct newtype_struct seq tuple tuple_struct map enum identifier
        ignored_any
    }
}

/// A struct's declared fields in declaration order, each with its value or none.
struct InOrder<'a> {
    map: &'a Map<String, Value>,
    fields: std::slice::Iter<'static, &'static str>,
    current: Option<&'static str>,
}

impl<'de> MapAccess<'de> for InOrder<'_> {
    type Error = ParamError;

    fn next_key_seed<K: de::DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, ParamError> {
        let Some(&name) = self.fields.next() else {
            return Ok(None);
        };
        self.current = Some(name);
        seed.deserialize(name.into_deserializer()).map(Some)
    }

    fn next_value_seed<S: de::DeserializeSeed<'de>>(
        &mut self,
        seed: S,
    ) -> Result<S::Value, ParamError> {
        let name = self.current.take().unwrap_or_default();
        seed.deserialize(Field {
            name,
            value: self.map.get(name),
        })
    }
}

/// One declared field: its value, or `None` when the request left it out.
struct Field<'a> {
    name: &'static str,
    value: Option<&'a Value>,
}

impl<'de> Deserializer<'de> for Field<'_> {
    type Error = ParamError;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ParamError> {
        let result = match self.value {
            Some(value) => Raw(value).deserialize_any(visitor),
            None => Err(ParamError::Missing),
        };
        result.map_err(|e| e.named(self.name))
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ParamError> {
        match self.value {
            None | Some(Value::Null) => visitor.visit_none(),
            Some(_) => visitor.visit_some(self),
        }
    }

    /// Counts and limits: OpenClaw's wording for anything but a whole number from zero up.
    fn deserialize_u64<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ParamError> {
        let result = match self.value.map(Value::as_u64) {
            Some(Some(n)) => visitor.visit_u64(n),
            Some(None) => Err(ParamError::Expected("a non-negative integer".into())),
            None => Err(ParamError::Missing),
        };
        result.map_err(|e| e.named(self.name))
    }

    forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u128 f32 f64 char str string bytes byte_buf
        unit unit_struct newtype_struct seq tuple tuple_struct map struct enum identifier
        ignored_any
    }
}

/// A JSON value read by a field's type (a copy of `serde_json`'s reader with this error type).
#[derive(Clone, Copy)]
struct Raw<'a>(&'a Value);

impl<'de> Deserializer<'de> for Raw<'_> {
    type Error = ParamError;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ParamError> {
        match self.0 {
            Value::Null => visitor.visit_unit(),
            Value::Bool(b) => visitor.visit_bool(*b),
            Value::Number(n) => match (n.as_u64(), n.as_i64(), n.as_f64()) {
                (Some(u), _, _) => visitor.visit_u64(u),
                (None, Some(i), _) => visitor.visit_i64(i),
                (None, None, Some(f)) => visitor.visit_f64(f),
                (None, None, None) => visitor.visit_str(&n.to_string()),
            },
            Value::String(s) => visitor.visit_str(s),
            Value::Array(items) => visitor.visit_seq(SeqDeserializer::new(items.iter().map(Raw))),
            Value::Object(map) => visitor.visit_map(MapDeserializer::new(
                map.iter().map(|(k, v)| (k.as_str(), Raw(v))),
            )),
        }
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ParamError> {
        match self.0 {
            Value::Null => visitor.visit_none(),
            _ => visitor.visit_some(self),
        }
    }

    forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
        unit unit_struct newtype_struct seq tuple tuple_struct map struct enum identifier
        ignored_any
    }
}

impl<'de, 'a> IntoDeserializer<'de, ParamError> for Raw<'a> {
    type Deserializer = Self;

    fn into_deserializer(self) -> Self {
        self
    }
}

/// An optional field a method reads only once it got to it ([`Later::read`]), for the few
/// whose check today comes after one that needs the gateway (an unknown `agentId` is
/// reported before a bad `sessionKey`). Declare it `#[serde(default)]`.
pub(crate) struct Later<T> {
    value: Option<Value>,
    kind: PhantomData<T>,
}

impl<T> Default for Later<T> {
    fn default() -> Self {
        Self {
            value: None,
            kind: PhantomData,
        }
    }
}

impl<T: DeserializeOwned> Later<T> {
    /// The value, read with the messages [`parse`] gives; `name` is the field's wire name.
    pub(crate) fn read(&self, name: &'static str) -> Result<Option<T>, MethodError> {
        Option::<T>::deserialize(Field {
            name,
            value: self.value.as_ref(),
        })
        .map_err(|e| MethodError::invalid(e.into_message()))
    }
}

impl<'de, T> Deserialize<'de> for Later<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Ok(Self {
            value: Option::<Value>::deserialize(deserializer)?,
            kind: PhantomData,
        })
    }
}

impl<T: JsonSchema> JsonSchema for Later<T> {
    fn inline_schema() -> bool {
        Option::<T>::inline_schema()
    }

    fn schema_name() -> Cow<'static, str> {
        Option::<T>::schema_name()
    }

    fn json_schema(generator: &mut SchemaGenerator) -> Schema {
        Option::<T>::json_schema(generator)
    }
}

/// A required string with something besides white space (kept as sent, untrimmed).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct NonEmpty(pub String);

impl NonEmpty {
    pub(crate) fn as_str(&self) -> &str {
        &self.0
    }
}

impl std::ops::Deref for NonEmpty {
    type Target = str;

    fn deref(&self) -> &str {
        &self.0
    }
}

impl<'de> Deserialize<'de> for NonEmpty {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct NonEmptyVisitor;

        impl Visitor<'_> for NonEmptyVisitor {
            type Value = NonEmpty;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a non-empty string")
            }

            fn visit_str<E: de::Error>(self, v: &str) -> Result<NonEmpty, E> {
                if v.trim().is_empty() {
                    return Err(E::invalid_value(de::Unexpected::Str(v), &self));
                }
                Ok(NonEmpty(v.to_owned()))
            }
        }

        deserializer.deserialize_str(NonEmptyVisitor)
    }
}

impl JsonSchema for NonEmpty {
    fn schema_name() -> Cow<'static, str> {
        "NonEmptyString".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({ "type": "string", "minLength": 1, "pattern": "\\S" })
    }
}

/// A string with a closed set of values (`pick` maps a name to its value): a wrong type or a
/// wrong name is told `expecting` (`mode must be now or next-heartbeat`).
pub(crate) fn one_of<'de, D: Deserializer<'de>, T>(
    deserializer: D,
    expecting: &'static str,
    pick: fn(&str) -> Option<T>,
) -> Result<T, D::Error> {
    struct OneOf<T> {
        expecting: &'static str,
        pick: fn(&str) -> Option<T>,
    }

    impl<T> Visitor<'_> for OneOf<T> {
        type Value = T;

        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str(self.expecting)
        }

        fn visit_str<E: de::Error>(self, v: &str) -> Result<T, E> {
            (self.pick)(v).ok_or_else(|| E::invalid_value(de::Unexpected::Str(v), &self))
        }
    }

    deserializer.deserialize_str(OneOf { expecting, pick })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use serde_json::json;

    use super::*;

    #[derive(Debug, Deserialize)]
    #[serde(rename_all = "camelCase")]
    #[allow(dead_code)]
    struct Sample {
        session_key: NonEmpty,
        message: NonEmpty,
        run_id: Option<String>,
        limit: Option<u64>,
        wake: Option<bool>,
        patch: Option<Value>,
    }

    fn error(params: Value) -> String {
        parse::<Sample>(&params).unwrap_err().message
    }

    #[test]
    fn the_first_bad_field_in_declaration_order_is_reported() {
        assert_eq!(error(json!({})), "missing parameter sessionKey");
        // `message` sorts before `sessionKey`, and is still checked after it.
        assert_eq!(error(json!({"message": 5})), "missing parameter sessionKey");
        assert_eq!(
            error(json!({"sessionKey": " ", "message": 5})),
            "sessionKey must be a non-empty string"
        );
        assert_eq!(
            error(json!({"sessionKey": null})),
            "sessionKey must be a non-empty string"
        );
        assert_eq!(
            error(json!({"sessionKey": "k"})),
            "missing parameter message"
        );
        assert_eq!(
            error(json!({"sessionKey": "k", "message": "m", "runId": 1})),
            "runId must be a string"
        );
        assert_eq!(
            error(json!({"sessionKey": "k", "message": "m", "limit": -1})),
            "limit must be a non-negative integer"
        );
        assert_eq!(
            error(json!({"sessionKey": "k", "message": "m", "limit": 1.5})),
            "limit must be a non-negative integer"
        );
        assert_eq!(
            error(json!({"sessionKey": "k", "message": "m", "wake": "yes"})),
            "wake must be a boolean"
        );
        assert_eq!(error(json!([1, 2])), "missing parameter sessionKey");
    }

    #[derive(Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct Deferred {
        first: NonEmpty,
        #[serde(default)]
        second: Later<u64>,
        third: Option<bool>,
    }

    #[test]
    fn a_later_field_is_checked_only_when_read() {
        let d: Deferred = parse(&json!({"first": "a", "second": "x", "third": true})).unwrap();
        assert_eq!((d.first.as_str(), d.third), ("a", Some(true)));
        assert_eq!(
            d.second.read("second").unwrap_err().message,
            "second must be a non-negative integer"
        );
        let d: Deferred = parse(&json!({"first": "a", "second": 3})).unwrap();
        assert_eq!(d.second.read("second").unwrap(), Some(3));
        let d: Deferred = parse(&json!({"first": "a", "second": null})).unwrap();
        assert_eq!(d.second.read("second").unwrap(), None);
    }

    #[test]
    fn good_params_read_and_unknown_keys_are_ignored() {
        let s: Sample = parse(&json!({
            "sessionKey": " k ", "message": "m", "runId": null, "limit": 7, "wake": true,
            "patch": {"a": [1, "x", null]}, "somethingElse": {"deep": 1},
        }))
        .unwrap();
        assert_eq!(s.session_key.as_str(), " k ");
        assert_eq!((s.run_id, s.limit, s.wake), (None, Some(7), Some(true)));
        assert_eq!(s.patch, Some(json!({"a": [1, "x", null]})));
    }
}

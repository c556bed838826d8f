//! [`Str`]: a JSON string a stream decoder borrows from the event when it has no escapes
//! (most deltas), so parsing an event allocates only for strings that need unescaping.

use std::borrow::Cow;

use serde::Deserialize;

/// A JSON string, borrowed from the event when it has no escapes.
#[derive(Debug, Deserialize)]
pub(crate) struct Str<'a>(#[serde(borrow)] pub(crate) Cow<'a, str>);

impl Str<'_> {
    pub(crate) fn as_str(&self) -> &str {
        &self.0
    }
}

/// The string of an optional field.
pub(crate) fn opt_str<'s>(field: &'s Option<Str<'_>>) -> Option<&'s str> {
    field.as_ref().map(Str::as_str)
}

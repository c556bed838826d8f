//! Secrets in memory and on screen. A [`Secret`] holds an API key, token, password or
//! authorization code and never prints it: its `Debug` is `Secret(***)` and it has no
//! `Display`, so a struct holding one can simply `#[derive(Debug)]` and a secret cannot
//! reach a log line or an error message by accident. [`mask_secret`] is the one way a
//! secret is shown to a user (`abc***xyz`).
//!
//! Serde sees the plain string in both directions (`#[serde(transparent)]`): config and
//! profile files must hold the value, and writing them back must keep it. Printing a
//! document for a person goes through a redaction step instead (`pincer-config`'s
//! `redact`), never through `Serialize`.

use std::borrow::Cow;

use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde::{Deserialize, Serialize};

/// Secrets shorter than this are masked completely: showing 3 + 3 characters of them would
/// reveal half or more of the value.
const MIN_LEN_TO_SHOW_ENDS: usize = 12;
/// How many characters of each end a mask keeps.
const SHOWN_AT_EACH_END: usize = 3;
/// What stands for a secret wherever one would be shown.
pub const MASK: &str = "***";

/// A secret string (API key, bot token, app secret, access or refresh token, authorization
/// code, PKCE verifier). Serialises as the plain string; prints as `Secret(***)`.
#[derive(Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Secret(String);

impl Secret {
    pub fn new(value: impl Into<String>) -> Self {
        Self(value.into())
    }

    /// The secret itself, for the one place that must send it (a header, a form field).
    pub fn expose(&self) -> &str {
        &self.0
    }

    /// The secret as a user may see it: [`mask_secret`].
    pub fn masked(&self) -> String {
        mask_secret(&self.0)
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Secret(***)")
    }
}

/// In a JSON schema a secret is just the string it is, inlined where it is used, so a
/// config field keeps the schema it had as a `String` (`Option<Secret>` is
/// `["string", "null"]`).
impl JsonSchema for Secret {
    fn inline_schema() -> bool {
        true
    }

    fn schema_name() -> Cow<'static, str> {
        String::schema_name()
    }

    fn json_schema(generator: &mut SchemaGenerator) -> Schema {
        String::json_schema(generator)
    }
}

impl From<String> for Secret {
    fn from(value: String) -> Self {
        Self(value)
    }
}

impl From<&str> for Secret {
    fn from(value: &str) -> Self {
        Self(value.to_owned())
    }
}

/// `abc***xyz`: the first and last three characters around `***`. Secrets shorter than 12
/// characters become `***` alone, so a mask never shows half of a secret or more.
pub fn mask_secret(secret: &str) -> String {
    let chars: Vec<char> = secret.chars().collect();
    if chars.len() < MIN_LEN_TO_SHOW_ENDS {
        return MASK.to_owned();
    }
    let head: String = chars[..SHOWN_AT_EACH_END].iter().collect();
    let tail: String = chars[chars.len() - SHOWN_AT_EACH_END..].iter().collect();
    format!("{head}{MASK}{tail}")
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[derive(Debug)]
    #[allow(dead_code)]
    struct Settings {
        name: String,
        token: Option<Secret>,
    }

    #[test]
    fn debug_never_shows_the_value() {
        let settings = Settings {
            name: "bot".into(),
            token: Some(Secret::new("123456:ABC-very-secret")),
        };
        assert_eq!(
            format!("{settings:?}"),
            r#"Settings { name: "bot", token: Some(Secret(***)) }"#
        );
        assert_eq!(format!("{:#?}", Secret::new("x")), "Secret(***)");
    }

    #[test]
    fn serde_sees_the_plain_string() {
        let secret: Secret = serde_json::from_str(r#""sk-live-1""#).unwrap();
        assert_eq!(secret.expose(), "sk-live-1");
        assert_eq!(serde_json::to_string(&secret).unwrap(), r#""sk-live-1""#);
    }

    #[test]
    fn schema_is_a_string_inlined() {
        #[derive(JsonSchema)]
        #[allow(dead_code)]
        struct Config {
            token: Option<Secret>,
        }
        let schema = schemars::schema_for!(Config);
        assert_eq!(
            schema.get("properties"),
            Some(&serde_json::json!({"token": {"type": ["string", "null"]}}))
        );
        assert_eq!(schema.get("$defs"), None);
    }

    #[test]
    fn masks() {
        for (secret, masked) in [
            ("sk-abcdefghijklmnop", "sk-***nop"),
            ("123456789012", "123***012"),
            ("12345678901", "***"),
            ("", "***"),
        ] {
            assert_eq!(mask_secret(secret), masked, "{secret:?}");
        }
        assert_eq!(Secret::new("ключ-секрет-длинный").masked(), "клю***ный");
    }
}

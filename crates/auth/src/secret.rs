//! Secrets in memory and on screen. A [`Secret`] holds an API key, token or authorization
//! code and never prints it: its `Debug` is `Secret(***)` and it has no `Display`, so a
//! secret cannot reach a log line or an error message by accident. [`mask_secret`] is the
//! one way a secret is shown to a user (`abc***xyz`).

use serde::{Deserialize, Serialize};

/// Secrets shorter than this are masked completely: showing 3 + 3 characters of them would
/// reveal half or more of the value.
const MIN_LEN_TO_SHOW_ENDS: usize = 12;
/// How many characters of each end a mask keeps.
const SHOWN_AT_EACH_END: usize = 3;
const MASK: &str = "***";

/// A secret string (API key, access or refresh token, authorization code, PKCE verifier).
/// Serialises as the plain string (the profiles file must hold it); prints as `***`.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
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

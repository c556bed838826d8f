//! Helpers the config test modules share: parsing a `pincer.json5` text that must load or
//! must be refused.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use pincer_ai::env::MapEnv;
use pincer_config::{PincerConfig, parse_str};

/// The config `text` loads to, without environment; it must load.
pub fn parse(text: &str) -> PincerConfig {
    parse_str(text, "pincer.json5", &MapEnv::default())
        .unwrap_or_else(|e| panic!("{text} was refused: {e}"))
        .config
}

/// Why the config `text` is refused, without environment; it must be refused.
pub fn error_of(text: &str) -> String {
    parse_str(text, "pincer.json5", &MapEnv::default())
        .expect_err("the config should be refused")
        .to_string()
}

/// Asserts that the config `text` is refused with a message containing each of `parts`.
pub fn assert_refusal_mentions(text: &str, parts: &[&str]) {
    let error = error_of(text);
    for part in parts {
        assert!(error.contains(part), "{error}");
    }
}

//! Arbitrary text as `pincer.json5`: loading never panics (syntax errors, deep nesting,
//! huge numbers, `${ENV}` references, typed and cross-field checks all end in a config or
//! an error), and every value of a document that parses can be located in the text, so
//! errors about it can name a line.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pincer_ai::env::MapEnv;
use pincer_config::{KeyPath, locate, parse_raw, parse_str, redact};
use serde_json::Value;

fuzz_target!(|input: &[u8]| {
    let Ok(text) = std::str::from_utf8(input) else { return };
    let env = MapEnv::new([("FUZZ_KEY", "sk-fuzz-0123456789"), ("FUZZ_MODEL", "p/m")]);
    let _ = parse_str(text, "fuzz.json5", &env);
    let Ok(raw) = parse_raw(text, "fuzz.json5") else { return };
    let _ = redact(&raw);
    let mut pending = vec![(&raw, KeyPath::root())];
    while let Some((value, path)) = pending.pop() {
        assert!(locate(text, &path).is_some(), "{path} not located in {text:?}");
        match value {
            Value::Object(map) => pending.extend(map.iter().map(|(k, v)| (v, path.key(k)))),
            Value::Array(items) => {
                pending.extend(items.iter().enumerate().map(|(i, v)| (v, path.index(i))));
            }
            _ => {}
        }
    }
});

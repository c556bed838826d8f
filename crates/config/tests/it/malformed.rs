//! The property the `config_parser` fuzz target checks, run here over its seeds and
//! thousands of deterministic mutations of them (cargo-fuzz is not needed for `cargo test`):
//! loading never panics, and every value of a document that parses can be located.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;

use pincer_ai::env::MapEnv;
use pincer_config::{KeyPath, locate, parse_raw, parse_str, redact};
use serde_json::Value;

fn check(text: &str) {
    let env = MapEnv::new([("FUZZ_KEY", "sk-fuzz-0123456789"), ("FUZZ_MODEL", "p/m")]);
    let _ = parse_str(text, "fuzz.json5", &env);
    let Ok(raw) = parse_raw(text, "fuzz.json5") else {
        return;
    };
    let _ = redact(&raw);
    let mut pending = vec![(&raw, KeyPath::root())];
    while let Some((value, path)) = pending.pop() {
        assert!(
            locate(text, &path).is_some(),
            "{path} not located in {text:?}"
        );
        match value {
            Value::Object(map) => pending.extend(map.iter().map(|(k, v)| (v, path.key(k)))),
            Value::Array(items) => {
                pending.extend(items.iter().enumerate().map(|(i, v)| (v, path.index(i))));
            }
            _ => {}
        }
    }
}

fn seeds() -> Vec<String> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/seeds/config_parser");
    let mut seeds: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|entry| std::fs::read_to_string(entry.unwrap().path()).unwrap())
        .collect();
    seeds.sort();
    assert!(seeds.len() >= 5, "seeds in {}", dir.display());
    seeds
}

/// A small deterministic generator (xorshift): the same mutations on every run.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n.max(1) as u64) as usize
    }
}

const PIECES: &[&str] = &[
    "{",
    "}",
    "[",
    "]",
    ",",
    ":",
    "'",
    "\"",
    "\\",
    "/",
    "//",
    "/*",
    "*/",
    "\n",
    "\r\n",
    " ",
    "a",
    "$",
    "${FUZZ_KEY}",
    "$${X}",
    "${NOPE}",
    "1e999",
    "-",
    ".5",
    "0x",
    "NaN",
    "null",
    "\u{2028}",
    "\u{feff}",
    "é",
    "\\u0061",
    "id:",
    "agents",
    "list",
    "true",
];

fn mutate(text: &str, rng: &mut Rng) -> String {
    let mut chars: Vec<char> = text.chars().collect();
    for _ in 0..=rng.below(3) {
        let at = rng.below(chars.len() + 1);
        match rng.below(4) {
            0 if at < chars.len() => {
                let end = (at + 1 + rng.below(8)).min(chars.len());
                chars.drain(at..end);
            }
            1 if at < chars.len() => {
                let end = (at + 1 + rng.below(16)).min(chars.len());
                let copy: Vec<char> = chars[at..end].to_vec();
                let to = rng.below(chars.len() + 1);
                chars.splice(to..to, copy);
            }
            _ => {
                let piece = PIECES[rng.below(PIECES.len())];
                chars.splice(at..at, piece.chars());
            }
        }
    }
    chars.into_iter().collect()
}

#[test]
fn seeds_and_their_mutations_never_panic_and_always_locate() {
    let mut rng = Rng(0x5eed_cafe_f00d_1234);
    for seed in seeds() {
        check(&seed);
        for _ in 0..800 {
            check(&mutate(&seed, &mut rng));
        }
    }
}

#[test]
fn pathological_shapes_end_in_errors() {
    let cases = [
        "[".repeat(200_000),
        "{a:".repeat(200_000),
        format!("{{a: {}}}", "9".repeat(5000)),
        format!("{{a: '{}'}}", "\\".repeat(4001)),
        "/*".repeat(10_000),
        "\0".repeat(1000),
        format!("{{{}}}", "a: 1,".repeat(20_000)),
    ];
    for text in &cases {
        check(text);
        assert!(parse_str(text, "x", &MapEnv::default()).is_err());
    }
}

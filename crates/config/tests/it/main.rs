//! pincer-config's integration tests, one binary (linked once, not once per file). Each module
//! was a `tests/*.rs` binary of its own; run one with
//! `cargo test -p pincer-config --test it <module>::`.

mod block_streaming;
mod common;
mod edit;
mod gateway;
mod gateway_prompts;
mod load;
mod malformed;
mod origin_parsers;
mod rules;
mod schema_redact;
mod types;

//! pincer-testkit's integration tests, one binary (linked once, not once per file). Each module
//! was a `tests/*.rs` binary of its own; run one with
//! `cargo test -p pincer-testkit --test it <module>::`.

mod common;

mod anthropic;
mod binary;
mod embeddings;
mod faults;
mod google;
mod openai_chat;
mod openai_responses;
mod proxy;
mod scenario;

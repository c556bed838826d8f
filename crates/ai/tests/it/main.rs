//! pincer-ai's integration tests, one binary (linked once, not once per file). Each module
//! was a `tests/*.rs` binary of its own; run one with
//! `cargo test -p pincer-ai --test it <module>::`.

mod common;

mod azure;
mod bedrock;
mod embeddings;
mod env_providers;
mod faults;
mod google_cloud;
mod proxy_and_stub;
mod proxy_config;
mod streaming;
mod transcription;

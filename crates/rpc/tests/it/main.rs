//! pincer-rpc's integration tests, one binary (linked once, not once per file). Each module
//! was a `tests/*.rs` binary of its own; run one with
//! `cargo test -p pincer-rpc --test it <module>::`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod client;
mod pool;

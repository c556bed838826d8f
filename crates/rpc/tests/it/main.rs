//! pincer-rpc's integration tests, one binary (linked once, not once per file). Each module
//! was a `tests/*.rs` binary of its own; run one with
//! `cargo test -p pincer-rpc --test it <module>::`.

mod client;
mod pool;

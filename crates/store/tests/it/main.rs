//! pincer-store's integration tests, one binary (linked once, not once per file). Each module
//! was a `tests/*.rs` binary of its own; run one with
//! `cargo test -p pincer-store --test it <module>::`.

mod blocking;
mod common;
mod crash;
mod entries;
mod group_commit;
mod index_cache;
mod migrate;
mod rebuild;
mod retention;
mod sessions;
mod transcript;
mod turns;

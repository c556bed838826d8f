//! pincer-memory's integration tests, one binary (linked once, not once per file). Each module
//! was a `tests/*.rs` binary of its own; run one with
//! `cargo test -p pincer-memory --test it <module>::`.

mod common;

mod chunking;
mod get_and_watch;
mod incremental;
#[cfg(feature = "local-embeddings")]
mod local_embedder;
mod search;

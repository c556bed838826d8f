//! pincer-agent's integration tests, one binary (linked once, not once per file). Each module
//! was a `tests/*.rs` binary of its own; run one with
//! `cargo test -p pincer-agent --test it <module>::`.

mod agent_loop;
mod common;
mod compaction;
mod compaction_wiring;

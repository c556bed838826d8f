//! pincer-tools's integration tests, one binary (linked once, not once per file). Each module
//! was a `tests/*.rs` binary of its own; run one with
//! `cargo test -p pincer-tools --test it <module>::`.

mod common;

mod basic;
mod exec;
mod exec_allowlist;
mod exec_allowlist_differential;
mod exec_limits;
mod exec_notify;
mod exec_orphans;
mod files_edit;
mod files_read;
mod files_search;
mod files_special;
mod memory;
mod profile;

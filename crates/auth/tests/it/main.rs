//! pincer-auth's integration tests, one binary (linked once, not once per file). Each module
//! was a `tests/*.rs` binary of its own; run one with
//! `cargo test -p pincer-auth --test it <module>::`.

mod codex_login;
mod common;
mod copilot;
mod profiles_file;
mod resolve;
mod rotation;

//! pincer-channels's integration tests, one binary (linked once, not once per file). Each module
//! was a `tests/*.rs` binary of its own; run one with
//! `cargo test -p pincer-channels --test it <module>::`.

#![allow(clippy::unwrap_used, clippy::expect_used)]
#![allow(
    clippy::disallowed_methods,
    reason = "tests set up and inspect files directly"
)]

#[cfg(feature = "feishu")]
mod feishu_common;

#[cfg(feature = "feishu")]
mod feishu;
#[cfg(feature = "feishu")]
mod feishu_decoders;
#[cfg(feature = "feishu")]
mod feishu_webhook;
mod markdown;
#[cfg(all(
    feature = "telegram",
    feature = "discord",
    feature = "slack",
    feature = "feishu"
))]
mod settings_debug;
#[cfg(feature = "slack")]
mod slack;

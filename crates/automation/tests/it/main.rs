//! pincer-automation's integration tests, one binary (linked once, not once per file); run one
//! module with `cargo test -p pincer-automation --test it <module>::`.

#![allow(clippy::unwrap_used, clippy::expect_used)]
#![allow(
    clippy::disallowed_methods,
    reason = "tests set up and inspect files directly"
)]

mod cron;
mod cron_service;
mod heartbeat;

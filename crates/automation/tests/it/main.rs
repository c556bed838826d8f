//! pincer-automation's integration tests, one binary (linked once, not once per file); run one
//! module with `cargo test -p pincer-automation --test it <module>::`.

mod cron;
mod cron_service;
mod heartbeat;

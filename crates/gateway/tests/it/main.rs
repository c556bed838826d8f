//! pincer-gateway's integration tests, one binary (linked once, not once per file); run one
//! module with `cargo test -p pincer-gateway --test it <module>::`. `support` starts a real
//! server on 127.0.0.1 with the mock LLM.

#![allow(clippy::unwrap_used, clippy::expect_used)]
#![allow(
    clippy::disallowed_methods,
    reason = "tests set up and inspect files directly, and call the pairing store's blocking API"
)]

mod support;

mod control_ui;
mod cron_server;
mod heartbeat_server;
mod http_api;
mod http_limits;
mod http_media;
mod http_responses;
mod pairing;
mod pairing_policy;
mod system_events;
mod ws_protocol;

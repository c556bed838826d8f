//! pincer-fakes' integration tests, one binary (linked once, not once per file); run one
//! module with `cargo test -p pincer-fakes --test it <module>::`.

// The HTTP client and binary helpers pincer-testkit's tests use too.
#[path = "../../../testkit/tests/it/common/serve.rs"]
mod common;
mod telegram_support;

mod fake_discord;
mod fake_feishu;
mod fake_slack;
mod fake_telegram;
mod fake_telegram_edit;
mod fake_telegram_send;

//! Fake chat platforms for Pincer's tests, each a real HTTP (and WebSocket) server on
//! 127.0.0.1 that records what the adapter under test sent and injects what a user would.
//!
//! [`FakeTelegram`] is a fake Telegram Bot API server (long-polled updates, sent messages
//! with Telegram's HTML checks, files, injected failures and dropped connections); see
//! [`fake_telegram`] and the `pincer-fake-telegram` binary.
//!
//! [`FakeDiscord`] is a fake Discord server (the Gateway WebSocket with identify, heartbeats,
//! resume and replay, plus a REST subset: sending messages and files, typing, DM channels,
//! injected 429s); see [`fake_discord`].
//!
//! [`FakeFeishu`] is a fake Feishu / Lark Open Platform (the long connection's protobuf
//! frames with pings, acks and redelivery, tenant tokens, sending and uploads, and a client
//! that posts encrypted, signed event callbacks); see [`fake_feishu`].
//!
//! [`FakeSlack`] is a fake Slack (Socket Mode envelopes with acks and redelivery, and the Web
//! API subset the adapter uses); see [`fake_slack`].
//!
//! [`FakeSearch`](fake_search::FakeSearch) answers as Brave, Tavily, Perplexity and SearXNG do
//! (the `web_search` providers), and [`FakeSite`](fake_site::FakeSite) is a fixture web site
//! for `web_fetch` and the browser tool (an article among boilerplate, redirects, bodies that
//! are huge or never end, odd charsets, a page with a button and a form).
//!
//! The mock LLM server and the other test doubles are in `pincer-testkit`.

pub mod fake_discord;
pub mod fake_feishu;
pub mod fake_search;
pub mod fake_site;
pub mod fake_slack;
mod fake_support;
pub mod fake_telegram;
mod multipart;

pub use fake_discord::FakeDiscord;
pub use fake_feishu::FakeFeishu;
pub use fake_slack::FakeSlack;
pub use fake_telegram::FakeTelegram;

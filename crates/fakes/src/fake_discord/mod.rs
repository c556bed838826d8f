//! `FakeDiscord`: a fake Discord server on 127.0.0.1 (API v10), for testing a Discord
//! channel adapter end to end over a real Gateway WebSocket and real HTTP.
//!
//! REST lives under `<base_url>/api/v10` and needs `Authorization: Bot <token>` (else 401
//! `{"message": "401: Unauthorized", "code": 0}`); errors are `{"message": …, "code": …}`.
//! The Gateway is at `ws://127.0.0.1:PORT/gateway` (also `/gateway/`), JSON text frames
//! only.
//!
//! Covered:
//! - `GET /gateway/bot` (its `url` is [`FakeDiscord::gateway_url`]; clients append
//!   `?v=10&encoding=json`; a `v` other than 10 is closed with 4012), `GET /gateway`,
//!   `GET /users/@me` (the bot user).
//! - `POST /channels/{id}/messages` with a JSON body, or `multipart/form-data` with
//!   `payload_json` (and/or plain fields such as `content`) and file parts (`files[n]`,
//!   recorded with name and bytes, at most 10 MiB each, else 413 code 40005). `content` at
//!   most 2000 characters (else 400 `Invalid Form Body`, code 50035,
//!   `BASE_TYPE_MAX_LENGTH`); a message without content, files or embeds gets 400 code
//!   50006 `Cannot send an empty message` (as on Discord); a `message_reference` to a
//!   message the fake does not know gets 50035 unless `fail_if_not_exists: false`. Answers
//!   a Message object (`type` 19 for replies); the files are served back at their
//!   attachment `url`.
//! - `POST /channels/{id}/typing` (204), `POST /users/@me/channels` `{recipient_id}` (a DM
//!   channel, `type` 1, one stable id per recipient).
//! - Gateway: Hello (op 10, configurable interval), Heartbeat (op 1, answered by op 11,
//!   recorded; without one for twice the interval the fake closes with 4009, the session
//!   staying resumable, unless [`FakeDiscordConfig::enforce_heartbeat`] is off), Identify
//!   (op 2: wrong token 4004, missing `intents` 4013, a second one 4005; else `READY`
//!   with `s` 1), Resume (op 6:
//!   replays every logged dispatch after the client's `seq`, then `RESUMED`; an unknown
//!   or ended session gets op 9 `d: false`), invalid JSON 4002, binary frames 4002,
//!   unknown opcodes 4001, op 3/4/8 before identifying 4003 (else ignored). A client close
//!   with 1000 or 1001 ends its session (not resumable), as on Discord.
//! - Every dispatch carries the session's next `s`. Test controls: injected messages and
//!   raw dispatches, redelivery, dropped connections (no close frame), op 7 Reconnect, op
//!   9 Invalid Session, op 1 heartbeat requests, one-shot REST failures (429 with
//!   `retry_after` and `X-RateLimit-*` headers, or any status), and records with async
//!   `wait_for_*` helpers.
//!
//! Delivery: a dispatch goes to the current session (the last one identified or
//! resumed). When its connection is gone the dispatch is logged and delivered by the next
//! RESUME (replay) — or, if the client identifies a new session instead, right after its
//! `READY` (re-numbered). Dispatches injected before any session exists are delivered
//! after the first `READY`.
//!
//! Not covered: sharding (always 1 shard), zlib/zstd compression and ETF encoding,
//! gateway rate limits and `session_start_limit` accounting, guilds (`READY.guilds` is
//! empty, no `GUILD_CREATE` unless injected raw), presence and voice, MESSAGE_CREATE
//! echoes of the bot's own messages, editing/deleting messages, reactions, interactions
//! and slash commands, embeds validation, `allowed_mentions` validation (recorded only),
//! real rate-limit buckets (only injected failures), dropped REST connections, and a
//! control HTTP API or binary (unlike the fake Telegram).
//!
//! ```no_run
//! # async fn demo() {
//! use std::time::Duration;
//! use pincer_fakes::FakeDiscord;
//! use pincer_fakes::fake_discord::InjectDiscordMessage;
//!
//! let discord = FakeDiscord::start().await;
//! // Configure the adapter with discord.base_url() and discord.token(), start it, then:
//! discord.inject_message(InjectDiscordMessage::dm("500", "1001", "hello"));
//! let sent = discord.wait_for_messages(1, Duration::from_secs(5)).await;
//! assert_eq!(sent[0].channel_id, "500");
//! # }
//! ```

mod gateway;
mod inject;
mod rest;
mod state;

use std::net::{Ipv4Addr, SocketAddr};
use std::time::Duration;

use serde_json::Value;

pub use inject::{InjectAttachment, InjectDiscordMessage};
pub use state::{RecordedIdentify, RecordedResume, SentFile, SentMessage};

use crate::fake_support::RoutePattern;
use crate::fake_support::Server;
use state::{Failure, op};

/// The token accepted unless configured otherwise.
pub const DEFAULT_TOKEN: &str = "discord-test-token";
/// The bot's user id (also its application id).
pub const DEFAULT_BOT_ID: &str = "1200000000000000001";
/// The bot's username.
pub const DEFAULT_BOT_USERNAME: &str = "pincer-test";
/// The Hello's `heartbeat_interval`, in milliseconds.
pub const DEFAULT_HEARTBEAT_INTERVAL_MS: u64 = 41_250;

/// How the fake starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FakeDiscordConfig {
    /// The accepted bot token (without `Bot `).
    pub token: String,
    pub bot_id: String,
    pub bot_username: String,
    /// Milliseconds (default [`DEFAULT_HEARTBEAT_INTERVAL_MS`]).
    pub heartbeat_interval: u64,
    /// Close with 4009 when a connection sends no heartbeat for twice the interval
    /// (default `true`).
    pub enforce_heartbeat: bool,
    /// Where to listen (default `127.0.0.1:0`, a free port).
    pub addr: SocketAddr,
}

impl Default for FakeDiscordConfig {
    fn default() -> Self {
        Self {
            token: DEFAULT_TOKEN.to_owned(),
            bot_id: DEFAULT_BOT_ID.to_owned(),
            bot_username: DEFAULT_BOT_USERNAME.to_owned(),
            heartbeat_interval: DEFAULT_HEARTBEAT_INTERVAL_MS,
            enforce_heartbeat: true,
            addr: SocketAddr::from((Ipv4Addr::LOCALHOST, 0)),
        }
    }
}

crate::fake_support::setters!(FakeDiscordConfig {
    text: token, bot_id, bot_username;
    plain: heartbeat_interval: u64, enforce_heartbeat: bool, addr: SocketAddr
});

/// An injected dispatch: the message id and the `s` it got (`None` when no session exists
/// yet: it is sent after the next `READY`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Injected {
    pub message_id: String,
    pub seq: Option<u64>,
}

crate::fake_support::fake_handle!(
    /// A running fake Discord server: a cheap-to-clone handle; the server stops when the last
    /// clone is dropped (or on [`FakeDiscord::stop`]).
    FakeDiscord(FakeDiscordConfig, state::Inner), FakeDiscordError, "fake discord";
    getters: token, bot_id, bot_username
);

impl FakeDiscord {
    /// Serves `config`, or says why it cannot.
    pub async fn try_start_with(config: FakeDiscordConfig) -> Result<Self, FakeDiscordError> {
        let server = Server::start(config.addr, config, state::Inner::new(), rest::router).await?;
        Ok(Self::from_server(server))
    }

    /// `http://127.0.0.1:PORT`; REST is under `{base_url}/api/v10`.
    pub fn base_url(&self) -> String {
        self.shared().base_url.clone()
    }

    /// `{base_url}/api/v10`.
    pub fn api_url(&self) -> String {
        format!("{}/api/v10", self.base_url())
    }

    /// `ws://127.0.0.1:PORT/gateway` (what `GET /gateway/bot` answers).
    pub fn gateway_url(&self) -> String {
        self.shared().gateway_url()
    }

    // ---- injecting ----

    /// Dispatches `MESSAGE_CREATE` for `message` (see the module docs for when it is
    /// delivered).
    pub fn inject_message(&self, message: InjectDiscordMessage) -> Injected {
        let shared = self.shared();
        shared.update(|inner| {
            let (message_id, d) = inject::message_create(shared, inner, message);
            inner.events.insert(message_id.clone(), d.clone());
            let seq = inner.dispatch("MESSAGE_CREATE", d);
            Injected { message_id, seq }
        })
    }

    /// Makes `thread_id` a public thread (or forum post) of `parent_id` in `guild_id`:
    /// `GET /channels/{thread_id}` says so. Inject its messages with `guild(guild_id,
    /// thread_id, …)`, as Discord gives a thread message the thread's id as channel.
    pub fn add_thread(&self, guild_id: &str, parent_id: &str, thread_id: &str) {
        self.shared().update(|inner| {
            inner.threads.insert(
                thread_id.to_owned(),
                (parent_id.to_owned(), guild_id.to_owned()),
            );
        });
    }

    /// Dispatches event `t` with data `d` as is (e.g. `GUILD_CREATE`); returns its `s`.
    pub fn inject_dispatch(&self, t: &str, d: Value) -> Option<u64> {
        self.shared().update(|inner| inner.dispatch(t, d))
    }

    /// Dispatches the same `MESSAGE_CREATE` again (a new `s`) for an injected message, or
    /// for a message the bot sent. `None` when the message is unknown; `Some(None)` when
    /// no session exists yet.
    pub fn redeliver(&self, message_id: &str) -> Option<Option<u64>> {
        self.shared().update(|inner| {
            let d = inner
                .events
                .get(message_id)
                .or_else(|| inner.messages.get(message_id))
                .cloned()?;
            Some(inner.dispatch("MESSAGE_CREATE", d))
        })
    }

    // ---- connection controls ----

    /// Drops every open gateway connection without a close frame (a network failure);
    /// their sessions stay resumable. Returns how many were dropped.
    pub fn drop_connection(&self) -> usize {
        self.shared().update(|inner| inner.drop_all())
    }

    /// Sends op 7 Reconnect to the current session's connection (the client should close
    /// it with a non-1000 code and resume); `false` when no session is connected.
    pub fn send_reconnect(&self) -> bool {
        self.shared()
            .update(|inner| inner.send_active(op(7, Value::Null)))
    }

    /// Sends op 9 Invalid Session (`d: false`) to the current session's connection; the
    /// session cannot be resumed and the client must identify again. `false` when no
    /// session is connected.
    pub fn invalidate_session(&self) -> bool {
        self.shared().update(|inner| inner.invalidate_session())
    }

    /// Sends op 1 (the client must heartbeat at once); `false` when no session is
    /// connected.
    pub fn request_heartbeat(&self) -> bool {
        self.shared()
            .update(|inner| inner.send_active(op(1, Value::Null)))
    }

    /// The current session's id (the last one identified or resumed).
    pub fn session_id(&self) -> Option<String> {
        self.shared().read(|inner| inner.current.clone())
    }

    /// Whether the current session has a connection.
    pub fn is_connected(&self) -> bool {
        self.shared().read(|inner| inner.active_conn().is_some())
    }

    // ---- failures ----

    /// The next REST call matching `route` fails with `status`: 429 gets Discord's rate
    /// limit body (`retry_after` = `retry_after_secs`, `global: false`) and `Retry-After` /
    /// `X-RateLimit-*` headers; other statuses `{"message": "502: Bad Gateway", "code":
    /// 0}`. `route` is an optional method and a path under `/api/v10`, where `*` or `{…}`
    /// matches one segment: `"POST /channels/{channel_id}/messages"`. Failures queue up.
    pub fn fail_next(&self, route: &str, status: u16, retry_after_secs: f64) {
        self.push_failure(route, status, retry_after_secs, false);
    }

    /// Like [`fail_next`](Self::fail_next) with a global 429 (`"global": true`,
    /// `X-RateLimit-Global: true`).
    pub fn fail_next_global(&self, route: &str, retry_after_secs: f64) {
        self.push_failure(route, 429, retry_after_secs, true);
    }

    fn push_failure(&self, route: &str, status: u16, retry_after: f64, global: bool) {
        let failure = Failure {
            status,
            retry_after,
            global,
        };
        self.shared().update(|inner| {
            inner
                .failures
                .push(RoutePattern::parse_under(route, "/api/v10"), failure)
        });
    }

    // ---- records ----

    /// Forgets the records (identifies, resumes, heartbeats, messages, typing, calls);
    /// sessions stay.
    pub fn clear_records(&self) {
        self.shared().update(|inner| inner.clear_records());
    }

    // ---- waiting ----

    /// Waits until the current session has a connection (after READY or RESUMED).
    pub async fn wait_for_connected(&self, timeout: Duration) -> bool {
        self.shared()
            .wait_for(timeout, |inner| inner.active_conn().map(|_| ()))
            .await
            .is_some()
    }
}

crate::fake_support::records!(FakeDiscord {
    /// Every Identify received (also refused ones), oldest first.
    identifies / wait_for_identify => identifies: RecordedIdentify;
    /// Every Resume received, oldest first.
    resumes / wait_for_resume => resumes: RecordedResume;
    /// The `d` of every Heartbeat (the client's last `s`, `None` for `null`).
    heartbeats / wait_for_heartbeats => heartbeats: Option<u64>;
    /// Messages the bot created, oldest first.
    sent_messages / wait_for_messages => sent_messages: SentMessage;
    /// The channel id of every typing call.
    typing / wait_for_typing => typing: String;
    /// `"METHOD /path"` (under `/api/v10`) of every authorized REST call, in order.
    calls => calls: String;
});

crate::fake_support::counters!(FakeDiscord {
    /// Gateway connections accepted so far.
    connection_count => connections;
});

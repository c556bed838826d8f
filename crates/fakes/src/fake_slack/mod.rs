//! `FakeSlack`: a fake Slack on 127.0.0.1 — the Web API subset a Socket Mode bot uses and
//! the Socket Mode WebSocket — for testing a Slack adapter end to end over real HTTP and a
//! real WebSocket.
//!
//! Web API (`{api_base}/<method>`, arguments as JSON, form or query; answers HTTP 200
//! `{"ok": true, …}` or `{"ok": false, "error": …}` as Slack does). Tokens are checked per
//! method: `apps.connections.open` needs the app token (`xapp-…`), everything else the bot
//! token (`xoxb-…`); no `Authorization: Bearer` → `not_authed`, the other kind of token →
//! `not_allowed_token_type`, anything else → `invalid_auth`.
//! - `auth.test` (`user_id` = the bot user, `team_id`, `bot_id`),
//! - `apps.connections.open` (a `ws://…/link/?ticket=…` URL, each ticket good once),
//! - `chat.postMessage` (`channel` must look like `C…`/`D…`/`G…` else `channel_not_found`;
//!   blank text without blocks `no_text`; over 40 000 chars `msg_too_long`; answers a new
//!   `ts`),
//! - `conversations.open` (`users`: one stable DM channel per user — the one the user's
//!   injected DMs came from, else a new `D…`),
//! - `files.getUploadURLExternal` (`filename`, `length`) → an `upload_url` on the fake
//!   (`POST` raw bytes or multipart; no token) and a `file_id`;
//!   `files.completeUploadExternal` (`files: [{id, title}]` as JSON or a form field,
//!   `channel_id`, `thread_ts`) shares them (recorded in [`FakeSlack::uploaded_files`]).
//! - Inbound files at `/files/<id>` need the bot token; without it the answer is an HTML
//!   sign-in page with HTTP 200, as on Slack.
//! - Unknown methods: `unknown_method`.
//!
//! Socket Mode: `hello` on connect, then `events_api` envelopes. Every envelope the client
//! has not acked (`{"envelope_id": …}`) is sent again on the next connection with
//! `retry_attempt` + 1 (as Slack does); [`FakeSlack::redeliver`] sends one again now.
//! Envelopes go to the newest connection; injected while none is open they wait for one.
//!
//! Test controls: injected posts (`message`, plus `app_mention` for a mention outside a
//! DM, both with the post's `ts`), raw envelopes and frames, redelivery, dropped
//! connections (no close frame), `disconnect` frames, stalled connections (pings go
//! unanswered), one-shot failures (HTTP status with `Retry-After`, or `ok: false`), and
//! records with async `wait_for_*` helpers.
//!
//! Not covered: Slack's own redelivery timer for unacked envelopes on a live connection
//! (only on reconnect or [`FakeSlack::redeliver`]), slash commands and interactivity
//! (only as raw envelopes), `response_url`s, Block Kit validation, rate-limit tiers (only
//! injected failures), message edits/deletes, `users.*`, `conversations.*` other than
//! `open`, OAuth.
//!
//! ```no_run
//! # async fn demo() {
//! use std::time::Duration;
//! use pincer_fakes::fake_slack::{FakeSlack, InjectSlackMessage};
//!
//! let slack = FakeSlack::start().await;
//! // Configure the adapter with slack.api_base(), slack.bot_token(), slack.app_token().
//! slack.inject_message(InjectSlackMessage::dm("U1", "D1", "hello"));
//! let sent = slack.wait_for_messages(1, Duration::from_secs(5)).await;
//! assert_eq!(sent[0].channel, "D1");
//! # }
//! ```

mod inject;
mod socket;
mod state;
mod web;

use std::net::{Ipv4Addr, SocketAddr};
use std::time::Duration;

use serde_json::{Value, json};

pub use inject::{InjectSlackFile, InjectSlackMessage};
pub use state::{SentSlackMessage, UploadedSlackFile};

use crate::fake_support::Server;
use state::{Failure, Out};

pub const DEFAULT_BOT_TOKEN: &str = "xoxb-fake-bot-token";
pub const DEFAULT_APP_TOKEN: &str = "xapp-fake-app-token";
pub const DEFAULT_BOT_USER_ID: &str = "U0BOT";
pub const DEFAULT_BOT_ID: &str = "B0BOT";
pub const DEFAULT_TEAM_ID: &str = "T0TEAM";
pub const DEFAULT_APP_ID: &str = "A0APP";

/// How the fake starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FakeSlackConfig {
    pub bot_token: String,
    pub app_token: String,
    pub bot_user_id: String,
    pub bot_id: String,
    pub team_id: String,
    pub app_id: String,
    /// Where to listen (default `127.0.0.1:0`, a free port).
    pub addr: SocketAddr,
}

impl Default for FakeSlackConfig {
    fn default() -> Self {
        Self {
            bot_token: DEFAULT_BOT_TOKEN.into(),
            app_token: DEFAULT_APP_TOKEN.into(),
            bot_user_id: DEFAULT_BOT_USER_ID.into(),
            bot_id: DEFAULT_BOT_ID.into(),
            team_id: DEFAULT_TEAM_ID.into(),
            app_id: DEFAULT_APP_ID.into(),
            addr: SocketAddr::from((Ipv4Addr::LOCALHOST, 0)),
        }
    }
}

crate::fake_support::setters!(FakeSlackConfig {
    text: bot_token, app_token, bot_user_id, team_id;
    plain: addr: SocketAddr
});

crate::fake_support::fake_handle!(
    /// A running fake Slack: a cheap-to-clone handle; the server stops when the last clone is
    /// dropped (or on [`FakeSlack::stop`]).
    FakeSlack(FakeSlackConfig, state::Inner), FakeSlackError, "fake slack";
    getters: bot_token, app_token, bot_user_id, team_id
);

impl FakeSlack {
    /// Serves `config`, or says why it cannot.
    pub async fn try_start_with(config: FakeSlackConfig) -> Result<Self, FakeSlackError> {
        let inner = state::Inner::default();
        let server = Server::start(config.addr, config, inner, web::router).await?;
        Ok(Self::from_server(server))
    }

    /// `http://127.0.0.1:PORT/api` (the adapter's `api_base`).
    pub fn api_base(&self) -> String {
        format!("{}/api", self.shared().base_url)
    }

    /// `http://127.0.0.1:PORT`.
    pub fn base_url(&self) -> String {
        self.shared().base_url.clone()
    }

    // ---- injecting ----

    /// Sends `message` as Slack would (`message`, and `app_mention` for a mention outside
    /// a DM), each in its own envelope; returns the envelope ids.
    pub fn inject_message(&self, message: InjectSlackMessage) -> Vec<String> {
        let shared = self.shared();
        shared.update(|inner| {
            inject::events(shared, inner, message)
                .into_iter()
                .map(|event| {
                    let (id, frame) = inject::envelope(shared, inner, event);
                    inner.add_envelope(id, frame)
                })
                .collect()
        })
    }

    /// Sends `event` (any JSON: `reaction_added`, a malformed one…) in an `events_api`
    /// envelope; returns its id.
    pub fn inject_event(&self, event: Value) -> String {
        let shared = self.shared();
        shared.update(|inner| {
            let (id, frame) = inject::envelope(shared, inner, event);
            inner.add_envelope(id, frame)
        })
    }

    /// Sends an envelope of `kind` (`slash_commands`, `interactive`, …) with `payload`;
    /// returns its id.
    pub fn inject_envelope(&self, kind: &str, payload: Value) -> String {
        self.shared().update(|inner| {
            let id = format!("{}-fake-envelope", inner.take_id("").to_lowercase());
            let frame = json!({
                "envelope_id": id, "type": kind, "payload": payload,
                "accepts_response_payload": kind != "events_api",
            });
            inner.add_envelope(id, frame)
        })
    }

    /// Sends `text` as is to the current connection (not stored, never redelivered);
    /// `false` when none is open.
    pub fn send_raw(&self, text: &str) -> bool {
        self.shared()
            .read(|inner| inner.send_current(text.to_owned()))
    }

    /// Sends envelope `envelope_id` again (`retry_attempt` one more); `false` when it is
    /// unknown or no connection is open.
    pub fn redeliver(&self, envelope_id: &str) -> bool {
        self.shared().update(|inner| {
            inner
                .envelopes
                .iter()
                .position(|e| e.id == envelope_id)
                .is_some_and(|index| inner.send_envelope(index))
        })
    }

    // ---- connection controls ----

    /// Drops every open connection without a close frame (a network failure); returns
    /// how many.
    pub fn drop_connection(&self) -> usize {
        self.shared().update(|inner| inner.end_all(|| Out::Drop))
    }

    /// Stalls every open connection: it stays open but nothing is read or written, so
    /// pings go unanswered (a dead peer). Returns how many.
    pub fn stall_connection(&self) -> usize {
        self.shared().update(|inner| inner.end_all(|| Out::Stall))
    }

    /// Sends `{"type": "disconnect", "reason": reason}` to the current connection (which
    /// stays open until the client closes it); `false` when none is open.
    pub fn send_disconnect(&self, reason: &str) -> bool {
        let frame = json!({"type": "disconnect", "reason": reason,
                           "debug_info": {"host": "fake-slack"}});
        self.send_raw(&frame.to_string())
    }

    pub fn is_connected(&self) -> bool {
        self.shared().read(|inner| inner.current.is_some())
    }

    /// Waits until a connection is open.
    pub async fn wait_for_connected(&self, timeout: Duration) -> bool {
        self.shared()
            .wait_for(timeout, |inner| inner.current.map(|_| ()))
            .await
            .is_some()
    }

    // ---- failures ----

    /// The next call of `method` (e.g. `chat.postMessage`) answers HTTP `status` (429:
    /// `{"ok": false, "error": "ratelimited"}`; others `fatal_error`) with `Retry-After:
    /// retry_after` when given. Failures queue up.
    pub fn fail_next(&self, method: &str, status: u16, retry_after: Option<u64>) {
        let failure = Failure::Status {
            status,
            retry_after,
        };
        self.shared()
            .update(|inner| inner.failures.push((method.to_owned(), failure)));
    }

    /// The next call of `method` answers HTTP 200 `{"ok": false, "error": error}`.
    pub fn fail_next_ok_false(&self, method: &str, error: &str) {
        let failure = Failure::OkFalse(error.to_owned());
        self.shared()
            .update(|inner| inner.failures.push((method.to_owned(), failure)));
    }

    // ---- records ----
}

crate::fake_support::records!(FakeSlack {
    /// The envelope ids the client acked, in order (repeats included).
    acks / wait_for_acks => acks: String;
    /// Messages the bot posted, oldest first.
    sent_messages / wait_for_messages => sent_messages: SentSlackMessage;
    /// Files the bot shared, oldest first.
    uploaded_files / wait_for_files => uploaded_files: UploadedSlackFile;
    /// The method of every Web API call (also refused ones), in order.
    calls => calls: String;
});

crate::fake_support::counters!(FakeSlack {
    /// Socket Mode connections accepted so far.
    connection_count / wait_for_connections => connections;
});

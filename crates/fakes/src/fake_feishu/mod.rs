//! `FakeFeishu`: a fake Feishu / Lark Open Platform on 127.0.0.1, for testing a Feishu
//! channel adapter end to end over a real long connection (WebSocket with protobuf
//! frames), real HTTP, and real event callbacks (encrypted and signed).
//!
//! Set the adapter's domain / API base to [`FakeFeishu::base_url`]; the paths are Feishu's.
//!
//! Covered:
//! - `POST /open-apis/auth/v3/tenant_access_token/internal`: the right `app_id` /
//!   `app_secret` get `t-fake…` with `expire` [`FakeFeishuConfig::token_expire_secs`];
//!   a wrong app id gets `{"code":10003}`, a wrong secret `{"code":10014,"msg":"app
//!   secret invalid"}` (HTTP 200 both: the code is what counts).
//! - Every other `/open-apis` call needs `Authorization: Bearer <a token issued and not
//!   expired>`: missing → HTTP 400 code 99991661, unknown or [expired](FakeFeishu::expire_tokens)
//!   → HTTP 400 code 99991663.
//! - `GET /open-apis/bot/v3/info` (the bot's `open_id`).
//! - `POST /callback/ws/endpoint` `{"AppID","AppSecret"}` (wrong → HTTP 200 code 514):
//!   `data.URL` = `ws://127.0.0.1:PORT/ws/v2?…&service_id=…&ticket=…` with a single-use
//!   ticket (a handshake with an unknown or used ticket gets HTTP 403, so every reconnect
//!   needs a new endpoint call), and `data.ClientConfig` (`PingInterval`).
//! - The long connection: binary `pbbp2.Frame`s. A ping (method 0, `type: ping`) gets a
//!   pong with the ClientConfig JSON as payload; events are data frames (method 1, headers
//!   `type`, `message_id`, `sum`, `seq`, `trace_id`) whose ack (the frame sent back with a
//!   JSON payload `{"code":200,…}`, matched by its `message_id` header; any part of a
//!   split event will do) settles the event. Events not acked with code 200 are sent again
//!   to the next connection, like Feishu. Events go to the last connection opened; with
//!   none they wait for the next one. Text frames, undecodable frames, acks of unknown
//!   frames, pings with the wrong service are recorded as [`protocol_errors`](FakeFeishu::protocol_errors).
//! - `GET /open-apis/im/v1/messages/{message_id}/resources/{key}?type=image|file`: the
//!   injected images (`type=image`) and files (`type=file`) of that message, raw bytes with
//!   `Content-Length`; unknown → HTTP 400 code 234003, wrong `type` → code 234001.
//! - `POST /open-apis/im/v1/messages?receive_id_type=open_id|chat_id|user_id|union_id|email`
//!   and `POST /open-apis/im/v1/messages/{message_id}/reply` (`reply_in_thread`):
//!   `content` must be a JSON string holding an object; `text` needs text, `image` /
//!   `file` an uploaded key, `interactive` a card with elements (≤ 30 KB), others ≤ 150 KB
//!   (code 230025); an `open_id` must look like `ou_…` and a `chat_id` like `oc_…` (code
//!   230001); replying to an unknown message → code 230011. Answers `data.message_id`
//!   (`om_bot…`); sent messages can be replied to.
//! - `POST /open-apis/im/v1/images` (multipart `image_type` message|avatar, `image`, ≤ 10
//!   MB) and `POST /open-apis/im/v1/files` (`file_type` opus|mp4|pdf|doc|xls|ppt|stream,
//!   `file_name`, `file`, ≤ 30 MB), answering `image_key` / `file_key`.
//! - One-shot injected failures by route (any HTTP status and code; 429 and code
//!   99991400 carry `x-ogw-ratelimit-reset`), dropped / closed / silent connections.
//! - Event callbacks: see [`CallbackClient`].
//!
//! Not covered: app tickets and marketplace apps, user access tokens, the `card` action
//! frames' contents (inject them raw with [`FakeFeishu::inject_raw`]), editing, recalling
//! and reactions, chat and member APIs, real rate limits, the server closing idle
//! connections on its own, gzip payloads, and a control HTTP API or binary.
//!
//! ```no_run
//! # async fn demo() {
//! use std::time::Duration;
//! use pincer_fakes::fake_feishu::{FakeFeishu, InjectFeishuMessage};
//!
//! let feishu = FakeFeishu::start().await;
//! // Point the adapter at feishu.base_url() with feishu.app_id() / app_secret(), then:
//! feishu.inject_message(InjectFeishuMessage::dm("ou_user1", "hello"));
//! let sent = feishu.wait_for_messages(1, Duration::from_secs(5)).await;
//! assert_eq!(sent[0].text(), "hi there");
//! # }
//! ```

mod callback;
mod config;
mod inject;
mod long_conn;
mod rest;
mod send;
mod state;

use std::time::Duration;

use serde_json::Value;

pub use callback::{CallbackClient, Posted, decrypt, encrypt, signature};
pub use config::{
    DEFAULT_APP_ID, DEFAULT_APP_SECRET, DEFAULT_BOT_NAME, DEFAULT_BOT_OPEN_ID,
    DEFAULT_VERIFICATION_TOKEN, FakeFeishuConfig,
};
pub use inject::{ChatType, InjectFeishuMessage};
pub use state::{
    EndpointRequest, RecordedAck, RecordedPing, SentMessage, TokenRequest, Upload, UploadKind,
};

use crate::fake_support::RoutePattern;
use crate::fake_support::Server;
use state::{Failure, Out};

crate::fake_support::fake_handle!(
    /// A running fake Feishu: a cheap-to-clone handle; the server stops when the last clone
    /// is dropped (or on [`FakeFeishu::stop`]).
    FakeFeishu(FakeFeishuConfig, state::Inner), FakeFeishuError, "fake feishu";
    getters: app_id, app_secret, bot_open_id, bot_name
);

impl FakeFeishu {
    /// Serves `config`, or says why it cannot.
    pub async fn try_start_with(config: FakeFeishuConfig) -> Result<Self, FakeFeishuError> {
        let inner = state::Inner::new(&config);
        let server = Server::start(config.addr, config, inner, rest::router).await?;
        Ok(Self::from_server(server))
    }

    /// `http://127.0.0.1:PORT`: the adapter's domain / API base.
    pub fn base_url(&self) -> String {
        self.shared().base_url.clone()
    }

    /// The fake's p2p chat id with a user (`oc_dm_…`): where DMs and messages sent to an
    /// open_id land.
    pub fn dm_chat_id(&self, open_id: &str) -> String {
        inject::dm_chat_id(open_id)
    }

    // ---- the long connection ----

    /// Sends the `im.message.receive_v1` event of `message` on the long connection (now,
    /// or to the next connection); returns the chat message id (`om_…`).
    pub fn inject_message(&self, message: InjectFeishuMessage) -> String {
        let shared = self.shared();
        let token = shared.config.verification_token.clone();
        shared.update(|inner| {
            let (message_id, event) = inject::receive_event(shared, inner, &message, &token);
            let payload = event.to_string().into_bytes();
            inner.push_event(Some(message_id.clone()), "event", payload, message.parts);
            message_id
        })
    }

    /// Sends any payload as one data frame of type `kind` (`event` or `card`); returns
    /// the frame's `message_id` header.
    pub fn inject_raw(&self, kind: &'static str, payload: &Value) -> String {
        let payload = payload.to_string().into_bytes();
        self.shared()
            .update(|inner| inner.push_event(None, kind, payload, 1))
    }

    /// Sends the event of an injected message again, in a new frame (as Feishu does when
    /// it retries); `false` when the message is unknown.
    pub fn redeliver(&self, message_id: &str) -> bool {
        self.shared().update(|inner| {
            let Some(event) = inner.event_json.get(message_id).cloned() else {
                return false;
            };
            let payload = event.to_string().into_bytes();
            inner.push_event(Some(message_id.to_owned()), "event", payload, 1);
            true
        })
    }

    /// Drops every open connection without a close frame (a network failure); returns
    /// how many.
    pub fn drop_connection(&self) -> usize {
        self.shared().update(|inner| inner.drop_all(|| Out::Drop))
    }

    /// Closes every open connection with a close frame (the server ending it); returns
    /// how many.
    pub fn close_connection(&self) -> usize {
        self.shared()
            .update(|inner| inner.drop_all(|| Out::Close(None)))
    }

    /// The open connections stop answering pings and get no more events, but stay open:
    /// the adapter must notice and reconnect (events meanwhile go to its next connection).
    /// Returns how many went silent.
    pub fn go_silent(&self) -> usize {
        self.shared().update(|inner| inner.silence())
    }

    /// The `PingInterval` of later endpoint answers and pongs.
    pub fn set_ping_interval(&self, secs: u64) {
        self.shared().update(|inner| inner.ping_interval = secs);
    }

    /// Whether a connection is open and not silent.
    pub fn is_connected(&self) -> bool {
        self.shared().read(|inner| {
            inner
                .active
                .is_some_and(|id| inner.conns.get(&id).is_some_and(|conn| !conn.silent))
        })
    }

    /// Waits until a connection is open and not silent.
    pub async fn wait_for_connected(&self, timeout: Duration) -> bool {
        self.shared()
            .wait_for(timeout, |inner| {
                inner
                    .active
                    .filter(|id| inner.conns.get(id).is_some_and(|conn| !conn.silent))
            })
            .await
            .is_some()
    }

    /// Chat message ids of injected events not acknowledged (with code 200) yet.
    pub fn unacked(&self) -> Vec<String> {
        self.shared().read(|inner| {
            inner
                .events
                .iter()
                .filter(|event| !event.acked)
                .map(|event| event.message_id.clone().unwrap_or(event.frame_id.clone()))
                .collect()
        })
    }

    // ---- tokens and failures ----

    /// Invalidates every tenant token issued so far: calls with them get code 99991663.
    pub fn expire_tokens(&self) {
        self.shared().update(|inner| inner.tokens.clear());
    }

    /// The next call matching `route` answers HTTP `status` with `{"code": code}`; 429 or
    /// code 99991400 add `x-ogw-ratelimit-reset: 1`. `route` is an optional method and a
    /// path where `*` or `{…}` matches one segment:
    /// `"POST /open-apis/im/v1/messages/{message_id}/reply"`. Failures queue up.
    pub fn fail_next(&self, route: &str, status: u16, code: i64) {
        self.push_failure(route, status, code, 1);
    }

    /// The next call matching `route` is rate limited: HTTP 429, code 99991400,
    /// `x-ogw-ratelimit-reset: <reset_secs>`.
    pub fn fail_next_rate_limited(&self, route: &str, reset_secs: u64) {
        self.push_failure(route, 429, 99_991_400, reset_secs);
    }

    fn push_failure(&self, route: &str, status: u16, code: i64, reset_secs: u64) {
        let failure = Failure {
            status,
            code,
            reset_secs,
        };
        self.shared()
            .update(|inner| inner.failures.push(RoutePattern::parse(route), failure));
    }

    // ---- event callbacks ----

    /// A client posting events to an adapter's callback `url` (`http://…`), with events'
    /// `header.token` = `verification_token`, encrypted and signed with `encrypt_key`.
    pub fn callback_client(
        &self,
        url: impl Into<String>,
        verification_token: impl Into<String>,
        encrypt_key: Option<&str>,
    ) -> CallbackClient {
        CallbackClient {
            shared: self.shared().clone(),
            url: url.into(),
            verification_token: verification_token.into(),
            encrypt_key: encrypt_key.map(str::to_owned),
        }
    }

    // ---- records ----

    /// Forgets the records (acks, pings, token and endpoint requests, messages, uploads,
    /// calls, protocol errors); connections, events and tokens stay.
    pub fn clear_records(&self) {
        self.shared().update(|inner| inner.clear_records());
    }

    // ---- waiting ----
}

crate::fake_support::records!(FakeFeishu {
    /// Every ack received, oldest first.
    acks / wait_for_acks => acks: RecordedAck;
    /// Every ping received, oldest first.
    pings / wait_for_pings => pings: RecordedPing;
    tenant_token_requests => token_requests: TokenRequest;
    endpoint_requests => endpoint_requests: EndpointRequest;
    /// Messages the bot sent or replied, oldest first.
    sent_messages / wait_for_messages => sent_messages: SentMessage;
    /// Images and files the bot uploaded, oldest first.
    uploads / wait_for_uploads => uploads: Upload;
    /// `"METHOD /path"` of every HTTP call (also refused ones; `GET /ws/v2` for
    /// handshakes), in order.
    calls => calls: String;
    /// What the client got wrong on the long connection (see the module docs).
    protocol_errors => protocol_errors: String;
});

crate::fake_support::counters!(FakeFeishu {
    /// Long connections accepted so far.
    connection_count / wait_for_connection_count => connections;
});

//! `FakeTelegram`: a fake Telegram Bot API server on 127.0.0.1, for testing a Telegram
//! channel adapter end to end over real HTTP.
//!
//! Every method is served at `GET` or `POST` `/bot<TOKEN>/<method>` (method names are
//! case-insensitive, as on Telegram), with parameters in the query string and/or a JSON,
//! `application/x-www-form-urlencoded` or `multipart/form-data` body. Answers are
//! `{"ok":true,"result":…}` or `{"ok":false,"error_code":N,"description":…}` with HTTP status
//! N; a wrong token gets 401 `Unauthorized`, an unknown method 404
//! `Not Found: method not found`.
//!
//! Covered:
//! - `getMe`; `getUpdates` with `offset` (confirms, i.e. drops, every update below it;
//!   negative offsets keep the last `-offset`), `limit` and long polling (`timeout` seconds:
//!   the call answers as soon as an update is injected, else `[]` when the time is up).
//! - `sendMessage`: text required, at most 4096 UTF-16 code units of visible text;
//!   `parse_mode: "HTML"` is checked like Telegram (supported tags only, balanced and nested,
//!   `<` must start a tag, tdlib's error messages) and, stricter than Telegram, a bare `&`
//!   must start an entity; `Markdown`/`MarkdownV2` are accepted unchecked. Threads
//!   (`message_thread_id`) and replies (`reply_parameters` or `reply_to_message_id`).
//! - `sendChatAction` (known actions only), `sendDocument` / `sendPhoto` (multipart upload,
//!   or a known `file_id`; caption up to 1024), `getFile` and downloads at
//!   `/file/bot<TOKEN>/<file_path>`, `setMyCommands` (command names checked),
//!   `deleteWebhook`; `editMessageText`, `setMessageReaction` and `deleteMessage` on
//!   messages the fake knows (edits only of the bot's own), recorded.
//! - Test controls on [`FakeTelegram`]: injected messages (with `mention` / `bot_command`
//!   entities computed with UTF-16 offsets) and raw updates, registered files, redelivery of
//!   a confirmed update, one-shot failures (`429` with `retry_after`, `502`, …), dropped
//!   connections, and records of everything the bot did, with async `wait_for_*` helpers.
//! - `/__fake/inject`, `/__fake/inject_raw`, `/__fake/sent_messages`, `/__fake/calls`: the
//!   same controls over HTTP, for the `pincer-fake-telegram` binary.
//!
//! Not covered: webhooks (`setWebhook`), the 409 conflict of two concurrent `getUpdates`,
//! `allowed_updates` filtering (recorded only), the 48-hour limits on editing and deleting,
//! the list of emoji Telegram allows as reactions, inline keyboards
//! and callback queries, media groups and other media types, MarkdownV2 validation, entity
//! lists in answers, checking that a photo is an image, per-chat message ids (ids are
//! global and increasing), and rate limits other than injected ones.
//!
//! ```no_run
//! # async fn demo() {
//! use std::time::Duration;
//! use pincer_fakes::FakeTelegram;
//! use pincer_fakes::fake_telegram::InjectMessage;
//!
//! let telegram = FakeTelegram::start().await;
//! // Configure the adapter with telegram.base_url() and telegram.token(), start it, then:
//! telegram.inject_message(InjectMessage::private(1001, "hello"));
//! let sent = telegram.wait_for_messages(1, Duration::from_secs(5)).await;
//! assert_eq!(sent[0].chat_id, 1001);
//! # }
//! ```

mod actions;
mod api;
mod conn;
mod control;
mod html;
mod inject;
mod params;
mod state;

use std::net::{Ipv4Addr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use serde_json::Value;

pub use inject::{ChatType, InjectMessage, RegisteredFile, detect_entities};
pub use state::{EditedMessage, Reaction, RecordedCall, SentFile, SentMessage};

use crate::fake_support::Server;
use conn::{AbortableListener, ConnHandle};
use state::{Failure, Shared};

/// The token accepted unless configured otherwise.
pub const DEFAULT_TOKEN: &str = "123456:TEST-TOKEN";
/// The bot's user id.
pub const DEFAULT_BOT_ID: i64 = 4242;
/// The bot's username (without `@`).
pub const DEFAULT_BOT_USERNAME: &str = "pincer_test_bot";
/// The chat `/__fake/inject` and the binary's stdin post into by default.
pub const DEFAULT_CHAT_ID: i64 = control::DEFAULT_CHAT_ID;

/// How the fake starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FakeTelegramConfig {
    /// The accepted bot token, the one in URLs (default [`DEFAULT_TOKEN`]).
    pub token: String,
    pub bot_id: i64,
    /// The bot's username, without `@` (default [`DEFAULT_BOT_USERNAME`]).
    pub bot_username: String,
    pub bot_first_name: String,
    /// The `update_id` of the first update (default 1).
    pub first_update_id: i64,
    /// Where to listen (default `127.0.0.1:0`, a free port).
    pub addr: SocketAddr,
}

impl Default for FakeTelegramConfig {
    fn default() -> Self {
        Self {
            token: DEFAULT_TOKEN.to_owned(),
            bot_id: DEFAULT_BOT_ID,
            bot_username: DEFAULT_BOT_USERNAME.to_owned(),
            bot_first_name: "Pincer Test Bot".to_owned(),
            first_update_id: 1,
            addr: SocketAddr::from((Ipv4Addr::LOCALHOST, 0)),
        }
    }
}

crate::fake_support::setters!(FakeTelegramConfig {
    text: token, bot_username, bot_first_name;
    plain: bot_id: i64, first_update_id: i64, addr: SocketAddr
});

crate::fake_support::fake_handle!(
    /// A running fake Telegram Bot API server: a cheap-to-clone handle; the server stops when
    /// the last clone is dropped (or on [`FakeTelegram::stop`]).
    FakeTelegram(FakeTelegramConfig, state::Inner), FakeTelegramError, "fake telegram";
    getters: token, bot_username
);

impl FakeTelegram {
    /// Serves `config`, or says why it cannot.
    pub async fn try_start_with(config: FakeTelegramConfig) -> Result<Self, FakeTelegramError> {
        let inner = state::Inner::new(&config);
        // Each connection's handle lets a test drop it mid-poll.
        let serve = |listener, shared: Arc<Shared>| {
            let cancel = shared.cancel.clone();
            let app = api::router(shared).into_make_service_with_connect_info::<ConnHandle>();
            tokio::spawn(async move {
                let _ = axum::serve(AbortableListener(listener), app)
                    .with_graceful_shutdown(cancel.cancelled_owned())
                    .await;
            });
        };
        let server = Server::start_serving(config.addr, config, inner, serve).await?;
        Ok(Self::from_server(server))
    }

    /// `http://127.0.0.1:PORT`; the adapter appends `/bot<token>/<method>`.
    pub fn base_url(&self) -> String {
        format!("http://{}", self.running.addr)
    }

    /// The bot's user id.
    pub fn bot_id(&self) -> i64 {
        self.shared().config.bot_id
    }

    /// `{base_url}/bot{token}/{method}`.
    pub fn method_url(&self, method: &str) -> String {
        format!("{}/bot{}/{method}", self.base_url(), self.token())
    }

    /// `{base_url}/file/bot{token}/{file_path}`.
    pub fn file_url(&self, file_path: &str) -> String {
        format!("{}/file/bot{}/{file_path}", self.base_url(), self.token())
    }

    // ---- injecting ----

    /// Queues a `message` update; returns its `(update_id, message_id)`.
    pub fn inject_message(&self, message: InjectMessage) -> (i64, i64) {
        self.shared().update(|inner| inner.inject_message(message))
    }

    /// Queues `update` as is (malformed or unknown payloads welcome). An object without an
    /// integer `update_id` gets the next one inserted; returns the update id used.
    pub fn inject_raw_update(&self, update: Value) -> i64 {
        self.shared()
            .update(|inner| inner.inject_raw_update(update))
    }

    /// Registers a file for `getFile`, downloads and injected documents/photos.
    pub fn register_file(&self, bytes: impl Into<Bytes>, file_name: &str) -> RegisteredFile {
        let bytes = bytes.into();
        self.shared()
            .update(|inner| inner.register_file(bytes, file_name, false))
    }

    /// Delivers update `update_id` again (same id) on the next `getUpdates`, whatever its
    /// offset, as Telegram does for an update a crashed bot never confirmed. `false` when no
    /// such update was ever queued.
    pub fn redeliver(&self, update_id: i64) -> bool {
        self.shared().update(|inner| inner.redeliver(update_id))
    }

    /// Updates queued and not yet confirmed by an offset, ascending.
    pub fn pending_update_ids(&self) -> Vec<i64> {
        let mut ids = self
            .shared()
            .read(|inner| inner.queue.iter().map(|(id, _)| *id).collect::<Vec<_>>());
        ids.sort_unstable();
        ids
    }

    // ---- failures ----

    /// The next call of `method` (case-insensitive) answers `status` with `description`
    /// (give it whole, e.g. `"Too Many Requests: retry after 3"`), plus
    /// `"parameters": {"retry_after": N}` when `retry_after` is set. Calls queue up.
    pub fn fail_next(
        &self,
        method: &str,
        status: u16,
        description: &str,
        retry_after: Option<u32>,
    ) {
        let failure = Failure {
            status,
            description: description.to_owned(),
            retry_after,
        };
        self.shared()
            .update(|inner| inner.push_failure(method, failure));
    }

    /// The next `count` calls of `method` get no answer: the connection is reset after the
    /// request was read. Drops come before [`fail_next`](Self::fail_next) failures.
    pub fn drop_next(&self, method: &str, count: u32) {
        self.shared().update(|inner| inner.add_drops(method, count));
    }

    /// `drop_next("getUpdates", count)`.
    pub fn drop_next_get_updates(&self, count: u32) {
        self.drop_next("getUpdates", count);
    }

    // ---- records ----

    /// The `offset` of every `getUpdates` call (0 when absent), in order.
    pub fn get_updates_offsets(&self) -> Vec<i64> {
        self.shared()
            .read(|inner| inner.get_updates_offsets.clone())
    }

    /// The method names of every call with the right token, in order.
    pub fn calls(&self) -> Vec<String> {
        self.shared()
            .read(|inner| inner.calls.iter().map(|call| call.method.clone()).collect())
    }

    /// The `commands` of the last successful `setMyCommands`.
    pub fn my_commands(&self) -> Option<Value> {
        self.shared().read(|inner| inner.my_commands.clone())
    }

    /// Forgets the records (calls, messages, actions, files, offsets); queues stay.
    pub fn clear_records(&self) {
        self.shared().update(|inner| inner.clear_records());
    }

    // ---- waiting ----

    /// Waits until `method` was called at least `n` times; `false` on timeout. E.g.
    /// `wait_for_calls("getUpdates", 2, …)` returns once the adapter polls again after
    /// handling an update.
    pub async fn wait_for_calls(&self, method: &str, n: usize, timeout: Duration) -> bool {
        self.shared()
            .wait_for(timeout, |inner| {
                let count = inner
                    .calls
                    .iter()
                    .filter(|call| call.method.eq_ignore_ascii_case(method))
                    .count();
                (count >= n).then_some(())
            })
            .await
            .is_some()
    }
}

crate::fake_support::records!(FakeTelegram {
    /// Messages sent with `sendMessage`, oldest first.
    sent_messages / wait_for_messages => sent_messages: SentMessage;
    /// `(chat_id, action)` of every `sendChatAction`.
    chat_actions / wait_for_chat_actions => chat_actions: (i64, String);
    /// Files sent with `sendDocument` / `sendPhoto`.
    sent_files / wait_for_files => sent_files: SentFile;
    /// Every call with the right token and its parameters, in order.
    requests => calls: RecordedCall;
    /// Messages edited with `editMessageText`.
    edited_messages / wait_for_edits => edited_messages: EditedMessage;
    /// Every `setMessageReaction`.
    reactions / wait_for_reactions => reactions: Reaction;
    /// `(chat_id, message_id)` of every `deleteMessage`.
    deleted_messages / wait_for_deletions => deleted_messages: (i64, i64);
});

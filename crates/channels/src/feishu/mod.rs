//! Feishu / Lark (the same Open Platform under two domains): events come over the long
//! connection (a WebSocket of protobuf frames, pinged, every event acked once handed to
//! the gateway) or as HTTP callbacks (encrypted and signed, URL verification); messages go
//! out through the Open API as interactive cards holding one `markdown` element each (the
//! reply rendered and split at 4000 chars), replies through the reply endpoint (in the
//! thread when the chat is one), files and images uploaded first. Feishu has no typing
//! indicator for bots: `typing` does nothing (reacting with an emoji instead is what users
//! complain about).
//!
//! Hand-rolled over reqwest, tokio-tungstenite and prost-derived frames: `openlark` is
//! young, unofficial and moving fast, and the official Rust SDK's `ws` feature needs
//! protoc at build time.
//!
//! Chats: a `p2p` message is a [`ChatKind::Direct`] chat whose id is the sender's open_id
//! (`ou_…`: what allowlists and pairing hold); a group message a [`ChatKind::Group`] chat
//! of the `chat_id` (`oc_…`), its `thread_id` a
//! [`ThreadRef::Thread`](pincer_channel_port::ThreadRef::Thread). A message `@`-ing the
//! bot (its placeholder removed from the text; others' become `@name`) or replying to one
//! of the bot's last 512 messages is a mention. Sending picks the id type from the id:
//! `ou_` open_id, `oc_` chat_id, `on_` union_id, else a group's chat_id or a person's
//! user_id.
//!
//! Not done: message edits and recalls, reactions, card actions (`card` frames are acked
//! and ignored), stickers / audio / video messages (ignored), the long connection's
//! reconnect settings (the supervisor's backoff is used instead).

mod answers;
mod api;
mod auth;
mod crypto;
mod events;
mod frame;
mod inbound;
mod long_conn;
mod webhook;

pub use answers::{
    RATE_LIMIT_CODE, TOKEN_INVALID_CODES, WsEndpoint, decode_answer, decode_endpoint,
    file_type_for, is_image, path_segment,
};
pub use api::{Download, DownloadError, FeishuApi};
pub use auth::{TokenCache, decode_token_answer};
pub use crypto::{
    CryptoError, MAX_CLOCK_SKEW_SECS, SignatureError, check_timestamp, decrypt, decrypt_event,
    encrypt, signature, verify_signature,
};
pub use events::{
    Content, ContentError, Event, EventError, EventKind, MESSAGE_RECEIVE, Mention, MessageEvent,
    ReceivedMessage, Resource, ResourceKind, Sender, UserIds, decode_content, decode_event,
    resolve_mentions,
};
pub use frame::{
    ACK_PAYLOAD, Frame, FrameError, Header, METHOD_CONTROL, METHOD_DATA, PartsBuffer, PartsError,
    ack_frame, decode_frame, encode_frame, ping_frame, service_id,
};
pub use inbound::{Incoming, incoming};
pub use long_conn::{DEAD_AFTER_SILENCE, ping_interval, pong_ping_interval};
pub use webhook::{CallbackError, SignedHeaders, callback_reply, open_callback};

use pincer_base::Secret;
use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

use pincer_channel_port::ChatKind;
use pincer_channel_port::{ChannelError, ChatRef, InboundSink, Outbound};
use serde_json::json;
use tokio_util::sync::CancellationToken;

use crate::markdown::{Flavor, render_chunks};
use crate::support::{OutboundFile, read_outbound_file};

const CHANNEL: &str = "feishu";
/// Feishu (China).
pub const FEISHU_API_BASE: &str = "https://open.feishu.cn";
/// Lark (international).
pub const LARK_API_BASE: &str = "https://open.larksuite.com";
/// The default limit of received files (30 MB).
pub const DEFAULT_MEDIA_MAX_BYTES: u64 = 30 * 1024 * 1024;
/// Chars per card. A card may be 30 KB of JSON; 4000 chars is 12 KB of CJK text in UTF-8,
/// with room left for JSON escaping and the card around it, and long enough that a reply
/// rarely needs a second card.
pub const CARD_CHARS: usize = 4000;

/// `feishu` → [`FEISHU_API_BASE`], `lark` → [`LARK_API_BASE`], anything else is taken for
/// a base URL (a trailing `/` trimmed).
pub fn api_base_for_domain(domain: &str) -> String {
    match domain.trim() {
        d if d.eq_ignore_ascii_case("feishu") => FEISHU_API_BASE.to_owned(),
        d if d.eq_ignore_ascii_case("lark") => LARK_API_BASE.to_owned(),
        base => base.trim_end_matches('/').to_owned(),
    }
}

/// How events reach the adapter.
#[derive(Debug, Clone)]
pub enum FeishuMode {
    /// The long connection (WebSocket), no public address needed.
    LongConnection,
    /// HTTP callbacks: listen on `listen`, take `POST path`.
    Webhook {
        listen: std::net::SocketAddr,
        path: String,
    },
}

/// One app. `Debug` is derived: the credentials are [`Secret`]s (`Secret(***)`).
#[derive(Debug, Clone)]
pub struct FeishuSettings {
    pub account_id: Option<String>,
    pub app_id: String,
    pub app_secret: Secret,
    /// [`FEISHU_API_BASE`], [`LARK_API_BASE`], or a test fake.
    pub api_base: String,
    pub mode: FeishuMode,
    /// Checked against every event's token when set.
    pub verification_token: Option<Secret>,
    /// Decrypts callbacks and checks their signature when set.
    pub encrypt_key: Option<Secret>,
    /// Where received files are saved.
    pub media_dir: PathBuf,
    pub media_max_bytes: u64,
}

/// What the connection loops and the callback listener share.
struct Inner {
    settings: FeishuSettings,
    api: FeishuApi,
    bot_open_id: OnceLock<String>,
    /// The ids of the last messages the bot sent: a reply to one counts as a mention.
    sent: Mutex<VecDeque<String>>,
}

/// How many sent message ids are remembered for reply-mentions.
const REMEMBERED_SENT: usize = 512;

/// The Feishu / Lark adapter of one app.
pub struct FeishuAdapter {
    inner: Arc<Inner>,
}

impl FeishuAdapter {
    pub fn new(settings: FeishuSettings, client: reqwest::Client) -> Self {
        let api = FeishuApi::new(
            client,
            &settings.api_base,
            &settings.app_id,
            settings.app_secret.expose(),
        );
        Self {
            inner: Arc::new(Inner {
                settings,
                api,
                bot_open_id: OnceLock::new(),
                sent: Mutex::new(VecDeque::new()),
            }),
        }
    }

    /// The Open API client (token included), for callers that need more than messages.
    pub fn api(&self) -> &FeishuApi {
        &self.inner.api
    }

    /// The bot's open_id, once a connection has fetched it.
    pub fn bot_open_id(&self) -> Option<&str> {
        self.inner.bot_open_id.get().map(String::as_str)
    }
}

impl Inner {
    /// Fetches the tenant token and the bot's identity (once: it does not change).
    async fn ensure_bot(&self) -> Result<(), ChannelError> {
        self.api.tenant_token().await?;
        if self.bot_open_id.get().is_none() {
            let open_id = self.api.bot_open_id().await?;
            let _ = self.bot_open_id.set(open_id);
        }
        Ok(())
    }

    async fn send(&self, message: &Outbound) -> Result<Vec<String>, ChannelError> {
        let (id_type, id) = receive_target(&message.chat);
        let in_thread = message.chat.thread.is_some();
        let target = Target {
            id_type,
            id,
            in_thread,
        };
        let mut reply_to = message.reply_to.as_deref().filter(|r| !r.is_empty());
        let mut ids = Vec::new();
        for chunk in render_chunks(&message.text, Flavor::FeishuMarkdown, CARD_CHARS) {
            if chunk.trim().is_empty() {
                continue;
            }
            ids.push(
                self.post(&target, reply_to, "interactive", &card(&chunk))
                    .await?,
            );
            // In a thread every part stays in it; elsewhere only the first quotes the
            // message answered.
            if !in_thread {
                reply_to = None;
            }
        }
        for path in &message.media {
            ids.push(self.send_file(&target, reply_to, path).await?);
            if !in_thread {
                reply_to = None;
            }
        }
        Ok(ids)
    }

    async fn post(
        &self,
        target: &Target<'_>,
        reply_to: Option<&str>,
        msg_type: &str,
        content: &str,
    ) -> Result<String, ChannelError> {
        let id = match reply_to {
            Some(message_id) => {
                self.api
                    .reply_message(message_id, msg_type, content, target.in_thread)
                    .await
            }
            None => {
                self.api
                    .send_message(target.id_type, target.id, msg_type, content)
                    .await
            }
        }?;
        self.remember_sent(&id);
        Ok(id)
    }

    fn remember_sent(&self, id: &str) {
        if id.is_empty() {
            return;
        }
        let mut sent = self.sent.lock().unwrap_or_else(|e| e.into_inner());
        if sent.len() >= REMEMBERED_SENT {
            sent.pop_front();
        }
        sent.push_back(id.to_owned());
    }

    /// Whether `message_id` is one the bot sent (recently).
    fn sent_by_bot(&self, message_id: &str) -> bool {
        !message_id.is_empty()
            && self
                .sent
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .iter()
                .any(|id| id == message_id)
    }

    async fn send_file(
        &self,
        target: &Target<'_>,
        reply_to: Option<&str>,
        path: &Path,
    ) -> Result<String, ChannelError> {
        let OutboundFile {
            name: file_name,
            bytes,
        } = read_outbound_file(CHANNEL, path).await?;
        if is_image(&file_name) {
            let key = self.api.upload_image(&file_name, &bytes).await?;
            let content = json!({ "image_key": key }).to_string();
            self.post(target, reply_to, "image", &content).await
        } else {
            let key = self.api.upload_file(&file_name, &bytes).await?;
            let content = json!({ "file_key": key }).to_string();
            self.post(target, reply_to, "file", &content).await
        }
    }
}

/// Where a message goes.
struct Target<'a> {
    id_type: &'static str,
    id: &'a str,
    in_thread: bool,
}

/// The `receive_id_type` and id for `chat` (see the module docs).
pub fn receive_target(chat: &ChatRef) -> (&'static str, &str) {
    let id = chat.id.as_str();
    let id_type = if id.starts_with("oc_") {
        "chat_id"
    } else if id.starts_with("ou_") {
        "open_id"
    } else if id.starts_with("on_") {
        "union_id"
    } else if chat.kind == ChatKind::Direct {
        "user_id"
    } else {
        "chat_id"
    };
    (id_type, id)
}

/// An interactive card (JSON 2.0) holding one `markdown` element, as the JSON string the
/// message API takes for `content`.
pub fn card(markdown: &str) -> String {
    json!({
        "schema": "2.0",
        "config": { "wide_screen_mode": true },
        "body": { "elements": [{ "tag": "markdown", "content": markdown }] },
    })
    .to_string()
}

impl FeishuAdapter {
    async fn receive(
        &self,
        inbound: &InboundSink,
        stop: &CancellationToken,
    ) -> Result<(), ChannelError> {
        match &self.inner.settings.mode {
            FeishuMode::LongConnection => self.inner.long_connection(inbound, stop).await,
            FeishuMode::Webhook { listen, path } => {
                webhook::serve(self.inner.clone(), *listen, path, inbound, stop).await
            }
        }
    }

    async fn send_message(&self, message: &Outbound) -> Result<Vec<String>, ChannelError> {
        self.inner.send(message).await
    }

    async fn show_typing(&self, _chat: &ChatRef) -> Result<(), ChannelError> {
        // No typing indicator for bots on Feishu (see the module docs).
        Ok(())
    }
}

channel_adapter!(FeishuAdapter, channel: CHANNEL, settings: inner.settings, receive: receive);

#[cfg(test)]
mod tests {
    use super::*;
    use pincer_channel_port::ThreadRef;

    #[test]
    fn domains() {
        assert_eq!(api_base_for_domain("feishu"), FEISHU_API_BASE);
        assert_eq!(api_base_for_domain("Lark"), LARK_API_BASE);
        assert_eq!(
            api_base_for_domain("http://127.0.0.1:9/"),
            "http://127.0.0.1:9"
        );
    }

    #[test]
    fn targets() {
        let chat = |kind, id: &str| ChatRef {
            kind,
            id: id.into(),
            thread: None,
        };
        for (kind, id, id_type) in [
            (ChatKind::Direct, "ou_1", "open_id"),
            (ChatKind::Group, "oc_1", "chat_id"),
            (ChatKind::Direct, "oc_1", "chat_id"),
            (ChatKind::Direct, "u1", "user_id"),
            (ChatKind::Group, "g", "chat_id"),
        ] {
            assert_eq!(receive_target(&chat(kind, id)), (id_type, id));
        }
        let threaded = ChatRef {
            thread: Some(ThreadRef::Thread("omt_1".into())),
            ..chat(ChatKind::Group, "oc_1")
        };
        assert_eq!(receive_target(&threaded), ("chat_id", "oc_1"));
    }

    #[test]
    fn cards() {
        let content: serde_json::Value = serde_json::from_str(&card("**hi** \"x\"")).unwrap();
        assert_eq!(
            content,
            json!({"schema":"2.0","config":{"wide_screen_mode":true},
                "body":{"elements":[{"tag":"markdown","content":"**hi** \"x\""}]}})
        );
    }
}

//! The fake Feishu as a [`FakeChannel`]: a long connection with acks and pings, replies as
//! markdown cards, open ids apart from chat ids, threads by `thread_id`, and files uploaded
//! then sent as `file` / `image` messages.

use std::time::Duration;

use pincer_fakes::fake_feishu::{
    FakeFeishu, FakeFeishuConfig, InjectFeishuMessage, Posted, SentMessage,
};
use serde_json::json;

use super::{FakeChannel, Inbound, Sent, SentFile, mentioning, wait_for_picked};

fn is_file(m: &SentMessage) -> bool {
    matches!(m.msg_type.as_str(), "file" | "image")
}

fn sent(m: &SentMessage) -> Sent {
    Sent {
        to: m.chat_id.clone(),
        text: m.text(),
        plain: m.text(),
        reply_to: m.reply_to.clone(),
        thread: m.thread_id.clone().filter(|_| m.reply_in_thread),
    }
}

fn texts(all: &[SentMessage]) -> Vec<Sent> {
    all.iter().filter(|m| !is_file(m)).map(sent).collect()
}

/// The file and image messages, each with the upload its key names.
fn files(fake: &FakeFeishu, all: &[SentMessage]) -> Vec<SentFile> {
    let uploads = fake.uploads();
    all.iter()
        .filter(|m| is_file(m))
        .map(|m| {
            let key = m.content["file_key"]
                .as_str()
                .or_else(|| m.content["image_key"].as_str());
            let upload = uploads
                .iter()
                .find(|u| Some(u.key.as_str()) == key)
                .unwrap_or_else(|| panic!("no upload for {m:?}"));
            SentFile {
                to: m.chat_id.clone(),
                name: upload.name.clone(),
                bytes: upload.bytes.clone(),
            }
        })
        .collect()
}

fn inbound(message_id: String) -> Inbound {
    Inbound {
        delivery: message_id.clone(),
        message_id,
    }
}

/// A card reply to `message_id` (not in a thread) with this markdown.
pub fn assert_card_reply(sent: &SentMessage, message_id: &str, text: &str) {
    assert_eq!(sent.msg_type, "interactive", "{sent:?}");
    assert_eq!(sent.reply_to.as_deref(), Some(message_id), "{sent:?}");
    assert_eq!(sent.text(), text, "{sent:?}");
    assert_eq!(
        sent.content,
        json!({"schema": "2.0", "config": {"wide_screen_mode": true},
            "body": {"elements": [{"tag": "markdown", "content": text}]}})
    );
}

/// A URL check answered by echoing its `challenge`.
pub fn assert_challenge_echoed(answer: &Posted, challenge: &str) {
    assert_eq!(
        (answer.status, answer.json()),
        (200, json!({ "challenge": challenge }))
    );
}

pub fn no_protocol_errors(fake: &FakeFeishu) {
    let errors = fake.protocol_errors();
    assert!(errors.is_empty(), "{errors:?}");
}

impl FakeChannel for FakeFeishu {
    const NAME: &'static str = "feishu";
    const TEXT_LIMIT: usize = 4000;
    const OWNER: &'static str = "ou_owner0001";
    const STRANGER: &'static str = "ou_stranger2";
    const GROUP: &'static str = "oc_group0001";
    const FREE_GROUP: &'static str = "oc_free0001";
    const THREAD: &'static str = "omt_thread1";
    const THREAD_KIND: &'static str = "thread";
    const QUOTES: bool = true;
    const FORMATTED: (&'static str, &'static str) = ("**hi** _there_", "**hi** *there*");
    // Feishu says `application/octet-stream`; the name says more.
    const TEXT_FILE_TYPE: &'static str = "text/plain";
    const HELLO: (&'static str, &'static str) = ("hello", "hello");

    /// Pings every second, so a silent connection is noticed within about 11 s.
    async fn start() -> Self {
        FakeFeishu::start_with(FakeFeishuConfig::default().ping_interval_secs(1)).await
    }

    fn config(&self, settings: &str) -> String {
        format!(
            "feishu: {{ appId: \"{}\", appSecret: \"{}\", domain: \"{}\", {settings} }}",
            self.app_id(),
            self.app_secret(),
            self.base_url()
        )
    }

    fn bold(text: &str) -> String {
        format!("**{text}**")
    }

    fn dm_chat(&self, user: &str) -> String {
        self.dm_chat_id(user)
    }

    fn inject_dm(&self, from: &str, text: &str) -> Inbound {
        inbound(self.inject_message(InjectFeishuMessage::dm(from, text)))
    }

    fn inject_dm_file(&self, from: &str, name: &str, bytes: Vec<u8>) -> Inbound {
        inbound(self.inject_message(InjectFeishuMessage::dm(from, "").file(name, bytes)))
    }

    fn inject_group(&self, group: &str, text: &str, mention: bool) -> Inbound {
        let message = InjectFeishuMessage::group(group, "ou_u7", text);
        let message = mentioning(message, mention, InjectFeishuMessage::mentioning_bot);
        inbound(self.inject_message(message))
    }

    fn inject_thread(&self, text: &str) -> Inbound {
        inbound(
            self.inject_message(
                InjectFeishuMessage::group(Self::GROUP, "ou_u7", text)
                    .mentioning_bot()
                    .thread(Self::THREAD),
            ),
        )
    }

    fn redeliver(&self, inbound: &Inbound) -> bool {
        FakeFeishu::redeliver(self, &inbound.delivery)
    }

    async fn drop_connection(&self) {
        assert!(self.wait_for_connected(super::T).await);
        assert_eq!(FakeFeishu::drop_connection(self), 1);
    }

    fn sent(&self) -> Vec<Sent> {
        texts(&self.sent_messages())
    }

    async fn wait_for_sent(&self, n: usize, timeout: Duration) -> Vec<Sent> {
        wait_for_picked(n, timeout, |n, t| self.wait_for_messages(n, t), texts).await
    }

    fn sent_files(&self) -> Vec<SentFile> {
        files(self, &self.sent_messages())
    }

    async fn wait_for_files(&self, n: usize, timeout: Duration) -> Vec<SentFile> {
        let pick = |all: &[SentMessage]| files(self, all);
        wait_for_picked(n, timeout, |n, t| self.wait_for_messages(n, t), pick).await
    }

    fn typing(&self) -> Option<Vec<String>> {
        None
    }

    async fn check_dm_reply(&self, inbound: &Inbound) {
        let sent = self.sent_messages();
        assert_card_reply(&sent[0], &inbound.message_id, Self::FORMATTED.1);
        assert!(!sent[0].reply_in_thread, "{:?}", sent[0]);
        let acks = self.wait_for_acks(1, super::T).await;
        assert_eq!(
            acks[0].message_id.as_deref(),
            Some(inbound.message_id.as_str())
        );
        assert_eq!(acks[0].code, Some(200));
        assert!(self.unacked().is_empty());
        let pings = self.wait_for_pings(1, super::T).await;
        assert!(pings[0].answered && pings[0].service == 33, "{pings:?}");
        let endpoints = self.endpoint_requests();
        assert_eq!(endpoints.len(), 1, "{endpoints:?}");
        assert_eq!(endpoints[0].app_id, self.app_id());
    }

    async fn check_split(&self) {
        // The chunks after the first are new messages to the user, by open id.
        let sent = self.sent_messages();
        for later in &sent[1..] {
            assert_eq!(later.receive_id.as_deref(), Some(Self::OWNER), "{later:?}");
            assert_eq!(later.receive_id_type.as_deref(), Some("open_id"));
        }
    }

    async fn check_redelivered(&self) {
        // Acked again (in a new frame); the tenant token was fetched once.
        self.wait_for_acks(2, super::T).await;
        assert_eq!(self.tenant_token_requests().len(), 1, "the token is cached");
        no_protocol_errors(self);
    }

    async fn check_stranger_ignored(&self, _inbound: &Inbound) {
        self.wait_for_acks(1, super::T).await;
        assert!(self.unacked().is_empty());
    }

    async fn check_reconnected(&self, _inbound: &Inbound) {
        assert_eq!(self.wait_for_connection_count(2, super::T).await, 2);
        assert_eq!(
            self.endpoint_requests().len(),
            2,
            "a new endpoint call per connection"
        );
        assert!(self.unacked().is_empty(), "{:?}", self.unacked());
        no_protocol_errors(self);
    }

    async fn wait_ready(&self) {
        assert!(self.wait_for_connected(super::T).await);
    }

    async fn check_announced(&self, _sent: &Sent) {
        let sent = self.sent_messages();
        let last = sent.last().unwrap();
        assert_eq!(last.receive_id.as_deref(), Some(Self::OWNER));
        assert_eq!(last.receive_id_type.as_deref(), Some("open_id"));
        assert_eq!(last.reply_to, None);
    }
}

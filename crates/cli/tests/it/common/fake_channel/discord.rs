//! The fake Discord as a [`FakeChannel`]: a gateway WebSocket with resume, DM channels apart
//! from user ids, guild channels, threads that are channels of their own, and files sent as
//! attachments of a message.

use std::time::Duration;

use pincer_fakes::FakeDiscord;
use pincer_fakes::fake_discord::{
    FakeDiscordConfig, InjectAttachment, InjectDiscordMessage, SentMessage,
};
use serde_json::json;

use super::{FakeChannel, Inbound, Sent, SentFile, mentioning, wait_for_picked};

pub const GUILD: &str = "900";
const OWNER_DM: &str = "500";
const STRANGER_DM: &str = "502";

fn sent(m: &SentMessage) -> Sent {
    Sent {
        to: m.channel_id.clone(),
        text: m.content.clone(),
        plain: m.content.clone(),
        reply_to: m.message_reference.clone(),
        // A thread is a channel of its own; the reply goes there.
        thread: (m.channel_id == <FakeDiscord as FakeChannel>::THREAD)
            .then(|| m.channel_id.clone()),
    }
}

/// A message carrying only files is how files go out, not a text.
fn is_text(m: &SentMessage) -> bool {
    !m.content.is_empty() || m.files.is_empty()
}

fn texts(all: &[SentMessage]) -> Vec<Sent> {
    all.iter().filter(|m| is_text(m)).map(sent).collect()
}

fn files(all: &[SentMessage]) -> Vec<SentFile> {
    all.iter()
        .flat_map(|m| {
            m.files.iter().map(|f| SentFile {
                to: m.channel_id.clone(),
                name: f.filename.clone(),
                bytes: f.bytes.clone(),
            })
        })
        .collect()
}

fn inbound(injected: pincer_fakes::fake_discord::Injected) -> Inbound {
    Inbound {
        delivery: injected.message_id.clone(),
        message_id: injected.message_id,
    }
}

impl FakeChannel for FakeDiscord {
    const NAME: &'static str = "discord";
    const TEXT_LIMIT: usize = 2000;
    const OWNER: &'static str = "1001";
    const STRANGER: &'static str = "2002";
    const GROUP: &'static str = "901";
    const FREE_GROUP: &'static str = "902";
    const THREAD: &'static str = "950";
    const THREAD_KIND: &'static str = "thread";
    const QUOTES: bool = true;
    const FORMATTED: (&'static str, &'static str) =
        ("**hi** _there_ & `you`", "**hi** *there* & `you`");
    const TEXT_FILE_TYPE: &'static str = "text/plain; charset=utf-8";
    const HELLO: (&'static str, &'static str) = ("hello", "hello");

    async fn start() -> Self {
        let fake =
            FakeDiscord::start_with(FakeDiscordConfig::default().heartbeat_interval(500)).await;
        fake.add_thread(GUILD, Self::GROUP, Self::THREAD);
        fake
    }

    fn config(&self, settings: &str) -> String {
        format!(
            "discord: {{ token: \"{}\", apiBaseUrl: \"{}\", {settings} }}",
            self.token(),
            self.base_url()
        )
    }

    fn bold(text: &str) -> String {
        format!("**{text}**")
    }

    fn dm_chat(&self, user: &str) -> String {
        match user {
            Self::OWNER => OWNER_DM.to_owned(),
            Self::STRANGER => STRANGER_DM.to_owned(),
            other => panic!("no DM channel for {other}"),
        }
    }

    fn inject_dm(&self, from: &str, text: &str) -> Inbound {
        let dm = self.dm_chat(from);
        inbound(self.inject_message(InjectDiscordMessage::dm(dm, from, text)))
    }

    fn inject_dm_file(&self, from: &str, name: &str, bytes: Vec<u8>) -> Inbound {
        let dm = self.dm_chat(from);
        inbound(self.inject_message(
            InjectDiscordMessage::dm(dm, from, "").attachment(InjectAttachment::new(name, bytes)),
        ))
    }

    fn inject_group(&self, group: &str, text: &str, mention: bool) -> Inbound {
        let message = InjectDiscordMessage::guild(GUILD, group, "7", text);
        let message = mentioning(message, mention, InjectDiscordMessage::mentioning_bot);
        inbound(self.inject_message(message))
    }

    fn inject_thread(&self, text: &str) -> Inbound {
        inbound(self.inject_message(
            InjectDiscordMessage::guild(GUILD, Self::THREAD, "7", text).mentioning_bot(),
        ))
    }

    fn redeliver(&self, inbound: &Inbound) -> bool {
        FakeDiscord::redeliver(self, &inbound.delivery).is_some()
    }

    async fn drop_connection(&self) {
        assert!(self.wait_for_connected(super::T).await);
        assert_eq!(FakeDiscord::drop_connection(self), 1);
    }

    fn sent(&self) -> Vec<Sent> {
        texts(&self.sent_messages())
    }

    async fn wait_for_sent(&self, n: usize, timeout: Duration) -> Vec<Sent> {
        wait_for_picked(n, timeout, |n, t| self.wait_for_messages(n, t), texts).await
    }

    fn sent_files(&self) -> Vec<SentFile> {
        files(&self.sent_messages())
    }

    async fn wait_for_files(&self, n: usize, timeout: Duration) -> Vec<SentFile> {
        wait_for_picked(n, timeout, |n, t| self.wait_for_messages(n, t), files).await
    }

    fn typing(&self) -> Option<Vec<String>> {
        Some(FakeDiscord::typing(self))
    }

    async fn check_dm_reply(&self, _inbound: &Inbound) {
        let sent = self.sent_messages();
        // Pings nobody, and a deleted original does not fail the reply.
        assert_eq!(sent[0].allowed_mentions, Some(json!({"parse": []})));
        assert_eq!(
            sent[0].payload["message_reference"]["fail_if_not_exists"],
            false
        );
        // The identify the adapter sent.
        let identifies = self.identifies();
        assert_eq!(identifies.len(), 1, "{identifies:?}");
        assert_eq!(identifies[0].token, self.token());
        assert_eq!(identifies[0].intents, Some(1 | 1 << 9 | 1 << 12 | 1 << 15));
        assert_eq!(
            identifies[0].properties,
            json!({"os": "linux", "browser": "pincer", "device": "pincer"})
        );
        assert!(
            !self.wait_for_heartbeats(1, super::T).await.is_empty(),
            "heartbeats"
        );
    }

    async fn check_reconnected(&self, _inbound: &Inbound) {
        // The adapter resumed its session (Discord replayed the message) rather than
        // identifying again.
        let resumes = self.wait_for_resume(1, super::T).await;
        assert_eq!(resumes.len(), 1, "{resumes:?}");
        assert_eq!(Some(resumes[0].session_id.clone()), self.session_id());
        assert!(resumes[0].accepted);
        assert!(resumes[0].seq.is_some());
        assert_eq!(self.identifies().len(), 1, "resumed, not identified again");
    }

    async fn check_files_sent(&self) {
        // A message of its own after the text, the file its `files[0]` part.
        let sent = self.sent_messages();
        let last = sent.last().unwrap();
        assert_eq!(last.content, "", "{last:?}");
        assert_eq!(last.files.len(), 1, "{last:?}");
        assert_eq!(last.files[0].field, "files[0]");
    }

    async fn check_announced(&self, sent: &Sent) {
        // The owner never wrote to the bot: the adapter opened the DM itself.
        assert_ne!(sent.to, Self::OWNER, "a DM channel, not the user id");
        assert!(
            self.calls().iter().any(|c| c == "POST /users/@me/channels"),
            "{:?}",
            self.calls()
        );
    }
}

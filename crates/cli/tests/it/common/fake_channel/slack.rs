//! The fake Slack as a [`FakeChannel`]: Socket Mode envelopes that must be acked, DM
//! channels apart from user ids, mrkdwn, threads by `thread_ts`, files shared by upload.

use std::time::Duration;

use pincer_fakes::fake_slack::{
    FakeSlack, InjectSlackMessage, SentSlackMessage, UploadedSlackFile,
};

use super::{FakeChannel, Inbound, Sent, SentFile, mentioning};

fn sent(m: SentSlackMessage) -> Sent {
    Sent {
        to: m.channel,
        plain: m.text.clone(),
        text: m.text,
        // Slack has no quoting replies: a reply is a post (in the thread, if any).
        reply_to: None,
        thread: m.thread_ts,
    }
}

fn file(f: UploadedSlackFile) -> SentFile {
    SentFile {
        to: f.channel,
        name: f.name,
        bytes: f.bytes,
    }
}

/// Slack gives the envelope ids (a mention outside a DM comes twice: `message` and
/// `app_mention`); the first is what redelivery needs.
fn inbound(envelopes: Vec<String>) -> Inbound {
    Inbound {
        message_id: String::new(),
        delivery: envelopes.into_iter().next().unwrap_or_default(),
    }
}

impl FakeChannel for FakeSlack {
    const NAME: &'static str = "slack";
    const TEXT_LIMIT: usize = 4000;
    const OWNER: &'static str = "U1OWNER";
    const STRANGER: &'static str = "U2STRANGER";
    const GROUP: &'static str = "C1GENERAL";
    const FREE_GROUP: &'static str = "C2QUIET";
    const THREAD: &'static str = "1700000100.000100";
    const THREAD_KIND: &'static str = "thread";
    const QUOTES: bool = false;
    const FORMATTED: (&'static str, &'static str) =
        ("**hi** _there_ & `you`", "*hi* _there_ &amp; `you`");
    const TEXT_FILE_TYPE: &'static str = "text/plain";
    const HELLO: (&'static str, &'static str) = ("hello &lt;you&gt;", "hello <you>");

    async fn start() -> Self {
        FakeSlack::start().await
    }

    fn config(&self, settings: &str) -> String {
        format!(
            "slack: {{ botToken: \"{}\", appToken: \"{}\", apiBaseUrl: \"{}\", {settings} }}",
            self.bot_token(),
            self.app_token(),
            self.api_base()
        )
    }

    fn bold(text: &str) -> String {
        format!("*{text}*")
    }

    fn dm_chat(&self, user: &str) -> String {
        // U1OWNER's DM is D1OWNER.
        format!("D{}", &user[1..])
    }

    fn inject_dm(&self, from: &str, text: &str) -> Inbound {
        let dm = self.dm_chat(from);
        inbound(self.inject_message(InjectSlackMessage::dm(from, dm, text)))
    }

    fn inject_dm_file(&self, from: &str, name: &str, bytes: Vec<u8>) -> Inbound {
        let dm = self.dm_chat(from);
        inbound(
            self.inject_message(InjectSlackMessage::dm(from, dm, "").file(
                name,
                bytes,
                "text/plain",
            )),
        )
    }

    fn inject_group(&self, group: &str, text: &str, mention: bool) -> Inbound {
        let message = InjectSlackMessage::channel("U7", group, text);
        let message = mentioning(message, mention, InjectSlackMessage::mentioning_bot);
        inbound(self.inject_message(message))
    }

    fn inject_thread(&self, text: &str) -> Inbound {
        inbound(
            self.inject_message(
                InjectSlackMessage::channel("U7", Self::GROUP, text)
                    .mentioning_bot()
                    .thread_ts(Self::THREAD),
            ),
        )
    }

    fn redeliver(&self, inbound: &Inbound) -> bool {
        FakeSlack::redeliver(self, &inbound.delivery)
    }

    async fn drop_connection(&self) {
        assert!(self.wait_for_connected(super::T).await);
        assert_eq!(FakeSlack::drop_connection(self), 1);
    }

    fn sent(&self) -> Vec<Sent> {
        self.sent_messages().into_iter().map(sent).collect()
    }

    async fn wait_for_sent(&self, n: usize, timeout: Duration) -> Vec<Sent> {
        let found = self.wait_for_messages(n, timeout).await;
        found.into_iter().map(sent).collect()
    }

    fn sent_files(&self) -> Vec<SentFile> {
        self.uploaded_files().into_iter().map(file).collect()
    }

    async fn wait_for_files(&self, n: usize, timeout: Duration) -> Vec<SentFile> {
        let found = FakeSlack::wait_for_files(self, n, timeout).await;
        found.into_iter().map(file).collect()
    }

    fn typing(&self) -> Option<Vec<String>> {
        None
    }

    async fn check_dm_reply(&self, inbound: &Inbound) {
        assert_eq!(self.sent_messages()[0].payload["mrkdwn"], true);
        let acks = self.wait_for_acks(1, super::T).await;
        assert_eq!(acks, [inbound.delivery.as_str()]);
        let calls = self.calls();
        assert_eq!(
            &calls[..2],
            ["auth.test", "apps.connections.open"],
            "{calls:?}"
        );
    }

    async fn check_redelivered(&self) {
        // The envelope is acked again.
        assert_eq!(self.wait_for_acks(2, super::T).await.len(), 2);
    }

    async fn check_stranger_ignored(&self, inbound: &Inbound) {
        let acks = self.wait_for_acks(1, super::T).await;
        assert_eq!(acks, [inbound.delivery.as_str()], "acked all the same");
    }

    async fn check_reconnected(&self, inbound: &Inbound) {
        // A fresh apps.connections.open, and Slack delivered the message there.
        assert_eq!(self.wait_for_connections(2, super::T).await, 2);
        let opens = self
            .calls()
            .iter()
            .filter(|c| *c == "apps.connections.open")
            .count();
        assert_eq!(opens, 2);
        assert!(self.acks().contains(&inbound.delivery));
    }

    async fn check_announced(&self, sent: &Sent) {
        assert!(
            sent.to.starts_with('D'),
            "a DM channel, not the user id: {sent:?}"
        );
        assert!(
            self.calls().iter().any(|c| c == "conversations.open"),
            "{:?}",
            self.calls()
        );
    }
}

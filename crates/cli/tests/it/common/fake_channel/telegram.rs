//! The fake Telegram Bot API as a [`FakeChannel`]: long polling (so a shorter poll), chat
//! ids that are user ids, HTML markup, forum topics as threads.

use std::time::Duration;

use pincer_fakes::fake_telegram::{FakeTelegram, InjectMessage, SentFile as TgFile};

use super::{FakeChannel, Home, Inbound, Sent, SentFile};

fn id(text: &str) -> i64 {
    text.parse()
        .unwrap_or_else(|_| panic!("not a Telegram id: {text}"))
}

fn sent(m: pincer_fakes::fake_telegram::SentMessage) -> Sent {
    Sent {
        to: m.chat_id.to_string(),
        text: m.text,
        plain: m.plain_text,
        reply_to: m.reply_to_message_id.map(|id| id.to_string()),
        thread: m.message_thread_id.map(|id| id.to_string()),
    }
}

fn file(f: TgFile) -> SentFile {
    SentFile {
        to: f.chat_id.to_string(),
        name: f.file_name.unwrap_or_default(),
        bytes: f.bytes,
    }
}

fn inbound((update_id, message_id): (i64, i64)) -> Inbound {
    Inbound {
        message_id: message_id.to_string(),
        delivery: update_id.to_string(),
    }
}

impl FakeChannel for FakeTelegram {
    const NAME: &'static str = "telegram";
    const TEXT_LIMIT: usize = 4096;
    const OWNER: &'static str = "1001";
    const STRANGER: &'static str = "2002";
    const GROUP: &'static str = "-100555";
    const FREE_GROUP: &'static str = "-100777";
    const THREAD: &'static str = "42";
    const THREAD_KIND: &'static str = "topic";
    const QUOTES: bool = true;
    const FORMATTED: (&'static str, &'static str) =
        ("**hi** <there> & you", "<b>hi</b> &lt;there&gt; &amp; you");
    const TEXT_FILE_TYPE: &'static str = "text/plain";
    const HELLO: (&'static str, &'static str) = ("hello", "hello");

    async fn start() -> Self {
        FakeTelegram::start().await
    }

    fn config(&self, settings: &str) -> String {
        format!(
            "telegram: {{ botToken: \"{}\", apiBaseUrl: \"{}\", {settings} }}",
            self.token(),
            self.base_url()
        )
    }

    fn home() -> Home {
        // Long polls of a second: a dropped poll is retried without a long wait.
        Home::new().with_env("PINCER_TELEGRAM_POLL_SECS", "1")
    }

    fn bold(text: &str) -> String {
        format!("<b>{text}</b>")
    }

    fn dm_chat(&self, user: &str) -> String {
        user.to_owned()
    }

    fn inject_dm(&self, from: &str, text: &str) -> Inbound {
        inbound(self.inject_message(InjectMessage::private(id(from), text)))
    }

    fn inject_dm_file(&self, from: &str, name: &str, bytes: Vec<u8>) -> Inbound {
        let file = self.register_file(bytes, name);
        inbound(self.inject_message(InjectMessage::private(id(from), "").with_document(file)))
    }

    fn inject_group(&self, group: &str, text: &str, mention: bool) -> Inbound {
        let text = if mention {
            format!("@{} {text}", self.bot_username())
        } else {
            text.to_owned()
        };
        inbound(self.inject_message(InjectMessage::supergroup(id(group), 7, text)))
    }

    fn inject_thread(&self, text: &str) -> Inbound {
        let text = format!("@{} {text}", self.bot_username());
        inbound(self.inject_message(
            InjectMessage::supergroup(id(Self::GROUP), 7, text).in_topic(id(Self::THREAD)),
        ))
    }

    fn redeliver(&self, inbound: &Inbound) -> bool {
        FakeTelegram::redeliver(self, id(&inbound.delivery))
    }

    async fn drop_connection(&self) {
        // Long polling has no connection to drop: the next two polls fail instead.
        self.drop_next_get_updates(2);
    }

    fn sent(&self) -> Vec<Sent> {
        self.sent_messages().into_iter().map(sent).collect()
    }

    async fn wait_for_sent(&self, n: usize, timeout: Duration) -> Vec<Sent> {
        let found = self.wait_for_messages(n, timeout).await;
        found.into_iter().map(sent).collect()
    }

    fn sent_files(&self) -> Vec<SentFile> {
        FakeTelegram::sent_files(self)
            .into_iter()
            .map(file)
            .collect()
    }

    async fn wait_for_files(&self, n: usize, timeout: Duration) -> Vec<SentFile> {
        let found = FakeTelegram::wait_for_files(self, n, timeout).await;
        found.into_iter().map(file).collect()
    }

    fn typing(&self) -> Option<Vec<String>> {
        let actions = self.chat_actions();
        Some(
            actions
                .into_iter()
                .filter(|(_, action)| action == "typing")
                .map(|(chat, _)| chat.to_string())
                .collect(),
        )
    }

    async fn check_dm_reply(&self, _inbound: &Inbound) {
        let sent = self.sent_messages();
        assert_eq!(sent[0].parse_mode.as_deref(), Some("HTML"), "{sent:?}");
    }

    async fn check_announced(&self, sent: &Sent) {
        assert_eq!(sent.to, Self::OWNER, "a private chat's id is its user's");
    }
}

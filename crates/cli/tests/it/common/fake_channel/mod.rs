//! One face for every fake chat platform (Telegram, Discord, Slack, Feishu), so the channel
//! conformance suite runs the same behaviours against each adapter: starting the fake and a
//! gateway pointed at it, injecting DMs, group posts, thread posts and files, reading what
//! the bot sent (texts, files, typing) in one shape, dropping the connection, and the
//! platform's peculiarities (text limit, how bold looks, who the owner is) as data. What
//! only one platform does stays on its own fake's API, used by its own test module.

#![allow(async_fn_in_trait)]

mod discord;
pub mod feishu;
mod slack;
mod telegram;

use std::time::Duration;

use pincer_testkit::{MockLlm, Scenario};

use super::Home;
use super::channels::channel_gateway_in;
use super::gateway::Foreground;

/// How long a test waits for something the bot should do.
pub const T: Duration = Duration::from_secs(30);

/// A message the bot sent, whatever the platform.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sent {
    /// The chat (channel, conversation) it went to.
    pub to: String,
    /// The text as sent on the wire (markup and all).
    pub text: String,
    /// The text a reader sees (markup removed where the platform has it).
    pub plain: String,
    /// The message it replies to (quotes), where the platform has replies.
    pub reply_to: Option<String>,
    /// The thread (topic) it went to, where the platform has threads inside a chat.
    pub thread: Option<String>,
}

/// A file the bot sent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SentFile {
    pub to: String,
    pub name: String,
    pub bytes: Vec<u8>,
}

/// What an injected message left for the test: the platform's message id (empty where the
/// platform gives none) and what `redeliver` needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Inbound {
    pub message_id: String,
    pub delivery: String,
}

/// A fake chat platform the gateway's adapter can be pointed at.
pub trait FakeChannel: Sized {
    /// The channel's name in config, CLI and session keys.
    const NAME: &'static str;
    /// Most characters one message may carry.
    const TEXT_LIMIT: usize;
    /// A user allowed by `owner_only`.
    const OWNER: &'static str;
    /// A user nobody allowed.
    const STRANGER: &'static str;
    /// A group (channel, chat) and one more whose config needs no mention.
    const GROUP: &'static str;
    const FREE_GROUP: &'static str;
    /// A thread (topic) inside `GROUP`, and what a session key calls it.
    const THREAD: &'static str;
    const THREAD_KIND: &'static str;
    /// Whether a reply quotes the message it answers.
    const QUOTES: bool;
    /// A reply's markdown as the model writes it and as the platform gets it.
    const FORMATTED: (&'static str, &'static str);
    /// The media type the agent is told a `.txt` file has (what the platform declares).
    const TEXT_FILE_TYPE: &'static str;
    /// What a user types on the wire and what the model is asked (the platform's escapes
    /// undone).
    const HELLO: (&'static str, &'static str);

    async fn start() -> Self;

    /// The `channels` entry pointing the adapter at this fake, with `settings` (e.g.
    /// `dmPolicy: "allowlist"`) added to it.
    fn config(&self, settings: &str) -> String;

    /// The home a gateway for this platform runs in (an environment knob or none).
    fn home() -> Home {
        Home::new()
    }

    /// `text` (markdown) as the platform shows it bold.
    fn bold(text: &str) -> String;

    /// The DM chat of `user`.
    fn dm_chat(&self, user: &str) -> String;

    fn inject_dm(&self, from: &str, text: &str) -> Inbound;
    fn inject_dm_file(&self, from: &str, name: &str, bytes: Vec<u8>) -> Inbound;
    /// A post in `group` by someone (not the owner), mentioning the bot or not.
    fn inject_group(&self, group: &str, text: &str, mention: bool) -> Inbound;
    /// A post mentioning the bot in `THREAD` of `GROUP`.
    fn inject_thread(&self, text: &str) -> Inbound;
    /// Delivers `inbound` again, as the platform does after a lost ack or a crash.
    fn redeliver(&self, inbound: &Inbound) -> bool;
    /// Drops the bot's connection (waiting first until it has one) so that the next
    /// message only arrives once the adapter reconnects.
    async fn drop_connection(&self);

    /// Text messages the bot sent, oldest first (file-only messages left out).
    fn sent(&self) -> Vec<Sent>;
    /// Waits until at least `n` text messages were sent or `timeout` passed.
    async fn wait_for_sent(&self, n: usize, timeout: Duration) -> Vec<Sent>;
    fn sent_files(&self) -> Vec<SentFile>;
    async fn wait_for_files(&self, n: usize, timeout: Duration) -> Vec<SentFile>;
    /// The chats the bot showed "typing…" in; `None` where the platform has no typing.
    fn typing(&self) -> Option<Vec<String>>;

    /// Checks what only this platform does around the first DM's reply (wire details,
    /// acks, handshakes).
    async fn check_dm_reply(&self, _inbound: &Inbound) {}
    /// Checks the platform's side of a redelivery (an ack again, …).
    async fn check_redelivered(&self) {}
    /// Checks the platform's side of an unanswered stranger's `inbound` (acked all the
    /// same, …).
    async fn check_stranger_ignored(&self, _inbound: &Inbound) {}
    /// Checks how the platform carried the chunks of a long reply after the first.
    async fn check_split(&self) {}
    /// Checks the platform's side of a reconnect (a resume, a new connection, …);
    /// `inbound` arrived while the connection was down.
    async fn check_reconnected(&self, _inbound: &Inbound) {}
    /// Checks how the platform carried the files just sent.
    async fn check_files_sent(&self) {}
    /// Waits until the adapter is up where sending needs it (before a cron run).
    async fn wait_ready(&self) {}
    /// Checks how a cron announcement to `OWNER` (who never wrote) reached them.
    async fn check_announced(&self, sent: &Sent);

    /// The settings answering only the owner's DMs.
    fn owner_only() -> String {
        format!("dmPolicy: \"allowlist\", allowFrom: [\"{}\"]", Self::OWNER)
    }

    /// The mock LLM answering by `script`, this fake started, and a [`FakeChannel::gateway`]
    /// pointed at it with `settings`.
    async fn started(script: Scenario, settings: &str) -> (MockLlm, Self, Home, Foreground) {
        let llm = super::mock(script).await;
        let fake = Self::start().await;
        let (home, gateway) = fake.gateway(&llm, settings);
        (llm, fake, home, gateway)
    }

    /// [`FakeChannel::started`] answering only the owner's DMs.
    async fn started_for_owner(script: Scenario) -> (MockLlm, Self, Home, Foreground) {
        Self::started(script, &Self::owner_only()).await
    }

    /// A gateway with no heartbeat whose adapter is pointed at this fake with `settings`.
    fn gateway(&self, llm: &MockLlm, settings: &str) -> (Home, Foreground) {
        self.gateway_with(llm, settings, "0m", "")
    }

    /// [`FakeChannel::gateway`] with a heartbeat every `every` and more of `channels`
    /// before this platform's entry (e.g. `pairingNotify: {…},`).
    fn gateway_with(
        &self,
        llm: &MockLlm,
        settings: &str,
        every: &str,
        channels: &str,
    ) -> (Home, Foreground) {
        channel_gateway_in(
            Self::home(),
            llm,
            every,
            &format!("{channels} {}", self.config(settings)),
        )
    }

    /// The number of text messages sent after waiting `for_` (for "nothing more comes").
    async fn quiet(&self, for_: Duration) -> usize {
        tokio::time::sleep(for_).await;
        self.sent().len()
    }
}

/// `message`, mentioning the bot when `mention` (with the platform's `mentioning_bot`).
pub(super) fn mentioning<M>(message: M, mention: bool, mentioning_bot: impl FnOnce(M) -> M) -> M {
    if mention {
        mentioning_bot(message)
    } else {
        message
    }
}

/// Waits until `pick` finds at least `n` things in the records `wait` returns (it waits for
/// at least as many records as asked) or `timeout` passed; returns what `pick` finds then.
/// For fakes that keep texts and files in one record: it waits for one more record at a
/// time until `pick` finds enough.
pub(super) async fn wait_for_picked<M, T, F>(
    n: usize,
    timeout: Duration,
    wait: impl Fn(usize, Duration) -> F,
    pick: impl Fn(&[M]) -> Vec<T>,
) -> Vec<T>
where
    F: Future<Output = Vec<M>>,
{
    let deadline = tokio::time::Instant::now() + timeout;
    let mut want = 1;
    loop {
        let left = deadline.saturating_duration_since(tokio::time::Instant::now());
        let all = wait(want, left).await;
        let picked = pick(&all);
        if picked.len() >= n || all.len() < want {
            return picked;
        }
        want = all.len() + 1;
    }
}

//! Discord end to end, what only Discord does (the rest is in `channel_conformance`): a
//! reply to the bot's message counting as a mention, a thread inheriting its parent
//! channel's allowlist and looked up once, reconnect requests resumed and an invalidated
//! session identified anew, and a textless message whose one refused file leaves none of
//! its files staged.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use crate::common::channels::{last_user_text, session_keys, thread_and_channel_replies};
use crate::common::fake_channel::{FakeChannel, T};
use crate::common::{mock, replies};
use pincer_fakes::FakeDiscord;
use pincer_fakes::fake_discord::{InjectAttachment, InjectDiscordMessage};
use pincer_testkit::{Match, Reply, Rule, Scenario};

const OWNER: &str = "1001";
const OWNER_DM: &str = "500";
const GUILD: &str = "900";
const GUILD_CHANNEL: &str = "901";

async fn fake() -> FakeDiscord {
    <FakeDiscord as FakeChannel>::start().await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reply_to_the_bots_message_counts_as_a_mention() {
    let (llm, fake, _home, gateway) = FakeDiscord::started(
        replies(&[("what time is it?", "tea time"), ("and now?", "still tea")]),
        "groupPolicy: \"open\"",
    )
    .await;

    fake.inject_message(
        InjectDiscordMessage::guild(GUILD, GUILD_CHANNEL, "7", "what time is it?").mentioning_bot(),
    );
    let sent = fake.wait_for_messages(1, T).await;
    assert_eq!(sent[0].content, "tea time");

    fake.inject_message(
        InjectDiscordMessage::guild(GUILD, GUILD_CHANNEL, "7", "and now?").reply_to(&sent[0].id),
    );
    let sent = fake.wait_for_messages(2, T).await;
    assert_eq!(sent.len(), 2, "{sent:?}");
    assert_eq!(sent[1].content, "still tea");
    assert_eq!(last_user_text(&llm), "and now?");
    drop(gateway);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_thread_belongs_to_its_parent_channel_and_has_a_session_of_its_own() {
    const THREAD: &str = "950";
    let llm = mock(thread_and_channel_replies()).await;
    let fake = fake().await;
    // The fake knows THREAD as a thread of GUILD_CHANNEL (see FakeChannel::start).
    // Only the parent channel is allowed, without mentions: its threads inherit that.
    let (home, gateway) = fake.gateway(
        &llm,
        &format!(
            "groupAllowFrom: [\"{GUILD_CHANNEL}\"], groups: {{ \"{GUILD_CHANNEL}\": {{ requireMention: false }} }}"
        ),
    );

    fake.inject_group(THREAD, "in the thread", false);
    let sent = fake.wait_for_messages(1, T).await;
    assert_eq!(sent.len(), 1, "{sent:?}");
    assert_eq!(sent[0].channel_id, THREAD, "the reply goes to the thread");
    assert_eq!(sent[0].content, "thread reply");

    fake.inject_group(GUILD_CHANNEL, "in the channel", false);
    let sent = fake.wait_for_messages(2, T).await;
    assert_eq!(sent.len(), 2, "{sent:?}");
    assert_eq!(sent[1].channel_id, GUILD_CHANNEL);
    assert_eq!(sent[1].content, "channel reply");

    let keys = session_keys(&home);
    assert_eq!(
        keys,
        [
            format!("agent:main:discord:channel:{GUILD_CHANNEL}"),
            format!("agent:main:discord:channel:{GUILD_CHANNEL}:thread:{THREAD}"),
        ]
    );
    assert_eq!(
        fake.calls()
            .iter()
            .filter(|c| c.as_str() == format!("GET /channels/{THREAD}"))
            .count(),
        1,
        "the thread is looked up once: {:?}",
        fake.calls()
    );
    drop(gateway);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reconnect_requests_resume_and_an_invalid_session_identifies_anew() {
    let (_llm, fake, _home, gateway) = FakeDiscord::started_for_owner(replies(&[
        ("one", "first"),
        ("two", "second"),
        ("three", "third"),
    ]))
    .await;
    fake.inject_message(InjectDiscordMessage::dm(OWNER_DM, OWNER, "one"));
    assert_eq!(fake.wait_for_messages(1, T).await[0].content, "first");

    // op 7: the adapter closes and resumes the same session.
    assert!(fake.send_reconnect());
    let resumes = fake.wait_for_resume(1, T).await;
    assert!(resumes[0].accepted, "{resumes:?}");
    assert!(fake.wait_for_connected(T).await);
    fake.inject_message(InjectDiscordMessage::dm(OWNER_DM, OWNER, "two"));
    assert_eq!(fake.wait_for_messages(2, T).await[1].content, "second");

    // op 9 (not resumable): the adapter identifies again.
    assert!(fake.invalidate_session());
    let identifies = fake.wait_for_identify(2, T).await;
    assert_eq!(identifies.len(), 2, "{identifies:?}");
    assert!(fake.wait_for_connected(T).await);
    fake.inject_message(InjectDiscordMessage::dm(OWNER_DM, OWNER, "three"));
    let sent = fake.wait_for_messages(3, T).await;
    assert_eq!(sent[2].content, "third");
    assert_eq!(fake.quiet(Duration::from_millis(1000)).await, 3);
    drop(gateway);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_textless_message_with_a_refused_file_leaves_none_of_its_files_staged() {
    let llm = mock(Scenario::new().rule(Rule::when(Match::any()).reply(Reply::text("hi")))).await;
    let fake = fake().await;
    let (home, gateway) = fake.gateway(
        &llm,
        &format!("{}, mediaMaxMb: 1", FakeDiscord::owner_only()),
    );

    // One file fetched and staged, one refused, no text: the refusal is the only answer.
    fake.inject_message(
        InjectDiscordMessage::dm(OWNER_DM, OWNER, "")
            .attachment(InjectAttachment::new(
                "numbers.txt",
                b"quarterly numbers".to_vec(),
            ))
            .attachment(InjectAttachment::new(
                "big.bin",
                vec![b'x'; 2 * 1024 * 1024],
            )),
    );
    // The ingress takes a channel's messages in order: once the next one is answered, the
    // first is done with.
    fake.inject_message(InjectDiscordMessage::dm(OWNER_DM, OWNER, "ping"));
    let sent = fake.wait_for_messages(2, T).await;
    assert_eq!(
        sent[0].content,
        "That file is too big for me (the limit is 1 MB); send a smaller one or a link."
    );
    assert_eq!(sent[1].content, "hi");
    assert_eq!(llm.requests().len(), 1, "no turn for the file-only message");
    assert_eq!(last_user_text(&llm), "ping");
    let staged = std::fs::read_dir(home.path().join("media/staging"))
        .map(|d| d.map(|e| e.unwrap().file_name()).collect::<Vec<_>>())
        .unwrap_or_default();
    assert!(staged.is_empty(), "left staged: {staged:?}");
    drop(gateway);
}

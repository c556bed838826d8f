//! Discord end to end: `pincer gateway run` with `channels.discord` pointed at the fake
//! Discord of pincer-testkit (REST and a real gateway WebSocket) and the mock LLM — a DM
//! in and the reply out (with typing, as a reply, in Discord Markdown, pinging nobody),
//! the same message delivered twice answered once, guild channels with and without a
//! mention, a long reply split at Discord's 2000, a dropped connection resumed without
//! losing or repeating a message, a reconnect request and an invalidated session, the
//! allowlist's silence and pairing.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::time::Duration;

use common::channels::*;
use common::gateway::*;
use common::{Home, mock};
use pincer_testkit::fake_discord::{FakeDiscordConfig, InjectDiscordMessage};
use pincer_testkit::{FakeDiscord, Match, MockLlm, Reply, Rule, Scenario};
use serde_json::{Value, json};

const OWNER: &str = "1001";
const OWNER_DM: &str = "500";
const GUILD: &str = "900";
const GUILD_CHANNEL: &str = "901";
const T: Duration = Duration::from_secs(20);

async fn fake() -> FakeDiscord {
    FakeDiscord::start_with(FakeDiscordConfig::default().heartbeat_interval(500)).await
}

/// A gateway whose Discord bot is the fake; `discord` is the rest of the channel's
/// settings (`dmPolicy`, `allowFrom`, …).
fn gateway(llm: &MockLlm, fake: &FakeDiscord, discord: &str) -> (Home, Foreground) {
    channel_gateway(
        llm,
        &format!(
            "discord: {{ token: \"{}\", apiBaseUrl: \"{}\", {discord} }}",
            fake.token(),
            fake.base_url()
        ),
    )
}

fn owner_only() -> String {
    format!("dmPolicy: \"allowlist\", allowFrom: [\"{OWNER}\"]")
}

async fn quiet(fake: &FakeDiscord, for_: Duration) -> usize {
    tokio::time::sleep(for_).await;
    fake.sent_messages().len()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dm_gets_its_reply_once_even_when_discord_delivers_it_twice() {
    let llm =
        mock(Scenario::new().rule(
            Rule::when(Match::last_user("hello")).reply(Reply::text("**hi** _there_ & `you`")),
        ))
        .await;
    let fake = fake().await;
    let (_home, gateway) = gateway(&llm, &fake, &owner_only());

    let injected = fake.inject_message(InjectDiscordMessage::dm(OWNER_DM, OWNER, "hello"));
    let sent = fake.wait_for_messages(1, T).await;
    assert_eq!(sent.len(), 1, "{sent:?}");
    assert_eq!(sent[0].channel_id, OWNER_DM);
    assert_eq!(sent[0].content, "**hi** *there* & `you`");
    assert_eq!(
        sent[0].message_reference.as_deref(),
        Some(injected.message_id.as_str())
    );
    assert_eq!(sent[0].allowed_mentions, Some(json!({"parse": []})));
    assert_eq!(
        sent[0].payload["message_reference"]["fail_if_not_exists"],
        false
    );
    assert!(
        fake.typing().contains(&OWNER_DM.to_owned()),
        "{:?}",
        fake.typing()
    );
    assert_eq!(last_user_text(&llm), "hello");

    // The identify the adapter sent.
    let identifies = fake.identifies();
    assert_eq!(identifies.len(), 1, "{identifies:?}");
    assert_eq!(identifies[0].token, fake.token());
    assert_eq!(identifies[0].intents, Some(1 | 1 << 9 | 1 << 12 | 1 << 15));
    assert_eq!(
        identifies[0].properties,
        json!({"os": "linux", "browser": "pincer", "device": "pincer"})
    );
    assert!(
        !fake.wait_for_heartbeats(1, T).await.is_empty(),
        "heartbeats"
    );

    let mut client = WsClient::connect(gateway.port, GATEWAY_TOKEN).await;
    let health = client.call("health", json!({})).await;
    let discord = &health["payload"]["channels"]["discord"];
    assert_eq!(discord["running"], true, "{health}");
    assert_eq!(discord["accounts"][0]["connected"], true, "{health}");

    // Discord sends the same message again.
    assert!(fake.redeliver(&injected.message_id).is_some());
    assert_eq!(
        quiet(&fake, Duration::from_millis(2500)).await,
        1,
        "answered once"
    );
    assert_eq!(llm.requests().len(), 1);
    drop(gateway);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn guild_channels_answer_only_when_mentioned_or_replied_to() {
    let llm = mock(
        Scenario::new()
            .rule(Rule::when(Match::last_user("what time is it?")).reply(Reply::text("tea time")))
            .rule(Rule::when(Match::last_user("and now?")).reply(Reply::text("still tea"))),
    )
    .await;
    let fake = fake().await;
    let (_home, gateway) = gateway(&llm, &fake, "groupPolicy: \"open\"");

    fake.inject_message(InjectDiscordMessage::guild(
        GUILD,
        GUILD_CHANNEL,
        "7",
        "what time is it?",
    ));
    assert_eq!(
        quiet(&fake, Duration::from_millis(2500)).await,
        0,
        "not mentioned: silent"
    );
    assert!(llm.requests().is_empty());

    let mentioned = fake.inject_message(
        InjectDiscordMessage::guild(GUILD, GUILD_CHANNEL, "7", "what time is it?").mentioning_bot(),
    );
    let sent = fake.wait_for_messages(1, T).await;
    assert_eq!(sent.len(), 1, "{sent:?}");
    assert_eq!(sent[0].channel_id, GUILD_CHANNEL);
    assert_eq!(sent[0].content, "tea time");
    assert_eq!(
        sent[0].message_reference.as_deref(),
        Some(mentioned.message_id.as_str())
    );
    assert_eq!(
        last_user_text(&llm),
        "what time is it?",
        "the mention is not part of the prompt"
    );

    // A reply to the bot's message counts as a mention.
    fake.inject_message(
        InjectDiscordMessage::guild(GUILD, GUILD_CHANNEL, "7", "and now?").reply_to(&sent[0].id),
    );
    let sent = fake.wait_for_messages(2, T).await;
    assert_eq!(sent.len(), 2, "{sent:?}");
    assert_eq!(sent[1].content, "still tea");
    drop(gateway);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_thread_belongs_to_its_parent_channel_and_has_a_session_of_its_own() {
    const THREAD: &str = "950";
    let llm = mock(
        Scenario::new()
            .rule(Rule::when(Match::last_user("in the thread")).reply(Reply::text("thread reply")))
            .rule(
                Rule::when(Match::last_user("in the channel")).reply(Reply::text("channel reply")),
            ),
    )
    .await;
    let fake = fake().await;
    fake.add_thread(GUILD, GUILD_CHANNEL, THREAD);
    // Only the parent channel is allowed, without mentions: its threads inherit that.
    let (home, gateway) = gateway(
        &llm,
        &fake,
        &format!(
            "groupAllowFrom: [\"{GUILD_CHANNEL}\"], groups: {{ \"{GUILD_CHANNEL}\": {{ requireMention: false }} }}"
        ),
    );

    fake.inject_message(InjectDiscordMessage::guild(
        GUILD,
        THREAD,
        "7",
        "in the thread",
    ));
    let sent = fake.wait_for_messages(1, T).await;
    assert_eq!(sent.len(), 1, "{sent:?}");
    assert_eq!(sent[0].channel_id, THREAD, "the reply goes to the thread");
    assert_eq!(sent[0].content, "thread reply");

    fake.inject_message(InjectDiscordMessage::guild(
        GUILD,
        GUILD_CHANNEL,
        "7",
        "in the channel",
    ));
    let sent = fake.wait_for_messages(2, T).await;
    assert_eq!(sent.len(), 2, "{sent:?}");
    assert_eq!(sent[1].channel_id, GUILD_CHANNEL);
    assert_eq!(sent[1].content, "channel reply");

    let index: Value = serde_json::from_str(
        &std::fs::read_to_string(home.sessions_dir().join("sessions.json")).unwrap(),
    )
    .unwrap();
    let mut keys: Vec<&String> = index.as_object().unwrap().keys().collect();
    keys.sort();
    assert_eq!(
        keys,
        [
            &format!("agent:main:discord:channel:{GUILD_CHANNEL}"),
            &format!("agent:main:discord:channel:{GUILD_CHANNEL}:thread:{THREAD}"),
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
async fn a_long_reply_is_split_and_a_dropped_connection_is_resumed_losing_nothing() {
    let long: String = (0..900).map(|i| format!("word{i} ")).collect();
    let llm = mock(
        Scenario::new()
            .rule(Rule::when(Match::last_user("long")).reply(Reply::text(long.trim_end())))
            .rule(Rule::when(Match::last_user("after the drop")).reply(Reply::text("still here"))),
    )
    .await;
    let fake = fake().await;
    let (_home, gateway) = gateway(&llm, &fake, &owner_only());

    let asked = fake.inject_message(InjectDiscordMessage::dm(OWNER_DM, OWNER, "long"));
    let sent = fake.wait_for_messages(4, T).await;
    assert_eq!(sent.len(), 4, "{} messages", sent.len());
    assert!(sent.iter().all(|m| m.content.chars().count() <= 2000));
    let joined: Vec<String> = sent.iter().map(|m| m.content.trim().to_owned()).collect();
    assert_eq!(joined.join(" "), long.trim_end());
    assert_eq!(
        sent[0].message_reference.as_deref(),
        Some(asked.message_id.as_str())
    );
    assert!(
        sent[1..].iter().all(|m| m.message_reference.is_none()),
        "only the first chunk is a reply"
    );

    // The network drops; a message arrives meanwhile; the adapter resumes the session and
    // Discord replays it.
    assert!(fake.wait_for_connected(T).await);
    let session = fake.session_id().unwrap();
    assert_eq!(fake.drop_connection(), 1);
    fake.inject_message(InjectDiscordMessage::dm(OWNER_DM, OWNER, "after the drop"));
    let resumes = fake.wait_for_resume(1, T).await;
    assert_eq!(resumes.len(), 1, "{resumes:?}");
    assert_eq!(resumes[0].session_id, session);
    assert!(resumes[0].accepted);
    assert!(resumes[0].seq.is_some());
    let sent = fake.wait_for_messages(5, T).await;
    assert_eq!(sent.last().unwrap().content, "still here");
    assert_eq!(quiet(&fake, Duration::from_millis(1500)).await, 5);
    assert_eq!(
        model_calls_with(&llm, "after the drop"),
        1,
        "once, not twice"
    );
    assert_eq!(fake.identifies().len(), 1, "resumed, not identified again");
    drop(gateway);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reconnect_requests_resume_and_an_invalid_session_identifies_anew() {
    let llm = mock(
        Scenario::new()
            .rule(Rule::when(Match::last_user("one")).reply(Reply::text("first")))
            .rule(Rule::when(Match::last_user("two")).reply(Reply::text("second")))
            .rule(Rule::when(Match::last_user("three")).reply(Reply::text("third"))),
    )
    .await;
    let fake = fake().await;
    let (_home, gateway) = gateway(&llm, &fake, &owner_only());
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
    assert_eq!(quiet(&fake, Duration::from_millis(1000)).await, 3);
    drop(gateway);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn allowlist_never_answers_a_stranger() {
    let llm = mock(Scenario::new().rule(Rule::when(Match::any()).reply(Reply::text("hi")))).await;
    let fake = fake().await;
    let (home, gateway) = gateway(&llm, &fake, &owner_only());
    fake.inject_message(InjectDiscordMessage::dm("501", "2002", "let me in"));
    assert_eq!(quiet(&fake, Duration::from_millis(2500)).await, 0);
    assert!(llm.requests().is_empty());
    assert!(
        !home
            .path()
            .join("credentials/discord-pairing.json")
            .exists()
    );
    drop(gateway);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stranger_gets_a_pairing_code_and_once_approved_is_served() {
    let llm = mock(
        Scenario::new()
            .rule(Rule::when(Match::last_user("hey again")).reply(Reply::text("welcome"))),
    )
    .await;
    let fake = fake().await;
    // dmPolicy defaults to pairing.
    let (home, gateway) = gateway(&llm, &fake, "");
    let (stranger, stranger_dm) = ("2002", "502");

    fake.inject_message(InjectDiscordMessage::dm(stranger_dm, stranger, "hey"));
    let sent = fake.wait_for_messages(1, T).await;
    assert_eq!(sent.len(), 1, "{sent:?}");
    assert_eq!(sent[0].channel_id, stranger_dm);
    let text = &sent[0].content;
    let code = text
        .lines()
        .find_map(|l| l.strip_prefix("Pairing code: "))
        .unwrap_or_else(|| panic!("{text}"))
        .trim_matches(|c: char| !c.is_ascii_alphanumeric())
        .to_owned();
    assert_eq!(code.len(), 8, "{text}");
    assert!(
        text.contains(&format!("pincer pairing approve discord {code}")),
        "{text}"
    );
    assert!(llm.requests().is_empty(), "no agent for a stranger");

    let approved = home.run(&["pairing", "approve", "discord", &code]);
    approved.assert_ok();
    assert_eq!(
        approved.stdout(),
        format!("Approved {stranger} on discord.\n")
    );
    let sent = fake.wait_for_messages(2, T).await;
    assert_eq!(sent[1].channel_id, stranger_dm, "told in their DM channel");
    assert!(sent[1].content.contains("approved"), "{}", sent[1].content);

    fake.inject_message(InjectDiscordMessage::dm(stranger_dm, stranger, "hey again"));
    let sent = fake.wait_for_messages(3, T).await;
    assert_eq!(sent[2].content, "welcome");
    drop(gateway);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn files_arrive_for_the_agent_and_big_ones_are_refused() {
    use pincer_testkit::fake_discord::InjectAttachment;
    let llm = mock(
        Scenario::new()
            .rule(
                Rule::when(Match::last_user_contains("[media attached:"))
                    .reply(Reply::text("got your file")),
            )
            .rule(
                Rule::when(Match::last_user("send me the report"))
                    .reply(Reply::text("Here it is.\nMEDIA:./report.txt")),
            ),
    )
    .await;
    let fake = fake().await;
    let (home, gateway) = gateway(&llm, &fake, &format!("{}, mediaMaxMb: 1", owner_only()));

    fake.inject_message(InjectDiscordMessage::dm(OWNER_DM, OWNER, "").attachment(
        InjectAttachment::new("numbers.txt", b"quarterly numbers".to_vec()),
    ));
    let sent = fake.wait_for_messages(1, T).await;
    assert_eq!(sent[0].content, "got your file");
    let prompt = last_user_text(&llm);
    let path = prompt
        .strip_prefix("[media attached: ")
        .and_then(|rest| rest.split(" (").next())
        .unwrap_or_else(|| panic!("{prompt}"));
    // Moved into the agent's workspace inbox, named relative to it.
    assert!(path.starts_with("inbox/"), "{path}");
    let workspace = home.path().join("agents/main/workspace");
    assert_eq!(
        std::fs::read(workspace.join(path)).unwrap(),
        b"quarterly numbers"
    );

    fake.inject_message(InjectDiscordMessage::dm(OWNER_DM, OWNER, "").attachment(
        InjectAttachment::new("big.bin", vec![b'x'; 2 * 1024 * 1024]),
    ));
    let sent = fake.wait_for_messages(2, T).await;
    assert_eq!(
        sent[1].content,
        "That file is too big for me (the limit is 1 MB); send a smaller one or a link."
    );
    assert_eq!(llm.requests().len(), 1, "no turn for a refused file alone");

    let workspace = home.path().join("agents/main/workspace");
    std::fs::create_dir_all(&workspace).unwrap();
    std::fs::write(workspace.join("report.txt"), "the report").unwrap();
    fake.inject_message(InjectDiscordMessage::dm(
        OWNER_DM,
        OWNER,
        "send me the report",
    ));
    let sent = fake.wait_for_messages(4, T).await;
    assert_eq!(sent.len(), 4, "{sent:?}");
    assert_eq!(
        sent[2].content, "Here it is.",
        "the MEDIA line is not shown"
    );
    assert_eq!(sent[3].files.len(), 1, "{:?}", sent[3]);
    assert_eq!(sent[3].files[0].field, "files[0]");
    assert_eq!(sent[3].files[0].filename, "report.txt");
    assert_eq!(sent[3].files[0].bytes, b"the report");
    drop(gateway);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_textless_message_with_a_refused_file_leaves_none_of_its_files_staged() {
    use pincer_testkit::fake_discord::InjectAttachment;
    let llm = mock(Scenario::new().rule(Rule::when(Match::any()).reply(Reply::text("hi")))).await;
    let fake = fake().await;
    let (home, gateway) = gateway(&llm, &fake, &format!("{}, mediaMaxMb: 1", owner_only()));

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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cron_announcement_reaches_a_user_by_id_in_a_dm_opened_for_it() {
    let llm = mock(
        Scenario::new().rule(
            Rule::when(Match::last_user_contains("the daily summary"))
                .reply(Reply::text("Today: **3** meetings.")),
        ),
    )
    .await;
    let fake = fake().await;
    let (home, gateway) = gateway(&llm, &fake, &owner_only());
    // The owner never wrote to the bot: the adapter must open the DM itself.
    let added = home.run(&[
        "cron",
        "add",
        "--name",
        "summary",
        "--every",
        "1h",
        "--message",
        "the daily summary",
        "--announce",
        "--channel",
        "discord",
        "--to",
        OWNER,
        "--json",
    ]);
    added.assert_ok();
    let job: Value = serde_json::from_str(&added.stdout()).unwrap();
    home.run(&["cron", "run", job["id"].as_str().unwrap()])
        .assert_ok();
    let sent = fake.wait_for_messages(1, T).await;
    assert_eq!(sent.len(), 1, "{sent:?}");
    assert_eq!(sent[0].content, "Today: **3** meetings.");
    assert_ne!(sent[0].channel_id, OWNER, "a DM channel, not the user id");
    assert!(
        fake.calls().iter().any(|c| c == "POST /users/@me/channels"),
        "{:?}",
        fake.calls()
    );
    drop(gateway);
}

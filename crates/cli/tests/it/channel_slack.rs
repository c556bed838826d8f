//! Slack end to end: `pincer gateway run` with `channels.slack` pointed at the fake Slack
//! of pincer-testkit (the Web API and a real Socket Mode WebSocket) and the mock LLM — a DM
//! in and the reply out in mrkdwn, the same envelope delivered twice answered once, channels
//! with and without a mention (Slack's `message` + `app_mention` pair answered once),
//! threads, a long reply split at 4000, a dropped connection losing nothing, files both
//! ways, the allowlist's silence, and pairing from code to revocation.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::time::Duration;

use common::channels::*;
use common::gateway::*;
use common::{Home, mock};
use pincer_testkit::fake_slack::{FakeSlack, InjectSlackMessage};
use pincer_testkit::{Match, MockLlm, Reply, Rule, Scenario};
use serde_json::{Value, json};

const OWNER: &str = "U1OWNER";
const OWNER_DM: &str = "D1OWNER";
const CHANNEL: &str = "C1GENERAL";
const T: Duration = Duration::from_secs(20);

/// A gateway whose Slack app is the fake; `slack` is the rest of the channel's settings.
fn gateway(llm: &MockLlm, fake: &FakeSlack, slack: &str) -> (Home, Foreground) {
    channel_gateway(
        llm,
        &format!(
            "slack: {{ botToken: \"{}\", appToken: \"{}\", apiBaseUrl: \"{}\", {slack} }}",
            fake.bot_token(),
            fake.app_token(),
            fake.api_base()
        ),
    )
}

fn owner_only() -> String {
    format!("dmPolicy: \"allowlist\", allowFrom: [\"{OWNER}\"]")
}

async fn quiet(fake: &FakeSlack, for_: Duration) -> usize {
    tokio::time::sleep(for_).await;
    fake.sent_messages().len()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dm_gets_one_reply_in_mrkdwn_even_when_slack_delivers_it_twice() {
    let llm = mock(Scenario::new().rule(
        Rule::when(Match::last_user("hello <you>")).reply(Reply::text("**hi** _there_ & `you`")),
    ))
    .await;
    let fake = FakeSlack::start().await;
    let (_home, gateway) = gateway(&llm, &fake, &owner_only());

    let ids = fake.inject_message(InjectSlackMessage::dm(OWNER, OWNER_DM, "hello &lt;you&gt;"));
    let sent = fake.wait_for_messages(1, T).await;
    assert_eq!(sent.len(), 1, "{sent:?}");
    assert_eq!(sent[0].channel, OWNER_DM);
    assert_eq!(sent[0].text, "*hi* _there_ &amp; `you`");
    assert_eq!(
        sent[0].thread_ts, None,
        "a top-level DM is answered at top level"
    );
    assert_eq!(sent[0].payload["mrkdwn"], true);
    assert_eq!(
        last_user_text(&llm),
        "hello <you>",
        "Slack's escapes undone"
    );
    assert_eq!(fake.wait_for_acks(1, T).await, ids);
    let calls = fake.calls();
    assert_eq!(
        &calls[..2],
        ["auth.test", "apps.connections.open"],
        "{calls:?}"
    );

    let mut client = WsClient::connect(gateway.port, GATEWAY_TOKEN).await;
    let health = client.call("health", json!({})).await;
    let slack = &health["payload"]["channels"]["slack"];
    assert_eq!(slack["running"], true, "{health}");
    assert_eq!(slack["accounts"][0]["connected"], true, "{health}");

    // Slack redelivers the envelope (its ack was "lost"): acked again, answered once.
    assert!(fake.redeliver(&ids[0]));
    assert_eq!(fake.wait_for_acks(2, T).await.len(), 2);
    assert_eq!(
        quiet(&fake, Duration::from_millis(2500)).await,
        1,
        "answered once"
    );
    assert_eq!(llm.requests().len(), 1);
    drop(gateway);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn channels_answer_mentions_once_and_threads_stay_in_their_thread() {
    let llm = mock(
        Scenario::new()
            .rule(Rule::when(Match::last_user("what time is it?")).reply(Reply::text("tea time")))
            .rule(Rule::when(Match::last_user("and in here?")).reply(Reply::text("thread tea")))
            .rule(Rule::when(Match::last_user("anyone?")).reply(Reply::text("always"))),
    )
    .await;
    let fake = FakeSlack::start().await;
    let (_home, gateway) = gateway(
        &llm,
        &fake,
        "groupPolicy: \"open\", groups: { C2QUIET: { requireMention: false } }",
    );

    fake.inject_message(InjectSlackMessage::channel(
        "U7",
        CHANNEL,
        "what time is it?",
    ));
    assert_eq!(
        quiet(&fake, Duration::from_millis(2500)).await,
        0,
        "not mentioned: silent"
    );
    assert!(llm.requests().is_empty());

    // Slack sends message and app_mention for the post: one answer, at top level.
    let ids = fake.inject_message(
        InjectSlackMessage::channel("U7", CHANNEL, "what time is it?")
            .mentioning_bot()
            .ts("1700000100.000100"),
    );
    assert_eq!(ids.len(), 2);
    let sent = fake.wait_for_messages(1, T).await;
    assert_eq!(sent.len(), 1, "{sent:?}");
    assert_eq!(
        (sent[0].channel.as_str(), sent[0].text.as_str()),
        (CHANNEL, "tea time")
    );
    assert_eq!(sent[0].thread_ts, None);
    assert_eq!(
        last_user_text(&llm),
        "what time is it?",
        "the mention is not in the prompt"
    );
    assert_eq!(
        fake.wait_for_acks(3, T).await.len(),
        3,
        "every envelope acked"
    );

    // A mention in a thread is answered in the thread.
    fake.inject_message(
        InjectSlackMessage::channel("U7", CHANNEL, "and in here?")
            .mentioning_bot()
            .thread_ts("1700000100.000100"),
    );
    let sent = fake.wait_for_messages(2, T).await;
    assert_eq!(sent[1].text, "thread tea");
    assert_eq!(sent[1].thread_ts.as_deref(), Some("1700000100.000100"));

    // A channel configured without requireMention.
    fake.inject_message(InjectSlackMessage::channel("U7", "C2QUIET", "anyone?"));
    let sent = fake.wait_for_messages(3, T).await;
    assert_eq!(
        (sent[2].channel.as_str(), sent[2].text.as_str()),
        ("C2QUIET", "always")
    );
    assert_eq!(quiet(&fake, Duration::from_millis(1000)).await, 3);
    assert_eq!(llm.requests().len(), 3);
    drop(gateway);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_long_reply_is_split_and_a_dropped_connection_loses_nothing() {
    let long: String = (0..1500).map(|i| format!("word{i} ")).collect();
    let llm = mock(
        Scenario::new()
            .rule(Rule::when(Match::last_user("long")).reply(Reply::text(long.trim_end())))
            .rule(Rule::when(Match::last_user("after the drop")).reply(Reply::text("still here"))),
    )
    .await;
    let fake = FakeSlack::start().await;
    let (_home, gateway) = gateway(&llm, &fake, &owner_only());

    fake.inject_message(InjectSlackMessage::dm(OWNER, OWNER_DM, "long"));
    // 12 390 chars: four messages.
    let sent = fake.wait_for_messages(4, T).await;
    assert_eq!(sent.len(), 4, "{} messages", sent.len());
    assert!(
        sent.iter()
            .all(|m| m.text.chars().count() <= 4000 && m.channel == OWNER_DM)
    );
    let joined: Vec<&str> = sent.iter().map(|m| m.text.trim()).collect();
    assert_eq!(joined.join(" "), long.trim_end());

    // The network drops; a message arrives meanwhile; the adapter connects again (a fresh
    // apps.connections.open) and Slack delivers it there.
    assert!(fake.wait_for_connected(T).await);
    assert_eq!(fake.drop_connection(), 1);
    let ids = fake.inject_message(InjectSlackMessage::dm(OWNER, OWNER_DM, "after the drop"));
    assert_eq!(fake.wait_for_connections(2, T).await, 2);
    let sent = fake.wait_for_messages(5, T).await;
    assert_eq!(sent.last().unwrap().text, "still here");
    assert_eq!(quiet(&fake, Duration::from_millis(1500)).await, 5);
    assert_eq!(
        model_calls_with(&llm, "after the drop"),
        1,
        "once, not twice"
    );
    assert!(fake.acks().contains(&ids[0]));
    let opens = fake
        .calls()
        .iter()
        .filter(|c| *c == "apps.connections.open")
        .count();
    assert_eq!(opens, 2);
    drop(gateway);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn allowlist_never_answers_a_stranger() {
    let llm = mock(Scenario::new().rule(Rule::when(Match::any()).reply(Reply::text("hi")))).await;
    let fake = FakeSlack::start().await;
    let (home, gateway) = gateway(&llm, &fake, &owner_only());
    let ids = fake.inject_message(InjectSlackMessage::dm("U2STRANGER", "D2", "let me in"));
    assert_eq!(fake.wait_for_acks(1, T).await, ids, "acked all the same");
    assert_eq!(quiet(&fake, Duration::from_millis(2500)).await, 0);
    assert!(llm.requests().is_empty());
    assert!(!home.path().join("credentials/slack-pairing.json").exists());
    drop(gateway);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stranger_pairs_is_served_and_revoked() {
    let llm = mock(
        Scenario::new()
            .rule(Rule::when(Match::last_user("hey again")).reply(Reply::text("welcome"))),
    )
    .await;
    let fake = FakeSlack::start().await;
    // dmPolicy defaults to pairing.
    let (home, gateway) = gateway(&llm, &fake, "");
    let (stranger, stranger_dm) = ("U2STRANGER", "D2STRANGER");

    fake.inject_message(InjectSlackMessage::dm(stranger, stranger_dm, "hey"));
    let sent = fake.wait_for_messages(1, T).await;
    assert_eq!(sent.len(), 1, "{sent:?}");
    assert_eq!(sent[0].channel, stranger_dm);
    let text = &sent[0].text;
    let code = text
        .lines()
        .find_map(|l| l.strip_prefix("Pairing code: "))
        .unwrap_or_else(|| panic!("{text}"))
        .trim()
        .to_owned();
    assert_eq!(code.len(), 8, "{text}");
    assert!(
        text.contains(&format!("Your slack id: {stranger}")),
        "{text}"
    );
    assert!(
        text.contains(&format!("pincer pairing approve slack {code}")),
        "{text}"
    );
    assert!(llm.requests().is_empty(), "no agent for a stranger");

    let approved = home.run(&["pairing", "approve", "--channel", "slack", &code]);
    approved.assert_ok();
    assert_eq!(
        approved.stdout(),
        format!("Approved {stranger} on slack.\n")
    );
    let sent = fake.wait_for_messages(2, T).await;
    assert_eq!(sent[1].channel, stranger_dm, "told in their DM");
    assert_eq!(
        sent[1].text,
        "Pincer: access approved. Send your message again."
    );

    fake.inject_message(InjectSlackMessage::dm(stranger, stranger_dm, "hey again"));
    let sent = fake.wait_for_messages(3, T).await;
    assert_eq!(sent[2].text, "welcome");

    let revoked = home.run(&["pairing", "revoke", "--channel", "slack", stranger]);
    revoked.assert_ok();
    assert_eq!(
        revoked.stdout(),
        format!("Revoked {stranger} on slack.\nCurrent allow-from entries: 0\n")
    );
    fake.inject_message(InjectSlackMessage::dm(stranger, stranger_dm, "hey again"));
    let sent = fake.wait_for_messages(4, T).await;
    assert!(sent[3].text.contains("Pairing code: "), "{}", sent[3].text);
    assert_eq!(
        model_calls_with(&llm, "hey again"),
        1,
        "no agent after the revocation"
    );
    drop(gateway);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn files_arrive_for_the_agent_big_ones_are_refused_and_replies_attach_files() {
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
    let fake = FakeSlack::start().await;
    let (home, gateway) = gateway(&llm, &fake, &format!("{}, mediaMaxMb: 1", owner_only()));

    fake.inject_message(InjectSlackMessage::dm(OWNER, OWNER_DM, "").file(
        "numbers.txt",
        b"quarterly numbers".to_vec(),
        "text/plain",
    ));
    let sent = fake.wait_for_messages(1, T).await;
    assert_eq!(sent[0].text, "got your file");
    let prompt = last_user_text(&llm);
    assert!(prompt.trim_end().ends_with(" (text/plain)]"), "{prompt}");
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

    fake.inject_message(InjectSlackMessage::dm(OWNER, OWNER_DM, "").file(
        "big.bin",
        vec![b'x'; 2 * 1024 * 1024],
        "application/octet-stream",
    ));
    let sent = fake.wait_for_messages(2, T).await;
    assert_eq!(
        sent[1].text,
        "That file is too big for me (the limit is 1 MB); send a smaller one or a link."
    );
    assert_eq!(llm.requests().len(), 1, "no turn for a refused file alone");

    let workspace = home.path().join("agents/main/workspace");
    std::fs::create_dir_all(&workspace).unwrap();
    std::fs::write(workspace.join("report.txt"), "the report").unwrap();
    fake.inject_message(InjectSlackMessage::dm(
        OWNER,
        OWNER_DM,
        "send me the report",
    ));
    let files = fake.wait_for_files(1, T).await;
    assert_eq!(files.len(), 1, "{files:?}");
    assert_eq!(
        (files[0].name.as_str(), files[0].channel.as_str()),
        ("report.txt", OWNER_DM)
    );
    assert_eq!(files[0].bytes, b"the report");
    let sent = fake.sent_messages();
    assert_eq!(sent[2].text, "Here it is.", "the MEDIA line is not shown");
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
    let fake = FakeSlack::start().await;
    let (home, gateway) = gateway(&llm, &fake, &owner_only());
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
        "slack",
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
    assert_eq!(sent[0].text, "Today: *3* meetings.");
    assert!(
        sent[0].channel.starts_with('D'),
        "a DM channel, not the user id: {sent:?}"
    );
    assert!(
        fake.calls().iter().any(|c| c == "conversations.open"),
        "{:?}",
        fake.calls()
    );
    drop(gateway);
}

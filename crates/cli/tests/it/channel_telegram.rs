//! Telegram end to end: `pincer gateway run` with `channels.telegram` pointed at the fake
//! Bot API of pincer-testkit and the mock LLM — a DM in and the reply out (with "typing…"),
//! the same update delivered twice answered once, groups with and without a mention, a long
//! reply split at Telegram's limit, dropped connections, files both ways, the allowlist's
//! silence and the whole pairing flow.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::time::Duration;

use common::channels::*;
use common::gateway::*;
use common::{Home, mock};
use pincer_testkit::fake_telegram::{FakeTelegram, InjectMessage};
use pincer_testkit::{Match, MockLlm, Reply, Rule, Scenario};
use serde_json::Value;

const OWNER: i64 = 1001;
const T: Duration = Duration::from_secs(20);

/// A gateway whose Telegram bot is the fake; `telegram` is the rest of the channel's
/// settings (`dmPolicy`, `allowFrom`, …).
fn gateway(llm: &MockLlm, fake: &FakeTelegram, telegram: &str) -> (Home, Foreground) {
    gateway_with(llm, fake, telegram, "0m", "")
}

/// [`gateway`] with a heartbeat every `every` and more of `channels` (`channels`, e.g.
/// `pairingNotify: {…},`).
fn gateway_with(
    llm: &MockLlm,
    fake: &FakeTelegram,
    telegram: &str,
    every: &str,
    channels: &str,
) -> (Home, Foreground) {
    channel_gateway_in(
        Home::new().with_env("PINCER_TELEGRAM_POLL_SECS", "1"),
        llm,
        every,
        &format!(
            "{channels} telegram: {{ botToken: \"{}\", apiBaseUrl: \"{}\", {telegram} }}",
            fake.token(),
            fake.base_url()
        ),
    )
}

async fn quiet(fake: &FakeTelegram, for_: Duration) -> usize {
    tokio::time::sleep(for_).await;
    fake.sent_messages().len()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dm_gets_its_reply_once_even_when_telegram_delivers_it_twice() {
    let llm = mock(
        Scenario::new()
            .rule(Rule::when(Match::last_user("hello")).reply(Reply::text("**hi** <there> & you"))),
    )
    .await;
    let fake = FakeTelegram::start().await;
    let (_home, gateway) = gateway(
        &llm,
        &fake,
        &format!("dmPolicy: \"allowlist\", allowFrom: [\"{OWNER}\"]"),
    );

    let (update_id, message_id) = fake.inject_message(InjectMessage::private(OWNER, "hello"));
    let sent = fake.wait_for_messages(1, T).await;
    assert_eq!(sent.len(), 1, "{sent:?}");
    assert_eq!(sent[0].chat_id, OWNER);
    assert_eq!(sent[0].text, "<b>hi</b> &lt;there&gt; &amp; you");
    assert_eq!(sent[0].parse_mode.as_deref(), Some("HTML"));
    assert_eq!(sent[0].reply_to_message_id, Some(message_id));
    let typing = fake.chat_actions();
    assert!(typing.contains(&(OWNER, "typing".to_owned())), "{typing:?}");
    assert_eq!(last_user_text(&llm), "hello");
    let mut client = WsClient::connect(gateway.port, GATEWAY_TOKEN).await;
    let health = client.call("health", serde_json::json!({})).await;
    let telegram = &health["payload"]["channels"]["telegram"];
    assert_eq!(telegram["running"], true, "{health}");
    assert_eq!(telegram["accounts"][0]["connected"], true, "{health}");
    assert_eq!(telegram["accounts"][0]["accountId"], "default", "{health}");
    assert_eq!(
        health["payload"]["channelOrder"],
        serde_json::json!(["telegram"])
    );

    // Telegram sends the same update again (e.g. after a crash before the offset moved).
    assert!(fake.redeliver(update_id));
    assert_eq!(
        quiet(&fake, Duration::from_millis(2500)).await,
        1,
        "answered once"
    );
    assert_eq!(llm.requests().len(), 1);

    // `/new` starts the chat's session over, as in the web chat.
    let before = health["payload"]["defaultAgentId"].clone();
    assert_eq!(before, "main");
    fake.inject_message(InjectMessage::private(OWNER, "/new"));
    let sent = fake.wait_for_messages(2, T).await;
    assert!(
        sent[1]
            .plain_text
            .starts_with("New session started. sessionId="),
        "{}",
        sent[1].plain_text
    );
    assert_eq!(llm.requests().len(), 1, "no model call for /new");
    drop(gateway);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn groups_answer_only_when_mentioned() {
    let llm = mock(
        Scenario::new()
            .rule(Rule::when(Match::last_user("what time is it?")).reply(Reply::text("tea time"))),
    )
    .await;
    let fake = FakeTelegram::start().await;
    let (_home, gateway) = gateway(&llm, &fake, "groupPolicy: \"open\"");
    let group = -100_555;

    fake.inject_message(InjectMessage::supergroup(group, 7, "what time is it?"));
    assert_eq!(
        quiet(&fake, Duration::from_millis(2500)).await,
        0,
        "not mentioned: silent"
    );
    assert!(llm.requests().is_empty());

    let mention = format!("@{} what time is it?", fake.bot_username());
    fake.inject_message(InjectMessage::supergroup(group, 7, &mention));
    let sent = fake.wait_for_messages(1, T).await;
    assert_eq!(sent[0].chat_id, group);
    assert_eq!(sent[0].text, "tea time");
    assert_eq!(
        last_user_text(&llm),
        "what time is it?",
        "the mention is not part of the prompt"
    );
    drop(gateway);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_long_reply_is_split_and_a_dropped_connection_loses_nothing() {
    let long: String = (0..900).map(|i| format!("word{i} ")).collect();
    let llm = mock(
        Scenario::new()
            .rule(Rule::when(Match::last_user("long")).reply(Reply::text(long.trim_end())))
            .rule(Rule::when(Match::last_user("after the drop")).reply(Reply::text("still here"))),
    )
    .await;
    let fake = FakeTelegram::start().await;
    let (_home, gateway) = gateway(
        &llm,
        &fake,
        &format!("dmPolicy: \"allowlist\", allowFrom: [\"{OWNER}\"]"),
    );

    fake.inject_message(InjectMessage::private(OWNER, "long"));
    let sent = fake.wait_for_messages(2, T).await;
    assert!(sent.len() >= 2, "{} messages", sent.len());
    assert!(sent.iter().all(|m| m.text.chars().count() <= 4096));
    let joined: Vec<String> = sent.iter().map(|m| m.text.trim().to_owned()).collect();
    assert_eq!(joined.join(" "), long.trim_end());

    // The next two polls fail; the adapter reconnects and the message still arrives.
    fake.drop_next_get_updates(2);
    fake.inject_message(InjectMessage::private(OWNER, "after the drop"));
    let sent = fake.wait_for_messages(sent.len() + 1, T).await;
    assert_eq!(sent.last().unwrap().text, "still here");
    assert_eq!(
        llm.requests()
            .iter()
            .filter(|r| r.body.to_string().contains("after the drop"))
            .count(),
        1,
        "once, not twice"
    );
    drop(gateway);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn files_arrive_for_the_agent_and_media_lines_go_out_as_files() {
    let llm = mock(
        Scenario::new()
            .rule(
                Rule::when(Match::last_user_contains("[media attached:"))
                    .reply(Reply::text("got your file")),
            )
            .rule(
                Rule::when(Match::last_user("send me the report"))
                    .reply(Reply::text("Here it is.\nMEDIA:./report.txt")),
            )
            .rule(
                Rule::when(Match::last_user("send me your secrets"))
                    .reply(Reply::text("Sure.\nMEDIA:/etc/passwd")),
            ),
    )
    .await;
    let fake = FakeTelegram::start().await;
    let (home, gateway) = gateway(
        &llm,
        &fake,
        &format!("dmPolicy: \"allowlist\", allowFrom: [\"{OWNER}\"]"),
    );

    let file = fake.register_file(b"quarterly numbers".to_vec(), "numbers.txt");
    fake.inject_message(InjectMessage::private(OWNER, "").with_document(file));
    let sent = fake.wait_for_messages(1, T).await;
    assert_eq!(sent[0].text, "got your file");
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

    std::fs::create_dir_all(&workspace).unwrap();
    std::fs::write(workspace.join("report.txt"), "the report").unwrap();
    fake.inject_message(InjectMessage::private(OWNER, "send me the report"));
    let files = fake.wait_for_files(1, T).await;
    assert_eq!(files.len(), 1, "{files:?}");
    assert_eq!(files[0].bytes, b"the report");
    assert_eq!(files[0].file_name.as_deref(), Some("report.txt"));
    let sent = fake.wait_for_messages(2, T).await;
    assert_eq!(sent[1].text, "Here it is.", "the MEDIA line is not shown");

    // A file outside the workspace is not sent, and the reply says so.
    fake.inject_message(InjectMessage::private(OWNER, "send me your secrets"));
    let sent = fake.wait_for_messages(3, T).await;
    assert_eq!(
        sent[2].plain_text,
        "Sure.\n\n(not sent: /etc/passwd is outside the agent's workspace)"
    );
    assert_eq!(fake.sent_files().len(), 1, "still only the report");
    drop(gateway);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn allowlist_never_answers_a_stranger() {
    let llm = mock(Scenario::new().rule(Rule::when(Match::any()).reply(Reply::text("hi")))).await;
    let fake = FakeTelegram::start().await;
    let (home, gateway) = gateway(
        &llm,
        &fake,
        &format!("dmPolicy: \"allowlist\", allowFrom: [\"{OWNER}\"]"),
    );
    fake.inject_message(InjectMessage::private(2002, "let me in"));
    assert_eq!(quiet(&fake, Duration::from_millis(2500)).await, 0);
    assert!(llm.requests().is_empty());
    assert!(
        !home
            .path()
            .join("credentials/telegram-pairing.json")
            .exists()
    );
    drop(gateway);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pairing_code_list_approve_then_served_then_revoked() {
    let llm = mock(
        Scenario::new()
            .rule(Rule::when(Match::last_user("hey again")).reply(Reply::text("welcome"))),
    )
    .await;
    let fake = FakeTelegram::start().await;
    // dmPolicy defaults to pairing; the owner (OWNER) hears about requests.
    let (home, gateway) = gateway_with(
        &llm,
        &fake,
        "",
        "0m",
        &format!("pairingNotify: {{ channel: \"telegram\", to: \"{OWNER}\" }},"),
    );
    let stranger = 2002;

    fake.inject_message(InjectMessage::private(stranger, "hey"));
    let sent = fake.wait_for_messages(2, T).await;
    let (to_stranger, to_owner): (Vec<_>, Vec<_>) =
        sent.iter().partition(|m| m.chat_id == stranger);
    assert_eq!(to_owner.len(), 1, "{sent:?}");
    assert!(
        to_owner[0]
            .plain_text
            .contains(&format!("pairing request on telegram from {stranger}")),
        "{}",
        to_owner[0].plain_text
    );
    let text = &to_stranger[0].plain_text;
    let code = text
        .lines()
        .find_map(|l| l.strip_prefix("Pairing code: "))
        .unwrap_or_else(|| panic!("{text}"))
        .to_owned();
    assert_eq!(code.len(), 8);
    assert!(
        text.contains(&format!("pincer pairing approve telegram {code}")),
        "{text}"
    );
    // A repeat while the request is pending is not answered again (the code was sent),
    // and the owner is told only about new requests.
    fake.inject_message(InjectMessage::private(stranger, "hey?"));
    assert_eq!(quiet(&fake, Duration::from_millis(2500)).await, 2);
    assert!(llm.requests().is_empty(), "no agent for a stranger");

    let listed = home.run(&["pairing", "list", "telegram", "--json"]);
    listed.assert_ok();
    let json: Value = serde_json::from_str(&listed.stdout()).unwrap();
    assert_eq!(json["requests"][0]["code"], code.as_str(), "{json}");
    assert_eq!(json["requests"][0]["id"], stranger.to_string().as_str());

    let approved = home.run(&["pairing", "approve", "telegram", &code.to_lowercase()]);
    approved.assert_ok();
    assert_eq!(
        approved.stdout(),
        format!("Approved {stranger} on telegram.\n")
    );
    let sent = fake.wait_for_messages(3, T).await;
    assert_eq!(sent[2].chat_id, stranger);
    assert!(
        sent[2].plain_text.contains("approved"),
        "told: {}",
        sent[2].plain_text
    );

    fake.inject_message(InjectMessage::private(stranger, "hey again"));
    let sent = fake.wait_for_messages(4, T).await;
    assert_eq!(sent[3].text, "welcome");

    let revoked = home.run(&["pairing", "revoke", "telegram", &stranger.to_string()]);
    revoked.assert_ok();
    assert_eq!(
        revoked.stdout(),
        format!("Revoked {stranger} on telegram.\nCurrent allow-from entries: 0\n")
    );
    let before = llm.requests().len();
    fake.inject_message(InjectMessage::private(stranger, "hey again"));
    let sent = fake.wait_for_messages(6, T).await;
    let to_stranger = sent.iter().rev().find(|m| m.chat_id == stranger).unwrap();
    assert!(
        to_stranger.plain_text.contains("Pairing code: "),
        "back to pairing: {}",
        to_stranger.plain_text
    );
    assert_eq!(llm.requests().len(), before);
    drop(gateway);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn heartbeat_and_cron_replies_reach_the_chat() {
    let llm = mock(
        Scenario::new()
            .rule(Rule::when(Match::last_user("hello")).reply(Reply::text("hi")))
            .rule(
                Rule::when(Match::last_user_contains("stretch reminder"))
                    .reply(Reply::text("Time to stand up and stretch!")),
            )
            .rule(
                Rule::when(Match::last_user_contains("the daily summary"))
                    .reply(Reply::text("Today: **3** meetings.")),
            ),
    )
    .await;
    let fake = FakeTelegram::start().await;
    // Timer beats a day apart: only the wake below runs one.
    let (home, gateway) = gateway_with(
        &llm,
        &fake,
        &format!("dmPolicy: \"allowlist\", allowFrom: [\"{OWNER}\"]"),
        "24h",
        "",
    );
    // The owner's DM is the main session: the heartbeat answers where it last heard from.
    fake.inject_message(InjectMessage::private(OWNER, "hello"));
    fake.wait_for_messages(1, T).await;

    let mut client = WsClient::connect(gateway.port, GATEWAY_TOKEN).await;
    let woke = client
        .call(
            "wake",
            serde_json::json!({"mode": "now", "text": "stretch reminder"}),
        )
        .await;
    assert_eq!(woke["ok"], true, "{woke}");
    let sent = fake.wait_for_messages(2, T).await;
    assert_eq!(sent.len(), 2, "{sent:?}");
    assert_eq!(sent[1].chat_id, OWNER);
    assert_eq!(sent[1].text, "Time to stand up and stretch!");

    // An isolated cron job announced to the chat by name.
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
        "telegram",
        "--to",
        &OWNER.to_string(),
        "--json",
    ]);
    added.assert_ok();
    let job: Value = serde_json::from_str(&added.stdout()).unwrap();
    let id = job["id"].as_str().unwrap().to_owned();
    home.run(&["cron", "run", &id]).assert_ok();
    let sent = fake.wait_for_messages(3, T).await;
    assert_eq!(sent.len(), 3, "{sent:?}");
    assert_eq!(sent[2].chat_id, OWNER);
    assert_eq!(sent[2].text, "Today: <b>3</b> meetings.");
    drop(gateway);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_file_over_the_limit_is_refused_with_a_reply() {
    let llm = mock(Scenario::new().rule(Rule::when(Match::any()).reply(Reply::text("hi")))).await;
    let fake = FakeTelegram::start().await;
    let (home, gateway) = gateway(
        &llm,
        &fake,
        &format!("dmPolicy: \"allowlist\", allowFrom: [\"{OWNER}\"], mediaMaxMb: 1"),
    );
    let big = fake.register_file(vec![b'x'; 2 * 1024 * 1024], "big.bin");
    fake.inject_message(InjectMessage::private(OWNER, "").with_document(big));
    let sent = fake.wait_for_messages(1, T).await;
    assert_eq!(
        sent[0].plain_text,
        "That file is too big for me (the limit is 1 MB); send a smaller one or a link."
    );
    assert_eq!(quiet(&fake, Duration::from_millis(1500)).await, 1);
    assert!(
        llm.requests().is_empty(),
        "no turn for a refused file alone"
    );
    for dir in ["media/staging", "agents/main/workspace/inbox"] {
        assert!(
            std::fs::read_dir(home.path().join(dir))
                .map(|d| d.count())
                .unwrap_or(0)
                == 0,
            "nothing saved in {dir}"
        );
    }
    drop(gateway);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_bots_each_answer_their_own_chats_under_their_own_rules() {
    let llm = mock(
        Scenario::new()
            .rule(Rule::when(Match::last_user("hello one")).reply(Reply::text("from one")))
            .rule(Rule::when(Match::last_user("hello two")).reply(Reply::text("from two"))),
    )
    .await;
    let main = FakeTelegram::start().await;
    let work = FakeTelegram::start().await;
    // The work bot inherits allowFrom but not the token, and pairs strangers instead.
    let (home, gateway) = gateway(
        &llm,
        &main,
        &format!(
            "dmPolicy: \"allowlist\", allowFrom: [\"{OWNER}\"], accounts: {{ work: {{ botToken: \"{}\", apiBaseUrl: \"{}\", dmPolicy: \"pairing\" }} }}",
            work.token(),
            work.base_url()
        ),
    );

    main.inject_message(InjectMessage::private(OWNER, "hello one"));
    let sent = main.wait_for_messages(1, T).await;
    assert_eq!(sent.len(), 1, "{sent:?}");
    assert_eq!(sent[0].text, "from one");
    work.inject_message(InjectMessage::private(OWNER, "hello two"));
    let sent = work.wait_for_messages(1, T).await;
    assert_eq!(sent.len(), 1, "{sent:?}");
    assert_eq!(sent[0].text, "from two");
    assert_eq!(
        main.sent_messages().len(),
        1,
        "each bot answers its own chats"
    );

    let stranger = 2002;
    main.inject_message(InjectMessage::private(stranger, "hi"));
    work.inject_message(InjectMessage::private(stranger, "hi"));
    let sent = work.wait_for_messages(2, T).await;
    assert_eq!(sent.len(), 2, "{sent:?}");
    assert_eq!(sent[1].chat_id, stranger);
    assert!(
        sent[1].plain_text.contains("Pairing code: "),
        "{}",
        sent[1].plain_text
    );
    assert_eq!(
        quiet(&main, Duration::from_millis(1500)).await,
        1,
        "the main bot's allowlist stays silent"
    );
    let pending: Value = serde_json::from_str(
        &std::fs::read_to_string(home.path().join("credentials/telegram-pairing.json")).unwrap(),
    )
    .unwrap();
    let requests = pending["requests"].as_array().unwrap();
    assert_eq!(requests.len(), 1, "{pending}");
    assert_eq!(requests[0]["id"], stranger.to_string());
    assert_eq!(requests[0]["accountId"], "work", "{pending}");

    let mut client = WsClient::connect(gateway.port, GATEWAY_TOKEN).await;
    let health = client.call("health", serde_json::json!({})).await;
    let accounts = health["payload"]["channels"]["telegram"]["accounts"]
        .as_array()
        .unwrap()
        .clone();
    let ids: Vec<&str> = accounts
        .iter()
        .map(|a| a["accountId"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["default", "work"], "{health}");
    assert!(accounts.iter().all(|a| a["connected"] == true), "{health}");
    drop(gateway);
}

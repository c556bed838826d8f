//! The channel conformance suite: what every chat adapter must do, run against each fake
//! platform (Telegram, Discord, Slack, Feishu) through [`FakeChannel`] — a DM answered once
//! even when delivered twice (with typing where the platform has it, the reply quoting the
//! question, markdown in the platform's markup, health), the allowlist's silence, pairing
//! from code to revocation, group mention gating, threads with sessions of their own, long
//! replies split at the platform's limit, `MEDIA:` lines sent as files (and only from the
//! workspace), inbound files in the inbox (a photo also shown to the model as an image) and
//! big ones refused, a dropped connection losing
//! and repeating nothing, and cron announcements to a user by id. A new adapter implements
//! [`FakeChannel`] for its fake and adds one `conformance!` line. What only one platform
//! does is tested in its own `channel_<platform>` module.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use serde_json::{Value, json};

use crate::common::channels::{
    GATEWAY_TOKEN, attached_file, last_user_text, model_calls_with, session_keys,
    thread_and_channel_replies,
};
use crate::common::fake_channel::{FakeChannel, T};
use crate::common::gateway::WsClient;
use crate::common::{assert_contains, mock, replies, reply_when_containing};
use pincer_testkit::files::PIXEL_PNG;
use pincer_testkit::{Match, Reply, Rule, Scenario};

const TOO_BIG: &str =
    "That file is too big for me (the limit is 1 MB); send a smaller one or a link.";

/// One test per behaviour for the fake platform `$fake`, in module `$platform`.
macro_rules! conformance {
    ($platform:ident, $fake:ty) => {
        mod $platform {
            conformance!(@tests $fake;
                a_dm_is_answered_once_even_when_delivered_twice,
                allowlist_never_answers_a_stranger,
                a_stranger_pairs_is_served_then_revoked,
                groups_answer_when_mentioned_or_configured,
                a_thread_is_answered_in_it_with_a_session_of_its_own,
                a_long_reply_is_split_at_the_platform_limit,
                media_lines_go_out_as_files_from_the_workspace_only,
                inbound_files_land_in_the_inbox,
                an_inbound_photo_reaches_the_model_as_an_image,
                a_file_over_the_limit_is_refused_and_nothing_is_kept,
                a_dropped_connection_loses_and_repeats_nothing,
                a_cron_announcement_reaches_a_user_by_id,
                the_chat_commands_are_answered_without_the_model,
            );
        }
    };
    (@tests $fake:ty; $($test:ident),+ $(,)?) => {
        $(
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn $test() {
                super::$test::<$fake>().await;
            }
        )+
    };
}

conformance!(telegram, pincer_fakes::FakeTelegram);
conformance!(discord, pincer_fakes::FakeDiscord);
conformance!(slack, pincer_fakes::FakeSlack);
conformance!(feishu, pincer_fakes::FakeFeishu);

async fn a_dm_is_answered_once_even_when_delivered_twice<F: FakeChannel>() {
    let (said, shown) = F::FORMATTED;
    let (typed, asked) = F::HELLO;
    let llm =
        mock(Scenario::new().rule(Rule::when(Match::last_user(asked)).reply(Reply::text(said))))
            .await;
    let fake = F::start().await;
    let (_home, gateway) = fake.gateway(&llm, &F::owner_only());

    let inbound = fake.inject_dm(F::OWNER, typed);
    let sent = fake.wait_for_sent(1, T).await;
    assert_eq!(sent.len(), 1, "{sent:?}");
    assert_eq!(sent[0].to, fake.dm_chat(F::OWNER));
    assert_eq!(sent[0].text, shown, "in the platform's markup");
    let quoted = F::QUOTES.then(|| inbound.message_id.clone());
    assert_eq!(sent[0].reply_to, quoted);
    assert_eq!(sent[0].thread, None, "a DM is answered at top level");
    if let Some(typing) = fake.typing() {
        assert!(typing.contains(&fake.dm_chat(F::OWNER)), "{typing:?}");
    }
    assert_eq!(last_user_text(&llm), asked);
    fake.check_dm_reply(&inbound).await;

    let mut client = WsClient::connect(gateway.port, GATEWAY_TOKEN).await;
    let health = client.call("health", json!({})).await;
    let channel = &health["payload"]["channels"][F::NAME];
    assert_eq!(channel["running"], true, "{health}");
    assert_eq!(channel["accounts"][0]["connected"], true, "{health}");
    assert_eq!(channel["accounts"][0]["accountId"], "default", "{health}");
    assert_eq!(health["payload"]["channelOrder"], json!([F::NAME]));
    assert_eq!(health["payload"]["defaultAgentId"], "main");

    // The platform delivers the same message again (a lost ack, a crash before the offset
    // moved): answered once.
    assert!(fake.redeliver(&inbound));
    fake.check_redelivered().await;
    assert_eq!(
        fake.quiet(Duration::from_millis(2500)).await,
        1,
        "answered once"
    );
    assert_eq!(llm.requests().len(), 1);
    drop(gateway);
}

async fn allowlist_never_answers_a_stranger<F: FakeChannel>() {
    let (llm, fake, home, gateway) = F::started_for_owner(
        Scenario::new().rule(Rule::when(Match::any()).reply(Reply::text("hi"))),
    )
    .await;
    let inbound = fake.inject_dm(F::STRANGER, "let me in");
    fake.check_stranger_ignored(&inbound).await;
    assert_eq!(fake.quiet(Duration::from_millis(2500)).await, 0);
    assert!(llm.requests().is_empty());
    let pairing = format!("credentials/{}-pairing.json", F::NAME);
    assert!(!home.path().join(pairing).exists());
    drop(gateway);
}

async fn a_stranger_pairs_is_served_then_revoked<F: FakeChannel>() {
    let (name, stranger) = (F::NAME, F::STRANGER);
    let llm = mock(replies(&[("hey again", "welcome")])).await;
    let fake = F::start().await;
    // dmPolicy defaults to pairing.
    let (home, gateway) = fake.gateway(&llm, "");
    let dm = fake.dm_chat(stranger);

    fake.inject_dm(stranger, "hey");
    let sent = fake.wait_for_sent(1, T).await;
    assert_eq!(sent.len(), 1, "{sent:?}");
    assert_eq!(sent[0].to, dm);
    let text = &sent[0].plain;
    let code = text
        .lines()
        .find_map(|l| l.strip_prefix("Pairing code: "))
        .unwrap_or_else(|| panic!("{text}"))
        .trim_matches(|c: char| !c.is_ascii_alphanumeric())
        .to_owned();
    assert_eq!(code.len(), 8, "{text}");
    assert_contains(
        text,
        &[
            &format!("Your {name} id: {stranger}"),
            &format!("pincer pairing approve {name} {code}"),
        ],
    );
    assert!(llm.requests().is_empty(), "no agent for a stranger");

    // Codes are not case-sensitive.
    let approved = home.run_ok(&[
        "pairing",
        "approve",
        "--channel",
        name,
        &code.to_lowercase(),
    ]);
    assert_eq!(
        approved.stdout(),
        format!("Approved {stranger} on {name}.\n")
    );
    let sent = fake.wait_for_sent(2, T).await;
    assert_eq!(sent[1].to, dm, "told in their DM");
    assert_eq!(
        sent[1].plain,
        "Pincer: access approved. Send your message again."
    );

    fake.inject_dm(stranger, "hey again");
    let sent = fake.wait_for_sent(3, T).await;
    assert_eq!(sent[2].text, "welcome");

    let revoked = home.run_ok(&["pairing", "revoke", "--channel", name, stranger]);
    assert_eq!(
        revoked.stdout(),
        format!("Revoked {stranger} on {name}.\nCurrent allow-from entries: 0\n")
    );
    fake.inject_dm(stranger, "hey again");
    let sent = fake.wait_for_sent(4, T).await;
    assert!(
        sent[3].plain.contains("Pairing code: "),
        "back to pairing: {}",
        sent[3].plain
    );
    assert_eq!(
        model_calls_with(&llm, "hey again"),
        1,
        "no agent after the revocation"
    );
    drop(gateway);
}

async fn groups_answer_when_mentioned_or_configured<F: FakeChannel>() {
    let llm = mock(replies(&[
        ("what time is it?", "tea time"),
        ("anyone?", "me"),
    ]))
    .await;
    let fake = F::start().await;
    let settings = format!(
        "groupPolicy: \"open\", groups: {{ \"{}\": {{ requireMention: false }} }}",
        F::FREE_GROUP
    );
    let (_home, gateway) = fake.gateway(&llm, &settings);

    fake.inject_group(F::GROUP, "what time is it?", false);
    assert_eq!(
        fake.quiet(Duration::from_millis(2500)).await,
        0,
        "not mentioned: silent"
    );
    assert!(llm.requests().is_empty());

    let mentioned = fake.inject_group(F::GROUP, "what time is it?", true);
    let sent = fake.wait_for_sent(1, T).await;
    assert_eq!(sent.len(), 1, "{sent:?}");
    assert_eq!(
        (sent[0].to.as_str(), sent[0].text.as_str()),
        (F::GROUP, "tea time")
    );
    assert_eq!(sent[0].reply_to, F::QUOTES.then_some(mentioned.message_id));
    assert_eq!(sent[0].thread, None);
    assert_eq!(
        last_user_text(&llm),
        "what time is it?",
        "the mention is not part of the prompt"
    );

    // A group configured without requireMention.
    fake.inject_group(F::FREE_GROUP, "anyone?", false);
    let sent = fake.wait_for_sent(2, T).await;
    assert_eq!(
        (sent[1].to.as_str(), sent[1].text.as_str()),
        (F::FREE_GROUP, "me")
    );
    assert_eq!(fake.quiet(Duration::from_millis(1000)).await, 2);
    assert_eq!(llm.requests().len(), 2);
    drop(gateway);
}

async fn a_thread_is_answered_in_it_with_a_session_of_its_own<F: FakeChannel>() {
    let (_llm, fake, home, gateway) =
        F::started(thread_and_channel_replies(), "groupPolicy: \"open\"").await;

    fake.inject_group(F::GROUP, "in the channel", true);
    let sent = fake.wait_for_sent(1, T).await;
    assert_eq!(
        (sent[0].text.as_str(), &sent[0].thread),
        ("channel reply", &None)
    );

    let threaded = fake.inject_thread("in the thread");
    let sent = fake.wait_for_sent(2, T).await;
    assert_eq!(sent.len(), 2, "{sent:?}");
    assert_eq!(sent[1].text, "thread reply");
    assert_eq!(sent[1].thread.as_deref(), Some(F::THREAD), "in the thread");
    assert_eq!(sent[1].reply_to, F::QUOTES.then_some(threaded.message_id));

    let keys = session_keys(&home);
    assert_eq!(keys.len(), 2, "{keys:?}");
    assert_eq!(
        keys[1],
        format!(
            "{}:{}:{}",
            keys[0],
            F::THREAD_KIND,
            F::THREAD.to_lowercase()
        ),
        "the thread's session is the group's and the thread"
    );
    drop(gateway);
}

/// How many messages of at most `limit` chars `text` makes, cut at spaces.
fn chunks_at_spaces(text: &str, limit: usize) -> usize {
    let mut count = 1;
    let mut line = 0;
    for word in text.split(' ') {
        let len = word.chars().count();
        if line == 0 {
            line = len;
        } else if line + 1 + len <= limit {
            line += 1 + len;
        } else {
            count += 1;
            line = len;
        }
    }
    count
}

async fn a_long_reply_is_split_at_the_platform_limit<F: FakeChannel>() {
    let long: String = (0..1500).map(|i| format!("word{i} ")).collect();
    let long = long.trim_end();
    let llm =
        mock(Scenario::new().rule(Rule::when(Match::last_user("long")).reply(Reply::text(long))))
            .await;
    let fake = F::start().await;
    let (_home, gateway) = fake.gateway(&llm, &F::owner_only());

    let asked = fake.inject_dm(F::OWNER, "long");
    let expected = chunks_at_spaces(long, F::TEXT_LIMIT);
    fake.wait_for_sent(expected, T).await;
    assert_eq!(fake.quiet(Duration::from_millis(1000)).await, expected);
    let sent = fake.sent();
    assert!(
        sent.iter().all(|m| m.text.chars().count() <= F::TEXT_LIMIT),
        "{sent:?}"
    );
    assert!(sent.iter().all(|m| m.to == fake.dm_chat(F::OWNER)));
    let joined: Vec<&str> = sent.iter().map(|m| m.text.trim()).collect();
    assert_eq!(joined.join(" "), long);
    assert_eq!(sent[0].reply_to, F::QUOTES.then_some(asked.message_id));
    assert!(
        sent[1..].iter().all(|m| m.reply_to.is_none()),
        "only the first chunk is a reply"
    );
    fake.check_split().await;
    drop(gateway);
}

async fn media_lines_go_out_as_files_from_the_workspace_only<F: FakeChannel>() {
    let (_llm, fake, home, gateway) = F::started_for_owner(replies(&[
        ("send me the report", "Here it is.\nMEDIA:./report.txt"),
        ("send me your secrets", "Sure.\nMEDIA:/etc/passwd"),
    ]))
    .await;
    let workspace = home.path().join("agents/main/workspace");
    std::fs::create_dir_all(&workspace).unwrap();
    std::fs::write(workspace.join("report.txt"), "the report").unwrap();

    fake.inject_dm(F::OWNER, "send me the report");
    let files = fake.wait_for_files(1, T).await;
    assert_eq!(files.len(), 1, "{files:?}");
    assert_eq!(
        (files[0].name.as_str(), files[0].to.clone()),
        ("report.txt", fake.dm_chat(F::OWNER))
    );
    assert_eq!(files[0].bytes, b"the report");
    fake.check_files_sent().await;
    let sent = fake.wait_for_sent(1, T).await;
    assert_eq!(sent[0].plain, "Here it is.", "the MEDIA line is not shown");

    // A file outside the workspace is not sent, and the reply says so.
    fake.inject_dm(F::OWNER, "send me your secrets");
    let sent = fake.wait_for_sent(2, T).await;
    assert_eq!(
        sent[1].plain,
        "Sure.\n\n(not sent: /etc/passwd is outside the agent's workspace)"
    );
    assert_eq!(fake.sent_files().len(), 1, "still only the report");
    drop(gateway);
}

async fn inbound_files_land_in_the_inbox<F: FakeChannel>() {
    let (llm, fake, home, gateway) =
        F::started_for_owner(reply_when_containing("[media attached:", "got your file")).await;

    fake.inject_dm_file(F::OWNER, "numbers.txt", b"quarterly numbers".to_vec());
    let sent = fake.wait_for_sent(1, T).await;
    assert_eq!(sent[0].text, "got your file");
    let prompt = last_user_text(&llm);
    let typed = format!(" ({})]", F::TEXT_FILE_TYPE);
    let first = prompt.lines().next().unwrap_or_default();
    assert!(first.ends_with(&typed), "{prompt}");
    assert_eq!(attached_file(&home, &prompt), b"quarterly numbers");
    // A text file's text is in the message too, framed with its path.
    if F::TEXT_FILE_TYPE.starts_with("text/") {
        let path = first
            .strip_prefix("[media attached: ")
            .unwrap()
            .split(" (")
            .next()
            .unwrap();
        let frame = format!(
            "<file name=\"{path}\" mime=\"{}\">\nquarterly numbers\n</file>",
            F::TEXT_FILE_TYPE
        );
        assert!(prompt.contains(&frame), "{prompt}");
    }
    drop(gateway);
}

async fn an_inbound_photo_reaches_the_model_as_an_image<F: FakeChannel>() {
    let (llm, fake, home, gateway) =
        F::started_for_owner(reply_when_containing("[media attached:", "a pixel")).await;

    fake.inject_dm_file(F::OWNER, "pixel.png", PIXEL_PNG.to_vec());
    let sent = fake.wait_for_sent(1, T).await;
    assert_eq!(sent[0].text, "a pixel");
    // The model (`mock/primary` takes images) got the text naming the file, then the
    // image itself; the file is in the inbox for `read`.
    let users = crate::common::channels::last_request_users(&llm);
    let content = users.last().unwrap()["content"].as_array().unwrap().clone();
    assert_eq!(content.len(), 2, "{content:?}");
    let note = content[0]["text"].as_str().unwrap();
    assert!(note.ends_with(" (image/png)]\n"), "{note}");
    assert_eq!(attached_file(&home, note), PIXEL_PNG);
    use base64::Engine as _;
    let data = base64::engine::general_purpose::STANDARD.encode(PIXEL_PNG);
    assert_eq!(
        content[1],
        json!({"type": "image_url", "image_url": {"url": format!("data:image/png;base64,{data}")}})
    );
    drop(gateway);
}

async fn a_file_over_the_limit_is_refused_and_nothing_is_kept<F: FakeChannel>() {
    let llm = mock(Scenario::new().rule(Rule::when(Match::any()).reply(Reply::text("hi")))).await;
    let fake = F::start().await;
    let settings = format!("{}, mediaMaxMb: 1", F::owner_only());
    let (home, gateway) = fake.gateway(&llm, &settings);

    let big = fake.inject_dm_file(F::OWNER, "big.bin", vec![b'x'; 2 * 1024 * 1024]);
    let sent = fake.wait_for_sent(1, T).await;
    assert_eq!(sent[0].plain, TOO_BIG);
    assert_eq!(sent[0].reply_to, F::QUOTES.then_some(big.message_id));
    assert_eq!(fake.quiet(Duration::from_millis(1500)).await, 1);
    assert!(
        llm.requests().is_empty(),
        "no turn for a refused file alone"
    );
    for dir in ["media/staging", "agents/main/workspace/inbox"] {
        let kept = std::fs::read_dir(home.path().join(dir))
            .map(|d| d.map(|e| e.unwrap().file_name()).collect::<Vec<_>>())
            .unwrap_or_default();
        assert!(kept.is_empty(), "kept in {dir}: {kept:?}");
    }
    drop(gateway);
}

async fn a_dropped_connection_loses_and_repeats_nothing<F: FakeChannel>() {
    let (llm, fake, _home, gateway) = F::started_for_owner(replies(&[
        ("hello", "hi"),
        ("after the drop", "still here"),
    ]))
    .await;
    fake.inject_dm(F::OWNER, "hello");
    assert_eq!(fake.wait_for_sent(1, T).await[0].text, "hi");

    // The network drops; a message arrives meanwhile; the adapter reconnects and the
    // message still arrives, once.
    fake.drop_connection().await;
    let inbound = fake.inject_dm(F::OWNER, "after the drop");
    let sent = fake.wait_for_sent(2, T).await;
    assert_eq!(sent.last().unwrap().text, "still here");
    fake.check_reconnected(&inbound).await;
    assert_eq!(fake.quiet(Duration::from_millis(1500)).await, 2);
    assert_eq!(
        model_calls_with(&llm, "after the drop"),
        1,
        "once, not twice"
    );
    drop(gateway);
}

async fn a_cron_announcement_reaches_a_user_by_id<F: FakeChannel>() {
    let (_llm, fake, home, gateway) = F::started_for_owner(reply_when_containing(
        "the daily summary",
        "Today: **3** meetings.",
    ))
    .await;
    fake.wait_ready().await;
    // The owner never wrote to the bot.
    let added = home.run_ok(&[
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
        F::NAME,
        "--to",
        F::OWNER,
        "--json",
    ]);
    let job: Value = serde_json::from_str(&added.stdout()).unwrap();
    home.run(&["cron", "run", job["id"].as_str().unwrap()])
        .assert_ok();
    let sent = fake.wait_for_sent(1, T).await;
    assert_eq!(sent.len(), 1, "{sent:?}");
    assert_eq!(sent[0].text, format!("Today: {} meetings.", F::bold("3")));
    fake.check_announced(&sent[0]).await;
    drop(gateway);
}

async fn the_chat_commands_are_answered_without_the_model<F: FakeChannel>() {
    let (typed, asked) = F::HELLO;
    let llm =
        mock(Scenario::new().rule(Rule::when(Match::last_user(asked)).reply(Reply::text("hi"))))
            .await;
    let fake = F::start().await;
    let (_home, gateway) = fake.gateway(&llm, &F::owner_only());
    fake.inject_dm(F::OWNER, typed);
    fake.wait_for_sent(1, T).await;

    let answers = [
        ("/think low", "thinking: low"),
        ("/model", "model: mock/primary"),
        ("/model mock/backup", "model: mock/backup"),
        ("/stop", "Nothing is running on this session."),
        (
            "/subagents",
            "No sub-agents. The agent starts one with sessions_spawn (\"research X in the background\").",
        ),
    ];
    for (i, (command, answer)) in answers.iter().enumerate() {
        fake.inject_dm(F::OWNER, command);
        let sent = fake.wait_for_sent(i + 2, T).await;
        assert_eq!(sent[i + 1].plain, *answer, "{command}");
    }
    fake.inject_dm(F::OWNER, "/status");
    let sent = fake.wait_for_sent(answers.len() + 2, T).await;
    let status = &sent[answers.len() + 1].plain;
    assert!(
        status.starts_with("session:  agent:main:main\n"),
        "{status}"
    );
    assert!(status.contains("thinking: low"), "{status}");
    fake.inject_dm(F::OWNER, "/compact");
    let sent = fake.wait_for_sent(answers.len() + 3, T).await;
    let compacted = &sent[answers.len() + 2].plain;
    assert!(
        compacted.starts_with("⚙️ Compaction skipped: nothing compactable in this session yet"),
        "{compacted}"
    );
    assert_eq!(llm.requests().len(), 1, "no model call for a command");
    drop(gateway);
}

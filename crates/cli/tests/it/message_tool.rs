//! The `message` tool and the operator's sends, end to end through a gateway and the fake
//! Telegram: the agent writes to a chat that talked to it (rendered as replies are), is
//! refused a chat that never did unless `tools.message.allowTargets` names it, reacts,
//! edits and deletes; `pincer message send` and the WebSocket `send` reach a chat, and
//! bad input (unknown channel, no text, no gateway) is said clearly.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::{Value, json};

use crate::common::channels::GATEWAY_TOKEN;
use crate::common::fake_channel::{FakeChannel, T};
use crate::common::gateway::{Foreground, WsClient, gateway_home_in};
use crate::common::{Home, last_tool_result, mock};
use pincer_fakes::fake_telegram::{FakeTelegram, InjectMessage, Reaction};
use pincer_testkit::{Match, MockLlm, Reply, Rule, Scenario};

const OWNER: i64 = 1001;
const STRANGER: i64 = 2002;

/// A gateway for the fake Telegram answering the owner's DMs, with `tools` (a `tools`
/// section's body) in its config.
fn start_gateway(fake: &FakeTelegram, llm: &MockLlm, tools: &str) -> (Home, Foreground) {
    let (home, _port) = gateway_home_in(
        FakeTelegram::home(),
        llm,
        GATEWAY_TOKEN,
        "heartbeat: { every: \"0m\" }",
        &format!(
            "tools: {{ {tools} }},\n  channels: {{ {} }},",
            fake.config(&FakeTelegram::owner_only())
        ),
    );
    let gateway = Foreground::start(&home, &["gateway", "run"]);
    (home, gateway)
}

/// The model: "ping <chat>" makes it send "**Ping** from the agent" to that chat with the
/// `message` tool; after the tool's result it answers "done".
async fn pinging_llm() -> MockLlm {
    let mut scenario =
        Scenario::new().rule(Rule::when(Match::tool_result("message")).reply(Reply::text("done")));
    for chat in [OWNER, STRANGER] {
        scenario = scenario.rule(Rule::when(Match::last_user(format!("ping {chat}"))).reply(
            Reply::tool_call(
                "message",
                json!({"action": "send", "channel": "telegram", "to": chat.to_string(),
                       "text": "**Ping** from the agent"}),
            ),
        ));
    }
    mock(scenario).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_agent_messages_a_chat_that_talked_to_it() {
    let llm = pinging_llm().await;
    let fake = FakeTelegram::start().await;
    let (_home, gateway) = start_gateway(&fake, &llm, "");
    fake.inject_message(InjectMessage::private(OWNER, format!("ping {OWNER}")));
    let sent = fake.wait_for_messages(2, T).await;
    // The tool's message first, rendered for Telegram as a reply is, then the reply.
    assert_eq!(sent[0].chat_id, OWNER);
    assert_eq!(sent[0].text, "<b>Ping</b> from the agent");
    assert_eq!(sent[0].parse_mode.as_deref(), Some("HTML"));
    assert_eq!(sent[0].reply_to_message_id, None);
    assert_eq!(sent[1].plain_text, "done");
    assert_eq!(
        last_tool_result(&llm),
        format!(
            "Sent to telegram:{OWNER} (messageId {}).",
            sent[0].message_id
        )
    );
    drop(gateway);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_chat_that_never_talked_is_refused_unless_allow_targets_names_it() {
    let llm = pinging_llm().await;
    let fake = FakeTelegram::start().await;
    let (_home, gateway) = start_gateway(&fake, &llm, "");
    fake.inject_message(InjectMessage::private(OWNER, format!("ping {STRANGER}")));
    let sent = fake.wait_for_messages(1, T).await;
    assert_eq!(sent[0].chat_id, OWNER);
    assert_eq!(sent[0].plain_text, "done");
    assert_eq!(
        last_tool_result(&llm),
        format!(
            "not allowed to message telegram:{STRANGER}: this agent may message only chats \
             that have talked to it, or targets listed in tools.message.allowTargets (e.g. \
             \"telegram:{STRANGER}\", \"telegram:*\" or \"*\")"
        )
    );
    assert_eq!(fake.quiet(std::time::Duration::from_millis(500)).await, 1);
    drop(gateway);

    // Named in allowTargets, the same chat gets it.
    let llm = pinging_llm().await;
    let fake = FakeTelegram::start().await;
    let (_home, gateway) = start_gateway(
        &fake,
        &llm,
        &format!("message: {{ allowTargets: [\"telegram:{STRANGER}\"] }}"),
    );
    fake.inject_message(InjectMessage::private(OWNER, format!("ping {STRANGER}")));
    let sent = fake.wait_for_messages(2, T).await;
    assert_eq!(sent[0].chat_id, STRANGER);
    assert_eq!(sent[0].plain_text, "Ping from the agent");
    assert_eq!(sent[1].chat_id, OWNER);
    drop(gateway);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_chat_that_talked_is_remembered_across_a_restart() {
    let llm = pinging_llm().await;
    let fake = FakeTelegram::start().await;
    let (home, gateway) = start_gateway(&fake, &llm, "");
    fake.inject_message(InjectMessage::private(OWNER, "hello"));
    fake.wait_for_messages(1, T).await;
    // The session's index entry keeps the chat (OpenClaw's lastChannel / lastTo).
    let index = home.sessions_dir().join("sessions.json");
    let deadline = std::time::Instant::now() + T;
    let entry = loop {
        let sessions: Value =
            serde_json::from_str(&tokio::fs::read_to_string(&index).await.unwrap()).unwrap();
        let entry = sessions["agent:main:main"].clone();
        if entry["lastTo"].as_str() == Some(OWNER.to_string().as_str())
            || std::time::Instant::now() > deadline
        {
            break entry;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    };
    assert_eq!(entry["lastChannel"], "telegram", "{entry}");
    assert_eq!(entry["lastTo"], OWNER.to_string(), "{entry}");
    assert_eq!(entry["lastAccountId"], "default", "{entry}");
    drop(gateway);

    // A new gateway has heard from no one yet; a session without a chat pings the owner.
    let gateway = Foreground::start(&home, &["gateway", "run"]);
    let mut client = WsClient::connect(gateway.port, GATEWAY_TOKEN).await;
    client
        .start_chat("agent:main:ops", &format!("ping {OWNER}"), "run-ops")
        .await;
    let sent = fake.wait_for_messages(2, T).await;
    assert_eq!(sent[1].chat_id, OWNER);
    assert_eq!(sent[1].plain_text, "Ping from the agent");
    drop(gateway);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_agent_reacts_edits_and_deletes() {
    // Message ids are deterministic on the fake: the owner's "hello" is 1, the reply 2.
    let llm = mock(
        Scenario::new()
            .rule(Rule::when(Match::last_user("hello")).reply(Reply::text("helo")))
            .rule(
                Rule::when(Match::last_user("fix it")).reply(
                    Reply::tool_call(
                        "message",
                        json!({"action": "react", "messageId": "1", "emoji": "👍"}),
                    )
                    .with_tool_call(
                        "message",
                        json!({"action": "edit", "messageId": "2", "text": "**hello**"}),
                    ),
                ),
            )
            .rule(
                Rule::when(Match::last_user("drop it")).reply(Reply::tool_call(
                    "message",
                    json!({"action": "delete", "messageId": "2"}),
                )),
            )
            .rule(Rule::when(Match::tool_result("message")).reply(Reply::text("ok"))),
    )
    .await;
    let fake = FakeTelegram::start().await;
    let (_home, gateway) = start_gateway(&fake, &llm, "");
    let (_, hello_id) = fake.inject_message(InjectMessage::private(OWNER, "hello"));
    let sent = fake.wait_for_messages(1, T).await;
    assert_eq!((hello_id, sent[0].message_id), (1, 2));

    // Without to/channel: the chat this conversation is in.
    fake.inject_message(InjectMessage::private(OWNER, "fix it"));
    let edits = fake.wait_for_edits(1, T).await;
    assert_eq!(edits[0].chat_id, OWNER);
    assert_eq!(edits[0].message_id, 2);
    assert_eq!(edits[0].text, "<b>hello</b>");
    let reactions = fake.wait_for_reactions(1, T).await;
    assert_eq!(
        reactions,
        [Reaction {
            chat_id: OWNER,
            message_id: 1,
            emoji: vec!["👍".into()]
        }]
    );
    fake.wait_for_messages(2, T).await;

    fake.inject_message(InjectMessage::private(OWNER, "drop it"));
    assert_eq!(fake.wait_for_deletions(1, T).await, [(OWNER, 2)]);
    fake.wait_for_messages(3, T).await;
    assert_eq!(
        last_tool_result(&llm),
        format!("Deleted the message in telegram:{OWNER}.")
    );
    drop(gateway);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pincer_message_send_reaches_the_chat() {
    let llm = mock(Scenario::new()).await;
    let fake = FakeTelegram::start().await;
    let (home, gateway) = start_gateway(&fake, &llm, "");
    // Operators are not limited by allowTargets: this chat never wrote.
    let run = home.run_ok(&[
        "message",
        "send",
        "--channel",
        "telegram",
        "--to",
        "3003",
        "**hello**",
        "there",
    ]);
    let sent = fake.wait_for_messages(1, T).await;
    assert_eq!(sent[0].chat_id, 3003);
    assert_eq!(sent[0].text, "<b>hello</b> there");
    assert_eq!(
        run.stdout(),
        format!("Sent to telegram:3003 (message {}).\n", sent[0].message_id)
    );

    // Bad input: the gateway's and the CLI's own errors, nothing sent.
    let run = home.run(&["message", "send", "--channel", "discord", "--to", "1", "hi"]);
    assert_ne!(run.code(), 0);
    assert!(
        run.stderr()
            .contains("channel \"discord\" is not running on this gateway (running: telegram)"),
        "{}",
        run.stderr()
    );
    let run = home.run(&["message", "send", "--to", "3003", "  "]);
    assert_ne!(run.code(), 0);
    assert!(run.stderr().contains("nothing to send"), "{}", run.stderr());
    let run = home.run(&["message", "send", "--to", "3003", "--media", "/etc/passwd"]);
    assert_ne!(run.code(), 0);
    assert!(
        run.stderr().contains("outside the agent's workspace"),
        "{}",
        run.stderr()
    );
    assert_eq!(fake.sent_messages().len(), 1);
    assert!(
        llm.requests().is_empty(),
        "no agent turn for an operator's send"
    );
    drop(gateway);

    // No gateway: a clear error, not a hang.
    let run = home.run(&["message", "send", "--to", "3003", "hi"]);
    assert_ne!(run.code(), 0);
    assert!(
        run.stderr().contains("the gateway is not running"),
        "{}",
        run.stderr()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ws_send_reaches_the_chat() {
    let llm = mock(Scenario::new()).await;
    let fake = FakeTelegram::start().await;
    let (_home, gateway) = start_gateway(&fake, &llm, "");
    let mut client = WsClient::connect(gateway.port, GATEWAY_TOKEN).await;
    let answer = client
        .call(
            "send",
            json!({"to": "4004", "message": "_hi_ from ws", "idempotencyKey": "k-1"}),
        )
        .await;
    assert_eq!(answer["ok"], true, "{answer}");
    let sent = fake.wait_for_messages(1, T).await;
    assert_eq!(sent[0].chat_id, 4004);
    assert_eq!(sent[0].text, "<i>hi</i> from ws");
    let id = sent[0].message_id.to_string();
    assert_eq!(
        answer["payload"],
        json!({"runId": "k-1", "messageId": id, "channel": "telegram", "chatId": "4004",
               "messageIds": [id]})
    );
    // A retry of k-1 (the client never heard back) gets the first answer; nothing is sent.
    let again = client
        .call(
            "send",
            json!({"to": "4004", "message": "_hi_ from ws", "idempotencyKey": "k-1"}),
        )
        .await;
    assert_eq!(again["payload"], answer["payload"]);
    tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    assert_eq!(fake.sent_messages().len(), 1, "sent once");

    let error = |answer: &Value| answer["error"]["message"].as_str().unwrap().to_owned();
    let bad = client
        .call("send", json!({"to": "4004", "idempotencyKey": "k-2"}))
        .await;
    assert_eq!(
        error(&bad),
        "invalid send params: text or media is required"
    );
    let bad = client
        .call(
            "send",
            json!({"to": "4004", "message": "x", "channel": "slack", "idempotencyKey": "k-3"}),
        )
        .await;
    assert_eq!(
        error(&bad),
        "channel \"slack\" is not running on this gateway (running: telegram)"
    );
    let bad = client
        .call("send", json!({"message": "x", "idempotencyKey": "k-4"}))
        .await;
    assert_eq!(error(&bad), "missing parameter to");
    let bad = client
        .call("send", json!({"to": "4004", "message": "x"}))
        .await;
    assert_eq!(error(&bad), "missing parameter idempotencyKey");
    assert_eq!(fake.sent_messages().len(), 1);
    drop(gateway);
}

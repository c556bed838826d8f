//! Session controls a chat channel obeys (on the fake Telegram): `sendPolicy: deny` keeps a
//! session's replies, heartbeat replies and cron announcements out of the chat while its
//! turns still run and WebSocket clients still see them; a group session's `groupActivation`
//! (`sessions.patch` or `/activation mention|always`) overrides the channel's `requireMention`;
//! `/verbose on` sends a line per tool call before the reply.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use crate::common::Script as _;
use crate::common::channels::GATEWAY_TOKEN;
use crate::common::fake_channel::{FakeChannel, T};
use crate::common::gateway::{WsClient, text_of};
use crate::common::{json_of, mock};
use pincer_fakes::fake_telegram::{FakeTelegram, InjectMessage};
use pincer_testkit::{Match, Reply, Rule, Scenario};
use serde_json::{Value, json};

const OWNER: i64 = 1001;
const MAIN: &str = "agent:main:main";

/// Reads frames until a `chat` final of session `key` whose message reads `text`.
async fn final_with(client: &mut WsClient, key: &str, text: &str) -> Value {
    loop {
        let frame = client.frame().await.expect("a chat final");
        let payload = &frame["payload"];
        if frame["event"] == "chat"
            && payload["state"] == "final"
            && payload["sessionKey"] == key
            && text_of(&payload["message"]) == text
        {
            return payload.clone();
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn send_policy_deny_keeps_every_reply_out_of_the_chat() {
    let llm = mock(
        Scenario::new()
            .rule(Rule::when(Match::last_user("hello")).reply(Reply::text("hi")))
            .rule(Rule::when(Match::last_user("are you there?")).reply(Reply::text("quietly here")))
            .rule(
                Rule::when(Match::last_user_contains("stretch reminder"))
                    .reply(Reply::text("Time to stretch!")),
            )
            .rule(
                Rule::when(Match::last_user_contains("cron ping"))
                    .reply(Reply::text("cron says hi")),
            )
            .rule(Rule::when(Match::last_user("and now?")).reply(Reply::text("heard again"))),
    )
    .await;
    let fake = FakeTelegram::start().await;
    // Timer beats a day apart: only the wake below runs one.
    let (home, gateway) = fake.gateway_with(&llm, &FakeTelegram::owner_only(), "24h", "");
    // The owner's DM is the main session, and the chat it last heard from.
    fake.inject_message(InjectMessage::private(OWNER, "hello"));
    fake.wait_for_messages(1, T).await;
    let mut client = WsClient::connect(gateway.port, GATEWAY_TOKEN).await;

    let refused = client
        .call(
            "sessions.patch",
            json!({"key": MAIN, "sendPolicy": "maybe"}),
        )
        .await;
    assert_eq!(
        refused["error"]["message"], "invalid sendPolicy (use \"allow\"|\"deny\")",
        "{refused}"
    );
    let set = client
        .call("sessions.patch", json!({"key": MAIN, "sendPolicy": "Deny"}))
        .await;
    assert_eq!(set["payload"]["entry"]["sendPolicy"], "deny", "{set}");

    // A channel turn runs and is stored; clients see it; the chat does not.
    fake.inject_message(InjectMessage::private(OWNER, "are you there?"));
    final_with(&mut client, MAIN, "quietly here").await;
    let history = client.history(MAIN).await;
    let texts: Vec<String> = history["payload"]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(text_of)
        .collect();
    assert!(texts.contains(&"quietly here".to_owned()), "{texts:?}");

    // A heartbeat's kept reply goes to clients only.
    let woke = client
        .call("wake", json!({"mode": "now", "text": "stretch reminder"}))
        .await;
    assert_eq!(woke["ok"], true, "{woke}");
    final_with(&mut client, MAIN, "Time to stretch!").await;

    // So does a cron announcement to the main session.
    let job = json_of(&home.run(&[
        "cron",
        "add",
        "--json",
        "--every",
        "1h",
        "--message",
        "cron ping",
        "--announce",
    ]));
    home.run_ok(&["cron", "run", job["id"].as_str().unwrap()]);
    let note = format!("[cron: {}]\n\ncron says hi", job["name"].as_str().unwrap());
    final_with(&mut client, MAIN, &note).await;

    assert_eq!(
        fake.quiet(Duration::from_millis(1500)).await,
        1,
        "{:?}",
        fake.sent_messages()
    );

    // Cleared, the session is heard again.
    let cleared = client
        .call("sessions.patch", json!({"key": MAIN, "sendPolicy": null}))
        .await;
    assert_eq!(cleared["ok"], true, "{cleared}");
    fake.inject_message(InjectMessage::private(OWNER, "and now?"));
    let sent = fake.wait_for_messages(2, T).await;
    assert_eq!(sent.len(), 2, "{sent:?}");
    assert_eq!(sent[1].text, "heard again");
    drop(gateway);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn group_activation_overrides_require_mention_per_group() {
    const GROUP: i64 = -100_555;
    const FREE_GROUP: i64 = -100_777;
    const MEMBER: i64 = 7;
    let llm = mock(
        Scenario::new()
            .rule(Rule::when(Match::last_user("anyone?")).reply(Reply::text("me")))
            .rule(Rule::when(Match::last_user("still there?")).reply(Reply::text("yes"))),
    )
    .await;
    let fake = FakeTelegram::start().await;
    // GROUP needs a mention (the default); FREE_GROUP does not.
    let (_home, gateway) = fake.gateway(
        &llm,
        &format!(
            "allowFrom: [\"{OWNER}\"], groupPolicy: \"open\", \
             groups: {{ \"{FREE_GROUP}\": {{ requireMention: false }} }}"
        ),
    );
    let mention = |text: &str| format!("@{} {text}", fake.bot_username());

    fake.inject_message(InjectMessage::supergroup(GROUP, MEMBER, "anyone?"));
    assert_eq!(fake.quiet(Duration::from_millis(2000)).await, 0);

    // A member may not change it; the owner may, by a mention that carries the command.
    fake.inject_message(InjectMessage::supergroup(
        GROUP,
        MEMBER,
        mention("/activation always"),
    ));
    let sent = fake.wait_for_messages(1, T).await;
    assert_eq!(
        sent[0].plain_text,
        "⚠️ Only the owner can use /activation in a group (add your id to channels.telegram.allowFrom)."
    );
    fake.inject_message(InjectMessage::supergroup(
        GROUP,
        OWNER,
        mention("/activation sometimes"),
    ));
    let sent = fake.wait_for_messages(2, T).await;
    assert_eq!(sent[1].plain_text, "⚙️ Usage: /activation mention|always");
    fake.inject_message(InjectMessage::supergroup(
        GROUP,
        OWNER,
        mention("/activation always"),
    ));
    let sent = fake.wait_for_messages(3, T).await;
    assert_eq!(sent[2].plain_text, "⚙️ Group activation set to always.");

    // Now every message in GROUP is answered.
    fake.inject_message(InjectMessage::supergroup(GROUP, MEMBER, "anyone?"));
    let sent = fake.wait_for_messages(4, T).await;
    assert_eq!(sent[3].text, "me");
    assert_eq!(sent[3].chat_id, GROUP);

    // `sessions.patch` does the same the other way round: FREE_GROUP wants a mention now.
    fake.inject_message(InjectMessage::supergroup(FREE_GROUP, MEMBER, "anyone?"));
    fake.wait_for_messages(5, T).await;
    let free_key = format!("agent:main:telegram:group:{FREE_GROUP}");
    let mut client = WsClient::connect(gateway.port, GATEWAY_TOKEN).await;
    let refused = client
        .call(
            "sessions.patch",
            json!({"key": free_key, "groupActivation": "sometimes"}),
        )
        .await;
    assert_eq!(
        refused["error"]["message"], "invalid groupActivation (use \"mention\"|\"always\")",
        "{refused}"
    );
    let set = client
        .call(
            "sessions.patch",
            json!({"key": free_key, "groupActivation": "Mention"}),
        )
        .await;
    assert_eq!(
        set["payload"]["entry"]["groupActivation"], "mention",
        "{set}"
    );
    fake.inject_message(InjectMessage::supergroup(
        FREE_GROUP,
        MEMBER,
        "still there?",
    ));
    assert_eq!(fake.quiet(Duration::from_millis(2000)).await, 5);
    fake.inject_message(InjectMessage::supergroup(
        FREE_GROUP,
        MEMBER,
        mention("still there?"),
    ));
    let sent = fake.wait_for_messages(6, T).await;
    assert_eq!(sent[5].text, "yes");

    // In a DM it means nothing.
    fake.inject_message(InjectMessage::private(OWNER, "/activation always"));
    let sent = fake.wait_for_messages(7, T).await;
    assert_eq!(
        sent[6].plain_text,
        "⚙️ Group activation only applies to group chats."
    );
    drop(gateway);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn verbose_on_tells_the_chat_of_each_tool_call_before_the_reply() {
    let script = Scenario::new()
        .tool_turn(
            "read my notes",
            "read",
            json!({"path": "notes.md"}),
            "read them",
        )
        .tool_turn(
            "list the files",
            "exec",
            json!({"command": "ls"}),
            "listed them",
        )
        .tool_turn(
            "note it",
            "write",
            json!({"path": "out.md", "content": "noted"}),
            "noted it",
        );
    let (_llm, fake, home, gateway) = FakeTelegram::started_for_owner(script).await;
    std::fs::write(
        home.path().join("agents/main/workspace/notes.md"),
        "buy milk\n",
    )
    .ok();
    fake.inject_message(InjectMessage::private(OWNER, "/verbose on"));
    let sent = fake.wait_for_messages(1, T).await;
    assert_eq!(sent[0].plain_text, "verbose: on");

    fake.inject_message(InjectMessage::private(OWNER, "read my notes"));
    let sent = fake.wait_for_messages(3, T).await;
    assert_eq!(sent[1].text, "📖 Read: <code>notes.md</code>");
    assert_eq!(sent[2].text, "read them");

    // A command stays out of the chat at `on`.
    fake.inject_message(InjectMessage::private(OWNER, "list the files"));
    let sent = fake.wait_for_messages(5, T).await;
    assert_eq!(sent[3].text, "🛠️ Exec");
    assert_eq!(sent[4].text, "listed them");

    fake.inject_message(InjectMessage::private(OWNER, "/verbose off"));
    fake.wait_for_messages(6, T).await;
    fake.inject_message(InjectMessage::private(OWNER, "note it"));
    let sent = fake.wait_for_messages(7, T).await;
    assert_eq!(sent[6].text, "noted it");
    assert_eq!(fake.quiet(Duration::from_millis(1000)).await, 7);
    drop(gateway);
}

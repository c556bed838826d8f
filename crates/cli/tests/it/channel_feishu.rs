//! Feishu end to end: `pincer gateway run` with `channels.feishu` pointed at the fake
//! Feishu of pincer-testkit and the mock LLM. Over the long connection: a DM in and the
//! reply out (a card replying to the message, the event acked), the same event delivered
//! twice answered once, groups with and without a mention and in a thread, a long reply
//! split into cards, a dropped and a silent connection replaced without losing or
//! repeating a message, files in and out, pairing (approve, served, revoke) and the
//! allowlist's silence. In webhook mode: URL verification, an encrypted and signed event
//! answered, a bad signature and a replay refused and never answered.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::time::Duration;

use common::channels::*;
use common::gateway::*;
use common::{Home, mock};
use pincer_testkit::fake_feishu::{
    FakeFeishu, FakeFeishuConfig, InjectFeishuMessage, SentMessage, UploadKind,
};
use pincer_testkit::{Match, MockLlm, Reply, Rule, Scenario};
use serde_json::{Value, json};

const OWNER: &str = "ou_owner0001";
const GROUP: &str = "oc_group0001";
const T: Duration = Duration::from_secs(30);

/// Pings every second, so a silent connection is noticed within about 11 s.
async fn fake() -> FakeFeishu {
    FakeFeishu::start_with(FakeFeishuConfig::default().ping_interval_secs(1)).await
}

/// A gateway whose Feishu app is the fake; `feishu` is the rest of the channel's settings.
fn gateway(llm: &MockLlm, fake: &FakeFeishu, feishu: &str) -> (Home, Foreground) {
    channel_gateway(
        llm,
        &format!(
            "feishu: {{ appId: \"{}\", appSecret: \"{}\", domain: \"{}\", {feishu} }}",
            fake.app_id(),
            fake.app_secret(),
            fake.base_url()
        ),
    )
}

fn owner_only() -> String {
    format!("dmPolicy: \"allowlist\", allowFrom: [\"{OWNER}\"]")
}

async fn quiet(fake: &FakeFeishu, for_: Duration) -> usize {
    tokio::time::sleep(for_).await;
    fake.sent_messages().len()
}

/// A card reply to `message_id` (not in a thread) with this markdown.
fn assert_card_reply(sent: &SentMessage, message_id: &str, text: &str) {
    assert_eq!(sent.msg_type, "interactive", "{sent:?}");
    assert_eq!(sent.reply_to.as_deref(), Some(message_id), "{sent:?}");
    assert_eq!(sent.text(), text, "{sent:?}");
    assert_eq!(
        sent.content,
        json!({"schema": "2.0", "config": {"wide_screen_mode": true},
            "body": {"elements": [{"tag": "markdown", "content": text}]}})
    );
}

fn no_protocol_errors(fake: &FakeFeishu) {
    let errors = fake.protocol_errors();
    assert!(errors.is_empty(), "{errors:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dm_gets_its_reply_once_even_when_feishu_delivers_it_twice() {
    let llm = mock(
        Scenario::new()
            .rule(Rule::when(Match::last_user("hello")).reply(Reply::text("**hi** _there_"))),
    )
    .await;
    let fake = fake().await;
    let (_home, gateway) = gateway(&llm, &fake, &owner_only());

    let id = fake.inject_message(InjectFeishuMessage::dm(OWNER, "hello"));
    let sent = fake.wait_for_messages(1, T).await;
    assert_eq!(sent.len(), 1, "{sent:?}");
    assert_card_reply(&sent[0], &id, "**hi** *there*");
    assert!(!sent[0].reply_in_thread);
    assert_eq!(last_user_text(&llm), "hello");
    let acks = fake.wait_for_acks(1, T).await;
    assert_eq!(acks[0].message_id.as_deref(), Some(id.as_str()));
    assert_eq!(acks[0].code, Some(200));
    assert!(fake.unacked().is_empty());
    let pings = fake.wait_for_pings(1, T).await;
    assert!(pings[0].answered && pings[0].service == 33, "{pings:?}");
    let endpoints = fake.endpoint_requests();
    assert_eq!(endpoints.len(), 1, "{endpoints:?}");
    assert_eq!(endpoints[0].app_id, fake.app_id());

    let mut client = WsClient::connect(gateway.port, GATEWAY_TOKEN).await;
    let health = client.call("health", json!({})).await;
    let feishu = &health["payload"]["channels"]["feishu"];
    assert_eq!(feishu["running"], true, "{health}");
    assert_eq!(feishu["accounts"][0]["connected"], true, "{health}");

    // Feishu sends the same event again (in a new frame).
    assert!(fake.redeliver(&id));
    fake.wait_for_acks(2, T).await;
    assert_eq!(
        quiet(&fake, Duration::from_millis(2000)).await,
        1,
        "answered once"
    );
    assert_eq!(llm.requests().len(), 1);
    assert_eq!(fake.tenant_token_requests().len(), 1, "the token is cached");
    no_protocol_errors(&fake);
    drop(gateway);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn groups_answer_when_mentioned_or_configured_and_threads_get_threaded_replies() {
    const FREE: &str = "oc_free0001";
    let llm = mock(
        Scenario::new()
            .rule(Rule::when(Match::last_user("what time is it?")).reply(Reply::text("tea time")))
            .rule(Rule::when(Match::last_user("anyone?")).reply(Reply::text("me")))
            .rule(Rule::when(Match::last_user("in the thread")).reply(Reply::text("threaded"))),
    )
    .await;
    let fake = fake().await;
    let (_home, gateway) = gateway(
        &llm,
        &fake,
        &format!("groupPolicy: \"open\", groups: {{ \"{FREE}\": {{ requireMention: false }} }}"),
    );

    fake.inject_message(InjectFeishuMessage::group(
        GROUP,
        "ou_u7",
        "what time is it?",
    ));
    fake.wait_for_acks(1, T).await;
    assert_eq!(
        quiet(&fake, Duration::from_millis(2000)).await,
        0,
        "not mentioned"
    );
    assert!(llm.requests().is_empty());

    let mentioned = fake.inject_message(
        InjectFeishuMessage::group(GROUP, "ou_u7", "what time is it?").mentioning_bot(),
    );
    let sent = fake.wait_for_messages(1, T).await;
    assert_eq!(sent.len(), 1, "{sent:?}");
    assert_card_reply(&sent[0], &mentioned, "tea time");
    assert_eq!(sent[0].chat_id, GROUP);
    assert_eq!(
        last_user_text(&llm),
        "what time is it?",
        "no mention in the prompt"
    );

    let free = fake.inject_message(InjectFeishuMessage::group(FREE, "ou_u7", "anyone?"));
    let sent = fake.wait_for_messages(2, T).await;
    assert_card_reply(&sent[1], &free, "me");
    assert_eq!(sent[1].chat_id, FREE);

    let threaded = fake.inject_message(
        InjectFeishuMessage::group(GROUP, "ou_u7", "in the thread")
            .mentioning_bot()
            .thread("omt_thread1"),
    );
    let sent = fake.wait_for_messages(3, T).await;
    assert_eq!(sent.len(), 3, "{sent:?}");
    assert_eq!(sent[2].reply_to.as_deref(), Some(threaded.as_str()));
    assert!(sent[2].reply_in_thread, "{:?}", sent[2]);
    assert_eq!(sent[2].thread_id.as_deref(), Some("omt_thread1"));
    assert_eq!(sent[2].text(), "threaded");
    no_protocol_errors(&fake);
    drop(gateway);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_long_reply_is_split_into_cards_and_lost_connections_lose_nothing() {
    let long: String = (0..2000).map(|i| format!("word{i} ")).collect();
    let llm = mock(
        Scenario::new()
            .rule(Rule::when(Match::last_user("long")).reply(Reply::text(long.trim_end())))
            .rule(Rule::when(Match::last_user("after the drop")).reply(Reply::text("still here")))
            .rule(Rule::when(Match::last_user("in pieces")).reply(Reply::text("joined")))
            .rule(Rule::when(Match::last_user("while silent")).reply(Reply::text("noticed"))),
    )
    .await;
    let fake = fake().await;
    let (_home, gateway) = gateway(&llm, &fake, &owner_only());

    let asked = fake.inject_message(InjectFeishuMessage::dm(OWNER, "long"));
    // 16,889 chars in cards of at most 4000: five.
    let sent = fake.wait_for_messages(5, T).await;
    let count = quiet(&fake, Duration::from_millis(1000)).await;
    assert_eq!(count, 5, "{count} messages");
    assert!(sent.iter().all(|m| m.text().chars().count() <= 4000));
    let joined: Vec<String> = sent.iter().map(|m| m.text().trim().to_owned()).collect();
    assert_eq!(joined.join(" "), long.trim_end());
    assert_eq!(sent[0].reply_to.as_deref(), Some(asked.as_str()));
    for later in &sent[1..] {
        assert_eq!(later.reply_to, None, "only the first card is a reply");
        assert_eq!(later.receive_id.as_deref(), Some(OWNER));
        assert_eq!(later.receive_id_type.as_deref(), Some("open_id"));
    }

    // An event split into parts is joined.
    fake.inject_message(InjectFeishuMessage::dm(OWNER, "in pieces").split_into(3));
    assert_eq!(fake.wait_for_messages(6, T).await[5].text(), "joined");

    // The network drops; a message arrives meanwhile; the next connection gets it.
    assert!(fake.wait_for_connected(T).await);
    assert_eq!(fake.drop_connection(), 1);
    fake.inject_message(InjectFeishuMessage::dm(OWNER, "after the drop"));
    let sent = fake.wait_for_messages(7, T).await;
    assert_eq!(sent.last().unwrap().text(), "still here");
    assert_eq!(fake.connection_count(), 2);

    // The server goes silent without closing: the adapter must notice and reconnect.
    assert_eq!(fake.go_silent(), 1);
    fake.inject_message(InjectFeishuMessage::dm(OWNER, "while silent"));
    assert_eq!(fake.wait_for_connection_count(3, T).await, 3, "reconnected");
    let sent = fake.wait_for_messages(8, T).await;
    assert_eq!(sent.last().unwrap().text(), "noticed");
    assert_eq!(quiet(&fake, Duration::from_millis(1500)).await, 8);
    for text in ["after the drop", "while silent", "in pieces"] {
        assert_eq!(turns_on(&llm, text), 1, "{text}: once, not twice");
    }
    assert_eq!(
        fake.endpoint_requests().len(),
        3,
        "a new endpoint call per connection"
    );
    assert!(fake.unacked().is_empty(), "{:?}", fake.unacked());
    no_protocol_errors(&fake);
    drop(gateway);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn files_arrive_for_the_agent_big_ones_are_refused_and_files_go_out() {
    let llm = mock(
        Scenario::new()
            .rule(
                Rule::when(Match::last_user_contains("[media attached:"))
                    .reply(Reply::text("got your file")),
            )
            .rule(
                Rule::when(Match::last_user("send me the report")).reply(Reply::text(
                    "Here it is.\nMEDIA:./report.txt\nMEDIA:./chart.png",
                )),
            ),
    )
    .await;
    let fake = fake().await;
    let (home, gateway) = gateway(&llm, &fake, &format!("{}, mediaMaxMb: 1", owner_only()));

    let id = fake.inject_message(
        InjectFeishuMessage::dm(OWNER, "").file("numbers.txt", &b"quarterly numbers"[..]),
    );
    let sent = fake.wait_for_messages(1, T).await;
    assert_card_reply(&sent[0], &id, "got your file");
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

    fake.inject_message(InjectFeishuMessage::dm(OWNER, "").image(&b"\x89PNG picture"[..]));
    fake.wait_for_messages(2, T).await;
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
        b"\x89PNG picture"
    );

    let big = fake.inject_message(
        InjectFeishuMessage::dm(OWNER, "").file("big.bin", vec![b'x'; 2 * 1024 * 1024]),
    );
    let sent = fake.wait_for_messages(3, T).await;
    assert_card_reply(
        &sent[2],
        &big,
        "That file is too big for me (the limit is 1 MB); send a smaller one or a link.",
    );
    assert_eq!(llm.requests().len(), 2, "no turn for a refused file alone");

    let workspace = home.path().join("agents/main/workspace");
    std::fs::create_dir_all(&workspace).unwrap();
    std::fs::write(workspace.join("report.txt"), "the report").unwrap();
    std::fs::write(workspace.join("chart.png"), b"\x89PNG chart").unwrap();
    let asked = fake.inject_message(InjectFeishuMessage::dm(OWNER, "send me the report"));
    let sent = fake.wait_for_messages(6, T).await;
    assert_eq!(sent.len(), 6, "{sent:?}");
    assert_card_reply(&sent[3], &asked, "Here it is.");
    let uploads = fake.wait_for_uploads(2, T).await;
    assert_eq!(uploads.len(), 2, "{uploads:?}");
    assert_eq!(
        (
            uploads[0].kind,
            uploads[0].name.as_str(),
            uploads[0].type_field.as_str()
        ),
        (UploadKind::File, "report.txt", "stream")
    );
    assert_eq!(uploads[0].bytes, b"the report");
    assert_eq!(
        (uploads[1].kind, uploads[1].type_field.as_str()),
        (UploadKind::Image, "message")
    );
    assert_eq!(uploads[1].bytes, b"\x89PNG chart");
    assert_eq!(sent[4].msg_type, "file");
    assert_eq!(sent[4].content, json!({"file_key": uploads[0].key}));
    assert_eq!(sent[5].msg_type, "image");
    assert_eq!(sent[5].content, json!({"image_key": uploads[1].key}));
    assert!(
        sent[4..]
            .iter()
            .all(|m| m.chat_id == fake.dm_chat_id(OWNER))
    );
    no_protocol_errors(&fake);
    drop(gateway);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn allowlist_never_answers_a_stranger_but_acks_the_event() {
    let llm = mock(Scenario::new().rule(Rule::when(Match::any()).reply(Reply::text("hi")))).await;
    let fake = fake().await;
    let (home, gateway) = gateway(&llm, &fake, &owner_only());
    fake.inject_message(InjectFeishuMessage::dm("ou_stranger1", "let me in"));
    fake.wait_for_acks(1, T).await;
    assert_eq!(quiet(&fake, Duration::from_millis(2000)).await, 0);
    assert!(llm.requests().is_empty());
    assert!(!home.path().join("credentials/feishu-pairing.json").exists());
    assert!(fake.unacked().is_empty());
    drop(gateway);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stranger_gets_a_pairing_code_is_approved_served_then_revoked() {
    let llm = mock(
        Scenario::new()
            .rule(Rule::when(Match::last_user("hey again")).reply(Reply::text("welcome"))),
    )
    .await;
    let fake = fake().await;
    // dmPolicy defaults to pairing.
    let (home, gateway) = gateway(&llm, &fake, "");
    let stranger = "ou_stranger2";

    fake.inject_message(InjectFeishuMessage::dm(stranger, "hey"));
    let sent = fake.wait_for_messages(1, T).await;
    assert_eq!(sent.len(), 1, "{sent:?}");
    assert_eq!(sent[0].chat_id, fake.dm_chat_id(stranger));
    let text = sent[0].text();
    let code = text
        .lines()
        .find_map(|l| l.strip_prefix("Pairing code: "))
        .unwrap_or_else(|| panic!("{text}"))
        .trim_matches(|c: char| !c.is_ascii_alphanumeric())
        .to_owned();
    assert_eq!(code.len(), 8, "{text}");
    assert!(
        text.contains(&format!("pincer pairing approve feishu {code}")),
        "{text}"
    );
    assert!(llm.requests().is_empty(), "no agent for a stranger");

    let approved = home.run(&["pairing", "approve", "--channel", "feishu", &code]);
    approved.assert_ok();
    assert_eq!(
        approved.stdout(),
        format!("Approved {stranger} on feishu.\n")
    );
    let sent = fake.wait_for_messages(2, T).await;
    assert_eq!(
        sent[1].receive_id.as_deref(),
        Some(stranger),
        "told in their DM"
    );
    assert_eq!(sent[1].receive_id_type.as_deref(), Some("open_id"));
    assert!(sent[1].text().contains("approved"), "{}", sent[1].text());

    let again = fake.inject_message(InjectFeishuMessage::dm(stranger, "hey again"));
    let sent = fake.wait_for_messages(3, T).await;
    assert_card_reply(&sent[2], &again, "welcome");

    let revoked = home.run(&["pairing", "revoke", "feishu", stranger]);
    revoked.assert_ok();
    assert_eq!(
        revoked.stdout(),
        format!("Revoked {stranger} on feishu.\nCurrent allow-from entries: 0\n")
    );
    let before = llm.requests().len();
    fake.inject_message(InjectFeishuMessage::dm(stranger, "hey again"));
    let sent = fake.wait_for_messages(4, T).await;
    assert!(
        sent[3].text().contains("Pairing code: "),
        "back to pairing: {}",
        sent[3].text()
    );
    assert_eq!(llm.requests().len(), before);
    drop(gateway);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn webhook_mode_answers_signed_encrypted_events_and_refuses_forgeries_and_replays() {
    let llm = mock(
        Scenario::new()
            .rule(Rule::when(Match::last_user("hello hook")).reply(Reply::text("hooked")))
            .rule(Rule::when(Match::any()).reply(Reply::text("must not be asked"))),
    )
    .await;
    let fake = fake().await;
    let hook_port = free_port();
    let (_home, gateway) = gateway(
        &llm,
        &fake,
        &format!(
            "{}, connectionMode: \"webhook\", webhookHost: \"127.0.0.1\", webhookPort: {hook_port}, \
             webhookPath: \"/feishu/events\", verificationToken: \"vtok\", encryptKey: \"ekey\"",
            owner_only()
        ),
    );
    let url = format!("http://127.0.0.1:{hook_port}/feishu/events");
    let feishu = fake.callback_client(&url, "vtok", Some("ekey"));

    // Wait for the listener, with the URL check Feishu makes when the URL is saved.
    let deadline = std::time::Instant::now() + T;
    let verified = loop {
        let posted = feishu.post_url_verification_plain("c1").await;
        if posted.status != 0 || std::time::Instant::now() > deadline {
            break posted;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    assert_eq!(
        (verified.status, verified.json()),
        (200, json!({"challenge": "c1"}))
    );
    // With an encrypt key set, Feishu encrypts the URL check too.
    let encrypted = feishu.post_url_verification("c3").await;
    assert_eq!(
        (encrypted.status, encrypted.json()),
        (200, json!({"challenge": "c3"}))
    );
    let wrong = fake.callback_client(&url, "not-vtok", Some("ekey"));
    assert_eq!(wrong.post_url_verification_plain("c2").await.status, 401);

    let posted = feishu
        .post_event(InjectFeishuMessage::dm(OWNER, "hello hook").message_id("om_hook1"))
        .await;
    assert_eq!(
        (posted.status, posted.json()),
        (200, json!({})),
        "{posted:?}"
    );
    let sent = fake.wait_for_messages(1, T).await;
    assert_card_reply(&sent[0], "om_hook1", "hooked");
    // Feishu retries the same event: answered once.
    let again = feishu
        .post_event(InjectFeishuMessage::dm(OWNER, "hello hook").message_id("om_hook1"))
        .await;
    assert_eq!(again.status, 200);

    let forged = feishu
        .post_with_bad_signature(InjectFeishuMessage::dm(OWNER, "forged"))
        .await;
    assert_eq!(forged.status, 401, "{forged:?}");
    let replayed = feishu
        .post_replayed(
            InjectFeishuMessage::dm(OWNER, "replayed"),
            Duration::from_secs(600),
        )
        .await;
    assert_eq!(replayed.status, 401, "{replayed:?}");
    let unsigned = feishu
        .post_unsigned(InjectFeishuMessage::dm(OWNER, "unsigned"))
        .await;
    assert_eq!(unsigned.status, 401, "{unsigned:?}");
    let garbage = feishu
        .post_raw(r#"{"encrypt":"bm90IGVuY3J5cHRlZA=="}"#, &[])
        .await;
    assert_ne!(garbage.status, 200, "{garbage:?}");
    let wrong_token = wrong
        .post_event(InjectFeishuMessage::dm(OWNER, "wrong token"))
        .await;
    assert_eq!(wrong_token.status, 401, "{wrong_token:?}");

    assert_eq!(quiet(&fake, Duration::from_millis(2000)).await, 1);
    assert_eq!(
        llm.requests().len(),
        1,
        "only the genuine event reached the agent"
    );
    assert_eq!(
        fake.connection_count(),
        0,
        "no long connection in webhook mode"
    );
    drop(gateway);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_expired_token_is_renewed_and_a_rate_limited_reply_is_retried() {
    let llm = mock(
        Scenario::new()
            .rule(Rule::when(Match::last_user("one")).reply(Reply::text("first")))
            .rule(Rule::when(Match::last_user("two")).reply(Reply::text("second"))),
    )
    .await;
    let fake = fake().await;
    let (_home, gateway) = gateway(&llm, &fake, &owner_only());
    fake.inject_message(InjectFeishuMessage::dm(OWNER, "one"));
    assert_eq!(fake.wait_for_messages(1, T).await[0].text(), "first");
    assert_eq!(fake.tenant_token_requests().len(), 1);

    // The token is revoked early, and the reply is rate limited once.
    fake.expire_tokens();
    fake.fail_next_rate_limited("POST /open-apis/im/v1/messages/{message_id}/reply", 1);
    let two = fake.inject_message(InjectFeishuMessage::dm(OWNER, "two"));
    let sent = fake.wait_for_messages(2, T).await;
    assert_eq!(sent.len(), 2, "{sent:?}");
    assert_card_reply(&sent[1], &two, "second");
    assert_eq!(
        quiet(&fake, Duration::from_millis(1500)).await,
        2,
        "sent once"
    );
    let tokens = fake.tenant_token_requests();
    assert_eq!(tokens.len(), 2, "renewed once: {tokens:?}");
    let replies = fake
        .calls()
        .iter()
        .filter(|c| c.ends_with("/reply"))
        .count();
    // first; then for "two": refused token, the retry rate limited, the ingress' retry.
    assert_eq!(replies, 4, "{:?}", fake.calls());
    drop(gateway);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cron_announcement_reaches_a_user_by_open_id() {
    let llm = mock(
        Scenario::new().rule(
            Rule::when(Match::last_user_contains("the daily summary"))
                .reply(Reply::text("Today: **3** meetings.")),
        ),
    )
    .await;
    let fake = fake().await;
    let (home, gateway) = gateway(&llm, &fake, &owner_only());
    assert!(fake.wait_for_connected(T).await);
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
        "feishu",
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
    assert_eq!(sent[0].text(), "Today: **3** meetings.");
    assert_eq!(sent[0].receive_id.as_deref(), Some(OWNER));
    assert_eq!(sent[0].receive_id_type.as_deref(), Some("open_id"));
    assert_eq!(sent[0].reply_to, None);
    drop(gateway);
}

//! Feishu end to end, what only Feishu does (the rest is in `channel_conformance`): an
//! event split into parts joined, a silent connection noticed and replaced, images both
//! ways, webhook mode (URL verification, an encrypted and signed event answered, a bad
//! signature and a replay refused and never answered), and an expired token renewed with
//! a rate-limited reply retried.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use crate::common::channels::{attached_file, last_user_text, turns_on};
use crate::common::fake_channel::feishu::{
    assert_card_reply, assert_challenge_echoed, no_protocol_errors,
};
use crate::common::fake_channel::{FakeChannel, T};
use crate::common::gateway::free_port;
use crate::common::{mock, replies};
use pincer_fakes::fake_feishu::{FakeFeishu, InjectFeishuMessage, UploadKind};
use pincer_testkit::{Match, Reply, Rule, Scenario};
use serde_json::json;

const OWNER: &str = "ou_owner0001";

async fn fake() -> FakeFeishu {
    <FakeFeishu as FakeChannel>::start().await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_event_in_parts_is_joined_and_a_silent_connection_is_replaced() {
    let (llm, fake, _home, gateway) = FakeFeishu::started_for_owner(replies(&[
        ("in pieces", "joined"),
        ("while silent", "noticed"),
    ]))
    .await;

    // An event split into parts is joined.
    fake.inject_message(InjectFeishuMessage::dm(OWNER, "in pieces").split_into(3));
    assert_eq!(fake.wait_for_messages(1, T).await[0].text(), "joined");

    // The server goes silent without closing: the adapter must notice and reconnect.
    assert!(fake.wait_for_connected(T).await);
    assert_eq!(fake.go_silent(), 1);
    fake.inject_message(InjectFeishuMessage::dm(OWNER, "while silent"));
    assert_eq!(fake.wait_for_connection_count(2, T).await, 2, "reconnected");
    let sent = fake.wait_for_messages(2, T).await;
    assert_eq!(sent.last().unwrap().text(), "noticed");
    assert_eq!(fake.quiet(Duration::from_millis(1500)).await, 2);
    for text in ["while silent", "in pieces"] {
        assert_eq!(turns_on(&llm, text), 1, "{text}: once, not twice");
    }
    assert_eq!(
        fake.endpoint_requests().len(),
        2,
        "a new endpoint call per connection"
    );
    assert!(fake.unacked().is_empty(), "{:?}", fake.unacked());
    no_protocol_errors(&fake);
    drop(gateway);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn images_arrive_for_the_agent_and_go_out_as_images() {
    let (llm, fake, home, gateway) = FakeFeishu::started_for_owner(
        Scenario::new()
            .rule(
                Rule::when(Match::last_user_contains("[media attached:"))
                    .reply(Reply::text("got your picture")),
            )
            .rule(
                Rule::when(Match::last_user("send me the report")).reply(Reply::text(
                    "Here it is.\nMEDIA:./report.txt\nMEDIA:./chart.png",
                )),
            ),
    )
    .await;

    let id = fake.inject_message(InjectFeishuMessage::dm(OWNER, "").image(&b"\x89PNG picture"[..]));
    let sent = fake.wait_for_messages(1, T).await;
    assert_card_reply(&sent[0], &id, "got your picture");
    let prompt = last_user_text(&llm);
    assert_eq!(attached_file(&home, &prompt), b"\x89PNG picture");
    let workspace = home.path().join("agents/main/workspace");

    std::fs::write(workspace.join("report.txt"), "the report").unwrap();
    std::fs::write(workspace.join("chart.png"), b"\x89PNG chart").unwrap();
    let asked = fake.inject_message(InjectFeishuMessage::dm(OWNER, "send me the report"));
    let sent = fake.wait_for_messages(4, T).await;
    assert_eq!(sent.len(), 4, "{sent:?}");
    assert_card_reply(&sent[1], &asked, "Here it is.");
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
    assert_eq!(sent[2].msg_type, "file");
    assert_eq!(sent[2].content, json!({"file_key": uploads[0].key}));
    assert_eq!(sent[3].msg_type, "image");
    assert_eq!(sent[3].content, json!({"image_key": uploads[1].key}));
    assert!(
        sent[2..]
            .iter()
            .all(|m| m.chat_id == fake.dm_chat_id(OWNER))
    );
    no_protocol_errors(&fake);
    drop(gateway);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn webhook_mode_answers_signed_encrypted_events_and_refuses_forgeries_and_replays() {
    let llm =
        mock(replies(&[("hello hook", "hooked")]).default_reply(Reply::text("must not be asked")))
            .await;
    let fake = fake().await;
    let hook_port = free_port();
    let (_home, gateway) = fake.gateway(
        &llm,
        &format!(
            "{}, connectionMode: \"webhook\", webhookHost: \"127.0.0.1\", webhookPort: {hook_port}, \
             webhookPath: \"/feishu/events\", verificationToken: \"vtok\", encryptKey: \"ekey\"",
            FakeFeishu::owner_only()
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
    assert_challenge_echoed(&verified, "c1");
    // With an encrypt key set, Feishu encrypts the URL check too.
    assert_challenge_echoed(&feishu.post_url_verification("c3").await, "c3");
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

    // Each refused as unauthorized: a bad signature, a replay, no signature, the wrong
    // verification token.
    let dm = |text: &str| InjectFeishuMessage::dm(OWNER, text);
    let refused = [
        feishu.post_with_bad_signature(dm("forged")).await,
        feishu
            .post_replayed(dm("replayed"), Duration::from_secs(600))
            .await,
        feishu.post_unsigned(dm("unsigned")).await,
        wrong.post_event(dm("wrong token")).await,
    ];
    for response in refused {
        assert_eq!(response.status, 401, "{response:?}");
    }
    let garbage = feishu
        .post_raw(r#"{"encrypt":"bm90IGVuY3J5cHRlZA=="}"#, &[])
        .await;
    assert_ne!(garbage.status, 200, "{garbage:?}");

    assert_eq!(fake.quiet(Duration::from_millis(2000)).await, 1);
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
    let (_llm, fake, _home, gateway) =
        FakeFeishu::started_for_owner(replies(&[("one", "first"), ("two", "second")])).await;
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
        fake.quiet(Duration::from_millis(1500)).await,
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

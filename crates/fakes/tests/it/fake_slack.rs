//! The fake Slack, driven over real HTTP (reqwest) and a real WebSocket
//! (tokio-tungstenite): token checks, Socket Mode with hello, envelopes, acks and
//! redelivery, the Web API's messages, DMs and file uploads, injected failures.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use crate::common::{client, send_json};
use futures_util::{SinkExt, StreamExt};
use pincer_fakes::fake_slack::{FakeSlack, InjectSlackMessage};
use serde_json::{Value, json};
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

const WAIT: Duration = Duration::from_secs(5);

type Ws = WebSocketStream<MaybeTlsStream<TcpStream>>;

async fn call(fake: &FakeSlack, method: &str, token: &str, body: Value) -> (u16, Value) {
    let request = client().post(format!("{}/{method}", fake.api_base()));
    send_json(request.bearer_auth(token).json(&body)).await
}

async fn form(fake: &FakeSlack, method: &str, fields: &str) -> Value {
    client()
        .post(format!("{}/{method}", fake.api_base()))
        .bearer_auth(fake.bot_token())
        .header("content-type", "application/x-www-form-urlencoded")
        .body(fields.to_owned())
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap()
}

/// Opens a Socket Mode connection and reads its hello.
async fn connect(fake: &FakeSlack) -> Ws {
    let (_, opened) = call(fake, "apps.connections.open", &fake.app_token(), json!({})).await;
    assert_eq!(opened["ok"], true, "{opened}");
    let url = opened["url"].as_str().unwrap();
    assert!(url.starts_with("ws://127.0.0.1:"), "{url}");
    let (mut ws, _) = tokio_tungstenite::connect_async(url).await.unwrap();
    let hello = next(&mut ws).await.unwrap();
    assert_eq!(hello["type"], "hello", "{hello}");
    assert_eq!(hello["connection_info"]["app_id"], "A0APP");
    ws
}

/// The next text frame; `None` when the connection ended.
async fn next(ws: &mut Ws) -> Option<Value> {
    loop {
        match tokio::time::timeout(WAIT, ws.next())
            .await
            .expect("a frame in time")
        {
            Some(Ok(Message::Text(text))) => return Some(serde_json::from_str(&text).unwrap()),
            Some(Ok(Message::Close(_))) | Some(Err(_)) | None => return None,
            Some(Ok(_)) => {}
        }
    }
}

async fn ack(ws: &mut Ws, envelope: &Value) {
    let id = envelope["envelope_id"].as_str().unwrap();
    ws.send(Message::text(json!({ "envelope_id": id }).to_string()))
        .await
        .unwrap();
}

#[tokio::test]
async fn tokens_are_checked_per_method() {
    let fake = FakeSlack::start().await;
    let (status, me) = call(&fake, "auth.test", &fake.bot_token(), json!({})).await;
    assert_eq!(status, 200);
    assert_eq!(me["ok"], true);
    assert_eq!(me["user_id"], "U0BOT");
    assert_eq!(me["team_id"], fake.team_id());
    let (_, wrong) = call(&fake, "auth.test", "xoxb-nope", json!({})).await;
    assert_eq!(wrong, json!({"ok": false, "error": "invalid_auth"}));
    let (_, app) = call(&fake, "auth.test", &fake.app_token(), json!({})).await;
    assert_eq!(app["error"], "not_allowed_token_type");
    let (_, bot) = call(&fake, "apps.connections.open", &fake.bot_token(), json!({})).await;
    assert_eq!(bot["error"], "not_allowed_token_type");
    let none: Value = client()
        .post(format!("{}/auth.test", fake.api_base()))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(none["error"], "not_authed");
    let (_, unknown) = call(&fake, "nope.nothing", &fake.bot_token(), json!({})).await;
    assert_eq!(unknown["error"], "unknown_method");
    assert_eq!(
        fake.calls(),
        [
            "auth.test",
            "auth.test",
            "auth.test",
            "apps.connections.open",
            "auth.test",
            "nope.nothing"
        ]
    );
}

#[tokio::test]
async fn envelopes_are_delivered_acked_and_redelivered_until_acked() {
    let fake = FakeSlack::start().await;
    // Injected before any connection: waits for one.
    let first = fake.inject_message(InjectSlackMessage::dm("U1", "D1", "hello &").ts("1.000100"));
    assert_eq!(first.len(), 1);
    let mut ws = connect(&fake).await;
    assert!(fake.is_connected());
    let envelope = next(&mut ws).await.unwrap();
    assert_eq!(envelope["envelope_id"], first[0]);
    assert_eq!(envelope["type"], "events_api");
    assert_eq!(envelope["retry_attempt"], 0);
    let event = &envelope["payload"]["event"];
    assert_eq!(envelope["payload"]["team_id"], fake.team_id());
    assert_eq!(event["type"], "message");
    assert_eq!(event["channel"], "D1");
    assert_eq!(event["channel_type"], "im");
    assert_eq!(event["user"], "U1");
    assert_eq!(event["text"], "hello &");
    assert_eq!(event["ts"], "1.000100");

    // Not acked: redelivered on request, and on the next connection.
    assert!(fake.redeliver(&first[0]));
    assert_eq!(next(&mut ws).await.unwrap()["retry_attempt"], 1);
    assert_eq!(fake.drop_connection(), 1);
    assert!(next(&mut ws).await.is_none(), "dropped");
    assert!(!fake.is_connected());
    let mut ws = connect(&fake).await;
    let again = next(&mut ws).await.unwrap();
    assert_eq!(again["envelope_id"], first[0]);
    assert_eq!(again["retry_attempt"], 2);
    assert_eq!(again["retry_reason"], "timeout");
    ack(&mut ws, &again).await;
    assert_eq!(fake.wait_for_acks(1, WAIT).await, first);

    // Acked: not sent on the next connection.
    drop(ws);
    let mut ws = connect(&fake).await;
    assert_eq!(fake.connection_count(), 3);
    // A mention in a channel: message and app_mention, same ts.
    let ids = fake.inject_message(
        InjectSlackMessage::channel("U2", "C1", "look")
            .mentioning_bot()
            .thread_ts("0.5"),
    );
    assert_eq!(ids.len(), 2);
    let message = next(&mut ws).await.unwrap();
    let mention = next(&mut ws).await.unwrap();
    assert_eq!(message["envelope_id"], ids[0]);
    assert_eq!(mention["envelope_id"], ids[1]);
    assert_eq!(message["payload"]["event"]["type"], "message");
    assert_eq!(message["payload"]["event"]["text"], "<@U0BOT> look");
    assert_eq!(message["payload"]["event"]["thread_ts"], "0.5");
    assert_eq!(mention["payload"]["event"]["type"], "app_mention");
    assert_eq!(mention["payload"]["event"]["channel_type"], Value::Null);
    assert_eq!(
        message["payload"]["event"]["ts"],
        mention["payload"]["event"]["ts"]
    );

    // Disconnect requests and raw envelopes reach the client as they are.
    assert!(fake.send_disconnect("refresh_requested"));
    assert_eq!(
        next(&mut ws).await.unwrap(),
        json!({"type": "disconnect",
        "reason": "refresh_requested", "debug_info": {"host": "fake-slack"}})
    );
    let slash = fake.inject_envelope("slash_commands", json!({"command": "/x"}));
    let frame = next(&mut ws).await.unwrap();
    assert_eq!(frame["envelope_id"], slash);
    assert_eq!(frame["type"], "slash_commands");
}

#[tokio::test]
async fn tickets_are_single_use_and_stalled_connections_ignore_pings() {
    let fake = FakeSlack::start().await;
    let (_, opened) = call(&fake, "apps.connections.open", &fake.app_token(), json!({})).await;
    let url = opened["url"].as_str().unwrap().to_owned();
    let (mut ws, _) = tokio_tungstenite::connect_async(url.as_str())
        .await
        .unwrap();
    assert_eq!(next(&mut ws).await.unwrap()["type"], "hello");
    assert!(
        tokio_tungstenite::connect_async(url.as_str())
            .await
            .is_err(),
        "a used ticket"
    );

    ws.send(Message::Ping(b"p".to_vec().into())).await.unwrap();
    let pong = tokio::time::timeout(WAIT, ws.next())
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert!(matches!(pong, Message::Pong(_)), "{pong:?}");
    assert_eq!(fake.stall_connection(), 1);
    assert!(!fake.is_connected());
    ws.send(Message::Ping(b"p".to_vec().into())).await.unwrap();
    assert!(
        tokio::time::timeout(Duration::from_millis(500), ws.next())
            .await
            .is_err(),
        "no pong from a stalled connection"
    );
}

#[tokio::test]
async fn messages_dms_files_and_failures() {
    let fake = FakeSlack::start().await;
    let bot = fake.bot_token();
    let (_, sent) = call(
        &fake,
        "chat.postMessage",
        &bot,
        json!({"channel": "C1", "text": "*hi*", "thread_ts": "1.000001", "mrkdwn": true}),
    )
    .await;
    assert_eq!(sent["ok"], true, "{sent}");
    assert_eq!(sent["channel"], "C1");
    let messages = fake.wait_for_messages(1, WAIT).await;
    assert_eq!(messages[0].channel, "C1");
    assert_eq!(messages[0].text, "*hi*");
    assert_eq!(messages[0].thread_ts.as_deref(), Some("1.000001"));
    assert_eq!(sent["ts"], messages[0].ts.as_str());
    for (params, error) in [
        (json!({"channel": "C1", "text": " "}), "no_text"),
        (json!({"channel": "nope", "text": "x"}), "channel_not_found"),
        (
            json!({"channel": "C1", "text": "x".repeat(40_001)}),
            "msg_too_long",
        ),
    ] {
        let (_, refused) = call(&fake, "chat.postMessage", &bot, params).await;
        assert_eq!(refused["error"], error, "{refused}");
    }

    // DMs: the channel the user wrote from, else a stable new one.
    fake.inject_message(InjectSlackMessage::dm("U1", "D1", "hi"));
    let (_, dm) = call(&fake, "conversations.open", &bot, json!({"users": "U1"})).await;
    assert_eq!(dm["channel"]["id"], "D1");
    let (_, new) = call(&fake, "conversations.open", &bot, json!({"users": "U9"})).await;
    let (_, same) = call(&fake, "conversations.open", &bot, json!({"users": "U9"})).await;
    assert!(new["channel"]["id"].as_str().unwrap().starts_with('D'));
    assert_eq!(new["channel"]["id"], same["channel"]["id"]);

    // Files out: URL, bytes, completion.
    let target = form(
        &fake,
        "files.getUploadURLExternal",
        "filename=r%C3%A9port.txt&length=5",
    )
    .await;
    assert_eq!(target["ok"], true, "{target}");
    let file_id = target["file_id"].as_str().unwrap();
    let uploaded = client()
        .post(target["upload_url"].as_str().unwrap())
        .body("hello")
        .send()
        .await
        .unwrap();
    assert_eq!(uploaded.text().await.unwrap(), "OK - 5");
    let (_, done) = call(
        &fake,
        "files.completeUploadExternal",
        &bot,
        json!({"files": [{"id": file_id, "title": "Report"}], "channel_id": "D1"}),
    )
    .await;
    assert_eq!(done["ok"], true, "{done}");
    let files = fake.wait_for_files(1, WAIT).await;
    assert_eq!(files[0].name, "réport.txt");
    assert_eq!(files[0].title.as_deref(), Some("Report"));
    assert_eq!(files[0].channel, "D1");
    assert_eq!(files[0].bytes, b"hello");
    let (_, again) = call(
        &fake,
        "files.completeUploadExternal",
        &bot,
        json!({"files": [{"id": file_id}], "channel_id": "D1"}),
    )
    .await;
    assert_eq!(again["error"], "file_not_found");

    // Files in: served with the bot token only.
    fake.inject_message(InjectSlackMessage::dm("U1", "D1", "").file(
        "a.png",
        b"PNG".to_vec(),
        "image/png",
    ));
    let mut ws = connect(&fake).await;
    let _first = next(&mut ws).await.unwrap();
    let with_file = next(&mut ws).await.unwrap();
    let file = &with_file["payload"]["event"]["files"][0];
    assert_eq!(with_file["payload"]["event"]["subtype"], "file_share");
    assert_eq!(file["size"], 3);
    assert_eq!(file["mimetype"], "image/png");
    let url = file["url_private_download"].as_str().unwrap();
    let got = client().get(url).bearer_auth(&bot).send().await.unwrap();
    assert_eq!(got.headers()["content-type"], "image/png");
    assert_eq!(got.bytes().await.unwrap().as_ref(), b"PNG");
    let page = client().get(url).send().await.unwrap();
    assert_eq!(page.status(), 200);
    assert!(crate::common::content_type(&page).starts_with("text/html"));

    // One-shot failures.
    fake.fail_next("chat.postMessage", 429, Some(3));
    fake.fail_next_ok_false("chat.postMessage", "not_in_channel");
    let response = client()
        .post(format!("{}/chat.postMessage", fake.api_base()))
        .bearer_auth(&bot)
        .json(&json!({"channel": "C1", "text": "x"}))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 429);
    assert_eq!(response.headers()["retry-after"], "3");
    assert_eq!(
        response.json::<Value>().await.unwrap()["error"],
        "ratelimited"
    );
    // The same post again meets the second failure, then none.
    let post = || {
        call(
            &fake,
            "chat.postMessage",
            &bot,
            json!({"channel": "C1", "text": "x"}),
        )
    };
    assert_eq!(
        post().await,
        (200, json!({"ok": false, "error": "not_in_channel"}))
    );
    assert_eq!(post().await.1["ok"], true);
}

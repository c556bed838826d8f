//! The fake Discord server, driven over a real WebSocket (tokio-tungstenite) and real HTTP
//! (reqwest).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::{Duration, Instant};

use crate::common::{client, send_json};
use futures_util::{SinkExt, StreamExt};
use pincer_fakes::FakeDiscord;
use pincer_fakes::fake_discord::{
    FakeDiscordConfig, InjectAttachment, InjectDiscordMessage, Injected, RecordedResume,
};
use serde_json::{Value, json};
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::protocol::CloseFrame;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

const WAIT: Duration = Duration::from_secs(5);

/// How a read from the gateway ended.
#[derive(Debug, PartialEq)]
enum End {
    Closed(u16),
    /// The connection ended without a close frame.
    Dropped,
}

struct Gateway {
    ws: WebSocketStream<MaybeTlsStream<TcpStream>>,
}

impl Gateway {
    async fn connect(fake: &FakeDiscord) -> Self {
        let url = format!("{}?v=10&encoding=json", fake.gateway_url());
        let (ws, _) = tokio_tungstenite::connect_async(url).await.unwrap();
        Self { ws }
    }

    /// Connects and reads the Hello.
    async fn hello(fake: &FakeDiscord) -> Self {
        let mut gateway = Self::connect(fake).await;
        assert_eq!(gateway.recv().await["op"], 10);
        gateway
    }

    async fn next(&mut self) -> Result<Value, End> {
        loop {
            let frame = tokio::time::timeout(WAIT, self.ws.next())
                .await
                .expect("no gateway frame in time");
            match frame {
                Some(Ok(Message::Text(text))) => return Ok(serde_json::from_str(&text).unwrap()),
                Some(Ok(Message::Close(frame))) => {
                    return Err(End::Closed(frame.map_or(1005, |f| u16::from(f.code))));
                }
                Some(Ok(_)) => {}
                Some(Err(_)) | None => return Err(End::Dropped),
            }
        }
    }

    async fn recv(&mut self) -> Value {
        self.next().await.unwrap()
    }

    async fn end(&mut self) -> End {
        self.next().await.unwrap_err()
    }

    async fn send(&mut self, payload: Value) {
        self.ws
            .send(Message::text(payload.to_string()))
            .await
            .unwrap();
    }

    async fn identify(&mut self, token: &str) {
        self.send(json!({"op": 2, "d": {
            "token": token,
            "intents": 37_377,
            "properties": {"os": "linux", "browser": "pincer", "device": "pincer"},
        }}))
        .await;
    }

    /// Identifies with the right token and returns READY.
    async fn ready(&mut self, fake: &FakeDiscord) -> Value {
        self.identify(&fake.token()).await;
        let ready = self.recv().await;
        assert_eq!(ready["t"], "READY", "{ready}");
        ready
    }

    async fn resume(&mut self, fake: &FakeDiscord, session_id: &str, seq: u64) {
        self.send(json!({"op": 6, "d": {
            "token": fake.token(), "session_id": session_id, "seq": seq,
        }}))
        .await;
    }

    async fn close(mut self, code: u16) {
        let frame = CloseFrame {
            code: CloseCode::from(code),
            reason: "bye".into(),
        };
        self.ws.close(Some(frame)).await.unwrap();
        while let Ok(Some(Ok(_))) = tokio::time::timeout(WAIT, self.ws.next()).await {}
    }
}

fn auth(fake: &FakeDiscord) -> String {
    format!("Bot {}", fake.token())
}

async fn post_json(fake: &FakeDiscord, path: &str, body: Value) -> (u16, Value) {
    let request = client().post(format!("{}{path}", fake.api_url()));
    send_json(request.header("authorization", auth(fake)).json(&body)).await
}

async fn get_json(fake: &FakeDiscord, path: &str) -> (u16, Value) {
    let request = client().get(format!("{}{path}", fake.api_url()));
    send_json(request.header("authorization", auth(fake))).await
}

/// Opens (or finds again) the DM channel with `recipient`.
async fn open_dm(fake: &FakeDiscord, recipient: &str) -> (u16, Value) {
    let body = json!({"recipient_id": recipient});
    post_json(fake, "/users/@me/channels", body).await
}

/// Discord's 400 `Invalid Form Body` with one error on `field`.
fn invalid_form(field: &str, code: &str, message: &str) -> Value {
    json!({
        "message": "Invalid Form Body",
        "code": 50035,
        "errors": {field: {"_errors": [{"code": code, "message": message}]}},
    })
}

fn bot_user(fake: &FakeDiscord) -> Value {
    json!({
        "id": fake.bot_id(), "username": "pincer-test", "discriminator": "0",
        "global_name": null, "avatar": null, "bot": true,
    })
}

#[tokio::test]
async fn hello_identify_ready() {
    let fake = FakeDiscord::start().await;
    assert_eq!(fake.token(), "discord-test-token");
    let mut gateway = Gateway::connect(&fake).await;
    assert_eq!(
        gateway.recv().await,
        json!({"op": 10, "d": {"heartbeat_interval": 41_250}, "s": null, "t": null})
    );
    let ready = gateway.ready(&fake).await;
    let session_id = fake.session_id().unwrap();
    assert_eq!(session_id.len(), 32);
    assert_eq!(
        ready,
        json!({"op": 0, "t": "READY", "s": 1, "d": {
            "v": 10,
            "user": bot_user(&fake),
            "session_id": session_id,
            "resume_gateway_url": fake.gateway_url(),
            "guilds": [],
            "private_channels": [],
            "application": {"id": fake.bot_id(), "flags": 0},
        }})
    );
    let identifies = fake.wait_for_identify(1, WAIT).await;
    assert_eq!(identifies[0].token, "discord-test-token");
    assert_eq!(identifies[0].intents, Some(37_377));
    assert_eq!(identifies[0].properties["browser"], "pincer");
    assert!(fake.is_connected());
    // A second Identify on the same connection is refused.
    gateway.identify(&fake.token()).await;
    assert_eq!(gateway.end().await, End::Closed(4005));
}

#[tokio::test]
async fn heartbeats_are_acked_and_required() {
    let fake = FakeDiscord::start_with(FakeDiscordConfig::default().heartbeat_interval(300)).await;
    let mut gateway = Gateway::connect(&fake).await;
    assert_eq!(gateway.recv().await["d"]["heartbeat_interval"], 300);
    gateway.send(json!({"op": 1, "d": null})).await;
    assert_eq!(
        gateway.recv().await,
        json!({"op": 11, "d": null, "s": null, "t": null})
    );
    gateway.ready(&fake).await;
    gateway.send(json!({"op": 1, "d": 1})).await;
    assert_eq!(gateway.recv().await["op"], 11);
    assert_eq!(fake.heartbeats(), [None, Some(1)]);
    assert!(fake.request_heartbeat());
    assert_eq!(
        gateway.recv().await,
        json!({"op": 1, "d": null, "s": null, "t": null})
    );
    // No heartbeat for twice the interval: the fake closes with 4009.
    let started = Instant::now();
    assert_eq!(gateway.end().await, End::Closed(4009));
    assert!(started.elapsed() < Duration::from_secs(3));
}

#[tokio::test]
async fn wrong_token_closes_with_4004() {
    let fake = FakeDiscord::start().await;
    let mut gateway = Gateway::hello(&fake).await;
    gateway.identify("wrong").await;
    assert_eq!(gateway.end().await, End::Closed(4004));
    assert_eq!(fake.identifies()[0].token, "wrong");
    assert_eq!(fake.session_id(), None);
    // Other refusals: invalid JSON, unknown opcode, presence before identifying, v=9.
    for (payload, code) in [
        ("{nope".to_owned(), 4002),
        (json!({"op": 42, "d": null}).to_string(), 4001),
        (json!({"op": 3, "d": {}}).to_string(), 4003),
    ] {
        let mut gateway = Gateway::hello(&fake).await;
        gateway.ws.send(Message::text(payload)).await.unwrap();
        assert_eq!(gateway.end().await, End::Closed(code));
    }
    let url = fake.gateway_url() + "?v=9&encoding=json";
    let (mut ws, _) = tokio_tungstenite::connect_async(url).await.unwrap();
    let frame = ws.next().await.unwrap().unwrap();
    assert!(matches!(frame, Message::Close(Some(f)) if u16::from(f.code) == 4012));
}

#[tokio::test]
async fn injected_messages_arrive_with_sequence_numbers() {
    let fake = FakeDiscord::start().await;
    // Injected before any session: delivered right after READY.
    let early = fake.inject_message(InjectDiscordMessage::dm("500", "1001", "early"));
    assert_eq!(early.seq, None);
    let mut gateway = Gateway::hello(&fake).await;
    gateway.ready(&fake).await;
    let first = gateway.recv().await;
    assert_eq!(first["s"], 2);
    assert_eq!(first["d"]["content"], "early");
    assert_eq!(first["d"]["id"], early.message_id);

    let injected = fake.inject_message(
        InjectDiscordMessage::guild("900", "600", "1002", "what's up?")
            .username("alice")
            .mentioning_bot()
            .message_id("777"),
    );
    assert_eq!(
        injected,
        Injected {
            message_id: "777".to_owned(),
            seq: Some(3)
        }
    );
    let event = gateway.recv().await;
    let timestamp = event["d"]["timestamp"].as_str().unwrap().to_owned();
    assert!(timestamp.ends_with("+00:00"), "{timestamp}");
    let bot = fake.bot_id();
    assert_eq!(
        event,
        json!({"op": 0, "t": "MESSAGE_CREATE", "s": 3, "d": {
            "id": "777",
            "type": 0,
            "channel_id": "600",
            "guild_id": "900",
            "author": {"id": "1002", "username": "alice", "discriminator": "0",
                       "global_name": null, "avatar": null, "bot": false},
            "member": {"roles": [], "joined_at": timestamp, "nick": null,
                       "deaf": false, "mute": false},
            "content": format!("<@{bot}> what's up?"),
            "timestamp": timestamp,
            "edited_timestamp": null,
            "tts": false,
            "mention_everyone": false,
            "mentions": [bot_user(&fake)],
            "mention_roles": [],
            "attachments": [],
            "embeds": [],
            "pinned": false,
            "flags": 0,
        }})
    );
    // A reply to it, and a redelivery (same data, next sequence number).
    let reply = fake
        .inject_message(InjectDiscordMessage::guild("900", "600", "1003", "+1").reply_to("777"));
    let reply_event = gateway.recv().await;
    assert_eq!(reply_event["s"], 4);
    assert_eq!(reply_event["d"]["type"], 19);
    assert_eq!(
        reply_event["d"]["message_reference"],
        json!({"type": 0, "message_id": "777", "channel_id": "600", "guild_id": "900"})
    );
    assert_eq!(
        reply_event["d"]["referenced_message"]["author"]["username"],
        "alice"
    );
    assert_eq!(fake.redeliver(&reply.message_id), Some(Some(5)));
    let again = gateway.recv().await;
    assert_eq!(again["s"], 5);
    assert_eq!(again["d"], reply_event["d"]);
    assert_eq!(fake.redeliver("123"), None);
    // Raw dispatches.
    assert_eq!(
        fake.inject_dispatch("GUILD_CREATE", json!({"id": "900"})),
        Some(6)
    );
    assert_eq!(gateway.recv().await["t"], "GUILD_CREATE");
}

#[tokio::test]
async fn dropped_connection_then_resume_replays_missed_dispatches() {
    let fake = FakeDiscord::start().await;
    let mut gateway = Gateway::hello(&fake).await;
    let ready = gateway.ready(&fake).await;
    let session_id = ready["d"]["session_id"].as_str().unwrap().to_owned();
    fake.inject_message(InjectDiscordMessage::dm("500", "1001", "one"));
    assert_eq!(gateway.recv().await["s"], 2);

    assert_eq!(fake.drop_connection(), 1);
    assert_eq!(gateway.end().await, End::Dropped);
    assert!(!fake.is_connected());
    let missed = fake.inject_message(InjectDiscordMessage::dm("500", "1001", "two"));
    assert_eq!(missed.seq, Some(3));

    let mut gateway = Gateway::hello(&fake).await;
    gateway.resume(&fake, &session_id, 2).await;
    let replayed = gateway.recv().await;
    assert_eq!(replayed["t"], "MESSAGE_CREATE");
    assert_eq!(replayed["s"], 3);
    assert_eq!(replayed["d"]["content"], "two");
    assert_eq!(
        gateway.recv().await,
        json!({"op": 0, "t": "RESUMED", "s": 4, "d": {}})
    );
    assert_eq!(
        fake.wait_for_resume(1, WAIT).await,
        [RecordedResume {
            token: fake.token(),
            session_id: session_id.clone(),
            seq: Some(2),
            accepted: true,
        }]
    );
    assert!(fake.is_connected());

    // Resuming from an older seq replays everything after it.
    fake.drop_connection();
    let mut gateway = Gateway::hello(&fake).await;
    gateway.resume(&fake, &session_id, 1).await;
    let seqs: Vec<Value> = [
        gateway.recv().await,
        gateway.recv().await,
        gateway.recv().await,
    ]
    .iter()
    .map(|event| json!([event["t"], event["s"]]))
    .collect();
    assert_eq!(
        seqs,
        [
            json!(["MESSAGE_CREATE", 2]),
            json!(["MESSAGE_CREATE", 3]),
            json!(["RESUMED", 5])
        ]
    );
    assert_eq!(fake.connection_count(), 3);
}

#[tokio::test]
async fn unresumable_sessions_get_invalid_session() {
    let fake = FakeDiscord::start().await;
    let mut gateway = Gateway::hello(&fake).await;
    gateway.resume(&fake, "no-such-session", 5).await;
    assert_eq!(
        gateway.recv().await,
        json!({"op": 9, "d": false, "s": null, "t": null})
    );
    assert!(!fake.resumes()[0].accepted);
    // The client identifies again on the same connection.
    let ready = gateway.ready(&fake).await;
    let session_id = ready["d"]["session_id"].as_str().unwrap().to_owned();

    // op 7: the client reconnects and resumes.
    assert!(fake.send_reconnect());
    assert_eq!(
        gateway.recv().await,
        json!({"op": 7, "d": null, "s": null, "t": null})
    );
    gateway.close(4000).await;
    let mut gateway = Gateway::hello(&fake).await;
    gateway.resume(&fake, &session_id, 1).await;
    assert_eq!(gateway.recv().await["t"], "RESUMED");

    // op 9 from the fake: the session is over; messages meanwhile go to the next one.
    assert!(fake.invalidate_session());
    assert_eq!(gateway.recv().await["op"], 9);
    fake.inject_message(InjectDiscordMessage::dm("500", "1001", "meanwhile"));
    gateway.resume(&fake, &session_id, 2).await;
    assert_eq!(gateway.recv().await["op"], 9);
    let ready = gateway.ready(&fake).await;
    assert_ne!(ready["d"]["session_id"], session_id.as_str());
    let carried = gateway.recv().await;
    assert_eq!(
        (carried["s"].clone(), carried["d"]["content"].clone()),
        (json!(2), json!("meanwhile"))
    );

    // A client close with 1000 ends the session too.
    let session_id = fake.session_id().unwrap();
    gateway.close(1000).await;
    let mut gateway = Gateway::hello(&fake).await;
    gateway.resume(&fake, &session_id, 2).await;
    assert_eq!(gateway.recv().await["op"], 9);
}

#[tokio::test]
async fn rest_gateway_bot_me_and_auth() {
    let fake = FakeDiscord::start().await;
    let (status, body) = get_json(&fake, "/gateway/bot").await;
    assert_eq!(status, 200);
    assert_eq!(
        body,
        json!({"url": fake.gateway_url(), "shards": 1, "session_start_limit": {
            "total": 1000, "remaining": 999, "reset_after": 0, "max_concurrency": 1,
        }})
    );
    assert!(fake.gateway_url().starts_with("ws://127.0.0.1:"));
    assert_eq!(get_json(&fake, "/users/@me").await, (200, bot_user(&fake)));
    for header in [None, Some("Bot wrong"), Some("discord-test-token")] {
        let mut request = client().get(format!("{}/users/@me", fake.api_url()));
        if let Some(header) = header {
            request = request.header("authorization", header);
        }
        let response = request.send().await.unwrap();
        assert_eq!(response.status(), 401);
        assert_eq!(
            response.json::<Value>().await.unwrap(),
            json!({"message": "401: Unauthorized", "code": 0})
        );
    }
    assert_eq!(
        get_json(&fake, "/nope").await,
        (404, json!({"message": "404: Not Found", "code": 0}))
    );
    assert_eq!(
        fake.calls(),
        ["GET /gateway/bot", "GET /users/@me", "GET /nope"]
    );
}

#[tokio::test]
async fn rest_messages_typing_and_dm_channels() {
    let fake = FakeDiscord::start().await;
    let (status, message) = post_json(
        &fake,
        "/channels/600/messages",
        json!({"content": "hello", "allowed_mentions": {"parse": []}}),
    )
    .await;
    assert_eq!(status, 200, "{message}");
    let id = message["id"].as_str().unwrap().to_owned();
    assert_eq!(message["channel_id"], "600");
    assert_eq!(message["content"], "hello");
    assert_eq!(message["author"], bot_user(&fake));
    assert_eq!(message["type"], 0);
    assert!(message["timestamp"].as_str().unwrap().contains('T'));

    // A reply to the bot's own message, then one to an unknown message.
    let (status, reply) = post_json(
        &fake,
        "/channels/600/messages",
        json!({"content": "again", "message_reference": {"message_id": id}}),
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(reply["referenced_message"]["id"], id.as_str());
    assert_eq!(
        post_json(
            &fake,
            "/channels/600/messages",
            json!({"content": "x", "message_reference": {"message_id": "1"}})
        )
        .await,
        (
            400,
            invalid_form(
                "message_reference",
                "MESSAGE_REFERENCE_UNKNOWN_MESSAGE",
                "Unknown message"
            )
        )
    );
    assert_eq!(
        post_json(
            &fake,
            "/channels/600/messages",
            json!({"content": "x".repeat(2001)})
        )
        .await,
        (
            400,
            invalid_form(
                "content",
                "BASE_TYPE_MAX_LENGTH",
                "Must be 2000 or fewer in length."
            )
        )
    );
    assert_eq!(
        post_json(
            &fake,
            "/channels/600/messages",
            json!({"content": "ü".repeat(2000)})
        )
        .await
        .0,
        200
    );
    assert_eq!(
        post_json(&fake, "/channels/600/messages", json!({"content": ""})).await,
        (
            400,
            json!({"message": "Cannot send an empty message", "code": 50006})
        )
    );
    let sent = fake.wait_for_messages(3, WAIT).await;
    assert_eq!(sent.len(), 3);
    assert_eq!(sent[0].id, id);
    assert_eq!(sent[0].content, "hello");
    assert_eq!(sent[0].allowed_mentions, Some(json!({"parse": []})));
    assert_eq!(sent[1].message_reference.as_deref(), Some(id.as_str()));

    // Typing.
    let response = client()
        .post(format!("{}/channels/600/typing", fake.api_url()))
        .header("authorization", auth(&fake))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 204);
    assert_eq!(fake.wait_for_typing(1, WAIT).await, ["600"]);

    // DM channels: one stable id per recipient.
    let (status, channel) = open_dm(&fake, "1001").await;
    assert_eq!(status, 200);
    let channel_id = channel["id"].as_str().unwrap().to_owned();
    assert_eq!(
        channel,
        json!({"id": channel_id, "type": 1, "last_message_id": null, "flags": 0, "recipients": [
            {"id": "1001", "username": "user1001", "discriminator": "0",
             "global_name": null, "avatar": null, "bot": false}]})
    );
    let again = open_dm(&fake, "1001").await.1;
    assert_eq!(again["id"], channel_id.as_str());
    let other = open_dm(&fake, "1002").await.1;
    assert_ne!(other["id"], channel_id.as_str());
}

#[tokio::test]
async fn rest_rate_limits_and_failures() {
    let fake = FakeDiscord::start().await;
    fake.fail_next("POST /channels/{channel_id}/messages", 429, 1.5);
    fake.fail_next("/channels/*/messages", 502, 0.0);
    let response = client()
        .post(format!("{}/channels/600/messages", fake.api_url()))
        .header("authorization", auth(&fake))
        .json(&json!({"content": "hi"}))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 429);
    let headers = response.headers().clone();
    assert_eq!(headers["retry-after"], "2");
    assert_eq!(headers["x-ratelimit-remaining"], "0");
    assert_eq!(headers["x-ratelimit-reset-after"], "1.500");
    assert_eq!(headers["x-ratelimit-scope"], "user");
    assert!(headers.contains_key("x-ratelimit-bucket"));
    assert_eq!(
        response.json::<Value>().await.unwrap(),
        json!({"message": "You are being rate limited.", "retry_after": 1.5, "global": false})
    );
    assert_eq!(
        post_json(&fake, "/channels/600/messages", json!({"content": "hi"})).await,
        (502, json!({"message": "502: Bad Gateway", "code": 0}))
    );
    // Typing did not match; the queue is now empty.
    fake.fail_next_global("POST /channels/{id}/typing", 0.25);
    let (status, body) = post_json(&fake, "/channels/600/typing", json!({})).await;
    assert_eq!((status, body["global"].clone()), (429, json!(true)));
    assert_eq!(
        post_json(&fake, "/channels/600/messages", json!({"content": "hi"}))
            .await
            .0,
        200
    );
    assert_eq!(fake.sent_messages().len(), 1);
}

#[tokio::test]
async fn multipart_uploads_and_attachments() {
    let fake = FakeDiscord::start().await;
    let boundary = "pincerboundary";
    let mut body = Vec::new();
    body.extend_from_slice(
        format!(
            "--{boundary}\r\nContent-Disposition: form-data; name=\"payload_json\"\r\n\
Content-Type: application/json\r\n\r\n{}\r\n",
            json!({"content": "see file", "attachments": [{"id": 0, "filename": "notes.txt"}]})
        )
        .as_bytes(),
    );
    body.extend_from_slice(
        format!(
            "--{boundary}\r\nContent-Disposition: form-data; name=\"files[0]\"; \
filename=\"notes.txt\"\r\nContent-Type: text/plain\r\n\r\n"
        )
        .as_bytes(),
    );
    body.extend_from_slice(b"line 1\r\nline 2\x00\xff");
    body.extend_from_slice(format!("\r\n--{boundary}--\r\n").as_bytes());
    let response = client()
        .post(format!("{}/channels/600/messages", fake.api_url()))
        .header("authorization", auth(&fake))
        .header(
            "content-type",
            format!("multipart/form-data; boundary={boundary}"),
        )
        .body(body)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let message: Value = response.json().await.unwrap();
    assert_eq!(message["content"], "see file");
    let attachment = &message["attachments"][0];
    assert_eq!(attachment["filename"], "notes.txt");
    assert_eq!(attachment["size"], 16);
    let sent = fake.wait_for_messages(1, WAIT).await;
    assert_eq!(sent[0].content, "see file");
    assert_eq!(sent[0].files.len(), 1);
    assert_eq!(sent[0].files[0].field, "files[0]");
    assert_eq!(sent[0].files[0].filename, "notes.txt");
    assert_eq!(sent[0].files[0].content_type.as_deref(), Some("text/plain"));
    assert_eq!(sent[0].files[0].bytes, b"line 1\r\nline 2\x00\xff");
    // The upload is served back at its url.
    let url = attachment["url"].as_str().unwrap();
    let bytes = client()
        .get(url)
        .send()
        .await
        .unwrap()
        .bytes()
        .await
        .unwrap();
    assert_eq!(&bytes[..], b"line 1\r\nline 2\x00\xff");

    // An injected message with an attachment.
    let mut gateway = Gateway::hello(&fake).await;
    gateway.ready(&fake).await;
    fake.inject_message(
        InjectDiscordMessage::dm("500", "1001", "")
            .attachment(InjectAttachment::new("cat.png", b"PNGDATA".to_vec())),
    );
    let event = gateway.recv().await;
    let attachment = &event["d"]["attachments"][0];
    assert_eq!(attachment["filename"], "cat.png");
    assert_eq!(attachment["content_type"], "image/png");
    assert_eq!(attachment["size"], 7);
    let url = attachment["url"].as_str().unwrap();
    assert!(url.starts_with(&fake.base_url()));
    let response = client().get(url).send().await.unwrap();
    assert_eq!(response.headers()["content-type"], "image/png");
    assert_eq!(&response.bytes().await.unwrap()[..], b"PNGDATA");
}

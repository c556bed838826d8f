//! The fake Feishu, driven over a real long connection (tokio-tungstenite with this
//! file's own protobuf frame codec), real HTTP (reqwest) and a real callback receiver.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::common::{client, send_json};
use axum::http::HeaderMap;
use futures_util::{SinkExt, StreamExt};
use pincer_fakes::fake_feishu::{
    FakeFeishu, FakeFeishuConfig, InjectFeishuMessage, UploadKind, decrypt,
};
use prost::Message as _;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

const WAIT: Duration = Duration::from_secs(5);

#[derive(Clone, PartialEq, prost::Message)]
struct Header {
    #[prost(string, required, tag = "1")]
    key: String,
    #[prost(string, required, tag = "2")]
    value: String,
}

#[derive(Clone, PartialEq, prost::Message)]
struct Frame {
    #[prost(uint64, required, tag = "1")]
    seq_id: u64,
    #[prost(uint64, required, tag = "2")]
    log_id: u64,
    #[prost(int32, required, tag = "3")]
    service: i32,
    #[prost(int32, required, tag = "4")]
    method: i32,
    #[prost(message, repeated, tag = "5")]
    headers: Vec<Header>,
    #[prost(string, optional, tag = "6")]
    payload_encoding: Option<String>,
    #[prost(string, optional, tag = "7")]
    payload_type: Option<String>,
    #[prost(bytes = "vec", optional, tag = "8")]
    payload: Option<Vec<u8>>,
    #[prost(string, optional, tag = "9")]
    log_id_new: Option<String>,
}

impl Frame {
    fn header(&self, key: &str) -> &str {
        self.headers
            .iter()
            .find(|h| h.key == key)
            .map_or("", |h| h.value.as_str())
    }

    fn json(&self) -> Value {
        serde_json::from_slice(self.payload.as_deref().unwrap_or_default()).unwrap()
    }
}

async fn post(fake: &FakeFeishu, path: &str, token: Option<&str>, body: Value) -> (u16, Value) {
    let mut request = client()
        .post(format!("{}{path}", fake.base_url()))
        .json(&body);
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    send_json(request).await
}

/// [`post`], answered with Feishu's success: HTTP 200 and `code` 0; the body.
async fn post_ok(fake: &FakeFeishu, path: &str, token: Option<&str>, body: Value) -> Value {
    ok(post(fake, path, token, body).await)
}

/// The body of an answer that is Feishu's success: HTTP 200 and `code` 0.
fn ok((status, body): (u16, Value)) -> Value {
    assert_eq!((status, body["code"].as_i64()), (200, Some(0)), "{body}");
    body
}

/// Asks for a tenant access token with this app id and secret; the status and body.
async fn ask_token(fake: &FakeFeishu, app_id: &str, secret: &str) -> (u16, Value) {
    let path = "/open-apis/auth/v3/tenant_access_token/internal";
    let credentials = json!({"app_id": app_id, "app_secret": secret});
    post(fake, path, None, credentials).await
}

/// Asks for the long connection's endpoint with this app id and secret; the status and body.
async fn ask_endpoint(fake: &FakeFeishu, app_id: &str, secret: &str) -> (u16, Value) {
    let credentials = json!({"AppID": app_id, "AppSecret": secret});
    post(fake, "/callback/ws/endpoint", None, credentials).await
}

async fn token(fake: &FakeFeishu) -> String {
    let body = ok(ask_token(fake, &fake.app_id(), &fake.app_secret()).await);
    assert_eq!(body["expire"], 7200);
    body["tenant_access_token"].as_str().unwrap().to_owned()
}

struct Conn {
    ws: WebSocketStream<MaybeTlsStream<TcpStream>>,
    service: i32,
}

impl Conn {
    /// An endpoint call, then the WebSocket.
    async fn open(fake: &FakeFeishu) -> (Self, String) {
        let body = ok(ask_endpoint(fake, &fake.app_id(), &fake.app_secret()).await);
        assert_eq!(body["data"]["ClientConfig"]["PingInterval"], 120);
        let url = body["data"]["URL"].as_str().unwrap().to_owned();
        assert!(url.starts_with("ws://127.0.0.1:"), "{url}");
        assert!(url.contains("service_id=33"), "{url}");
        let (ws, _) = tokio_tungstenite::connect_async(&url).await.unwrap();
        (Self { ws, service: 33 }, url)
    }

    async fn recv(&mut self) -> Frame {
        loop {
            match tokio::time::timeout(WAIT, self.ws.next())
                .await
                .expect("no frame in time")
            {
                Some(Ok(Message::Binary(bytes))) => return Frame::decode(&bytes[..]).unwrap(),
                Some(Ok(_)) => {}
                other => panic!("connection ended: {other:?}"),
            }
        }
    }

    /// `true` when no frame comes within `wait`.
    async fn quiet(&mut self, wait: Duration) -> bool {
        tokio::time::timeout(wait, self.ws.next()).await.is_err()
    }

    async fn send(&mut self, frame: &Frame) {
        self.ws
            .send(Message::binary(frame.encode_to_vec()))
            .await
            .unwrap();
    }

    async fn ping(&mut self) {
        let ping = Frame {
            seq_id: 0,
            log_id: 0,
            service: self.service,
            method: 0,
            headers: vec![Header {
                key: "type".into(),
                value: "ping".into(),
            }],
            ..Frame::default()
        };
        self.send(&ping).await;
    }

    async fn ack(&mut self, frame: &Frame) {
        let mut ack = frame.clone();
        ack.headers.push(Header {
            key: "biz_rt".into(),
            value: "3".into(),
        });
        ack.payload = Some(br#"{"code":200,"headers":{},"data":null}"#.to_vec());
        self.send(&ack).await;
    }
}

#[tokio::test]
async fn tokens_bot_info_and_auth_errors() {
    let fake = FakeFeishu::start().await;
    assert_eq!(
        ask_token(&fake, &fake.app_id(), "x").await,
        (200, json!({"code": 10014, "msg": "app secret invalid"}))
    );
    let (_, body) = ask_token(&fake, "cli_other", "x").await;
    assert_eq!(body["code"], 10003);
    let token = token(&fake).await;
    assert!(token.starts_with("t-"), "{token}");

    let info = |token: Option<String>| {
        let fake = fake.clone();
        async move {
            let mut request = client().get(format!("{}/open-apis/bot/v3/info", fake.base_url()));
            if let Some(token) = token {
                request = request.bearer_auth(token);
            }
            let response = request.send().await.unwrap();
            (
                response.status().as_u16(),
                response.json::<Value>().await.unwrap(),
            )
        }
    };
    let (status, body) = info(Some(token.clone())).await;
    assert_eq!(status, 200);
    assert_eq!(body["bot"]["open_id"], fake.bot_open_id());
    assert_eq!(info(None).await.1["code"], 99_991_661);
    assert_eq!(info(Some("t-wrong".into())).await.1["code"], 99_991_663);
    fake.expire_tokens();
    assert_eq!(
        info(Some(token)).await,
        (
            400,
            json!({"code": 99_991_663, "msg": "Invalid access token for authorization."})
        )
    );
    let fresh = self::token(&fake).await;
    assert_eq!(info(Some(fresh)).await.0, 200);
    let requests = fake.tenant_token_requests();
    assert_eq!(requests.len(), 4);
    assert_eq!(requests.iter().filter(|r| r.token.is_some()).count(), 2);

    fake.fail_next_rate_limited("GET /open-apis/bot/v3/info", 7);
    let response = client()
        .get(format!("{}/open-apis/bot/v3/info", fake.base_url()))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status().as_u16(), 429);
    assert_eq!(response.headers()["x-ogw-ratelimit-reset"], "7");
    assert_eq!(response.json::<Value>().await.unwrap()["code"], 99_991_400);
}

#[tokio::test]
async fn endpoint_ping_event_and_ack() {
    let fake = FakeFeishu::start().await;
    let (_, body) = ask_endpoint(&fake, &fake.app_id(), "no").await;
    assert_eq!(body["code"], 514);
    let (mut conn, url) = Conn::open(&fake).await;
    assert!(fake.wait_for_connected(WAIT).await);
    // The ticket is single use.
    assert!(tokio_tungstenite::connect_async(&url).await.is_err());

    conn.ping().await;
    let pong = conn.recv().await;
    assert_eq!(
        (pong.method, pong.service, pong.header("type")),
        (0, 33, "pong")
    );
    assert_eq!(pong.json()["PingInterval"], 120);
    assert_eq!(fake.pings().len(), 1);

    let id = fake.inject_message(InjectFeishuMessage::dm("ou_u1", "hello"));
    let frame = conn.recv().await;
    assert_eq!((frame.method, frame.service), (1, 33));
    assert_eq!(
        (
            frame.header("type"),
            frame.header("sum"),
            frame.header("seq")
        ),
        ("event", "1", "0")
    );
    assert!(!frame.header("message_id").is_empty());
    let event = frame.json();
    assert_eq!(event["header"]["event_type"], "im.message.receive_v1");
    let message = &event["event"]["message"];
    assert_eq!(message["message_id"], id.as_str());
    assert_eq!(message["chat_type"], "p2p");
    assert_eq!(message["message_type"], "text");
    assert_eq!(message["content"], r#"{"text":"hello"}"#);
    assert_eq!(event["event"]["sender"]["sender_id"]["open_id"], "ou_u1");
    assert_eq!(fake.unacked(), vec![id.clone()]);
    conn.ack(&frame).await;
    let acks = fake.wait_for_acks(1, WAIT).await;
    assert_eq!(acks[0].message_id.as_deref(), Some(id.as_str()));
    assert_eq!(
        (acks[0].code, acks[0].biz_rt.as_deref()),
        (Some(200), Some("3"))
    );
    assert!(fake.unacked().is_empty());
    // Only the reused ticket was a protocol error.
    let errors = fake.protocol_errors();
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(errors[0].contains("used ticket"), "{errors:?}");
}

#[tokio::test]
async fn unacked_events_come_again_on_the_next_connection() {
    let fake = FakeFeishu::start().await;
    let early = fake.inject_message(InjectFeishuMessage::dm("ou_u1", "before any connection"));
    let (mut first, _) = Conn::open(&fake).await;
    assert_eq!(
        first.recv().await.json()["event"]["message"]["message_id"],
        early.as_str()
    );
    let second_id = fake.inject_message(InjectFeishuMessage::dm("ou_u1", "second"));
    let second = first.recv().await;
    first.ack(&second).await;
    fake.wait_for_acks(1, WAIT).await;
    assert_eq!(fake.drop_connection(), 1);
    assert!(
        first
            .ws
            .next()
            .await
            .is_none_or(|end| end.is_err() || matches!(end, Ok(Message::Close(_))))
    );

    let (mut again, _) = Conn::open(&fake).await;
    let frame = again.recv().await;
    assert_eq!(
        frame.json()["event"]["message"]["message_id"],
        early.as_str()
    );
    assert!(
        again.quiet(Duration::from_millis(300)).await,
        "{second_id} was acked"
    );
    again.ack(&frame).await;
    fake.wait_for_acks(2, WAIT).await;

    // A redelivery is a new frame with the same event.
    assert!(fake.redeliver(&second_id));
    let redelivered = again.recv().await;
    assert_ne!(
        redelivered.header("message_id"),
        second.header("message_id")
    );
    assert_eq!(redelivered.json(), second.json());
    assert_eq!(fake.connection_count(), 2);
}

#[tokio::test]
async fn split_events_silence_and_raw_frames() {
    let fake = FakeFeishu::start().await;
    let (mut conn, _) = Conn::open(&fake).await;
    let id = fake
        .inject_message(InjectFeishuMessage::group("oc_g1", "ou_u1", "a long one").split_into(3));
    let mut payload = Vec::new();
    let mut frames = Vec::new();
    for seq in 0..3 {
        let frame = conn.recv().await;
        assert_eq!(
            (frame.header("sum"), frame.header("seq")),
            ("3", seq.to_string().as_str())
        );
        payload.extend(frame.payload.clone().unwrap());
        frames.push(frame);
    }
    assert!(
        frames
            .iter()
            .all(|f| f.header("message_id") == frames[0].header("message_id"))
    );
    let event: Value = serde_json::from_slice(&payload).unwrap();
    assert_eq!(event["event"]["message"]["message_id"], id.as_str());
    conn.ack(&frames[2]).await;
    fake.wait_for_acks(1, WAIT).await;
    assert!(fake.unacked().is_empty());

    assert_eq!(fake.go_silent(), 1);
    assert!(!fake.is_connected());
    conn.ping().await;
    let quiet = fake.inject_message(InjectFeishuMessage::dm("ou_u1", "while silent"));
    assert!(conn.quiet(Duration::from_millis(300)).await);
    assert!(!fake.pings()[0].answered);
    let (mut next, _) = Conn::open(&fake).await;
    assert_eq!(
        next.recv().await.json()["event"]["message"]["message_id"],
        quiet.as_str()
    );

    let card = fake.inject_raw("card", &json!({"action": {}}));
    let frame = next.recv().await;
    assert_eq!(
        (frame.header("type"), frame.header("message_id")),
        ("card", card.as_str())
    );
    next.ws.send(Message::text("hi")).await.unwrap();
    let errors = fake.protocol_errors();
    let errors = if errors.is_empty() {
        tokio::time::sleep(Duration::from_millis(200)).await;
        fake.protocol_errors()
    } else {
        errors
    };
    assert_eq!(errors.len(), 1, "{errors:?}");
}

#[tokio::test]
async fn mentions_threads_posts_and_resources() {
    let fake = FakeFeishu::start().await;
    let (mut conn, _) = Conn::open(&fake).await;
    let id = fake.inject_message(
        InjectFeishuMessage::group("oc_g1", "ou_u1", "hi @_user_2")
            .mentioning_bot()
            .mention("ou_u2", "Bob")
            .thread("omt_1"),
    );
    let message = conn.recv().await.json()["event"]["message"].clone();
    assert_eq!(message["content"], r#"{"text":"@_user_1 hi @_user_2"}"#);
    assert_eq!(message["thread_id"], "omt_1");
    assert_eq!(message["mentions"][0]["id"]["open_id"], fake.bot_open_id());
    assert_eq!(message["mentions"][1]["key"], "@_user_2");
    assert_eq!(message["mentions"][1]["name"], "Bob");
    assert_eq!(message["message_id"], id.as_str());

    let image_id = fake.inject_message(InjectFeishuMessage::dm("ou_u1", "").image(&b"PNGDATA"[..]));
    let message = conn.recv().await.json()["event"]["message"].clone();
    assert_eq!(message["message_type"], "image");
    let content: Value = serde_json::from_str(message["content"].as_str().unwrap()).unwrap();
    let key = content["image_key"].as_str().unwrap();
    let token = token(&fake).await;
    let get = |url: String| {
        let token = token.clone();
        async move {
            let response = client().get(url).bearer_auth(token).send().await.unwrap();
            (
                response.status().as_u16(),
                response.bytes().await.unwrap().to_vec(),
            )
        }
    };
    let base = format!(
        "{}/open-apis/im/v1/messages/{image_id}/resources/{key}",
        fake.base_url()
    );
    assert_eq!(
        get(format!("{base}?type=image")).await,
        (200, b"PNGDATA".to_vec())
    );
    assert_eq!(get(format!("{base}?type=file")).await.0, 400);

    fake.inject_message(
        InjectFeishuMessage::dm("ou_u1", "look")
            .image(&b"X"[..])
            .post_locale("zh_cn"),
    );
    let message = conn.recv().await.json()["event"]["message"].clone();
    assert_eq!(message["message_type"], "post");
    let content: Value = serde_json::from_str(message["content"].as_str().unwrap()).unwrap();
    assert_eq!(
        content["zh_cn"]["content"][0],
        json!([{"tag": "text", "text": "look"}])
    );
    assert_eq!(content["zh_cn"]["content"][1][0]["tag"], "img");

    let file_id = fake
        .inject_message(InjectFeishuMessage::dm("ou_u1", "ignored").file("a.pdf", &b"%PDF"[..]));
    let message = conn.recv().await.json()["event"]["message"].clone();
    let content: Value = serde_json::from_str(message["content"].as_str().unwrap()).unwrap();
    assert_eq!(
        (
            message["message_type"].as_str(),
            content["file_name"].as_str()
        ),
        (Some("file"), Some("a.pdf"))
    );
    let url = format!(
        "{}/open-apis/im/v1/messages/{file_id}/resources/{}?type=file",
        fake.base_url(),
        content["file_key"].as_str().unwrap()
    );
    assert_eq!(get(url).await, (200, b"%PDF".to_vec()));
}

/// A multipart upload to `/open-apis/im/v1/{what}`: `(name, file name, data)` parts.
async fn upload(
    fake: &FakeFeishu,
    token: &str,
    what: &str,
    parts: &[(&str, Option<&str>, &[u8])],
) -> Value {
    let mut body = Vec::new();
    for (name, file_name, data) in parts {
        body.extend(
            format!("--BOUNDARY\r\nContent-Disposition: form-data; name=\"{name}\"").bytes(),
        );
        if let Some(file_name) = file_name {
            body.extend(
                format!("; filename=\"{file_name}\"\r\nContent-Type: application/octet-stream")
                    .bytes(),
            );
        }
        body.extend(b"\r\n\r\n");
        body.extend(*data);
        body.extend(b"\r\n");
    }
    body.extend(b"--BOUNDARY--\r\n");
    let response = client()
        .post(format!("{}/open-apis/im/v1/{what}", fake.base_url()))
        .bearer_auth(token)
        .header("content-type", "multipart/form-data; boundary=BOUNDARY")
        .body(body)
        .send()
        .await
        .unwrap();
    response.json().await.unwrap()
}

fn card(text: &str) -> String {
    json!({"schema": "2.0", "config": {"wide_screen_mode": true},
        "body": {"elements": [{"tag": "markdown", "content": text}]}})
    .to_string()
}

#[tokio::test]
async fn sending_replies_and_uploads() {
    let fake = FakeFeishu::start().await;
    let token = token(&fake).await;
    let send = "/open-apis/im/v1/messages?receive_id_type=open_id";
    let body = post_ok(
        &fake,
        send,
        Some(&token),
        json!({
            "receive_id": "ou_u1", "msg_type": "interactive", "content": card("**hi**"),
        }),
    )
    .await;
    let sent = fake.sent_messages();
    assert_eq!(sent[0].text(), "**hi**");
    assert_eq!(
        (sent[0].receive_id_type.as_deref(), sent[0].chat_id.as_str()),
        (Some("open_id"), "oc_dm_u1")
    );
    assert_eq!(
        sent[0].message_id,
        body["data"]["message_id"].as_str().unwrap()
    );

    let injected = fake.inject_message(InjectFeishuMessage::group("oc_g1", "ou_u1", "q"));
    post_ok(
        &fake,
        &format!("/open-apis/im/v1/messages/{injected}/reply"),
        Some(&token),
        json!({
            "msg_type": "text", "content": r#"{"text":"answer"}"#, "reply_in_thread": true,
        }),
    )
    .await;
    let reply = &fake.sent_messages()[1];
    assert_eq!(
        (
            reply.reply_to.as_deref(),
            reply.reply_in_thread,
            reply.chat_id.as_str()
        ),
        (Some(injected.as_str()), true, "oc_g1")
    );
    assert_eq!(reply.text(), "answer");

    let image_key = upload(
        &fake,
        &token,
        "images",
        &[
            ("image_type", None, b"message"),
            ("image", Some("a.png"), b"PNG"),
        ],
    )
    .await;
    let image_key = image_key["data"]["image_key"].as_str().unwrap().to_owned();
    let file_key = upload(
        &fake,
        &token,
        "files",
        &[
            ("file_type", None, b"pdf"),
            ("file_name", None, b"r.pdf"),
            ("file", Some("r.pdf"), b"%PDF"),
        ],
    )
    .await;
    let file_key = file_key["data"]["file_key"].as_str().unwrap().to_owned();
    let chat = "/open-apis/im/v1/messages?receive_id_type=chat_id";
    let uploads = fake.uploads();
    let seen: Vec<_> = uploads
        .iter()
        .map(|u| {
            (
                u.kind,
                u.name.as_str(),
                u.type_field.as_str(),
                u.bytes.as_slice(),
            )
        })
        .collect();
    assert_eq!(
        seen,
        [
            (UploadKind::Image, "a.png", "message", &b"PNG"[..]),
            (UploadKind::File, "r.pdf", "pdf", &b"%PDF"[..]),
        ]
    );
    for (msg_type, content) in [
        ("image", json!({"image_key": image_key})),
        ("file", json!({"file_key": file_key})),
    ] {
        post_ok(
            &fake,
            chat,
            Some(&token),
            json!({
                "receive_id": "oc_g1", "msg_type": msg_type, "content": content.to_string(),
            }),
        )
        .await;
    }

    // Refused, and not recorded: content must be a JSON string, the id must fit its type,
    // a reply needs a message the fake knows and an image a key it gave out (not another).
    let text_x = r#"{"text":"x"}"#;
    let unknown_image = r#"{"image_key":"img_unknown"}"#;
    for (path, request, code) in [
        (
            send,
            json!({"receive_id": "ou_u1", "msg_type": "text", "content": {"text": "x"}}),
            99_992_402,
        ),
        (
            send,
            json!({"receive_id": "oc_g1", "msg_type": "text", "content": text_x}),
            230_001,
        ),
        (
            "/open-apis/im/v1/messages/om_nope/reply",
            json!({"msg_type": "text", "content": text_x}),
            230_011,
        ),
        (
            chat,
            json!({"receive_id": "oc_g1", "msg_type": "image", "content": unknown_image}),
            230_001,
        ),
    ] {
        let (status, body) = post(&fake, path, Some(&token), request.clone()).await;
        assert_eq!(
            (status, body["code"].as_i64()),
            (400, Some(code)),
            "{path} {request}"
        );
    }

    fake.fail_next("POST /open-apis/im/v1/messages", 503, 1);
    let (status, _) = post(&fake, chat, Some(&token), json!({})).await;
    assert_eq!(status, 503);
    assert_eq!(fake.sent_messages().len(), 4);
}

/// What a callback receiver got: headers and body.
type Received = Arc<Mutex<Vec<(HeaderMap, Vec<u8>)>>>;

async fn receiver() -> (String, Received) {
    let received: Received = Arc::default();
    let store = received.clone();
    let app = axum::Router::new().route(
        "/feishu/events",
        axum::routing::post(move |headers: HeaderMap, body: axum::body::Bytes| {
            let store = store.clone();
            async move {
                store.lock().unwrap().push((headers, body.to_vec()));
                axum::Json(json!({"challenge": "c1"}))
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/feishu/events", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await });
    (url, received)
}

async fn store_last(received: &Received) -> (HeaderMap, Vec<u8>) {
    received.lock().unwrap().last().cloned().unwrap()
}

#[tokio::test]
async fn callbacks_are_encrypted_and_signed() {
    let fake = FakeFeishu::start_with(FakeFeishuConfig::default().app_id("cli_x")).await;
    let (url, received) = receiver().await;
    let callbacks = fake.callback_client(&url, "vtok", Some("ekey"));
    let posted = callbacks
        .post_event(InjectFeishuMessage::dm("ou_u1", "hello"))
        .await;
    assert_eq!(
        (posted.status, posted.json()),
        (200, json!({"challenge": "c1"}))
    );
    let (headers, body) = received.lock().unwrap()[0].clone();
    let header = |name: &str| headers[name].to_str().unwrap().to_owned();
    let mut hasher = Sha256::new();
    hasher.update(format!(
        "{}{}ekey",
        header("x-lark-request-timestamp"),
        header("x-lark-request-nonce")
    ));
    hasher.update(&body);
    let expected: String = hasher
        .finalize()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    assert_eq!(header("x-lark-signature"), expected);
    let envelope: Value = serde_json::from_slice(&body).unwrap();
    let plain = decrypt("ekey", envelope["encrypt"].as_str().unwrap()).unwrap();
    let event: Value = serde_json::from_slice(&plain).unwrap();
    assert_eq!(event["header"]["token"], "vtok");
    assert_eq!(event["header"]["app_id"], "cli_x");
    assert_eq!(
        event["event"]["message"]["message_id"],
        posted.message_id.unwrap().as_str()
    );

    callbacks
        .post_with_bad_signature(InjectFeishuMessage::dm("ou_u1", "x"))
        .await;
    callbacks
        .post_replayed(
            InjectFeishuMessage::dm("ou_u1", "x"),
            Duration::from_secs(600),
        )
        .await;
    callbacks.post_url_verification_plain("c1").await;
    let posted = callbacks.post_raw("not json", &[("X-Custom", "1")]).await;
    assert_eq!(posted.status, 200);
    let received_all = received.clone();
    let received = received.lock().unwrap().clone();
    assert_ne!(
        received[1].0["x-lark-signature"],
        received[0].0["x-lark-signature"]
    );
    let replay_ts: u64 = received[2].0["x-lark-request-timestamp"]
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    let first_ts: u64 = received[0].0["x-lark-request-timestamp"]
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!(first_ts - replay_ts >= 599, "{first_ts} {replay_ts}");
    let challenge: Value = serde_json::from_slice(&received[3].1).unwrap();
    assert_eq!(
        challenge,
        json!({"challenge": "c1", "token": "vtok", "type": "url_verification"})
    );
    assert_eq!(
        (
            received[4].0["x-custom"].to_str().unwrap(),
            received[4].1.as_slice()
        ),
        ("1", &b"not json"[..])
    );

    // Without a key the body is the plaintext event.
    let plain = fake.callback_client(&url, "vtok", None);
    assert_eq!(plain.post_url_verification("c2").await.status, 200);
    let (_, body) = store_last(&received_all).await;
    assert_eq!(
        serde_json::from_slice::<Value>(&body).unwrap()["challenge"],
        "c2"
    );
}

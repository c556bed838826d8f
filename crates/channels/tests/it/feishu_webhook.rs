//! The Feishu adapter in event callback mode, posted to by `FakeFeishu`'s callback client
//! over real HTTP: URL verification (encrypted and plain), encrypted and signed events
//! handed to the gateway, and everything not from Feishu refused with the right status
//! (wrong token, bad or missing signature, replays, garbage); the listener closed when
//! the adapter stops; a listen address in use reported with the address.

use crate::feishu_common;

use std::net::SocketAddr;
use std::time::Duration;

use feishu_common::{Run, next, settings};
use pincer_channel_port::ChatKind;
use pincer_channel_port::{ChannelAdapter, ChannelError, InboundSink};
use pincer_channels::feishu::{FeishuAdapter, FeishuMode};
use pincer_fakes::fake_feishu::{FakeFeishu, InjectFeishuMessage};
use serde_json::json;

const PATH: &str = "/feishu/events";

fn free_addr() -> SocketAddr {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap()
}

fn webhook_adapter(
    feishu: &FakeFeishu,
    dir: &std::path::Path,
    listen: SocketAddr,
    encrypt_key: Option<&str>,
) -> FeishuAdapter {
    let mut settings = settings(feishu, dir);
    settings.mode = FeishuMode::Webhook {
        listen,
        path: PATH.into(),
    };
    settings.verification_token = Some("vtok".into());
    settings.encrypt_key = encrypt_key.map(Into::into);
    FeishuAdapter::new(settings, reqwest::Client::new())
}

/// Waits until the listener answers.
async fn wait_listening(addr: SocketAddr) {
    for _ in 0..100 {
        if tokio::net::TcpStream::connect(addr).await.is_ok() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("nothing listens on {addr}");
}

#[tokio::test]
async fn encrypted_signed_callbacks() {
    let feishu = FakeFeishu::start().await;
    let dir = tempfile::tempdir().unwrap();
    let addr = free_addr();
    let mut run = Run::start(webhook_adapter(&feishu, dir.path(), addr, Some("ekey")));
    wait_listening(addr).await;
    let url = format!("http://{addr}{PATH}");
    let client = feishu.callback_client(&url, "vtok", Some("ekey"));

    // The URL check, encrypted and plain: its challenge echoed.
    for (answer, challenge) in [
        (client.post_url_verification("c1").await, "c1"),
        (client.post_url_verification_plain("c2").await, "c2"),
    ] {
        assert_eq!(
            (answer.status, answer.json()),
            (200, json!({ "challenge": challenge }))
        );
    }

    let posted = client
        .post_event(InjectFeishuMessage::group("oc_g1", "ou_a", "hi there").mentioning_bot())
        .await;
    assert_eq!((posted.status, posted.json()), (200, json!({})));
    let inbound = next(&mut run.rx).await;
    assert_eq!(Some(inbound.message_id.clone()), posted.message_id);
    assert_eq!(
        (
            inbound.chat.kind,
            inbound.chat.id.as_str(),
            inbound.text.as_str()
        ),
        (ChatKind::Group, "oc_g1", "hi there")
    );
    assert!(inbound.mentioned);
    assert!(run.health.snapshot().connected);

    // Not from Feishu: 401, nothing handed over.
    let dm = || InjectFeishuMessage::dm("ou_user1", "sneaky");
    assert_eq!(client.post_with_bad_signature(dm()).await.status, 401);
    assert_eq!(client.post_unsigned(dm()).await.status, 401);
    assert_eq!(
        client
            .post_replayed(dm(), Duration::from_secs(600))
            .await
            .status,
        401
    );
    let stranger = feishu.callback_client(&url, "wrong-token", Some("ekey"));
    assert_eq!(stranger.post_event(dm()).await.status, 401);
    assert_eq!(stranger.post_url_verification("c3").await.status, 401);
    // Garbage: 400. Another path: 404.
    assert_eq!(client.post_raw(b"{".to_vec(), &[]).await.status, 400);
    assert_eq!(
        client
            .post_raw(br#"{"encrypt":"!!"}"#.to_vec(), &[])
            .await
            .status,
        400
    );
    let elsewhere = feishu.callback_client(format!("http://{addr}/other"), "vtok", Some("ekey"));
    assert_eq!(elsewhere.post_url_verification("c4").await.status, 404);
    assert!(run.rx.try_recv().is_err());

    // Unknown event types: 200 and ignored.
    let other = client
        .post_json(&json!({"schema":"2.0","header":{"event_id":"e9","event_type":"im.chat.updated_v1","token":"vtok"},"event":{}}))
        .await;
    assert_eq!(other.status, 200);

    assert_eq!(run.stop().await, Vec::<String>::new());
    // The listener is gone with the adapter.
    let after = client.post_url_verification("c5").await;
    assert_eq!(after.status, 0, "{after:?}");
}

#[tokio::test]
async fn plain_callbacks_without_a_key() {
    let feishu = FakeFeishu::start().await;
    let dir = tempfile::tempdir().unwrap();
    let addr = free_addr();
    let mut run = Run::start(webhook_adapter(&feishu, dir.path(), addr, None));
    wait_listening(addr).await;
    let url = format!("http://{addr}{PATH}");
    let client = feishu.callback_client(&url, "vtok", None);
    let verified = client.post_url_verification("c1").await;
    assert_eq!(
        (verified.status, verified.json()),
        (200, json!({"challenge": "c1"}))
    );
    let posted = client
        .post_event(InjectFeishuMessage::dm("ou_user1", "hello").image(vec![1u8, 2, 3]))
        .await;
    assert_eq!(posted.status, 200);
    let inbound = next(&mut run.rx).await;
    assert_eq!(inbound.text, "hello");
    assert_eq!(inbound.media.len(), 1);
    assert_eq!(std::fs::read(&inbound.media[0].path).unwrap(), [1, 2, 3]);
    // An encrypted body with no key to read it.
    let sealed = feishu.callback_client(&url, "vtok", Some("ekey"));
    assert_eq!(
        sealed
            .post_event(InjectFeishuMessage::dm("ou_user1", "x"))
            .await
            .status,
        400
    );
    assert_eq!(run.stop().await, Vec::<String>::new());
}

#[tokio::test]
async fn an_address_in_use_is_reported() {
    let feishu = FakeFeishu::start().await;
    let dir = tempfile::tempdir().unwrap();
    let adapter = webhook_adapter(&feishu, dir.path(), feishu.addr(), None);
    let (tx, _rx) = tokio::sync::mpsc::channel(4);
    let sink = InboundSink::new(tx, Default::default());
    let stop = tokio_util::sync::CancellationToken::new();
    let error = adapter.run(&sink, &stop).await.unwrap_err();
    assert!(
        matches!(error, ChannelError::Connection { .. }),
        "{error:?}"
    );
    assert!(
        error.to_string().contains(&feishu.addr().to_string()),
        "{error}"
    );
}

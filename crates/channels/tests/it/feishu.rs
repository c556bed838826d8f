//! The Feishu adapter against `FakeFeishu` over real HTTP and a real long connection:
//! messages in (DMs, groups, mentions, threads, split events, bots ignored) acked only once
//! handed over; replies out as cards (split, threaded, addressed by id type); files both
//! ways within the size limit; reconnects after drops, closes and silence without losing an
//! event; token refresh, refused credentials and rate limits.

use crate::feishu_common;

use std::time::Duration;

use feishu_common::{adapter, next, running, running_with, settings};
use pincer_channel_port::{ChannelAdapter, ChannelError, ChatRef, Outbound};
use pincer_channel_port::{ChatKind, ThreadRef};
use pincer_channels::feishu::FeishuAdapter;
use pincer_fakes::fake_feishu::{FakeFeishu, FakeFeishuConfig, InjectFeishuMessage, UploadKind};

const WAIT: Duration = Duration::from_secs(10);

fn outbound(chat: ChatRef, text: &str, reply_to: Option<&str>) -> Outbound {
    Outbound {
        chat,
        text: text.into(),
        media: Vec::new(),
        reply_to: reply_to.map(str::to_owned),
    }
}

#[tokio::test]
async fn a_dm_comes_in_is_acked_and_answered() {
    let (feishu, _dir, mut run) = running(FakeFeishu::start().await).await;

    let id = feishu.inject_message(InjectFeishuMessage::dm("ou_user1", "hello"));
    let inbound = next(&mut run.rx).await;
    assert_eq!(inbound.channel, "feishu");
    assert_eq!(inbound.account_id, None);
    assert_eq!(
        inbound.chat,
        ChatRef {
            kind: ChatKind::Direct,
            id: "ou_user1".into(),
            thread: None
        }
    );
    assert_eq!(inbound.sender.id, "ou_user1");
    assert_eq!(inbound.sender.aliases, vec!["u_user1", "on_ou_user1"]);
    assert_eq!(inbound.message_id, id);
    assert_eq!(inbound.text, "hello");
    assert!(!inbound.mentioned);
    assert!(inbound.media.is_empty() && inbound.refused_media.is_none());

    let acks = feishu.wait_for_acks(1, WAIT).await;
    assert_eq!(acks.len(), 1);
    assert_eq!(acks[0].code, Some(200));
    assert_eq!(acks[0].message_id.as_deref(), Some(id.as_str()));
    assert!(acks[0].biz_rt.is_some());
    let pings = feishu.wait_for_pings(1, WAIT).await;
    assert_eq!(pings[0].service, 33);
    assert_eq!(feishu.endpoint_requests()[0].locale.as_deref(), Some("zh"));

    let ids = run
        .adapter
        .send(&outbound(inbound.chat.clone(), "**hi** there", Some(&id)))
        .await
        .unwrap();
    let sent = feishu.wait_for_messages(1, WAIT).await;
    assert_eq!(ids, vec![sent[0].message_id.clone()]);
    assert_eq!(sent[0].msg_type, "interactive");
    assert_eq!(sent[0].text(), "**hi** there");
    assert_eq!(sent[0].reply_to.as_deref(), Some(id.as_str()));
    assert!(!sent[0].reply_in_thread);
    assert_eq!(sent[0].content["schema"], "2.0");

    // A proactive message to the open_id.
    run.adapter
        .send(&outbound(inbound.chat.clone(), "ping", None))
        .await
        .unwrap();
    let sent = feishu.wait_for_messages(2, WAIT).await;
    assert_eq!(sent[1].receive_id_type.as_deref(), Some("open_id"));
    assert_eq!(sent[1].receive_id.as_deref(), Some("ou_user1"));
    run.adapter.typing(&inbound.chat).await.unwrap();

    assert_eq!(run.stop().await, Vec::<String>::new());
    assert!(
        feishu.protocol_errors().is_empty(),
        "{:?}",
        feishu.protocol_errors()
    );
}

#[tokio::test]
async fn groups_mentions_threads_split_events_and_bots() {
    let (feishu, _dir, mut run) = running(FakeFeishu::start().await).await;

    feishu.inject_message(InjectFeishuMessage::group("oc_g1", "ou_a", "hello all"));
    let plain = next(&mut run.rx).await;
    assert_eq!(
        (
            plain.chat.kind,
            plain.chat.id.as_str(),
            plain.text.as_str(),
            plain.mentioned
        ),
        (ChatKind::Group, "oc_g1", "hello all", false)
    );

    feishu.inject_message(
        InjectFeishuMessage::group("oc_g1", "ou_a", "ask @_user_2 please")
            .mentioning_bot()
            .mention("ou_b", "Ann"),
    );
    let mention = next(&mut run.rx).await;
    assert_eq!(mention.text, "ask @Ann please");
    assert!(mention.mentioned);

    // A bot's message is acked and dropped; the next one comes through.
    feishu.inject_message(InjectFeishuMessage::dm("ou_bot2", "beep").sender_type("app"));
    let split = feishu.inject_message(
        InjectFeishuMessage::group("oc_g1", "ou_a", "in a thread")
            .thread("omt_1")
            .split_into(3),
    );
    let threaded = next(&mut run.rx).await;
    assert_eq!(threaded.message_id, split);
    assert_eq!(threaded.text, "in a thread");
    assert_eq!(
        threaded.chat.thread,
        Some(ThreadRef::Thread("omt_1".into()))
    );
    feishu.wait_for_acks(4, WAIT).await;
    assert!(feishu.unacked().is_empty(), "{:?}", feishu.unacked());

    // In a thread every chunk is a reply in it.
    // Two paragraphs of 3000 chars: two cards, split at the paragraph break.
    let long = format!("{}\n\n{}", "a ".repeat(1500), "b ".repeat(1500));
    let ids = run
        .adapter
        .send(&outbound(threaded.chat.clone(), &long, Some(&split)))
        .await
        .unwrap();
    assert_eq!(ids.len(), 2);
    let sent = feishu.wait_for_messages(2, WAIT).await;
    for message in &sent {
        assert_eq!(message.reply_to.as_deref(), Some(split.as_str()));
        assert!(message.reply_in_thread);
    }
    assert_eq!(sent[0].text(), "a ".repeat(1500).trim());
    assert_eq!(sent[1].text(), "b ".repeat(1500).trim());

    // Outside a thread only the first chunk quotes the message; the rest go to the chat.
    let ids = run
        .adapter
        .send(&outbound(
            plain.chat.clone(),
            &long,
            Some(&plain.message_id),
        ))
        .await
        .unwrap();
    assert_eq!(ids.len(), 2);
    let sent = feishu.wait_for_messages(4, WAIT).await;
    assert_eq!(sent[2].reply_to.as_deref(), Some(plain.message_id.as_str()));
    assert!(!sent[2].reply_in_thread);
    assert_eq!(sent[3].reply_to, None);
    assert_eq!(sent[3].receive_id_type.as_deref(), Some("chat_id"));
    assert_eq!(sent[3].receive_id.as_deref(), Some("oc_g1"));
    for message in &sent {
        assert!(message.text().chars().count() <= 4000);
    }

    // Replying to one of the bot's messages is a mention, without `@`.
    feishu.inject_message(
        InjectFeishuMessage::group("oc_g1", "ou_a", "and then?").reply_to(&sent[3].message_id),
    );
    let reply = next(&mut run.rx).await;
    assert_eq!((reply.text.as_str(), reply.mentioned), ("and then?", true));
    assert_eq!(run.stop().await, Vec::<String>::new());
}

#[tokio::test]
async fn files_both_ways_within_the_limit() {
    let (feishu, dir, mut run) = running_with(FakeFeishu::start().await, |settings| {
        settings.media_max_bytes = 1024;
    })
    .await;

    let png = vec![0x89u8; 100];
    feishu.inject_message(InjectFeishuMessage::dm("ou_user1", "").image(png.clone()));
    let image = next(&mut run.rx).await;
    assert_eq!(image.text, "");
    assert_eq!(image.media.len(), 1);
    assert_eq!(image.media[0].size, 100);
    assert_eq!(image.media[0].mime.as_deref(), Some("image/png"));
    assert_eq!(std::fs::read(&image.media[0].path).unwrap(), png);
    assert!(image.media[0].path.starts_with(dir.path()));

    feishu.inject_message(InjectFeishuMessage::dm("ou_user1", "").file("a.pdf", vec![1u8; 600]));
    let file = next(&mut run.rx).await;
    assert_eq!(file.media[0].file_name.as_deref(), Some("a.pdf"));
    assert_eq!(file.media[0].size, 600);

    feishu.inject_message(InjectFeishuMessage::dm("ou_user1", "").file("big.bin", vec![0u8; 2048]));
    let big = next(&mut run.rx).await;
    assert!(big.media.is_empty());
    assert_eq!(
        big.refused_media.as_deref(),
        Some("That file is too big for me (the limit is 1 KB); send a smaller one or a link.")
    );

    let pic = dir.path().join("chart.png");
    let doc = dir.path().join("report.pdf");
    std::fs::write(&pic, b"png bytes").unwrap();
    std::fs::write(&doc, b"pdf bytes").unwrap();
    let mut message = outbound(image.chat.clone(), "here", Some(&image.message_id));
    message.media = vec![pic, doc];
    let ids = run.adapter.send(&message).await.unwrap();
    assert_eq!(ids.len(), 3);
    let uploads = feishu.wait_for_uploads(2, WAIT).await;
    assert_eq!(
        (
            uploads[0].kind,
            uploads[0].type_field.as_str(),
            uploads[0].bytes.as_slice()
        ),
        (UploadKind::Image, "message", &b"png bytes"[..])
    );
    assert_eq!(
        (
            uploads[1].kind,
            uploads[1].type_field.as_str(),
            uploads[1].name.as_str(),
            uploads[1].bytes.as_slice()
        ),
        (UploadKind::File, "pdf", "report.pdf", &b"pdf bytes"[..])
    );
    let sent = feishu.wait_for_messages(3, WAIT).await;
    let kinds: Vec<&str> = sent.iter().map(|m| m.msg_type.as_str()).collect();
    assert_eq!(kinds, ["interactive", "image", "file"]);
    assert_eq!(sent[1].content["image_key"], uploads[0].key.as_str());
    assert_eq!(sent[2].content["file_key"], uploads[1].key.as_str());
    assert_eq!(sent[0].reply_to.as_deref(), Some(image.message_id.as_str()));
    assert_eq!(sent[1].reply_to, None);
    assert_eq!(run.stop().await, Vec::<String>::new());
}

#[tokio::test]
async fn reconnects_lose_nothing() {
    let (feishu, _dir, mut run) = running(FakeFeishu::start().await).await;

    let first = feishu.inject_message(InjectFeishuMessage::dm("ou_user1", "one"));
    assert_eq!(next(&mut run.rx).await.message_id, first);
    // Acked once handed over: wait for it, or the drop would (rightly) bring it again.
    assert_eq!(feishu.wait_for_acks(1, WAIT).await.len(), 1);

    assert_eq!(feishu.drop_connection(), 1);
    let second = feishu.inject_message(InjectFeishuMessage::dm("ou_user1", "two"));
    assert_eq!(feishu.wait_for_connection_count(2, WAIT).await, 2);
    assert_eq!(next(&mut run.rx).await.message_id, second);
    assert_eq!(feishu.wait_for_acks(2, WAIT).await.len(), 2);

    assert!(feishu.wait_for_connected(WAIT).await);
    assert_eq!(feishu.close_connection(), 1);
    let third = feishu.inject_message(InjectFeishuMessage::dm("ou_user1", "three"));
    assert_eq!(feishu.wait_for_connection_count(3, WAIT).await, 3);
    assert_eq!(next(&mut run.rx).await.message_id, third);
    feishu.wait_for_acks(3, WAIT).await;
    assert!(feishu.unacked().is_empty());

    // Feishu redelivering is passed on (dedupe is the gateway's).
    assert!(feishu.redeliver(&third));
    assert_eq!(next(&mut run.rx).await.message_id, third);
    assert!(run.rx.try_recv().is_err());

    let errors = run.stop().await;
    assert_eq!(errors.len(), 2, "{errors:?}");
    assert!(
        errors
            .iter()
            .all(|e| e.starts_with("feishu: connection failed")),
        "{errors:?}"
    );
    assert_eq!(feishu.endpoint_requests().len(), 3);
}

#[tokio::test]
async fn a_silent_connection_is_noticed() {
    let feishu = FakeFeishu::start_with(FakeFeishuConfig::default().ping_interval_secs(1)).await;
    let (feishu, _dir, mut run) = running(feishu).await;
    assert_eq!(feishu.go_silent(), 1);
    let id = feishu.inject_message(InjectFeishuMessage::dm("ou_user1", "still there?"));
    // 1 s pings + 10 s of grace, then a new connection gets the event.
    assert_eq!(
        feishu
            .wait_for_connection_count(2, Duration::from_secs(20))
            .await,
        2
    );
    assert_eq!(next(&mut run.rx).await.message_id, id);
    let errors = run.stop().await;
    assert_eq!(
        errors,
        ["feishu: connection failed: nothing heard on the long connection for 11 s"]
    );
}

#[tokio::test]
async fn tokens_credentials_and_rate_limits() {
    let feishu = FakeFeishu::start().await;
    let dir = tempfile::tempdir().unwrap();
    let adapter = adapter(&feishu, dir.path());
    let chat = ChatRef {
        kind: ChatKind::Group,
        id: "oc_g1".into(),
        thread: None,
    };
    adapter
        .send(&outbound(chat.clone(), "one", None))
        .await
        .unwrap();
    feishu.expire_tokens();
    adapter
        .send(&outbound(chat.clone(), "two", None))
        .await
        .unwrap();
    assert_eq!(feishu.tenant_token_requests().len(), 2);
    assert_eq!(feishu.wait_for_messages(2, WAIT).await.len(), 2);

    feishu.fail_next_rate_limited("POST /open-apis/im/v1/messages", 7);
    let limited = adapter.send(&outbound(chat.clone(), "three", None)).await;
    assert!(
        matches!(
            limited,
            Err(ChannelError::RateLimited {
                retry_after_secs: 7,
                ..
            })
        ),
        "{limited:?}"
    );
    feishu.fail_next("POST /open-apis/im/v1/messages", 500, 1);
    let down = adapter.send(&outbound(chat.clone(), "four", None)).await;
    assert!(
        matches!(down, Err(ChannelError::Connection { .. })),
        "{down:?}"
    );
    let bad_id = adapter
        .send(&outbound(chat, "five", Some("../../auth")))
        .await;
    assert!(
        matches!(bad_id, Err(ChannelError::Api { .. })),
        "{bad_id:?}"
    );

    let mut wrong = settings(&feishu, dir.path());
    wrong.app_secret = "nope".into();
    let wrong = FeishuAdapter::new(wrong, reqwest::Client::new());
    let stop = tokio_util::sync::CancellationToken::new();
    let (tx, _rx) = tokio::sync::mpsc::channel(4);
    let sink = pincer_channel_port::InboundSink::new(tx, Default::default());
    let refused = wrong.run(&sink, &stop).await.unwrap_err();
    assert_eq!(
        refused.to_string(),
        "feishu: the platform refused the credentials: code 10014: app secret invalid \
         (check channels.feishu.appId and channels.feishu.appSecret)"
    );
    assert!(!format!("{refused:?}").contains(&feishu.app_secret()));
}

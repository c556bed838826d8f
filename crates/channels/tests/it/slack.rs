//! The Slack adapter against pincer-fakes' fake Slack (real HTTP, a real Socket Mode
//! WebSocket): DMs in with the ack after delivery, redelivery, mentions, threads, files
//! both ways, splitting, rate limits and refusals, dead sockets and disconnects.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use pincer_channel_port::{
    ChannelAdapter, ChannelError, ChannelHealth, ChatRef, Inbound, InboundMedia, InboundSink,
    Outbound, SenderRef,
};
use pincer_channel_port::{ChatKind, ThreadRef};
use pincer_channels::slack::{Keepalive, SlackAdapter, SlackSettings};
use pincer_fakes::fake_slack::{FakeSlack, FakeSlackConfig, InjectSlackMessage};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

const WAIT: Duration = Duration::from_secs(5);

fn settings(fake: &FakeSlack, media_dir: PathBuf) -> SlackSettings {
    SlackSettings {
        account_id: None,
        bot_token: fake.bot_token().into(),
        app_token: fake.app_token().into(),
        api_base: fake.api_base(),
        media_dir,
        media_max_bytes: 1024,
    }
}

struct Running {
    adapter: Arc<SlackAdapter>,
    rx: mpsc::Receiver<Inbound>,
    tx: mpsc::Sender<Inbound>,
    stop: CancellationToken,
    task: JoinHandle<Result<(), ChannelError>>,
    health: ChannelHealth,
    _dir: tempfile::TempDir,
}

impl Running {
    async fn next(&mut self) -> Inbound {
        tokio::time::timeout(WAIT, self.rx.recv())
            .await
            .expect("an inbound message in time")
            .unwrap()
    }

    async fn end(self) -> Result<(), ChannelError> {
        tokio::time::timeout(WAIT, self.task)
            .await
            .expect("run ends in time")
            .unwrap()
    }
}

/// Runs one connection of an adapter against `fake`, with a sink of `capacity`.
async fn run(fake: &FakeSlack, capacity: usize, keepalive: Option<Keepalive>) -> Running {
    let dir = tempfile::tempdir().unwrap();
    let mut adapter = SlackAdapter::new(
        settings(fake, dir.path().join("media")),
        reqwest::Client::new(),
    );
    if let Some(keepalive) = keepalive {
        adapter = adapter.with_keepalive(keepalive);
    }
    let adapter = Arc::new(adapter);
    let (tx, rx) = mpsc::channel(capacity);
    let health = ChannelHealth::default();
    let sink = InboundSink::new(tx.clone(), health.clone());
    let stop = CancellationToken::new();
    let before = fake.connection_count();
    let task = tokio::spawn({
        let (adapter, stop) = (adapter.clone(), stop.clone());
        async move { adapter.run(&sink, &stop).await }
    });
    // The new connection (an old one may not be closed yet).
    assert_eq!(
        fake.wait_for_connections(before + 1, WAIT).await,
        before + 1
    );
    Running {
        adapter,
        rx,
        tx,
        stop,
        task,
        health,
        _dir: dir,
    }
}

fn dm(text: &str) -> Inbound {
    Inbound {
        channel: "slack".into(),
        account_id: None,
        chat: ChatRef {
            kind: ChatKind::Direct,
            id: "D1".into(),
            thread: None,
        },
        sender: SenderRef {
            id: "U1".into(),
            aliases: Vec::new(),
            name: None,
        },
        message_id: "1700000000.000100".into(),
        text: text.into(),
        mentioned: false,
        media: Vec::new(),
        refused_media: None,
        guild_id: None,
        team_id: Some("T0TEAM".into()),
    }
}

fn outbound(chat: &str, kind: ChatKind, text: &str) -> Outbound {
    Outbound {
        chat: ChatRef {
            kind,
            id: chat.into(),
            thread: None,
        },
        text: text.into(),
        media: Vec::new(),
        reply_to: None,
    }
}

#[tokio::test]
async fn a_dm_is_acked_only_after_the_gateway_took_it_and_redeliveries_are_acked_too() {
    let fake = FakeSlack::start().await;
    // A full sink: the gateway is behind.
    let mut running = run(&fake, 1, None).await;
    running.tx.send(dm("placeholder")).await.unwrap();
    let ids = fake.inject_message(
        InjectSlackMessage::dm("U1", "D1", "hi &lt;there&gt; <https://x.com|x>")
            .ts("1700000000.000100"),
    );
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(fake.acks().is_empty(), "not acked before delivery");
    assert_eq!(running.next().await.text, "placeholder");
    assert_eq!(running.next().await, dm("hi <there> x (https://x.com)"));
    assert_eq!(fake.wait_for_acks(1, WAIT).await, ids);
    assert!(running.health.snapshot().connected);

    // Slack sends it again: handed over again (the gateway dedupes) and acked again.
    assert!(fake.redeliver(&ids[0]));
    assert_eq!(running.next().await.message_id, "1700000000.000100");
    assert_eq!(
        fake.wait_for_acks(2, WAIT).await,
        [ids[0].clone(), ids[0].clone()]
    );
    assert_eq!(running.adapter.bot_user_id(), Some("U0BOT"));
    running.stop.cancel();
    assert!(running.end().await.is_ok(), "Ok on cancellation");
}

#[tokio::test]
async fn mentions_threads_and_what_is_skipped() {
    let fake = FakeSlack::start().await;
    let mut running = run(&fake, 16, None).await;
    let ids = fake.inject_message(
        InjectSlackMessage::channel("U2", "C1", "what now, <@U3|ann>?")
            .mentioning_bot()
            .thread_ts("1700000000.000001")
            .ts("1700000000.000009"),
    );
    let first = running.next().await;
    let second = running.next().await;
    for inbound in [&first, &second] {
        assert_eq!(
            inbound.chat,
            ChatRef {
                kind: ChatKind::Channel,
                id: "C1".into(),
                thread: Some(ThreadRef::Thread("1700000000.000001".into())),
            }
        );
        assert_eq!(
            inbound.message_id, "1700000000.000009",
            "one id: the gateway dedupes"
        );
        assert_eq!(inbound.text, "what now, @ann?");
        assert!(inbound.mentioned);
        assert_eq!(inbound.sender.id, "U2");
    }
    // Not mentioned; a group DM; skipped posts (edits, bots, the bot itself, other events).
    fake.inject_message(InjectSlackMessage::channel("U2", "C1", "chatter"));
    let chatter = running.next().await;
    assert!(!chatter.mentioned);
    assert_eq!(chatter.chat.thread, None);
    fake.inject_message(InjectSlackMessage::dm("U1", "G1", "x").subtype("message_changed"));
    fake.inject_message(InjectSlackMessage::dm("U1", "D1", "x").bot_id("B9"));
    fake.inject_message(InjectSlackMessage::dm("U0BOT", "D1", "my own"));
    fake.inject_event(serde_json::json!({"type": "reaction_added", "user": "U1"}));
    fake.inject_envelope("slash_commands", serde_json::json!({"command": "/x"}));
    fake.send_raw("not json");
    fake.inject_message(InjectSlackMessage::channel("U2", "G2", "us three").channel_type("mpim"));
    let group = running.next().await;
    assert_eq!(
        (group.chat.kind, group.text.as_str()),
        (ChatKind::Group, "us three")
    );
    // Every envelope acked, skipped ones included.
    assert_eq!(
        fake.wait_for_acks(ids.len() + 7, WAIT).await.len(),
        ids.len() + 7
    );
    assert!(running.rx.try_recv().is_err(), "nothing else handed over");
}

#[tokio::test]
async fn files_in_within_the_limit_and_refusals() {
    let fake = FakeSlack::start().await;
    let mut running = run(&fake, 16, None).await;
    fake.inject_message(
        InjectSlackMessage::dm("U1", "D1", "see")
            .ts("5.000001")
            .file("a b.png", b"PNG".to_vec(), "image/png"),
    );
    let inbound = running.next().await;
    assert_eq!(inbound.text, "see");
    let [media] = inbound.media.as_slice() else {
        panic!("{inbound:?}")
    };
    assert_eq!(media.mime.as_deref(), Some("image/png"));
    assert_eq!(media.file_name.as_deref(), Some("a b.png"));
    assert_eq!(media.size, 3);
    assert!(
        media
            .path
            .file_name()
            .unwrap()
            .to_str()
            .unwrap()
            .starts_with("slack-D1-5000001-F")
    );
    assert!(
        media.path.to_str().unwrap().ends_with("-a_b.png"),
        "{media:?}"
    );
    assert_eq!(std::fs::read(&media.path).unwrap(), b"PNG");

    // Over the limit by its declared size, and by what actually came.
    let too_big = "That file is too big for me (the limit is 0 MB); send a smaller one or a link.";
    fake.inject_message(InjectSlackMessage::dm("U1", "D1", "").file(
        "big.bin",
        vec![0u8; 2048],
        "application/octet-stream",
    ));
    let refused = running.next().await;
    assert_eq!(
        (refused.media.as_slice(), refused.refused_media.as_deref()),
        (&[] as &[InboundMedia], Some(too_big))
    );
    fake.inject_message(InjectSlackMessage::dm("U1", "D1", "liar").file_declaring(
        "small.bin",
        vec![0u8; 2048],
        10,
    ));
    let refused = running.next().await;
    assert_eq!(
        (refused.text.as_str(), refused.refused_media.as_deref()),
        ("liar", Some(too_big))
    );
}

#[tokio::test]
async fn files_slack_cannot_serve_are_refused() {
    let fake = FakeSlack::start_with(FakeSlackConfig::default()).await;
    let mut running = run(&fake, 16, None).await;
    let failed = "I could not fetch that file from Slack; please send it again.";
    // Unknown (404); on another host (no token sent: Slack's HTML sign-in page); hidden.
    let port = fake.addr().port();
    for url in [
        format!("{}/files/FNOPE", fake.base_url()),
        format!("http://localhost:{port}/files/FNOPE"),
    ] {
        fake.inject_event(serde_json::json!({
            "type": "message", "channel": "D1", "channel_type": "im", "user": "U1", "text": "f",
            "ts": "9.1", "files": [{"id": "F1", "name": "x", "size": 1, "url_private_download": url}],
        }));
        let inbound = running.next().await;
        assert_eq!(
            (inbound.text.as_str(), inbound.refused_media.as_deref()),
            ("f", Some(failed))
        );
        assert!(inbound.media.is_empty());
    }
    fake.inject_event(serde_json::json!({
        "type": "message", "channel": "D1", "channel_type": "im", "user": "U1", "ts": "9.2",
        "files": [{"id": "F2", "mode": "hidden_by_limit"}],
    }));
    assert_eq!(running.next().await.refused_media.as_deref(), Some(failed));
}

#[tokio::test]
async fn sending_splits_threads_uploads_and_opens_dms() {
    let fake = FakeSlack::start().await;
    let dir = tempfile::tempdir().unwrap();
    let adapter = SlackAdapter::new(settings(&fake, dir.path().into()), reqwest::Client::new());
    let long: String = (0..1500).map(|i| format!("word{i} ")).collect();
    let mut message = outbound("C1", ChatKind::Channel, &format!("**bold** & {long}"));
    message.chat.thread = Some(ThreadRef::Thread("1.000001".into()));
    message.reply_to = Some("1.000002".into());
    let report = dir.path().join("report.txt");
    std::fs::write(&report, "the report").unwrap();
    message.media = vec![report];
    let ids = adapter.send(&message).await.unwrap();
    let sent = fake.sent_messages();
    assert!(sent.len() >= 3, "{}", sent.len());
    assert_eq!(ids.len(), sent.len() + 1);
    assert!(
        sent.iter()
            .all(|m| m.text.chars().count() <= 4000 && m.channel == "C1")
    );
    assert!(
        sent.iter()
            .all(|m| m.thread_ts.as_deref() == Some("1.000001"))
    );
    assert!(
        sent[0].text.starts_with("*bold* &amp; word0 "),
        "{}",
        &sent[0].text[..40]
    );
    assert_eq!(sent[0].payload["mrkdwn"], true);
    let joined: Vec<&str> = sent.iter().map(|m| m.text.trim()).collect();
    assert_eq!(
        joined.join(" "),
        format!("*bold* &amp; {}", long.trim_end())
    );
    let files = fake.uploaded_files();
    assert_eq!(files.len(), 1);
    assert_eq!(
        (files[0].name.as_str(), files[0].channel.as_str()),
        ("report.txt", "C1")
    );
    assert_eq!(files[0].bytes, b"the report");
    assert_eq!(files[0].thread_ts.as_deref(), Some("1.000001"));
    assert_eq!(ids.last(), Some(&files[0].file_id));

    // A top-level post is answered at top level; a user id gets its DM opened once.
    let mut reply = outbound("U7", ChatKind::Direct, "hello");
    reply.reply_to = Some("3.000001".into());
    adapter.send(&reply).await.unwrap();
    adapter.send(&reply).await.unwrap();
    let sent = fake.sent_messages();
    let dm = &sent[sent.len() - 1];
    assert!(
        dm.channel.starts_with('D') && dm.thread_ts.is_none(),
        "{dm:?}"
    );
    assert_eq!(
        fake.calls()
            .iter()
            .filter(|c| *c == "conversations.open")
            .count(),
        1
    );
    assert!(adapter.typing(&reply.chat).await.is_ok());
}

#[tokio::test]
async fn send_errors_are_typed() {
    let fake = FakeSlack::start().await;
    let dir = tempfile::tempdir().unwrap();
    let adapter = SlackAdapter::new(settings(&fake, dir.path().into()), reqwest::Client::new());
    let message = outbound("C1", ChatKind::Channel, "x");
    fake.fail_next("chat.postMessage", 429, Some(7));
    assert!(matches!(
        adapter.send(&message).await,
        Err(ChannelError::RateLimited {
            retry_after_secs: 7,
            ..
        })
    ));
    fake.fail_next_ok_false("chat.postMessage", "ratelimited");
    assert!(matches!(
        adapter.send(&message).await,
        Err(ChannelError::RateLimited { .. })
    ));
    fake.fail_next("chat.postMessage", 503, None);
    assert!(matches!(
        adapter.send(&message).await,
        Err(ChannelError::Connection { .. })
    ));
    fake.fail_next_ok_false("chat.postMessage", "not_in_channel");
    assert_eq!(
        adapter.send(&message).await.unwrap_err().to_string(),
        "slack: chat.postMessage: not_in_channel"
    );
    assert_eq!(adapter.send(&message).await.unwrap().len(), 1);

    let wrong = SlackAdapter::new(
        SlackSettings {
            bot_token: "xoxb-wrong".into(),
            ..settings(&fake, dir.path().into())
        },
        reqwest::Client::new(),
    );
    let (tx, _rx) = mpsc::channel(1);
    let sink = InboundSink::new(tx, ChannelHealth::default());
    let result = wrong.run(&sink, &CancellationToken::new()).await;
    assert!(
        matches!(result, Err(ChannelError::Unauthorized { .. })),
        "{result:?}"
    );
}

#[tokio::test]
async fn dead_sockets_drops_and_disconnects_end_the_run_with_an_error() {
    let fake = FakeSlack::start().await;
    let quick = Keepalive {
        idle: Duration::from_millis(200),
        pong_timeout: Duration::from_millis(300),
    };
    let running = run(&fake, 16, Some(quick)).await;
    // Pings answered: the connection stays.
    tokio::time::sleep(Duration::from_millis(800)).await;
    assert!(!running.task.is_finished());
    fake.stall_connection();
    let error = running.end().await.unwrap_err();
    assert!(error.to_string().contains("no answer to a ping"), "{error}");

    let running = run(&fake, 16, None).await;
    assert_eq!(fake.drop_connection(), 1);
    assert!(matches!(
        running.end().await,
        Err(ChannelError::Connection { .. })
    ));
    let running = run(&fake, 16, None).await;
    assert!(fake.send_disconnect("refresh_requested"));
    assert!(matches!(
        running.end().await,
        Err(ChannelError::Connection { .. })
    ));
    let running = run(&fake, 16, None).await;
    assert!(fake.send_disconnect("link_disabled"));
    assert!(matches!(
        running.end().await,
        Err(ChannelError::Unauthorized { .. })
    ));
    assert_eq!(fake.connection_count(), 4);
}

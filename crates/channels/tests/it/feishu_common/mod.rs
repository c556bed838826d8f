//! What the Feishu adapter tests share: settings pointed at a `FakeFeishu`, and a running
//! adapter (connected to the fake, for most tests) under a small supervisor (run again after each error, as the gateway's does,
//! without its backoff) whose errors are kept.
#![allow(clippy::unwrap_used, clippy::expect_used, dead_code)]

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use pincer_channel_port::{ChannelAdapter, ChannelHealth, Inbound, InboundSink};
use pincer_channels::feishu::{FeishuAdapter, FeishuMode, FeishuSettings};
use pincer_fakes::fake_feishu::FakeFeishu;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

/// Long-connection settings for the fake's app, files saved under `dir`.
pub fn settings(feishu: &FakeFeishu, dir: &Path) -> FeishuSettings {
    FeishuSettings {
        account_id: None,
        app_id: feishu.app_id(),
        app_secret: feishu.app_secret().into(),
        api_base: feishu.base_url(),
        mode: FeishuMode::LongConnection,
        verification_token: None,
        encrypt_key: None,
        media_dir: dir.join("media"),
        media_max_bytes: pincer_channels::feishu::DEFAULT_MEDIA_MAX_BYTES,
    }
}

pub fn adapter(feishu: &FakeFeishu, dir: &Path) -> FeishuAdapter {
    FeishuAdapter::new(settings(feishu, dir), reqwest::Client::new())
}

/// `feishu` with an adapter running against it (files under a fresh directory), once its
/// long connection is up.
pub async fn running(feishu: FakeFeishu) -> (FakeFeishu, tempfile::TempDir, Run) {
    running_with(feishu, |_| {}).await
}

/// [`running`] with the adapter's settings changed by `edit` first.
pub async fn running_with(
    feishu: FakeFeishu,
    edit: impl FnOnce(&mut FeishuSettings),
) -> (FakeFeishu, tempfile::TempDir, Run) {
    let dir = tempfile::tempdir().unwrap();
    let mut settings = settings(&feishu, dir.path());
    edit(&mut settings);
    let run = Run::start(FeishuAdapter::new(settings, reqwest::Client::new()));
    assert!(feishu.wait_for_connected(Duration::from_secs(10)).await);
    (feishu, dir, run)
}

/// An adapter running until [`Run::stop`].
pub struct Run {
    pub adapter: Arc<FeishuAdapter>,
    pub rx: mpsc::Receiver<Inbound>,
    pub health: ChannelHealth,
    stop: CancellationToken,
    task: tokio::task::JoinHandle<Vec<String>>,
}

impl Run {
    pub fn start(adapter: FeishuAdapter) -> Self {
        let adapter = Arc::new(adapter);
        let (tx, rx) = mpsc::channel(64);
        let health = ChannelHealth::default();
        let sink = InboundSink::new(tx, health.clone());
        let stop = CancellationToken::new();
        let task = tokio::spawn({
            let adapter = adapter.clone();
            let stop = stop.clone();
            async move {
                let mut errors = Vec::new();
                while !stop.is_cancelled() {
                    if let Err(e) = adapter.run(&sink, &stop).await {
                        errors.push(e.to_string());
                    }
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
                errors
            }
        });
        Self {
            adapter,
            rx,
            health,
            stop,
            task,
        }
    }

    /// Stops the adapter (its `run` must return promptly); the errors its runs ended with.
    pub async fn stop(self) -> Vec<String> {
        self.stop.cancel();
        tokio::time::timeout(Duration::from_secs(10), self.task)
            .await
            .expect("run returns once stopped")
            .unwrap()
    }
}

/// The next message handed to the gateway (within 10 s).
pub async fn next(rx: &mut mpsc::Receiver<Inbound>) -> Inbound {
    tokio::time::timeout(Duration::from_secs(10), rx.recv())
        .await
        .expect("a message within 10 s")
        .expect("the adapter is running")
}

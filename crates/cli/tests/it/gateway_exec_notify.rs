//! `tools.exec.notifyOnExit: false` (issue 22): a background command that ends after its
//! turn queues no system event for the session, and a call's own `notifyOnExit: true`
//! still does.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;
use crate::common::Script as _;

use std::path::Path;
use std::time::Duration;

use common::gateway::*;
use common::mock;
use pincer_testkit::Scenario;
use serde_json::{Value, json};

const TOKEN: &str = "exec-notify-token";
const KEY: &str = "agent:main:main";

/// A background command that writes `marker` a moment after its turn ended.
fn job(marker: &Path, extra: Value) -> Value {
    let mut args = json!({
        "command": format!("sleep 0.3; echo job-output-42 > {}", marker.display()),
        "background": true,
    });
    for (k, v) in extra.as_object().unwrap() {
        args[k] = v.clone();
    }
    args
}

/// Waits for `marker`, then a moment for the exit's callback; the queued system events.
async fn queued_after(client: &mut WsClient, marker: &Path) -> Value {
    for _ in 0..400 {
        if marker.exists() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    assert!(marker.exists(), "the job never ran");
    tokio::time::sleep(Duration::from_millis(500)).await;
    let status = client.call("status", json!({})).await;
    status["payload"]["queuedSystemEvents"].clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn notify_on_exit_false_in_the_config_queues_nothing_unless_the_call_asks() {
    let dir = tempfile::tempdir().unwrap();
    let quiet = dir.path().join("quiet");
    let loud = dir.path().join("loud");
    let llm = mock(
        Scenario::new()
            .tool_turn("start quiet", "exec", job(&quiet, json!({})), "started it")
            .tool_turn(
                "start loud",
                "exec",
                job(&loud, json!({"notifyOnExit": true})),
                "started that",
            ),
    )
    .await;
    let (home, port) = gateway_home_in(
        common::Home::new(),
        &llm,
        TOKEN,
        "heartbeat: { every: \"0m\" },",
        "tools: { exec: { notifyOnExit: false } },",
    );
    let (_gateway, mut client) = run_and_connect(&home, port, TOKEN).await;

    client.chat_until(KEY, "start quiet", "q", "final").await;
    assert_eq!(queued_after(&mut client, &quiet).await, json!([]));

    client.chat_until(KEY, "start loud", "l", "final").await;
    let queued = queued_after(&mut client, &loud).await.to_string();
    assert!(
        queued.contains("Exec completed (") && queued.contains("code 0)"),
        "{queued}"
    );
}

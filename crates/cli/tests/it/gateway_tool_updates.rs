//! A running tool's progress reaches WebSocket clients: `exec`'s output so far comes as
//! OpenClaw's `agent` events (`stream: "tool"`, `phase: "update"`) between the call's
//! `start` and its `result`, throttled per call.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;
use crate::common::Script as _;

use common::gateway::*;
use common::mock;
use pincer_testkit::Scenario;
use serde_json::{Value, json};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exec_output_so_far_reaches_clients_as_tool_updates() {
    const TOKEN: &str = "tool-updates-token";
    const KEY: &str = "agent:main:main";
    let llm = mock(Scenario::new().tool_turn(
        "count slowly",
        "exec",
        json!({"command": "echo one; sleep 0.6; echo two; sleep 0.6; echo three"}),
        "counted",
    ))
    .await;
    let (home, port) = gateway_home(&llm, TOKEN);
    let (_gateway, mut client) = run_and_connect(&home, port, TOKEN).await;
    client.start_chat(KEY, "count slowly", "count").await;

    // The run's tool events, in order, until its final.
    let mut tool = Vec::new();
    loop {
        let frame = client.frame().await.expect("the run's events");
        let payload = &frame["payload"];
        if payload["runId"] != "count" {
            continue;
        }
        if frame["event"] == "chat" && payload["state"] == "final" {
            break;
        }
        if frame["event"] == "agent" && payload["stream"] == "tool" {
            tool.push(payload.clone());
        }
    }
    let phases: Vec<&str> = tool
        .iter()
        .map(|e| e["data"]["phase"].as_str().unwrap())
        .collect();
    assert_eq!(phases.first(), Some(&"start"), "{phases:?}");
    assert_eq!(phases.last(), Some(&"result"), "{phases:?}");
    let updates: Vec<&Value> = tool
        .iter()
        .filter(|e| e["data"]["phase"] == "update")
        .collect();
    assert!(updates.len() >= 2, "{tool:?}");
    let id = &tool[0]["data"]["toolCallId"];
    let texts: Vec<&str> = updates
        .iter()
        .map(|e| {
            let data = &e["data"];
            assert_eq!(data["name"], "exec", "{data}");
            assert_eq!(&data["toolCallId"], id, "{data}");
            assert_eq!(
                data["partialResult"]["details"]["status"], "running",
                "{data}"
            );
            data["partialResult"]["content"][0]["text"]
                .as_str()
                .unwrap()
        })
        .collect();
    // The output so far, growing: first what the command printed before its first pause.
    assert_eq!(texts[..2], ["one\n", "one\ntwo\n"], "{texts:?}");
    // Never two updates of one call closer than the throttle allows.
    for pair in updates.windows(2) {
        let gap = pair[1]["ts"].as_i64().unwrap() - pair[0]["ts"].as_i64().unwrap();
        assert!(gap >= 240, "{gap} ms between updates: {tool:?}");
    }
}

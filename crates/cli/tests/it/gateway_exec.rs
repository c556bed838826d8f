//! A background `exec` that finishes after its turn: a heartbeat relays its outcome to the
//! user's session at once, without the user asking; with the heartbeat off, the outcome
//! reaches the agent's next turn there as a system event.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;
use crate::common::Script as _;

use std::time::Duration;

use common::gateway::*;
use common::mock;
use pincer_testkit::{Match, Reply, Rule, Scenario};
use serde_json::json;

/// "start the job" starts a background command that prints `job-output-42` after its turn
/// ("started it"); `then` answers what comes after.
fn background_job(then: Rule) -> Scenario {
    Scenario::new()
        .tool_turn(
            "start the job",
            "exec",
            json!({"command": "sleep 0.3; echo job-output-42", "background": true}),
            "started it",
        )
        .rule(then)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_finished_background_command_is_relayed_with_no_user_message() {
    const TOKEN: &str = "exec-relay-token";
    const KEY: &str = "agent:main:main";
    let llm = mock(background_job(
        Rule::when(Match::last_user_contains(
            pincer_automation::heartbeat::EXEC_EVENT_PROMPT,
        ))
        .reply(Reply::text("Your job finished and printed job-output-42.")),
    ))
    .await;
    let (home, port) = gateway_home(&llm, TOKEN);
    let (_gateway, mut client) = run_and_connect(&home, port, TOKEN).await;
    client
        .chat_until(KEY, "start the job", "job", "final")
        .await;

    // No message from the user: the exit wakes a heartbeat, whose reply arrives as a chat
    // final in the main session.
    let relayed = loop {
        let frame = client.frame().await.expect("the relayed result");
        let payload = &frame["payload"];
        if frame["event"] == "chat"
            && payload["state"] == "final"
            && payload["runId"]
                .as_str()
                .is_some_and(|id| id.starts_with("heartbeat-"))
        {
            break payload.clone();
        }
    };
    assert_eq!(relayed["sessionKey"], KEY);
    assert_eq!(
        text_of(&relayed["message"]),
        "Your job finished and printed job-output-42."
    );
    let prompt = llm.requests().last().cloned().unwrap().body["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()["content"]
        .to_string();
    assert!(prompt.contains("code 0) :: job-output-42"), "{prompt}");
    // The heartbeat records how it ended after its reply went out: ask until it has.
    let mut heartbeat = client.call("last-heartbeat", json!({})).await;
    for _ in 0..200 {
        if !heartbeat["payload"].is_null() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(25)).await;
        heartbeat = client.call("last-heartbeat", json!({})).await;
    }
    assert_eq!(heartbeat["payload"]["status"], "sent", "{heartbeat}");
    assert!(
        heartbeat["payload"]["reason"]
            .as_str()
            .unwrap()
            .starts_with("exec:"),
        "{heartbeat}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_the_heartbeat_off_the_exit_reaches_the_next_turn_as_a_system_event() {
    const TOKEN: &str = "exec-test-token";
    const KEY: &str = "agent:main:main";
    let llm = mock(background_job(
        Rule::when(Match::last_user_contains("anything new?"))
            .reply(Reply::text("the job finished")),
    ))
    .await;
    let (home, port) = gateway_home_with(&llm, TOKEN, "heartbeat: { every: \"0m\" },");
    let (_gateway, mut client) = run_and_connect(&home, port, TOKEN).await;

    let done = client
        .chat_until(KEY, "start the job", "job", "final")
        .await;
    assert_eq!(text_of(&done["payload"]["message"]), "started it", "{done}");

    // The command ends after its turn did; its exit is queued for the main session.
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    loop {
        let status = client.call("status", json!({})).await;
        let queued = status["payload"]["queuedSystemEvents"].to_string();
        if queued.contains("job-output-42") {
            assert!(queued.contains("Exec completed ("), "{queued}");
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "never queued: {status}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }

    client
        .call(
            "chat.send",
            json!({"sessionKey": KEY, "message": "anything new?", "idempotencyKey": "ask"}),
        )
        .await;
    client.chat_event("ask", "final").await;
    let last = llm.requests().last().cloned().unwrap();
    let messages = last.body["messages"].as_array().unwrap();
    let user = messages.last().unwrap();
    let text = user["content"]
        .as_str()
        .map(str::to_owned)
        .unwrap_or_else(|| user["content"].to_string());
    assert!(
        text.starts_with("System: [")
            && text.contains("Exec completed (")
            && text.contains("code 0) :: job-output-42"),
        "{text}"
    );
    assert!(text.ends_with("anything new?"), "{text}");
    // Drained: the queue is empty again.
    let status = client.call("status", json!({})).await;
    assert_eq!(
        status["payload"]["queuedSystemEvents"],
        json!([]),
        "{status}"
    );
}

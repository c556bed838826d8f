//! Queue modes over a real WebSocket: what `chat.send` / `agent` do when their session
//! already has a run going (steer, followup, collect, interrupt), checked against the
//! requests the mock LLM received and the transcript.

use super::*;
use crate::support::client::content_text as text_of;

/// A turn that calls the `sleep` tool (600 ms), a reply to a steered message, a slow reply
/// to be busy with, and replies for gathered and plain messages.
fn queue_scenario() -> Scenario {
    let scenario = Scenario::new()
        .rule(
            Rule::when(Match::last_user("use the tool"))
                .reply(Reply::tool_call("sleep", json!({"ms": 600}))),
        )
        .rule(Rule::when(Match::tool_result("sleep")).reply(Reply::text("done sleeping")))
        .rule(
            Rule::when(Match::last_user_contains(
                "[INTERRUPT] New message from user:",
            ))
            .reply(Reply::text("saw the interrupt")),
        )
        .rule(
            Rule::when(Match::last_user_contains(
                "[Queued messages while agent was busy]",
            ))
            .reply(Reply::text("got them all")),
        );
    with_hi_rules(scenario)
}

/// `(runId, state, text)` of the chat events that end runs, in order.
fn run_ends(frames: &[Value]) -> Vec<(String, String, String)> {
    frames
        .iter()
        .filter(|f| f["event"] == "chat" && f["payload"]["state"] != "delta")
        .map(|f| {
            let p = &f["payload"];
            (
                p["runId"].as_str().unwrap_or_default().to_owned(),
                p["state"].as_str().unwrap_or_default().to_owned(),
                text_of(&p["message"]["content"]),
            )
        })
        .collect()
}

/// Reads events until run `run_id` ends; the [`run_ends`] among them.
async fn until_run_ends(watcher: &mut Client, run_id: &str) -> Vec<(String, String, String)> {
    let run_id = run_id.to_owned();
    let frames = watcher
        .until(move |f| {
            f["event"] == "chat"
                && f["payload"]["runId"] == run_id.as_str()
                && ["final", "error", "aborted"]
                    .contains(&f["payload"]["state"].as_str().unwrap_or(""))
        })
        .await;
    run_ends(&frames)
}

/// `(runId, text)` of run ends.
fn ids_and_texts(ends: Vec<(String, String, String)>) -> Vec<(String, String)> {
    ends.into_iter().map(|e| (e.0, e.2)).collect()
}

/// The roles and texts of a session's history.
async fn history(client: &mut Client, key: &str) -> Vec<(String, String)> {
    let res = client.chat_history(key).await;
    res["payload"]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            (
                m["role"].as_str().unwrap().to_owned(),
                text_of(&m["content"]),
            )
        })
        .collect()
}

/// A server on [`queue_scenario`] whose session `key` is [`busy`] with run `run_id`, the
/// watcher and the client.
async fn busy_server(key: &str, run_id: &str) -> (Server, Client, Client) {
    let server = start(queue_scenario()).await;
    let (watcher, client) = busy(&server.url, key, run_id).await;
    (server, watcher, client)
}

#[tokio::test]
async fn steer_reaches_the_running_turn_at_its_next_tool_boundary() {
    let server = start(queue_scenario()).await;
    let (mut watcher, mut client) = clients(&server.url).await;
    let key = "agent:main:steer";
    let res = client.chat_send(key, "use the tool", "st-1").await;
    assert_eq!(res["payload"]["status"], "started");
    // The turn is inside its tool batch (the tool sleeps 600 ms).
    watcher
        .until(|f| {
            f["event"] == "agent"
                && f["payload"]["stream"] == "tool"
                && f["payload"]["data"]["phase"] == "start"
        })
        .await;
    // Steer is the default mode.
    let res = client.chat_send(key, "also this", "st-2").await;
    assert_eq!(
        res["payload"],
        json!({"runId": "st-2", "status": "steered", "queueMode": "steer", "activeRunId": "st-1"})
    );
    assert_eq!(
        until_run_ends(&mut watcher, "st-1").await,
        [("st-1".into(), "final".into(), "saw the interrupt".into())]
    );
    let wait = client.call("agent.wait", json!({"runId": "st-2"})).await;
    assert_eq!(wait["payload"]["status"], "ok", "{wait}");
    // The model's call after the tool result carried the steered message, and nothing else
    // ran: two model calls in all.
    let requests = server.llm.requests();
    assert_eq!(requests.len(), 2, "{requests:#?}");
    let messages = requests[1].body["messages"].as_array().unwrap();
    let roles: Vec<&str> = messages
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(
        &roles[roles.len() - 4..],
        ["user", "assistant", "tool", "user"]
    );
    assert_eq!(
        text_of(&messages.last().unwrap()["content"]),
        "[INTERRUPT] New message from user: also this"
    );
    // The transcript keeps it where the agent took it.
    assert_eq!(
        history(&mut client, key).await,
        [
            ("user".into(), "use the tool".into()),
            ("assistant".into(), String::new()),
            ("toolResult".into(), "slept".into()),
            (
                "user".into(),
                "[INTERRUPT] New message from user: also this".into()
            ),
            ("assistant".into(), "saw the interrupt".into()),
        ]
    );
    // A retry of the steered request is answered, not steered again.
    let again = client.chat_send(key, "also this", "st-2").await;
    assert_eq!(again["payload"]["status"], "ok");
}

#[tokio::test]
async fn a_steered_message_the_turn_never_took_runs_as_a_followup() {
    let key = "agent:main:missed";
    let (_server, mut watcher, mut client) = busy_server(key, "m-1").await;
    let res = client.chat_send_in("steering", key, "ping", "m-2").await;
    assert_eq!(res["payload"]["status"], "steered");
    // Aborting only the running run ends it mid-reply, before any tool boundary.
    let abort = client
        .call("chat.abort", json!({"sessionKey": key, "runId": "m-1"}))
        .await;
    assert_eq!(abort["payload"]["count"], 1);
    let ends = until_run_ends(&mut watcher, "m-2").await;
    assert_eq!(
        ends.first().map(|e| e.1.as_str()),
        Some("aborted"),
        "{ends:?}"
    );
    assert_eq!(
        ends.last().unwrap(),
        &("m-2".into(), "final".into(), "pong".into())
    );
    let wait = client.call("agent.wait", json!({"runId": "m-2"})).await;
    assert_eq!(wait["payload"]["status"], "ok");
    // It ran as a plain message of its own turn.
    let turns = history(&mut client, key).await;
    assert_eq!(
        &turns[2..],
        [
            ("user".into(), "ping".into()),
            ("assistant".into(), "pong".into())
        ]
    );
}

#[tokio::test]
async fn followup_runs_each_message_as_its_own_turn_in_order() {
    let key = "agent:main:follow";
    let (server, mut watcher, mut client) = busy_server(key, "f-1").await;
    let res = client.chat_send_in("followup", key, "ping", "f-2").await;
    assert_eq!(
        res["payload"],
        json!({"runId": "f-2", "status": "queued", "queueMode": "followup"})
    );
    // `agent` keeps its interim `accepted` and says what the busy session did.
    let accepted = client
        .call("agent", json!({"sessionKey": key, "message": "third", "idempotencyKey": "f-3", "queueMode": "follow-up"}))
        .await;
    let p = &accepted["payload"];
    assert_eq!(
        (&p["status"], &p["queueStatus"], &p["queueMode"]),
        (&json!("accepted"), &json!("queued"), &json!("followup"))
    );
    let last = client.response(accepted["id"].as_str().unwrap()).await;
    assert_eq!(
        last["payload"]["result"]["payloads"][0]["text"],
        "mock: third"
    );
    let ends = ids_and_texts(until_run_ends(&mut watcher, "f-3").await);
    assert_eq!(
        ends,
        [
            ("f-1".into(), "a b c d e f g h i j".into()),
            ("f-2".into(), "pong".into()),
            ("f-3".into(), "mock: third".into()),
        ]
    );
    assert_eq!(server.llm.requests().len(), 3);
    assert_eq!(history(&mut client, key).await.len(), 6);
}

#[tokio::test]
async fn collect_runs_messages_sent_while_busy_as_one_turn() {
    let server = start_with(queue_scenario(), |o| {
        o.queue.mode = QueueMode::Collect;
        o.queue.collect_debounce_ms = 200;
    })
    .await;
    let key = "agent:main:collect";
    let (mut watcher, mut client) = busy(&server.url, key, "c-1").await;
    // The server's default mode is collect here.
    for (id, text) in [("c-2", "first extra"), ("c-3", "second extra")] {
        let res = client.chat_send(key, text, id).await;
        assert_eq!(
            res["payload"],
            json!({"runId": id, "status": "queued", "queueMode": "collect", "batchRunId": "c-2"})
        );
    }
    let ends = ids_and_texts(until_run_ends(&mut watcher, "c-2").await);
    assert_eq!(
        ends,
        [
            ("c-1".into(), "a b c d e f g h i j".into()),
            ("c-2".into(), "got them all".into()),
        ]
    );
    let wait = client.call("agent.wait", json!({"runId": "c-3"})).await;
    assert_eq!(wait["payload"]["status"], "ok");
    // Exactly one more model call, whose last message joins both in OpenClaw's format.
    let requests = server.llm.requests();
    assert_eq!(requests.len(), 2, "{requests:#?}");
    let messages = requests[1].body["messages"].as_array().unwrap();
    assert_eq!(
        text_of(&messages.last().unwrap()["content"]),
        "[Queued messages while agent was busy]\n\n---\nQueued #1\nfirst extra\n\n---\nQueued #2\nsecond extra"
    );
    assert_eq!(history(&mut client, key).await.len(), 4);
}

#[tokio::test]
async fn interrupt_aborts_the_running_turn_then_answers_the_new_message() {
    let key = "agent:main:interrupt";
    let (_server, mut watcher, mut client) = busy_server(key, "i-1").await;
    let res = client.chat_send_in("interrupt", key, "ping", "i-2").await;
    assert_eq!(
        res["payload"],
        json!({"runId": "i-2", "status": "queued", "queueMode": "interrupt", "interruptedRunId": "i-1"})
    );
    let ends: Vec<(String, String)> = until_run_ends(&mut watcher, "i-2")
        .await
        .into_iter()
        .map(|e| (e.0, e.1))
        .collect();
    assert_eq!(
        ends,
        [
            ("i-1".into(), "aborted".into()),
            ("i-2".into(), "final".into())
        ]
    );
    let first = client.call("agent.wait", json!({"runId": "i-1"})).await;
    assert_eq!(
        (&first["payload"]["status"], &first["payload"]["error"]),
        (&json!("error"), &json!("aborted"))
    );
    let turns = history(&mut client, key).await;
    assert_eq!(turns.len(), 4, "{turns:?}");
    assert!(
        "a b c d e f g h i j".starts_with(&turns[1].1) && turns[1].1.len() < 19,
        "the partial reply is kept: {turns:?}"
    );
    assert_eq!(turns[3], ("assistant".into(), "pong".into()));
}

#[tokio::test]
async fn a_bad_queue_mode_is_an_invalid_request() {
    let server = start(queue_scenario()).await;
    let (mut client, hello) = Client::connect(&server.url, &["operator.write"]).await;
    for method in ["chat.inject", "sessions.compact"] {
        assert!(offers(&hello["payload"], "methods", method), "{method}");
    }
    let res = client
        .chat_send_in("sideways", "agent:main:main", "ping", "q-1")
        .await;
    assert_eq!(res["error"]["code"], "INVALID_REQUEST");
    assert!(
        res["error"]["message"]
            .as_str()
            .unwrap()
            .contains("queueMode")
    );
    let res = client
        .call(
            "agent",
            json!({"message": "ping", "idempotencyKey": "q-2", "queueMode": 3}),
        )
        .await;
    assert_eq!(res["error"]["code"], "INVALID_REQUEST");
    // Nothing was admitted under those ids.
    let unknown = client.call("agent.wait", json!({"runId": "q-1"})).await;
    assert_eq!(unknown["error"]["code"], "INVALID_REQUEST");
    assert!(server.llm.requests().is_empty());
}

//! `sessions.subscribe` and the session events over a real WebSocket: a subscriber hears of
//! a turn's run (`sessions.changed` start and end) and of each message it appends
//! (`session.message`, with OpenClaw's message identity, the same `chat.history` shows);
//! a connection that did not subscribe hears of none; `sessions.messages.subscribe` gets one
//! session's messages only.

use super::*;

/// The session events among `frames`, with the values that differ from run to run (times,
/// ids, the connection's `seq`) replaced by what they are.
fn session_events(frames: &[Value]) -> Vec<Value> {
    frames
        .iter()
        .filter(|f| f["event"] == "sessions.changed" || f["event"] == "session.message")
        .map(|f| {
            let mut f = f.clone();
            f["seq"] = json!("<seq>");
            stable(&mut f);
            f
        })
        .collect()
}

fn stable(value: &mut Value) {
    match value {
        Value::Object(map) => {
            for (name, v) in map.iter_mut() {
                match name.as_str() {
                    "ts" | "updatedAt" | "createdAt" | "timestamp" => *v = json!("<time>"),
                    "sessionId" | "id" | "messageId" => *v = json!("<id>"),
                    _ => stable(v),
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(stable),
        _ => {}
    }
}

/// Frames until the run `run_id`'s `sessions.changed` end.
async fn until_run_end(client: &mut Client, run_id: &str) -> Vec<Value> {
    client
        .until(|f| {
            f["event"] == "sessions.changed"
                && f["payload"]["phase"] == "end"
                && f["payload"]["runId"] == run_id
        })
        .await
}

/// A row as the events show it, with `entry`'s fields (the index entry's) first.
fn row(key: &str, extra: Value, active: Option<&str>) -> Value {
    let mut row = json!({
        "sessionId": "<id>", "createdAt": "<time>", "updatedAt": "<time>",
        "compactionCount": 0, "key": key, "kind": "direct", "agentId": "main",
        "hasActiveRun": active.is_some(), "activeRunIds": active.map_or(vec![], |r| vec![r]),
    });
    if active.is_some() {
        row["status"] = json!("running");
    }
    if let (Value::Object(row), Value::Object(extra)) = (&mut row, extra) {
        row.extend(extra);
    }
    row
}

/// The fields every event repeats from the row, and the row as `session`.
fn snapshot(key: &str, extra: Value, active: Option<&str>) -> Value {
    let mut fields = json!({
        "sessionId": "<id>", "updatedAt": "<time>", "kind": "direct",
        "hasActiveRun": active.is_some(), "activeRunIds": active.map_or(vec![], |r| vec![r]),
        "session": row(key, extra, active),
    });
    if active.is_some() {
        fields["status"] = json!("running");
    }
    fields
}

fn event(name: &str, mut payload: Value, fields: Value) -> Value {
    if let (Value::Object(payload), Value::Object(fields)) = (&mut payload, fields) {
        payload.extend(fields);
    }
    json!({"type": "event", "event": name, "payload": payload, "seq": "<seq>"})
}

#[tokio::test]
async fn a_subscriber_hears_of_a_turn_s_run_and_messages() {
    let server = start(hi_scenario()).await;
    let (mut subscriber, _) = Client::connect(&server.url, &["operator.read"]).await;
    let (mut watcher, mut client) = clients(&server.url).await;
    let res = subscriber.call("sessions.subscribe", json!({})).await;
    assert_eq!(res["payload"], json!({"subscribed": true}), "{res}");
    let key = "agent:main:main";
    let sent = client.chat_send(key, "ping", "run-1").await;
    assert_eq!(sent["payload"]["status"], "started", "{sent}");
    let frames = until_run_end(&mut subscriber, "run-1").await;
    let user = json!({
        "role": "user", "content": "ping", "timestamp": "<time>",
        "idempotencyKey": "run-1:user",
        "__openclaw": {"id": "<id>", "seq": 1, "idempotencyKey": "run-1:user"},
    });
    let head = |seq: u64, message: Value| {
        json!({"sessionKey": key, "agentId": "main", "message": message, "messageId": "<id>",
               "messageSeq": seq, "runId": "run-1"})
    };
    let got = session_events(&frames);
    let reply = &got[2]["payload"]["message"];
    assert_eq!(reply["role"], "assistant", "{got:#?}");
    assert_eq!(reply["content"][0]["text"], "pong");
    assert_eq!(
        reply["__openclaw"],
        json!({"id": "<id>", "seq": 2, "runId": "run-1"})
    );
    // Once the turn is over, the row counts the reply's tokens.
    let usage = &reply["usage"];
    let counted = json!({"inputTokens": usage["input"], "outputTokens": usage["output"],
                         "totalTokens": usage["totalTokens"]});
    let expected = vec![
        event(
            "sessions.changed",
            json!({"sessionKey": key, "agentId": "main", "ts": "<time>", "phase": "start",
                   "runId": "run-1"}),
            snapshot(key, json!({}), Some("run-1")),
        ),
        event(
            "session.message",
            head(1, user),
            snapshot(key, json!({}), Some("run-1")),
        ),
        event(
            "session.message",
            head(2, reply.clone()),
            snapshot(key, json!({}), Some("run-1")),
        ),
        event(
            "sessions.changed",
            json!({"sessionKey": key, "agentId": "main", "ts": "<time>", "phase": "end",
                   "runId": "run-1"}),
            snapshot(key, counted, None),
        ),
    ];
    assert_eq!(got, expected);

    // chat.history gives the messages the same identity.
    let ids: Vec<&Value> = frames
        .iter()
        .filter(|f| f["event"] == "session.message")
        .map(|f| &f["payload"]["messageId"])
        .collect();
    let history = client.chat_history(key).await;
    let messages = history["payload"]["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 2, "{history}");
    assert_eq!(messages[0]["idempotencyKey"], "run-1:user");
    assert_eq!(
        messages[0]["__openclaw"],
        json!({"id": ids[0], "seq": 1, "idempotencyKey": "run-1:user"})
    );
    assert_eq!(
        messages[1]["__openclaw"],
        json!({"id": ids[1], "seq": 2, "runId": "run-1"})
    );
    assert_eq!(messages[1].get("idempotencyKey"), None);

    // The connection that did not subscribe saw the run's chat events but none of these.
    let seen = watcher
        .until(|f| f["event"] == "chat" && f["payload"]["state"] == "final")
        .await;
    assert!(session_events(&seen).is_empty(), "{seen:#?}");
    assert_eq!(watcher.call("health", json!({})).await["ok"], true);

    // Unsubscribed, it hears nothing more.
    let res = subscriber.call("sessions.unsubscribe", json!({})).await;
    assert_eq!(res["payload"], json!({"subscribed": false}));
    client.chat_send(key, "ping", "run-2").await;
    let seen = subscriber
        .until(|f| f["event"] == "chat" && f["payload"]["state"] == "final")
        .await;
    assert!(session_events(&seen).is_empty(), "{seen:#?}");
}

#[tokio::test]
async fn a_messages_subscriber_hears_only_its_session_s_messages() {
    let server = start(hi_scenario()).await;
    let (mut subscriber, _) = Client::connect(&server.url, &["operator.read"]).await;
    let (_, mut client) = clients(&server.url).await;
    let res = subscriber
        .call(
            "sessions.messages.subscribe",
            json!({"key": "agent:main:b", "includeApprovals": true}),
        )
        .await;
    let mut p = res["payload"].clone();
    stable(&mut p);
    assert_eq!(
        p,
        json!({"subscribed": true, "key": "agent:main:b", "approvalReplay": {
            "sessionKey": "agent:main:b", "updatedAtMs": p["approvalReplay"]["updatedAtMs"],
            "approvals": [], "truncated": false}})
    );
    client.chat_send("agent:main:a", "ping", "run-a").await;
    client.chat_send("agent:main:b", "ping", "run-b").await;
    let frames = subscriber
        .until(|f| {
            f["event"] == "chat"
                && f["payload"]["state"] == "final"
                && f["payload"]["runId"] == "run-b"
        })
        .await;
    let got: Vec<(Value, Value, Value)> = session_events(&frames)
        .iter()
        .map(|f| {
            let p = &f["payload"];
            (
                f["event"].clone(),
                p["sessionKey"].clone(),
                p["messageSeq"].clone(),
            )
        })
        .collect();
    let message = |seq: u64| (json!("session.message"), json!("agent:main:b"), json!(seq));
    assert_eq!(got, vec![message(1), message(2)]);
    let res = subscriber
        .call(
            "sessions.messages.unsubscribe",
            json!({"key": "agent:main:b"}),
        )
        .await;
    assert_eq!(
        res["payload"],
        json!({"subscribed": false, "key": "agent:main:b"})
    );
    let res = subscriber
        .call("sessions.messages.subscribe", json!({}))
        .await;
    assert_eq!(res["error"]["message"], "missing parameter key");
}

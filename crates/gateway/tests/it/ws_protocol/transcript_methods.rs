//! `chat.inject` and `sessions.compact` over a real WebSocket: writes to a session's
//! transcript that start no run.

use super::*;

/// Runs `ping` turns on `key` one after the other.
async fn ping_turns(client: &mut Client, key: &str, n: usize) {
    for i in 0..n {
        let accepted = client
            .call("agent", json!({"message": "ping", "sessionKey": key, "idempotencyKey": format!("{key}-{i}")}))
            .await;
        let last = client.response(accepted["id"].as_str().unwrap()).await;
        assert_eq!(last["payload"]["status"], "ok", "{last}");
    }
}

#[tokio::test]
async fn chat_inject_appends_a_note_that_history_shows() {
    let server = start(hi_scenario()).await;
    let (mut watcher, mut client) = clients(&server.url).await;
    let key = "agent:main:notes";
    let res = client
        .call(
            "chat.inject",
            json!({"sessionKey": key, "message": "hello"}),
        )
        .await;
    assert_eq!(
        (&res["error"]["code"], &res["error"]["message"]),
        (&json!("INVALID_REQUEST"), &json!("session not found"))
    );
    ping_turns(&mut client, key, 1).await;
    let res = client
        .call(
            "chat.inject",
            json!({"sessionKey": key, "message": "Deploy finished.", "label": "ops"}),
        )
        .await;
    assert_eq!(res["payload"]["ok"], true, "{res}");
    let id = res["payload"]["messageId"].as_str().unwrap().to_owned();
    // UIs see it at once as a final chat message.
    let frames = watcher
        .until(|f| {
            f["event"] == "chat"
                && f["payload"]["runId"]
                    .as_str()
                    .is_some_and(|r| r.starts_with("inject-"))
        })
        .await;
    let event = &frames.last().unwrap()["payload"];
    assert_eq!(event["runId"], format!("inject-{id}"));
    assert_eq!(event["state"], "final");
    assert_eq!(event["sessionKey"], key);
    assert_eq!(
        event["message"]["content"][0]["text"],
        "[ops]\n\nDeploy finished."
    );
    let history = client.chat_history(key).await;
    let messages = history["payload"]["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 3, "the turn's two messages, then the note");
    let note = &messages[2];
    assert_eq!(note["role"], "assistant");
    assert_eq!(note["model"], "gateway-injected");
    assert_eq!(note["content"][0]["text"], "[ops]\n\nDeploy finished.");
    // No run was started for it.
    assert_eq!(server.llm.requests().len(), 1);
    // Bad params and scopes.
    let res = client.call("chat.inject", json!({"sessionKey": key})).await;
    assert_eq!(res["error"]["code"], "INVALID_REQUEST");
    let res = client
        .call(
            "chat.inject",
            json!({"sessionKey": key, "message": "x", "label": 7}),
        )
        .await;
    assert_eq!(res["error"]["code"], "INVALID_REQUEST");
    let res = watcher
        .call("chat.inject", json!({"sessionKey": key, "message": "x"}))
        .await;
    assert_eq!(res["error"]["details"]["missingScope"], "operator.write");
}

#[tokio::test]
async fn sessions_compact_keeps_the_header_and_the_last_lines() {
    let (server, mut client) = start_connected(hi_scenario(), &["operator.write"]).await;
    let key = "agent:main:long";
    // model_change, thinking_level_change, then three turns of a run marker and two
    // messages: 11 entries.
    ping_turns(&mut client, key, 3).await;
    let history = client.chat_history(key).await;
    let session_id = history["payload"]["sessionId"].as_str().unwrap().to_owned();
    let path = server
        .dir
        .path()
        .join("main")
        .join(format!("{session_id}.jsonl"));
    let before = std::fs::read_to_string(&path).unwrap();
    assert_eq!(before.lines().count(), 12);

    let res = client
        .call("sessions.compact", json!({"key": key, "maxLines": 4}))
        .await;
    let p = &res["payload"];
    assert_eq!(
        (&p["ok"], &p["compacted"], &p["kept"], &p["key"]),
        (&json!(true), &json!(true), &json!(4), &json!(key)),
        "{res}"
    );
    // The original is kept aside, whole.
    let archived = p["archived"].as_str().unwrap();
    assert!(archived.contains(".jsonl.bak."), "{archived}");
    assert_eq!(std::fs::read_to_string(archived).unwrap(), before);
    let after = std::fs::read_to_string(&path).unwrap();
    let lines: Vec<&str> = after.lines().collect();
    let old: Vec<&str> = before.lines().collect();
    assert_eq!(lines.len(), 5);
    assert_eq!(lines[0], old[0], "the header stays");
    assert_eq!(lines[2..], old[9..], "the last entries stay as they were");
    let first: Value = serde_json::from_str(lines[1]).unwrap();
    assert_eq!(
        first["id"],
        serde_json::from_str::<Value>(old[8]).unwrap()["id"]
    );
    assert_eq!(
        first["parentId"],
        Value::Null,
        "its parent was cut: now a root"
    );
    let history = client.chat_history(key).await;
    let texts: Vec<&str> = history["payload"]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            m["content"][0]["text"]
                .as_str()
                .unwrap_or_else(|| m["content"].as_str().unwrap())
        })
        .collect();
    assert_eq!(texts, ["pong", "ping", "pong"]);
    // The session goes on from the kept lines: the next turn's model call sees only them.
    let accepted = client
        .call(
            "agent",
            json!({"message": "ping", "sessionKey": key, "idempotencyKey": "after"}),
        )
        .await;
    client.response(accepted["id"].as_str().unwrap()).await;
    let requests = server.llm.requests();
    let sent = requests.last().unwrap().body["messages"]
        .as_array()
        .unwrap()
        .len();
    assert_eq!(sent, 4, "three kept messages and the new one");
    let again = client
        .call("sessions.compact", json!({"key": key, "maxLines": 10}))
        .await;
    assert_eq!(again["payload"]["compacted"], false);
    // The cut model and thinking level were recorded again, then the turn's marker and two
    // messages.
    assert_eq!(again["payload"]["kept"], 4 + 2 + 3);
    // An unknown session has nothing to compact (OpenClaw's answer).
    let none = client
        .call("sessions.compact", json!({"key": "agent:main:nobody"}))
        .await;
    assert_eq!(
        none["payload"],
        json!({"ok": true, "key": "agent:main:nobody", "compacted": false, "reason": "no sessionId"})
    );
    for bad in [
        json!({"key": key, "maxLines": 0}),
        json!({"key": key, "maxLines": "3"}),
        json!({"maxLines": 3}),
    ] {
        let res = client.call("sessions.compact", bad).await;
        assert_eq!(res["error"]["code"], "INVALID_REQUEST", "{res}");
    }
}

#[tokio::test]
async fn sessions_compact_refuses_while_a_run_is_going() {
    let server = start(hi_scenario()).await;
    let key = "agent:main:busy";
    let (_watcher, mut client) = busy(&server.url, key, "b-1").await;
    let res = client
        .call("sessions.compact", json!({"key": key, "maxLines": 1}))
        .await;
    assert_eq!(res["error"]["code"], "UNAVAILABLE", "{res}");
    assert_eq!(res["error"]["details"]["retryable"], true);
    // Once the run ends it works.
    client
        .call("agent.wait", json!({"runId": "b-1", "timeoutMs": 10_000}))
        .await;
    let res = client
        .call("sessions.compact", json!({"key": key, "maxLines": 1}))
        .await;
    assert_eq!(res["payload"]["compacted"], true, "{res}");
}

//! `sessions.describe`, `sessions.create` and `sessions.resolve` over a real WebSocket, with
//! the params OpenClaw's TUI and Control UI send, and the `sessions.changed` events of the
//! session methods.

use super::*;

/// The `sessions.changed` frames among `frames`: (sessionKey, reason).
fn changes(frames: &[Value]) -> Vec<(Value, Value)> {
    frames
        .iter()
        .filter(|f| f["event"] == "sessions.changed")
        .map(|f| {
            (
                f["payload"]["sessionKey"].clone(),
                f["payload"]["reason"].clone(),
            )
        })
        .collect()
}

/// Frames until a `sessions.changed` with `reason`.
async fn until_change(client: &mut Client, reason: &str) -> Vec<Value> {
    client
        .until(|f| f["event"] == "sessions.changed" && f["payload"]["reason"] == reason)
        .await
}

#[tokio::test]
async fn sessions_describe_shows_the_live_row_or_null() {
    let (_server, mut client) = start_connected(hi_scenario(), &["operator.write"]).await;
    let res = client
        .call("sessions.describe", json!({"key": "agent:main:nope"}))
        .await;
    assert_eq!(res["payload"], json!({"session": null}), "{res}");
    let key = "agent:main:main";
    client.chat_send(key, "ping", "run-1").await;
    client
        .until(|f| f["event"] == "chat" && f["payload"]["state"] == "final")
        .await;
    let res = client.call("sessions.describe", json!({"key": key})).await;
    let session = &res["payload"]["session"];
    let list = client
        .call("sessions.list", json!({"agentId": "main", "limit": 1}))
        .await;
    // The list's row, and what is live about it.
    let mut expected = list["payload"]["sessions"][0].clone();
    expected["agentId"] = json!("main");
    expected["hasActiveRun"] = json!(false);
    expected["activeRunIds"] = json!([]);
    assert_eq!(session, &expected, "{res}");
    assert_eq!(session["key"], key);
    let res = client.call("sessions.describe", json!({})).await;
    assert_eq!(res["error"]["message"], "missing parameter key");
}

#[tokio::test]
async fn sessions_create_makes_a_session_and_announces_it() {
    let server = start(hi_scenario()).await;
    let (mut subscriber, _) = Client::connect(&server.url, &["operator.read"]).await;
    let (_, mut client) = clients(&server.url).await;
    subscriber.call("sessions.subscribe", json!({})).await;
    client.chat_send("agent:main:main", "ping", "run-1").await;
    client
        .until(|f| f["event"] == "chat" && f["payload"]["state"] == "final")
        .await;
    let parent = client
        .call("sessions.describe", json!({"key": "agent:main:main"}))
        .await;
    let parent_id = parent["payload"]["session"]["sessionId"].clone();
    // What the TUI's `/new` sends.
    let res = client
        .call(
            "sessions.create",
            json!({"key": "tui-1", "agentId": "main", "parentSessionKey": "agent:main:main",
                   "succeedsParent": true, "emitCommandHooks": true}),
        )
        .await;
    let p = &res["payload"];
    assert_eq!(p["ok"], true, "{res}");
    assert_eq!(p["key"], "agent:main:tui-1");
    assert_eq!(p["runStarted"], false);
    assert_eq!(
        p["resolved"],
        json!({"modelProvider": "mock", "model": "m"})
    );
    assert_eq!(p["sessionId"], p["entry"]["sessionId"]);
    let entry = &p["entry"];
    assert_eq!(
        (&entry["parentSessionKey"], &entry["parentSessionId"]),
        (&json!("agent:main:main"), &parent_id)
    );
    let frames = until_change(&mut subscriber, "create").await;
    let created = frames.last().unwrap();
    assert_eq!(created["payload"]["sessionKey"], "agent:main:tui-1");
    assert_eq!(created["payload"]["session"]["key"], "agent:main:tui-1");
    assert_eq!(created["payload"]["sessionId"], p["sessionId"]);
    // It is listed and described.
    let res = client
        .call("sessions.describe", json!({"key": "agent:main:tui-1"}))
        .await;
    assert_eq!(
        res["payload"]["session"]["parentSessionKey"],
        "agent:main:main"
    );
    // Once only.
    let res = client
        .call(
            "sessions.create",
            json!({"key": "tui-1", "agentId": "main"}),
        )
        .await;
    assert_eq!(
        res["error"]["message"], "session already exists: agent:main:tui-1",
        "{res}"
    );
    // Without a key, as the Control UI's new chat: a dashboard session.
    let res = client
        .call(
            "sessions.create",
            json!({"agentId": "main", "parentSessionKey": "agent:main:main",
                   "emitCommandHooks": true, "succeedsParent": false}),
        )
        .await;
    let key = res["payload"]["key"].as_str().unwrap();
    assert!(key.starts_with("agent:main:dashboard:"), "{res}");
    let res = client
        .call("sessions.create", json!({"agentId": "ghost"}))
        .await;
    assert_eq!(res["error"]["message"], "unknown agentId: ghost");
    // An already-qualified key is kept; a first message starts its turn.
    let res = client
        .call(
            "sessions.create",
            json!({"key": "agent:main:first", "message": "ping", "idempotencyKey": "run-f"}),
        )
        .await;
    let p = &res["payload"];
    assert_eq!(
        (&p["key"], &p["runStarted"], &p["runId"], &p["status"]),
        (
            &json!("agent:main:first"),
            &json!(true),
            &json!("run-f"),
            &json!("started")
        ),
        "{res}"
    );
    let frames = client
        .until(|f| f["event"] == "chat" && f["payload"]["state"] == "final")
        .await;
    let last = frames.last().unwrap();
    assert_eq!(last["payload"]["runId"], "run-f");

    // The other session methods' changes.
    client
        .patch_session("agent:main:tui-1", json!({"label": "Work"}))
        .await;
    client
        .call("sessions.reset", json!({"key": "agent:main:tui-1"}))
        .await;
    client
        .call("sessions.delete", json!({"key": "agent:main:tui-1"}))
        .await;
    let frames = until_change(&mut subscriber, "delete").await;
    let tui = json!("agent:main:tui-1");
    let got: Vec<(Value, Value)> = changes(&frames)
        .into_iter()
        .filter(|(key, _)| *key == tui)
        .collect();
    assert_eq!(
        got,
        vec![
            (tui.clone(), json!("patch")),
            (tui.clone(), json!("reset")),
            (tui.clone(), json!("delete")),
        ]
    );
    let deleted = frames.last().unwrap();
    assert_eq!(deleted["payload"].get("session"), None, "{deleted}");
}

#[tokio::test]
async fn sessions_resolve_finds_a_session_by_key_id_or_label() {
    let (_server, mut client) = start_connected(hi_scenario(), &["operator.write"]).await;
    client
        .call("sessions.create", json!({"key": "work", "label": "Work"}))
        .await;
    let described = client
        .call("sessions.describe", json!({"key": "agent:main:work"}))
        .await;
    let session_id = described["payload"]["session"]["sessionId"].clone();
    let found = json!({"ok": true, "key": "agent:main:work", "agentId": "main"});
    for params in [
        json!({"key": "agent:main:work"}),
        json!({"sessionId": session_id}),
        json!({"label": "Work"}),
    ] {
        let res = client.call("sessions.resolve", params).await;
        assert_eq!(res["payload"], found, "{res}");
    }
    let res = client
        .call("sessions.resolve", json!({"key": "agent:main:gone"}))
        .await;
    assert_eq!(
        (&res["error"]["code"], &res["error"]["message"]),
        (
            &json!("INVALID_REQUEST"),
            &json!("No session found: agent:main:gone")
        )
    );
    let res = client
        .call(
            "sessions.resolve",
            json!({"key": "agent:main:gone", "allowMissing": true}),
        )
        .await;
    assert_eq!(res["payload"], json!({"ok": false}));
    let res = client.call("sessions.resolve", json!({})).await;
    assert_eq!(
        res["error"]["message"],
        "Either key, sessionId, label, shortId, or reference is required"
    );
}

#[tokio::test]
async fn sessions_resolve_finds_the_control_uis_short_id_and_reference() {
    let (_server, mut client) = start_connected(hi_scenario(), &["operator.write"]).await;
    // As the Control UI's new chat: `agent:main:dashboard:<uuid>`, linked as the UUID's hex.
    let new_chat = json!({"agentId": "main", "parentSessionKey": "agent:main:main"});
    let created = client.ok("sessions.create", new_chat).await;
    let key = created["key"].as_str().unwrap().to_owned();
    let short = key.rsplit(':').next().unwrap().replace('-', "");
    assert_eq!(short.len(), 32, "{key}");
    let found = json!({"ok": true, "key": key, "agentId": "main"});
    for params in [
        json!({"shortId": short, "agentId": "main", "allowMissing": true}),
        json!({"shortId": &short[..8]}),
        json!({"shortId": short.to_uppercase(), "slugHint": "new-session"}),
        json!({"reference": {"key": key}, "agentId": "main", "includeGlobal": true,
               "includeUnknown": true, "allowMissing": true}),
        json!({"reference": {"key": key, "slug": "new-session"}}),
    ] {
        let res = client.ok("sessions.resolve", params.clone()).await;
        assert_eq!(res, found, "{params}: {res}");
    }
    // Two sessions the same 8 digits start: the app is given both to choose from.
    for n in 1..=2 {
        let key = format!("dashboard:abcdef01-0000-4000-8000-00000000000{n}");
        client.ok("sessions.create", json!({ "key": key })).await;
    }
    let res = client
        .ok("sessions.resolve", json!({"shortId": "abcdef01"}))
        .await;
    assert_eq!(
        (&res["ok"], &res["ambiguous"]),
        (&json!(true), &json!(true)),
        "{res}"
    );
    // Newest first, as the list; the two were made in the same millisecond or not.
    let mut candidates = res["candidates"].as_array().unwrap().clone();
    candidates.sort_by_key(|c| c["key"].as_str().unwrap().to_owned());
    assert_eq!(
        candidates,
        [
            json!({"key": "agent:main:dashboard:abcdef01-0000-4000-8000-000000000001", "agentId": "main"}),
            json!({"key": "agent:main:dashboard:abcdef01-0000-4000-8000-000000000002", "agentId": "main"}),
        ]
    );
    let full = json!({"shortId": "abcdef01000040008000000000000002"});
    let res = client.ok("sessions.resolve", full).await;
    assert_eq!(
        res["key"], "agent:main:dashboard:abcdef01-0000-4000-8000-000000000002",
        "{res}"
    );
    // Missing, malformed, and more than one selector.
    for (params, want) in [
        (
            json!({"shortId": "00000000", "allowMissing": true}),
            Ok(json!({"ok": false})),
        ),
        (
            json!({"reference": {"key": "agent:main:gone"}, "allowMissing": true}),
            Ok(json!({"ok": false})),
        ),
        (
            json!({"shortId": "00000000"}),
            Err("No session found: 00000000"),
        ),
        (
            json!({"shortId": "abc"}),
            Err("shortId must be 8-32 hexadecimal characters"),
        ),
        (
            json!({"shortId": "zzzzzzzz"}),
            Err("shortId must be 8-32 hexadecimal characters"),
        ),
        (
            json!({"slugHint": "x", "key": "agent:main:main"}),
            Err("slugHint requires shortId"),
        ),
        (
            json!({"shortId": "abcdef01", "key": "agent:main:main"}),
            Err("Provide either key, sessionId, label, shortId, or reference (not multiple)"),
        ),
    ] {
        let res = client.call("sessions.resolve", params.clone()).await;
        match want {
            Ok(payload) => assert_eq!(res["payload"], payload, "{params}: {res}"),
            Err(message) => assert_eq!(res["error"]["message"], message, "{params}: {res}"),
        }
    }
}

//! Presence and health over a real WebSocket: `hello-ok`'s snapshot lists who is connected
//! with the real state versions, connects and disconnects reach the other clients as
//! `presence` events, `system-presence` answers the list, and the health snapshot is sent
//! as `health` events on its refresh interval, each frame with `stateVersion`.

use super::*;

/// Connects as `client` (the `connect` params' `client`) with `scopes`; the `hello-ok` payload.
async fn connect_as(url: &str, client: Value, scopes: &[&str]) -> (Client, Value) {
    let (mut c, _) = Client::raw(url).await;
    let hello = c
        .call(
            "connect",
            json!({"minProtocol": 4, "maxProtocol": 4, "client": client,
                   "auth": {"token": TOKEN}, "role": "operator", "scopes": scopes}),
        )
        .await;
    assert_eq!(hello["ok"], true, "{hello}");
    (c, hello["payload"].clone())
}

/// The next event frame named `name`, skipping other frames.
async fn next_event(client: &mut Client, name: &str) -> Value {
    loop {
        let frame = client
            .frame()
            .await
            .expect("an event before the connection ends");
        if frame["type"] == "event" && frame["event"] == name {
            return frame;
        }
    }
}

/// `value` without its `ts`, after checking there is one (a time, so not compared exactly).
fn without_ts(value: &Value) -> Value {
    assert!(value["ts"].as_i64().unwrap() > 1_600_000_000_000, "{value}");
    let mut value = value.clone();
    value.as_object_mut().unwrap().remove("ts");
    value
}

/// The keys of an object, sorted (serde_json's map keeps them so).
fn keys(value: &Value) -> Vec<&str> {
    value
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect()
}

fn rows(list: &Value) -> &Vec<Value> {
    list.as_array().unwrap()
}

/// Checks `row` is the gateway's own row.
fn assert_gateway_row(row: &Value) {
    assert_eq!(
        keys(row),
        [
            "deviceFamily",
            "host",
            "mode",
            "modelIdentifier",
            "platform",
            "reason",
            "text",
            "ts",
            "version"
        ],
        "{row}"
    );
    assert_eq!(
        (&row["mode"], &row["reason"]),
        (&json!("gateway"), &json!("self"))
    );
    assert_eq!(row["version"], env!("CARGO_PKG_VERSION"));
    let host = row["host"].as_str().unwrap();
    assert_eq!(
        row["text"],
        format!(
            "Gateway: {host} · app {} · mode gateway · reason self",
            env!("CARGO_PKG_VERSION")
        )
    );
}

/// A control UI on a Mac, with every field a client can give.
fn desk() -> Value {
    json!({"id": "openclaw-control-ui", "displayName": "Desk", "version": "2026.9.6",
           "platform": "macos", "deviceFamily": "Mac", "modelIdentifier": "Mac14,2",
           "mode": "ui", "instanceId": "inst-desk"})
}

fn desk_row() -> Value {
    json!({"host": "Desk", "version": "2026.9.6", "platform": "macos", "deviceFamily": "Mac",
           "modelIdentifier": "Mac14,2", "mode": "ui", "reason": "connect",
           "roles": ["operator"], "scopes": ["operator.read"], "instanceId": "inst-desk",
           "text": "Node: Desk · mode ui"})
}

#[tokio::test]
async fn presence_follows_connects_and_disconnects() {
    let server = start(hi_scenario()).await;
    let (mut desk_client, hello) = connect_as(&server.url, desk(), &["operator.read"]).await;
    assert!(offers(&hello, "events", "presence"));
    assert!(offers(&hello, "methods", "system-presence"));
    let snapshot = &hello["snapshot"];
    assert_eq!(
        snapshot["stateVersion"],
        json!({"presence": 2, "health": 1})
    );
    let listed = rows(&snapshot["presence"]);
    assert_eq!(listed.len(), 2, "{listed:?}");
    assert_gateway_row(&listed[0]);
    assert_eq!(without_ts(&listed[1]), desk_row());
    let desk_ts = listed[1]["ts"].clone();

    // A second client: the first one hears of it, and its own snapshot lists both.
    let (web, web_hello) = connect_as(
        &server.url,
        json!({"id": "webchat", "version": "0.1.0", "platform": "web", "mode": "webchat"}),
        &["operator.write"],
    )
    .await;
    let joined = next_event(&mut desk_client, "presence").await;
    assert_eq!(
        keys(&joined),
        ["event", "payload", "seq", "stateVersion", "type"]
    );
    assert_eq!(joined["stateVersion"], json!({"presence": 3, "health": 1}));
    assert_eq!(keys(&joined["payload"]), ["presence"]);
    let listed = rows(&joined["payload"]["presence"]);
    assert_eq!(listed.len(), 3, "{listed:?}");
    assert_gateway_row(&listed[0]);
    let web_row = json!({"host": "webchat", "version": "0.1.0", "platform": "web",
                         "mode": "webchat", "reason": "connect", "roles": ["operator"],
                         "scopes": ["operator.write"], "text": "Node: webchat · mode webchat"});
    assert_eq!(without_ts(&listed[1]), web_row, "newest first");
    let mut desk_full = desk_row();
    desk_full["ts"] = desk_ts;
    assert_eq!(listed[2], desk_full, "the first client's row is unchanged");
    let web_snapshot = &web_hello["snapshot"];
    assert_eq!(web_snapshot["stateVersion"], joined["stateVersion"]);
    assert_eq!(rows(&web_snapshot["presence"])[1..], listed[1..]);

    // `system-presence` answers the bare list.
    let answer = desk_client.call("system-presence", json!({})).await;
    let answered = rows(&answer["payload"]);
    assert_gateway_row(&answered[0]);
    assert_eq!(answered[1..], listed[1..]);

    // The second client leaves: the first hears of it with the next version.
    let mut web = web;
    web.ws.close(None).await.unwrap();
    let left = next_event(&mut desk_client, "presence").await;
    assert_eq!(left["stateVersion"], json!({"presence": 4, "health": 1}));
    let listed = rows(&left["payload"]["presence"]);
    assert_eq!(listed.len(), 2, "{listed:?}");
    assert_gateway_row(&listed[0]);
    assert_eq!(without_ts(&listed[1]), desk_row());
    assert!(left["seq"].as_u64().unwrap() > joined["seq"].as_u64().unwrap());
}

#[tokio::test]
async fn cli_clients_are_not_listed_and_the_list_needs_read_scope() {
    let server = start(hi_scenario()).await;
    let (mut first, _) = connect_as(
        &server.url,
        json!({"id": "test", "version": "1", "platform": "linux", "mode": "test"}),
        &["operator.read"],
    )
    .await;
    // A one-off CLI call (OpenClaw's `gateway call`) is not a row and changes no version.
    let (mut cli, cli_hello) = connect_as(
        &server.url,
        json!({"id": "cli", "version": "2026.9.6", "platform": "linux", "mode": "cli"}),
        &[],
    )
    .await;
    assert_eq!(cli_hello["snapshot"]["stateVersion"]["presence"], 2);
    let listed = rows(&cli_hello["snapshot"]["presence"]);
    assert_eq!(listed.len(), 2, "{listed:?}");
    assert_eq!(listed[1]["host"], "test");
    let refused = cli.call("system-presence", json!({})).await;
    assert_eq!(refused["error"]["code"], "FORBIDDEN");
    assert_eq!(refused["error"]["details"]["missingScope"], "operator.read");
    cli.ws.close(None).await.unwrap();
    assert!(cli.frame().await.is_none());

    // So the next presence event the first client gets is the next real client's, at the
    // version right after its own snapshot's.
    let (_second, _) = connect_as(
        &server.url,
        json!({"id": "test", "displayName": "second", "mode": "test"}),
        &["operator.read"],
    )
    .await;
    let event = next_event(&mut first, "presence").await;
    assert_eq!(event["stateVersion"], json!({"presence": 3, "health": 1}));
    let hosts: Vec<&Value> = rows(&event["payload"]["presence"])
        .iter()
        .map(|row| &row["host"])
        .skip(1)
        .collect();
    assert_eq!(hosts, [&json!("second"), &json!("test")]);
}

#[tokio::test]
async fn health_events_carry_the_health_payload_on_every_refresh() {
    let mut server = start_with(hi_scenario(), |o| {
        o.health_refresh_interval = Duration::from_millis(200);
    })
    .await;
    let (mut client, hello) = connect_as(
        &server.url,
        json!({"id": "test", "mode": "test"}),
        &["operator.read"],
    )
    .await;
    let health = client.call("health", json!({})).await;
    let answered = without_ts(&health["payload"]);
    assert_eq!(
        answered,
        json!({"ok": true, "durationMs": 0, "channels": {}, "channelOrder": [],
               "heartbeatSeconds": 0, "defaultAgentId": "main",
               "agents": [{"agentId": "main", "isDefault": true}],
               "agentRunner": {"kind": "embedded"}})
    );
    let snapshot = &hello["snapshot"];
    assert_eq!(without_ts(&snapshot["health"]), answered);
    let start = snapshot["stateVersion"]["health"].as_u64().unwrap();
    assert_eq!(snapshot["stateVersion"]["presence"], 2);

    // Every refresh is an event with the next health version; an unchanged payload
    // answered by `health` is not.
    let mut previous_seq = 0;
    for bump in 1..=2 {
        let event = next_event(&mut client, "health").await;
        assert_eq!(
            keys(&event),
            ["event", "payload", "seq", "stateVersion", "type"]
        );
        assert_eq!(
            event["stateVersion"],
            json!({"presence": 2, "health": start + bump}),
            "{event}"
        );
        assert_eq!(without_ts(&event["payload"]), answered);
        let seq = event["seq"].as_u64().unwrap();
        assert!(seq > previous_seq);
        previous_seq = seq;
    }
    server.stop.cancel();
    tokio::time::timeout(Duration::from_secs(5), &mut server.task)
        .await
        .unwrap()
        .unwrap();
}

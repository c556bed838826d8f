//! A worker's dialog (pi's `extension_ui_request`, here a `select`) during a gateway turn
//! on the `rpc` runner: shown to a WS client that declared the `extension-ui` cap and
//! answered by it, or answered automatically (the first option) when no such client is
//! connected. The worker is the scripted `pincer-mock-rpc`, which logs what it was sent.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::path::{Path, PathBuf};

use common::gateway::*;
use common::{Home, mock};
use pincer_testkit::mock_rpc::write_script;
use pincer_testkit::{Scenario, mock_rpc_path};
use serde_json::{Value, json};

const TOKEN: &str = "dialog-token";
const KEY: &str = "agent:main:main";

fn assistant(text: &str) -> Value {
    json!({"role": "assistant", "content": [{"type": "text", "text": text}],
           "api": "openai-completions", "provider": "mock", "model": "primary",
           "usage": {"input": 1, "output": 1, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 2,
                     "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}},
           "stopReason": "stop", "timestamp": 1})
}

/// A worker that opens a `select` on `prompt` and ends the turn once it is answered.
fn script(dir: &Path) -> PathBuf {
    let reply = assistant("picked");
    write_script(
        dir,
        "worker.json",
        &json!({"rules": [
            {"on": "prompt", "events": [
                {"type": "agent_start"},
                {"type": "extension_ui_request", "id": "w-1", "method": "select",
                 "title": "Pick a colour", "options": ["red", "blue"]},
            ]},
            {"on": "extension_ui_response", "silent": true, "events": [
                {"type": "message_start", "message": reply},
                {"type": "message_end", "message": reply},
                {"type": "agent_end", "messages": [reply]},
            ]},
        ]}),
    )
    .unwrap()
}

/// A gateway whose workers are the scripted worker, logging to the returned file.
async fn gateway() -> (Home, Foreground, PathBuf) {
    // Never called: the worker answers by script. The config still needs a model.
    let llm = mock(Scenario::new()).await;
    let home = Home::new();
    let script = script(home.dir.path());
    let log = home.dir.path().join("worker.log");
    let command = json!([
        mock_rpc_path().unwrap(),
        script.display().to_string(),
        log.display().to_string()
    ]);
    let (home, _port) = gateway_home_in(
        home,
        &llm,
        TOKEN,
        "heartbeat: { every: \"0m\" }",
        &format!(
            "agent: {{ runner: \"rpc\", pool: {{ min: 0, max: 1 }}, workerCommand: {command} }},"
        ),
    );
    let gateway = Foreground::start(&home, &["gateway", "run"]);
    // The mock is not needed past the config; keep it alive with the home anyway.
    std::mem::forget(llm);
    (home, gateway, log)
}

/// The `extension_ui_response` lines the worker was sent.
fn answers(log: &Path) -> Vec<Value> {
    std::fs::read_to_string(log)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|v| v["type"] == "extension_ui_response")
        .collect()
}

/// Sends the message that opens the dialog, as run `r1`, without waiting for the response
/// (it may come behind the dialog).
async fn choose(client: &mut WsClient) {
    client
        .send_request(
            "chat.send",
            json!({"sessionKey": KEY, "message": "choose", "idempotencyKey": "r1"}),
        )
        .await;
}

/// The gateway's response to the client's `extension_ui_response` with `params`.
async fn answer(client: &mut WsClient, params: Value) -> Value {
    client.call("extension_ui_response", params).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dialog_goes_to_the_client_that_shows_dialogs_and_its_answer_to_the_worker() {
    let (_home, gateway, log) = gateway().await;
    let mut client = WsClient::connect_with_caps(gateway.port, TOKEN, &["extension-ui"]).await;
    choose(&mut client).await;
    let asked = client.event("extension_ui_request").await;
    assert_eq!(
        asked["payload"],
        json!({"id": "dlg-1", "method": "select", "title": "Pick a colour",
               "options": ["red", "blue"], "runId": "r1", "sessionKey": KEY}),
        "{asked}"
    );
    assert!(
        answers(&log).is_empty(),
        "nothing answered before the client"
    );

    let bad = answer(&mut client, json!({"id": "dlg-9", "value": "red"})).await;
    assert_eq!(bad["ok"], false, "{bad}");
    assert_eq!(
        bad["error"]["message"],
        "no open dialog dlg-9: it was answered already, timed out (and was answered automatically), or its run ended"
    );
    let empty = answer(&mut client, json!({"id": "dlg-1"})).await;
    assert_eq!(
        empty["error"]["message"], "an answer needs value, confirmed or cancelled",
        "{empty}"
    );

    let answered = answer(&mut client, json!({"id": "dlg-1", "value": "blue"})).await;
    assert_eq!(
        answered["payload"],
        json!({"id": "dlg-1", "answered": true}),
        "{answered}"
    );
    let done = client.chat_event("r1", "final").await;
    assert_eq!(text_of(&done["payload"]["message"]), "picked", "{done}");
    assert_eq!(
        answers(&log),
        [json!({"type": "extension_ui_response", "id": "w-1", "value": "blue"})]
    );
    let again = answer(&mut client, json!({"id": "dlg-1", "value": "red"})).await;
    assert_eq!(again["ok"], false, "answered once only: {again}");
    drop(gateway);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_no_client_showing_dialogs_the_worker_gets_the_automatic_answer() {
    let (_home, gateway, log) = gateway().await;
    // Connected, but not declaring `extension-ui`: it is not asked.
    let mut client = WsClient::connect(gateway.port, TOKEN).await;
    choose(&mut client).await;
    let done = loop {
        let frame = client.frame().await.expect("the turn ends");
        assert_ne!(frame["event"], "extension_ui_request", "{frame}");
        if frame["event"] == "chat"
            && frame["payload"]["runId"] == "r1"
            && frame["payload"]["state"] == "final"
        {
            break frame;
        }
    };
    assert_eq!(text_of(&done["payload"]["message"]), "picked", "{done}");
    assert_eq!(
        answers(&log),
        [json!({"type": "extension_ui_response", "id": "w-1", "value": "red"})]
    );
    drop(gateway);
}

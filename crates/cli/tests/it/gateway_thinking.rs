//! A turn's own thinking level: `chat.send`'s and `agent`'s `thinking` and a cron job's
//! `payload.thinking` (`pincer cron add --thinking`) reach the model for that turn, above the
//! session's `/think`; an unknown level is refused with the valid ones named.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::gateway::{Foreground, free_port, run_and_connect};
use common::{Home, json_of, mock, reply_when_containing};
use pincer_testkit::{Api, MockLlm};
use serde_json::{Value, json};

const TOKEN: &str = "thinking-test-token";

/// A home whose model `mock/primary` reasons (so a level shows as `reasoning_effort` in the
/// request) and whose gateway listens on a free port.
fn reasoning_home(llm: &MockLlm) -> (Home, u16) {
    let home = Home::new();
    let port = free_port();
    home.write_config(&format!(
        r#"{{
  models: {{ providers: {{ mock: {{
    baseUrl: "{}", api: "openai-completions", apiKey: "mock-key",
    models: [{{ id: "primary", reasoning: true }}],
  }} }} }},
  agents: {{ defaults: {{ model: "mock/primary" }} }},
  gateway: {{ port: {port}, auth: {{ token: "{TOKEN}" }} }},
}}"#,
        llm.base_url(Api::OpenAiCompletions)
    ));
    (home, port)
}

/// The `reasoning_effort` of the model's last request (`null` when it had none).
fn last_effort(llm: &MockLlm) -> Value {
    let body = llm.requests().last().unwrap().body.clone();
    body.get("reasoning_effort").cloned().unwrap_or(Value::Null)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chat_send_thinking_applies_to_that_turn_only() {
    let llm = mock(reply_when_containing("ping", "pong")).await;
    let (home, port) = reasoning_home(&llm);
    let (_gateway, mut ws) = run_and_connect(&home, port, TOKEN).await;
    let key = "agent:main:main";

    // The session's own level first, so the override is seen to win over it.
    ws.chat_until(key, "ping 0", "t-0", "final").await;
    assert_eq!(last_effort(&llm), Value::Null);
    let set = ws
        .call(
            "sessions.patch",
            json!({"key": key, "thinkingLevel": "low"}),
        )
        .await;
    assert_eq!(set["ok"], true, "{set}");

    let sent = ws
        .call(
            "chat.send",
            json!({"sessionKey": key, "message": "ping 1", "idempotencyKey": "t-1",
                   "thinking": "High"}),
        )
        .await;
    assert_eq!(sent["payload"]["status"], "started", "{sent}");
    ws.chat_event("t-1", "final").await;
    assert_eq!(last_effort(&llm), "high");

    // The next turn without `thinking` is back on the session's level.
    ws.chat_until(key, "ping 2", "t-2", "final").await;
    assert_eq!(last_effort(&llm), "low");

    // `agent` takes it too.
    let accepted = ws
        .call(
            "agent",
            json!({"sessionKey": key, "message": "ping 3", "idempotencyKey": "t-3",
                   "thinking": "minimal"}),
        )
        .await;
    assert_eq!(accepted["ok"], true, "{accepted}");
    let waited = ws.wait_run("t-3", 20_000).await;
    assert_eq!(waited["payload"]["status"], "ok", "{waited}");
    assert_eq!(last_effort(&llm), "minimal");

    // An unknown level is refused before anything runs.
    let before = llm.requests().len();
    for method in ["chat.send", "agent"] {
        let refused = ws
            .call(
                method,
                json!({"sessionKey": key, "message": "ping 4", "idempotencyKey": "t-4",
                       "thinking": "loud"}),
            )
            .await;
        assert_eq!(refused["ok"], false, "{refused}");
        assert_eq!(refused["error"]["code"], "INVALID_REQUEST", "{refused}");
        assert_eq!(
            refused["error"]["message"],
            "invalid thinking level \"loud\": use one of off, minimal, low, medium, high, xhigh",
            "{refused}"
        );
    }
    assert_eq!(llm.requests().len(), before);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cron_add_thinking_applies_to_the_jobs_runs() {
    let llm = mock(reply_when_containing("cron ping", "pong from cron")).await;
    let (home, _port) = reasoning_home(&llm);
    let _gateway = Foreground::start(&home, &["gateway", "run"]);

    let refused = home.run(&[
        "cron",
        "add",
        "--every",
        "1h",
        "--message",
        "cron ping",
        "--thinking",
        "loud",
    ]);
    refused.assert_fails(
        1,
        "--thinking: invalid thinking level \"loud\": use one of off, minimal, low, medium, \
         high, xhigh",
    );

    let job = json_of(&home.run(&[
        "cron",
        "add",
        "--json",
        "--every",
        "1h",
        "--message",
        "cron ping",
        "--thinking",
        "Medium",
        "--no-deliver",
    ]));
    assert_eq!(job["payload"]["thinking"], "medium", "{job}");
    let id = job["id"].as_str().unwrap().to_owned();
    let ran = home.run_ok(&["cron", "run", &id]);
    assert!(ran.stdout().contains("pong from cron"), "{}", ran.stdout());
    assert_eq!(last_effort(&llm), "medium");
}

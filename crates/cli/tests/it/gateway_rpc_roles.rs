//! `roles` on the `rpc` runner (issue 22): each session runs under the role its chat
//! resolves to, and a role's `roles.capabilities` entry is what its workers are started with
//! (`--tools`, `--system-prompt`, `--append-system-prompt` with the gateway's protocol
//! sections, `--skill`, `PI_CODING_AGENT_DIR`). Two roles get two differently started
//! workers; a second session of the first role reuses that role's idle worker, never the
//! other's. The workers are the scripted `pincer-mock-rpc`, which traces how it was started
//! and what it received.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::path::Path;

use common::gateway::*;
use common::{Home, mock};
use pincer_testkit::mock_rpc::{TRACE_ENV, write_script};
use pincer_testkit::{Scenario, mock_rpc_path};
use serde_json::{Value, json};

const TOKEN: &str = "roles-token";
const OPS_ONE: &str = "agent:main:telegram:group:-100";
const OPS_TWO: &str = "agent:main:telegram:group:-101";
const MAIN: &str = "agent:main:main";

/// A worker that answers every prompt with "done".
fn script(dir: &Path) -> std::path::PathBuf {
    let reply = json!({"role": "assistant", "content": [{"type": "text", "text": "done"}],
           "api": "openai-completions", "provider": "mock", "model": "primary",
           "usage": {"input": 1, "output": 1, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 2,
                     "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}},
           "stopReason": "stop", "timestamp": 1});
    write_script(
        dir,
        "worker.json",
        &json!({"rules": [
            {"on": "prompt", "events": [
                {"type": "agent_start"},
                {"type": "message_start", "message": reply},
                {"type": "message_end", "message": reply},
                {"type": "agent_end", "messages": [reply]},
            ]},
        ]}),
    )
    .unwrap()
}

/// The trace's lines: each worker's start, then what it received.
fn trace(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// The value after `flag` in `argv`.
fn flag<'a>(argv: &'a Value, flag: &str) -> Option<&'a str> {
    let argv = argv.as_array().unwrap();
    let at = argv.iter().position(|a| a == flag)?;
    argv.get(at + 1).and_then(Value::as_str)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_role_gets_its_own_workers_started_with_its_capabilities() {
    // Never called: the workers answer by script. The config still needs a model.
    let llm = mock(Scenario::new()).await;
    let home = Home::new();
    let user = home.dir.path().join("user");
    let traced = home.dir.path().join("trace.jsonl");
    let home = home.with_env(TRACE_ENV, &traced.display().to_string());
    let command = json!([
        mock_rpc_path().unwrap(),
        script(home.dir.path()).display().to_string(),
        home.dir.path().join("worker.log").display().to_string()
    ]);
    let roles = r#"roles: {
        default: "chat",
        channels: { telegram: { groups: { "-100": "ops", "-101": "ops" } } },
        capabilities: {
          ops: { tools: ["read", "bash"], appendSystemPrompt: "You run deployments.",
                 skills: ["~/skills/deploy"], agentDir: "~/ops-agent" },
          chat: { tools: ["read"], systemPrompt: "You chat." },
        },
      },"#;
    let (home, port) = gateway_home_in(
        home,
        &llm,
        TOKEN,
        "heartbeat: { every: \"0m\" }",
        &format!(
            "agent: {{ runner: \"rpc\", pool: {{ min: 0, max: 3 }}, workerCommand: {command} }},\n{roles}"
        ),
    );
    let (gateway, mut client) = run_and_connect(&home, port, TOKEN).await;

    client.chat_until(OPS_ONE, "deploy it", "r1", "final").await;
    client.chat_until(MAIN, "hello", "r2", "final").await;
    client
        .chat_until(OPS_TWO, "deploy more", "r3", "final")
        .await;

    let lines = trace(&traced);
    let starts: Vec<&Value> = lines.iter().filter(|l| l.get("argv").is_some()).collect();
    assert_eq!(starts.len(), 2, "one worker per role: {starts:#?}");
    let ops = starts
        .iter()
        .find(|s| flag(&s["argv"], "--tools") == Some("read,bash"))
        .expect("the ops worker");
    let chat = starts
        .iter()
        .find(|s| flag(&s["argv"], "--tools") == Some("read"))
        .expect("the chat worker");

    let append = flag(&ops["argv"], "--append-system-prompt").unwrap();
    assert!(
        append.starts_with("You run deployments.\n\n## Cron Event Protocol\n"),
        "{append}"
    );
    assert!(append.contains("\n\n## Media Reply Protocol\n"), "{append}");
    assert!(!append.contains("Heartbeat Protocol"), "{append}");
    assert_eq!(flag(&ops["argv"], "--system-prompt"), None);
    assert_eq!(
        flag(&ops["argv"], "--skill"),
        Some(user.join("skills/deploy").to_str().unwrap())
    );
    assert_eq!(
        ops["env"],
        json!({"PI_CODING_AGENT_DIR": user.join("ops-agent").display().to_string()})
    );

    assert_eq!(flag(&chat["argv"], "--system-prompt"), Some("You chat."));
    let append = flag(&chat["argv"], "--append-system-prompt").unwrap();
    assert!(append.starts_with("## Cron Event Protocol\n"), "{append}");
    assert_eq!(flag(&chat["argv"], "--skill"), None);
    assert_eq!(chat["env"], json!({}));

    // Who got which message: the second ops session reused the ops worker.
    let prompts_of = |pid: &Value| -> Vec<String> {
        lines
            .iter()
            .filter(|l| &l["pid"] == pid && l["received"]["type"] == "prompt")
            .map(|l| l["received"]["message"].as_str().unwrap().to_owned())
            .collect()
    };
    let (ops_prompts, chat_prompts) = (prompts_of(&ops["pid"]), prompts_of(&chat["pid"]));
    assert_eq!(ops_prompts.len(), 2, "{ops_prompts:?}");
    assert!(ops_prompts[0].ends_with("deploy it"), "{ops_prompts:?}");
    assert!(ops_prompts[1].ends_with("deploy more"), "{ops_prompts:?}");
    assert_eq!(chat_prompts.len(), 1, "{chat_prompts:?}");
    assert!(chat_prompts[0].ends_with("hello"), "{chat_prompts:?}");
    drop(gateway);
}

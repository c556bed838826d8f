//! `notifyOnExit` (issue 22): a backgrounded command's exit is announced unless the call,
//! or else the agent's `tools.exec.notifyOnExit`, says false; the call wins over the agent.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::time::Duration;

use pincer_agent::{AgentTool, ToolContext};
use pincer_tools::PathPolicy;
use pincer_tools::exec::{ExecExitNotice, ExecSecurity, ProcessRegistry, exec_tools_notifying};
use serde_json::{Value, json};
use tokio::sync::mpsc::UnboundedReceiver;
use tokio_util::sync::CancellationToken;

/// `exec` and `process` with the agent setting `notify`, and where their notices go.
fn tools(
    dir: &tempfile::TempDir,
    notify: Option<bool>,
) -> (
    Arc<dyn AgentTool>,
    Arc<dyn AgentTool>,
    UnboundedReceiver<ExecExitNotice>,
) {
    let policy = PathPolicy::workspace(dir.path()).unwrap();
    let (tx, notices) = tokio::sync::mpsc::unbounded_channel();
    let registry = ProcessRegistry::new().with_exit_callback(Arc::new(move |n| {
        let _ = tx.send(n);
    }));
    let mut tools = exec_tools_notifying(policy, registry, ExecSecurity::Full, "agent", notify);
    let process = tools.pop().unwrap();
    let exec = tools.pop().unwrap();
    (exec, process, notices)
}

async fn call(tool: &Arc<dyn AgentTool>, args: Value) -> pincer_agent::ToolOutput {
    let ctx = ToolContext::new("call", CancellationToken::new());
    tokio::time::timeout(Duration::from_secs(30), tool.execute(args, ctx))
        .await
        .expect("the call returns")
        .expect("the call succeeds")
}

/// Starts `echo <word>` in the background with `extra` arguments, waits until the process
/// tool sees it ended, and returns its session id.
async fn run_to_exit(
    exec: &Arc<dyn AgentTool>,
    process: &Arc<dyn AgentTool>,
    word: &str,
    extra: Value,
) -> String {
    let mut args = json!({"command": format!("echo {word}"), "background": true});
    for (k, v) in extra.as_object().unwrap() {
        args[k] = v.clone();
    }
    let out = call(exec, args).await;
    let id = out.details.as_ref().unwrap()["sessionId"]
        .as_str()
        .unwrap()
        .to_owned();
    for _ in 0..400 {
        let poll = call(process, json!({"action": "poll", "sessionId": id})).await;
        if poll.details.unwrap()["status"] != "running" {
            return id;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!("{id} never ended");
}

/// The texts of the notices that arrived, after giving the exit callback a moment.
async fn drained(notices: &mut UnboundedReceiver<ExecExitNotice>) -> Vec<String> {
    tokio::time::sleep(Duration::from_millis(200)).await;
    let mut out = Vec::new();
    while let Ok(n) = notices.try_recv() {
        out.push(n.text);
    }
    out
}

#[tokio::test]
async fn the_call_decides_whether_an_exit_is_announced() {
    let dir = tempfile::tempdir().unwrap();
    let (exec, process, mut notices) = tools(&dir, None);
    let quiet = run_to_exit(&exec, &process, "quiet", json!({"notifyOnExit": false})).await;
    assert_eq!(drained(&mut notices).await, Vec::<String>::new(), "{quiet}");
    let loud = run_to_exit(&exec, &process, "loud", json!({"notifyOnExit": true})).await;
    assert_eq!(
        drained(&mut notices).await,
        vec![format!("Exec completed ({}, code 0) :: loud", &loud[..8])]
    );
    // No parameter: the default, announced.
    let plain = run_to_exit(&exec, &process, "plain", json!({})).await;
    assert_eq!(
        drained(&mut notices).await,
        vec![format!("Exec completed ({}, code 0) :: plain", &plain[..8])]
    );
}

#[tokio::test]
async fn the_agent_setting_is_the_default_and_the_call_overrides_it() {
    let dir = tempfile::tempdir().unwrap();
    let (exec, process, mut notices) = tools(&dir, Some(false));
    run_to_exit(&exec, &process, "quiet", json!({})).await;
    assert_eq!(drained(&mut notices).await, Vec::<String>::new());
    let asked = run_to_exit(&exec, &process, "asked", json!({"notifyOnExit": true})).await;
    assert_eq!(
        drained(&mut notices).await,
        vec![format!("Exec completed ({}, code 0) :: asked", &asked[..8])]
    );
}

#[tokio::test]
async fn the_parameter_is_offered_to_the_model() {
    let dir = tempfile::tempdir().unwrap();
    let (exec, _, _) = tools(&dir, None);
    let schema = exec.parameters();
    assert_eq!(
        schema["properties"]["notifyOnExit"]["type"],
        json!(["boolean", "null"]),
        "{schema}"
    );
}

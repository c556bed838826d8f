//! Numbers a model passes to `exec` (issue 17, finding 6): however large, negative or
//! strange, the call returns normally and the command's output and exit arrive; a huge
//! timeout used to panic the supervisor (`Instant + Duration::MAX`), leaving a command
//! that looked as if it ran forever.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::time::Duration;

use pincer_agent::{AgentTool, ToolContext};
use pincer_tools::PathPolicy;
use pincer_tools::exec::{ExecExitNotice, ExecSecurity, ProcessRegistry, exec_tools};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

fn tools(
    dir: &tempfile::TempDir,
) -> (
    Arc<dyn AgentTool>,
    Arc<dyn AgentTool>,
    tokio::sync::mpsc::UnboundedReceiver<ExecExitNotice>,
) {
    let policy = PathPolicy::workspace(dir.path()).unwrap();
    let (tx, notices) = tokio::sync::mpsc::unbounded_channel();
    let registry = ProcessRegistry::new().with_exit_callback(Arc::new(move |n| {
        let _ = tx.send(n);
    }));
    let mut tools = exec_tools(policy, registry, ExecSecurity::Full, "agent");
    let process = tools.pop().unwrap();
    let exec = tools.pop().unwrap();
    (exec, process, notices)
}

async fn exec(tool: &Arc<dyn AgentTool>, args: Value) -> pincer_agent::ToolOutput {
    let ctx = ToolContext::new("call", CancellationToken::new());
    tokio::time::timeout(Duration::from_secs(30), tool.execute(args, ctx))
        .await
        .expect("the call returns")
        .expect("the call succeeds")
}

#[tokio::test]
async fn huge_timeouts_and_yields_still_return_the_output_and_exit() {
    let dir = tempfile::tempdir().unwrap();
    let (exec_tool, _, _) = tools(&dir);
    for timeout in [
        json!(1e300),
        json!(f64::MAX),
        json!(1.8e19),
        json!(u64::MAX),
    ] {
        let out = exec(
            &exec_tool,
            json!({"command": "echo hi", "timeout": timeout, "yieldMs": 1e300}),
        )
        .await;
        assert_eq!(out.text_content(), "hi", "timeout {timeout}");
        assert_eq!(out.details.as_ref().unwrap()["exitCode"], 0);
    }
}

#[tokio::test]
async fn a_backgrounded_command_with_a_huge_timeout_announces_its_exit() {
    let dir = tempfile::tempdir().unwrap();
    let (exec_tool, _, mut notices) = tools(&dir);
    let out = exec(
        &exec_tool,
        json!({"command": "echo done", "timeout": 1e300, "background": true}),
    )
    .await;
    assert_eq!(out.details.as_ref().unwrap()["status"], "running");
    let notice = tokio::time::timeout(Duration::from_secs(10), notices.recv())
        .await
        .expect("an exit notice")
        .unwrap();
    assert_eq!(notice.exit_code, Some(0));
    assert!(notice.text.ends_with(":: done"), "{}", notice.text);
}

#[tokio::test]
async fn tiny_and_invalid_numbers_are_handled() {
    let dir = tempfile::tempdir().unwrap();
    let (exec_tool, _, _) = tools(&dir);
    // A sub-nanosecond timeout is a timeout, reported as such, never a panic.
    let ctx = ToolContext::new("call", CancellationToken::new());
    let err = exec_tool
        .execute(json!({"command": "sleep 5", "timeout": 1e-300}), ctx)
        .await
        .unwrap_err();
    assert!(err.to_string().contains("timed out"), "{err}");
    for bad in [json!(-1), json!(0)] {
        let ctx = ToolContext::new("call", CancellationToken::new());
        let err = exec_tool
            .execute(json!({"command": "echo hi", "timeout": bad}), ctx)
            .await
            .unwrap_err();
        assert!(err.to_string().contains("positive"), "{err}");
    }
    let out = exec(&exec_tool, json!({"command": "echo hi", "yieldMs": -1e300})).await;
    assert_eq!(out.text_content(), "hi");
}

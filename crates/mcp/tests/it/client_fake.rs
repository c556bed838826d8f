//! The client against a misbehaving server of our own (`fake_server.py`): one that never
//! answers `initialize`, one that writes lines that are not JSON-RPC, a huge result, a
//! tool with an invalid schema, a name already taken, a server exiting mid-call, and a
//! call that outlives `toolTimeoutMs`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::HashSet;
use std::time::{Duration, Instant};

use pincer_agent::{AgentTool, ToolError};
use pincer_config::McpServerConfig;
use pincer_mcp::ServerState;
use serde_json::json;

use super::support::{ctx, manager, manager_hiding, stdio, text, wait_dead};

const SCRIPT: &str = include_str!("fake_server.py");

/// The fake server in `mode`, or `None` (printed) without python3.
fn fake(dir: &tempfile::TempDir, mode: &str) -> Option<McpServerConfig> {
    if std::process::Command::new("python3")
        .arg("--version")
        .output()
        .is_err()
    {
        if std::env::var("CI").is_ok_and(|v| v == "true") {
            panic!("python3 is missing");
        }
        eprintln!("skipped: python3 is not installed");
        return None;
    }
    let path = dir.path().join("fake_server.py");
    std::fs::write(&path, SCRIPT).unwrap();
    Some(stdio("python3", &[path.to_str().unwrap(), mode]))
}

fn find(tools: &[std::sync::Arc<dyn AgentTool>], name: &str) -> std::sync::Arc<dyn AgentTool> {
    tools
        .iter()
        .find(|t| t.name() == name)
        .unwrap_or_else(|| panic!("no {name}"))
        .clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_never_initializes_times_out_and_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let Some(mut config) = fake(&dir, "silent") else {
        return;
    };
    config.startup_timeout_ms = Some(500);
    let mcp = manager(vec![("mute", config)]);
    let started = Instant::now();
    let tools = mcp.tools_for(None, &HashSet::new()).await;
    assert!(tools.is_empty());
    assert!(started.elapsed() < Duration::from_secs(5));
    let status = mcp.server_status("mute").unwrap();
    assert_eq!(status.state, ServerState::Failed);
    assert_eq!(
        status.error.as_deref(),
        Some("the server did not complete initialize within 500 ms")
    );
    // Within the back-off the next use fails at once, naming the cause.
    let err = mcp.start("mute").await.unwrap_err().to_string();
    assert!(
        err.starts_with("the server did not complete initialize within 500 ms (next attempt in"),
        "{err}"
    );
    mcp.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn garbage_lines_huge_results_bad_schemas_and_taken_names() {
    let dir = tempfile::tempdir().unwrap();
    let Some(config) = fake(&dir, "garbage") else {
        return;
    };
    let mcp = manager(vec![("bad", config)]);
    let taken: HashSet<String> = ["bad__echo".to_owned()].into();
    let tools = mcp.tools_for(None, &taken).await;
    let mut names: Vec<&str> = tools.iter().map(|t| t.name()).collect();
    names.sort();
    // The nameless entry is skipped; `bad__echo` was taken by another tool.
    assert_eq!(
        names,
        [
            "bad__badschema",
            "bad__crash",
            "bad__echo_2",
            "bad__grow",
            "bad__huge",
            "bad__sleep",
            "bad__touch"
        ]
    );
    assert_eq!(
        find(&tools, "bad__badschema").parameters(),
        &json!({"type": "object"})
    );
    let echo = find(&tools, "bad__echo_2");
    let out = echo.execute(json!({"text": "hi"}), ctx()).await.unwrap();
    assert_eq!(text(&out), "echo: hi");
    let err = echo.execute(json!("not an object"), ctx()).await;
    assert!(
        matches!(err, Err(ToolError::InvalidArguments { .. })),
        "{err:?}"
    );

    let huge = find(&tools, "bad__huge")
        .execute(json!({}), ctx())
        .await
        .unwrap();
    let body = text(&huge);
    assert_eq!(
        body.len(),
        100 * 1024 + "\n[output truncated: 197600 more bytes not shown (limit 102400 bytes)]".len()
    );
    assert!(
        body.ends_with("\n[output truncated: 197600 more bytes not shown (limit 102400 bytes)]")
    );
    assert_eq!(huge.details, Some(json!({"truncated": true})));
    mcp.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crash_mid_call_is_a_tool_error_and_the_next_call_restarts() {
    let dir = tempfile::tempdir().unwrap();
    let Some(config) = fake(&dir, "normal") else {
        return;
    };
    let mcp = manager(vec![("f", config)]);
    let tools = mcp.tools_for(None, &HashSet::new()).await;
    let pid = mcp.server_status("f").unwrap().pid.unwrap();
    let err = find(&tools, "f__crash").execute(json!({}), ctx()).await;
    let Err(ToolError::Failed(message)) = err else {
        panic!("{err:?}")
    };
    assert!(
        message.starts_with("the MCP server f stopped answering"),
        "{message}"
    );
    assert!(wait_dead(pid).await);
    let out = find(&tools, "f__echo")
        .execute(json!({"text": "back"}), ctx())
        .await
        .unwrap();
    assert_eq!(text(&out), "echo: back");
    assert_ne!(mcp.server_status("f").unwrap().pid, Some(pid));
    mcp.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_past_tool_timeout_fails_and_is_cancelled() {
    let dir = tempfile::tempdir().unwrap();
    let Some(mut config) = fake(&dir, "normal") else {
        return;
    };
    config.tool_timeout_ms = Some(300);
    let mcp = manager(vec![("f", config)]);
    let tools = mcp.tools_for(None, &HashSet::new()).await;
    let err = find(&tools, "f__sleep").execute(json!({}), ctx()).await;
    assert_eq!(
        err,
        Err(ToolError::Failed(
            "the MCP tool sleep on f did not answer within 300 ms (toolTimeoutMs)".into()
        ))
    );
    // The server is still usable afterwards.
    let out = find(&tools, "f__echo")
        .execute(json!({"text": "ok"}), ctx())
        .await
        .unwrap();
    assert_eq!(text(&out), "echo: ok");
    mcp.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_missing_program_fails_with_its_name() {
    let mcp = manager(vec![("nope", stdio("/nonexistent/mcp-server", &[]))]);
    assert!(mcp.tools_for(None, &HashSet::new()).await.is_empty());
    let status = mcp.server_status("nope").unwrap();
    assert_eq!(status.state, ServerState::Failed);
    let error = status.error.unwrap();
    assert!(
        error.starts_with("cannot start the server: /nonexistent/mcp-server:"),
        "{error}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sandboxed_server_writes_only_its_own_directory() {
    if std::process::Command::new("bwrap")
        .arg("--version")
        .output()
        .is_err()
    {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "bwrap is missing"
        );
        eprintln!("skipped: bwrap is not installed");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let Some(mut config) = fake(&dir, "normal") else {
        return;
    };
    config.cwd = Some(dir.path().to_str().unwrap().to_owned());
    config.sandbox = Some(true);
    // Outside the server's directory and outside /tmp (a private tmpfs in the sandbox).
    let outside = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    // Pincer's own state, hidden even where it lies inside the writable directory.
    let secret = dir.path().join("pincer-home");
    std::fs::create_dir(&secret).unwrap();
    std::fs::write(secret.join("auth-profiles.json"), "{}").unwrap();
    let mcp = manager_hiding(vec![("box", config)], vec![secret.clone()]);
    let tools = mcp.tools_for(None, &HashSet::new()).await;
    let touch = find(&tools, "box__touch");
    let inside = dir.path().join("made.txt");
    let out = touch.execute(json!({"path": inside}), ctx()).await.unwrap();
    assert_eq!(text(&out), "wrote");
    assert!(inside.exists());
    let denied = outside.path().join("escaped.txt");
    let out = touch.execute(json!({"path": denied}), ctx()).await.unwrap();
    // Read-only where the system is bound; under /tmp (a clone of the project there) the
    // sandbox's private /tmp does not have the directory at all.
    let expected = if outside.path().starts_with("/tmp") {
        "error: No such file or directory"
    } else {
        "error: Read-only file system"
    };
    assert_eq!(text(&out), expected);
    assert!(!denied.exists());
    // The hidden directory is an empty scratch space: the real one's file is not there
    // to overwrite, and nothing written reaches it.
    let planted = secret.join("auth-profiles.json");
    let out = touch
        .execute(json!({"path": planted}), ctx())
        .await
        .unwrap();
    assert_eq!(text(&out), "wrote");
    assert_eq!(std::fs::read_to_string(&planted).unwrap(), "{}");
    let planted_new = secret.join("planted.txt");
    touch
        .execute(json!({"path": planted_new}), ctx())
        .await
        .unwrap();
    assert!(!planted_new.exists());
    mcp.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_changed_tool_list_is_read_again_before_the_next_use() {
    let dir = tempfile::tempdir().unwrap();
    let Some(config) = fake(&dir, "normal") else {
        return;
    };
    let mcp = manager(vec![("f", config)]);
    let tools = mcp.tools_for(None, &HashSet::new()).await;
    assert!(!tools.iter().any(|t| t.name() == "f__extra"));
    let out = find(&tools, "f__grow")
        .execute(json!({}), ctx())
        .await
        .unwrap();
    assert_eq!(text(&out), "grown");
    // The notification arrives with (or just after) the answer.
    let mut found = false;
    for _ in 0..50 {
        let tools = mcp.tools_for(None, &HashSet::new()).await;
        if tools.iter().any(|t| t.name() == "f__extra") {
            found = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(found, "f__extra never appeared");
    mcp.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_idle_server_is_stopped_and_started_again_when_needed() {
    let dir = tempfile::tempdir().unwrap();
    let Some(config) = fake(&dir, "normal") else {
        return;
    };
    let mcp = pincer_mcp::McpManager::new(&pincer_config::McpConfig {
        servers: [("f".to_owned(), config)].into(),
        idle_timeout_ms: Some(200),
    });
    let tools = mcp.tools_for(None, &HashSet::new()).await;
    let pid = mcp.server_status("f").unwrap().pid.unwrap();
    let mut stopped = false;
    for _ in 0..60 {
        tokio::time::sleep(Duration::from_millis(50)).await;
        if mcp.server_status("f").unwrap().state == ServerState::Stopped {
            stopped = true;
            break;
        }
    }
    assert!(stopped, "{:?}", mcp.server_status("f"));
    assert!(wait_dead(pid).await);
    let out = find(&tools, "f__echo")
        .execute(json!({"text": "again"}), ctx())
        .await
        .unwrap();
    assert_eq!(text(&out), "echo: again");
    assert_eq!(mcp.server_status("f").unwrap().state, ServerState::Ready);
    mcp.shutdown().await;
}

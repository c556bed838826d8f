//! The client against the reference servers `server-everything` and `server-filesystem`:
//! tools listed under `<server>__<tool>`, calls with text, images, resources and progress,
//! cancellation, a killed server started again, and shutdown leaving no process.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::HashSet;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use pincer_agent::{ToolError, ToolOutput};
use pincer_ai::ContentBlock;
use pincer_mcp::ServerState;
use serde_json::json;
use tokio_util::sync::CancellationToken;

use super::support::{ctx, manager, npm_server, stdio, text, wait_dead};

fn names(tools: &[Arc<dyn pincer_agent::AgentTool>]) -> Vec<String> {
    tools.iter().map(|t| t.name().to_owned()).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn everything_tools_images_resources_and_progress() {
    let Some(entry) = npm_server("server-everything") else {
        return;
    };
    let mcp = manager(vec![("everything", stdio("node", &[&entry, "stdio"]))]);
    let tools = mcp.tools_for(None, &HashSet::new()).await;
    let listed = names(&tools);
    for expected in [
        "everything__echo",
        "everything__get-sum",
        "everything__get-tiny-image",
        "everything__trigger-long-running-operation",
        "mcp_resources",
    ] {
        assert!(
            listed.contains(&expected.to_owned()),
            "{expected} not in {listed:?}"
        );
    }
    let status = mcp.server_status("everything").unwrap();
    assert_eq!(status.state, ServerState::Ready);
    assert_eq!(status.transport, "stdio");
    assert!(status.resources);
    assert!(!status.prompts.is_empty(), "{status:?}");
    assert_eq!(status.tools + 1, tools.len());
    let tool = |name: &str| tools.iter().find(|t| t.name() == name).unwrap().clone();

    let echo = tool("everything__echo");
    assert_eq!(echo.parameters()["type"], "object");
    let out = echo.execute(json!({"message": "hi"}), ctx()).await.unwrap();
    assert_eq!(text(&out), "Echo: hi");
    let out = tool("everything__get-sum")
        .execute(json!({"a": 2, "b": 3}), ctx())
        .await
        .unwrap();
    assert_eq!(text(&out), "The sum of 2 and 3 is 5.");
    // Bad arguments: the server's own validation error comes back as a tool failure.
    let err = tool("everything__get-sum")
        .execute(json!({"a": "x"}), ctx())
        .await;
    assert!(matches!(err, Err(ToolError::Failed(_))), "{err:?}");

    let image = tool("everything__get-tiny-image")
        .execute(json!({}), ctx())
        .await
        .unwrap();
    let images: Vec<_> = image
        .content
        .iter()
        .filter_map(|b| match b {
            ContentBlock::Image(i) => Some(i.mime_type.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(images, ["image/png"]);
    assert!(text(&image).starts_with("Here's the image you requested:"));

    let resources = tool("mcp_resources");
    let list = resources
        .execute(json!({"action": "list"}), ctx())
        .await
        .unwrap();
    let listing = text(&list);
    let first_uri = listing
        .lines()
        .find_map(|l| l.strip_prefix("everything: ")?.split(' ').next())
        .unwrap()
        .to_owned();
    let read = resources
        .execute(
            json!({"action": "read", "server": "everything", "uri": first_uri}),
            ctx(),
        )
        .await
        .unwrap();
    assert!(
        text(&read).starts_with(&format!("[resource {first_uri}]")),
        "{}",
        text(&read)
    );
    let err = resources
        .execute(json!({"action": "read", "uri": "x"}), ctx())
        .await;
    assert_eq!(err, Err(ToolError::Failed("`read` needs `server`".into())));

    let updates: Arc<Mutex<Vec<String>>> = Arc::default();
    let sink = Arc::clone(&updates);
    let progress_ctx = ctx().with_updates(Arc::new(move |o: ToolOutput| {
        sink.lock().unwrap().push(o.text_content());
    }));
    let out = tool("everything__trigger-long-running-operation")
        .execute(json!({"duration": 1, "steps": 3}), progress_ctx)
        .await
        .unwrap();
    assert_eq!(
        text(&out),
        "Long running operation completed. Duration: 1 seconds, Steps: 3."
    );
    let updates = updates.lock().unwrap().clone();
    assert!(updates.len() >= 2, "{updates:?}");
    assert!(updates[0].starts_with("progress 1/3"), "{updates:?}");

    let pid = status.pid.unwrap();
    mcp.shutdown().await;
    assert!(wait_dead(pid).await, "the server outlived shutdown");
    assert_eq!(
        mcp.server_status("everything").unwrap().state,
        ServerState::Stopped
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn abort_cancels_and_a_killed_server_is_started_again() {
    let Some(entry) = npm_server("server-everything") else {
        return;
    };
    let mcp = manager(vec![("ev", stdio("node", &[&entry]))]);
    let tools = mcp.tools_for(None, &HashSet::new()).await;
    let tool = |name: &str| tools.iter().find(|t| t.name() == name).unwrap().clone();

    let cancel = CancellationToken::new();
    let abort = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(300)).await;
        abort.cancel();
    });
    let started = Instant::now();
    let out = tool("ev__trigger-long-running-operation")
        .execute(
            json!({"duration": 30, "steps": 30}),
            pincer_agent::ToolContext::new("c", cancel),
        )
        .await;
    assert_eq!(out, Err(ToolError::Aborted));
    assert!(started.elapsed() < Duration::from_secs(5));
    // The connection is still good after a cancellation.
    let echo = tool("ev__echo");
    assert_eq!(
        text(&echo.execute(json!({"message": "a"}), ctx()).await.unwrap()),
        "Echo: a"
    );

    let pid = mcp.server_status("ev").unwrap().pid.unwrap();
    std::process::Command::new("kill")
        .args(["-9", &pid.to_string()])
        .status()
        .unwrap();
    assert!(wait_dead(pid).await);
    let err = echo.execute(json!({"message": "b"}), ctx()).await;
    let second = match err {
        Err(ToolError::Failed(message)) => {
            assert!(message.contains("ev"), "{message}");
            echo.execute(json!({"message": "b"}), ctx()).await
        }
        // The exit was noticed before the call: it was started again at once.
        other => other,
    };
    assert_eq!(text(&second.unwrap()), "Echo: b");
    let new_pid = mcp.server_status("ev").unwrap().pid.unwrap();
    assert_ne!(new_pid, pid);
    mcp.shutdown().await;
    assert!(wait_dead(new_pid).await);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn filesystem_reads_a_file_and_deny_tools_hides_writes() {
    let Some(entry) = npm_server("server-filesystem") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    std::fs::write(root.join("note.txt"), "hello from the file").unwrap();
    let mut config = stdio("node", &[&entry, root.to_str().unwrap()]);
    config.deny_tools = vec!["write_*".into(), "edit_*".into()];
    let mcp = manager(vec![("fs", config)]);
    let tools = mcp.tools_for(None, &HashSet::new()).await;
    let listed = names(&tools);
    assert!(
        listed.contains(&"fs__read_text_file".to_owned()),
        "{listed:?}"
    );
    assert!(
        !listed
            .iter()
            .any(|n| n.starts_with("fs__write_") || n.starts_with("fs__edit_")),
        "{listed:?}"
    );
    let read = tools
        .iter()
        .find(|t| t.name() == "fs__read_text_file")
        .unwrap();
    let out = read
        .execute(json!({"path": root.join("note.txt")}), ctx())
        .await
        .unwrap();
    assert_eq!(text(&out), "hello from the file");
    let err = read.execute(json!({"path": "/etc/passwd"}), ctx()).await;
    assert!(
        matches!(&err, Err(ToolError::Failed(m)) if m.contains("denied") || m.contains("outside")),
        "{err:?}"
    );
    mcp.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn everything_over_streamable_http_with_a_header() {
    let Some(entry) = npm_server("server-everything") else {
        return;
    };
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let child = std::process::Command::new("node")
        .args([entry.as_str(), "streamableHttp"])
        .env("PORT", port.to_string())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Killed even when an assertion fails.
    let _server = KillOnDrop(child);
    let url = format!("http://127.0.0.1:{port}/mcp");
    for _ in 0..100 {
        if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let config = pincer_config::McpServerConfig {
        url: Some(url),
        headers: [("Authorization".to_owned(), "Bearer test-token".to_owned())].into(),
        ..Default::default()
    };
    let mcp = manager(vec![("web", config)]);
    let tools = mcp.tools_for(None, &HashSet::new()).await;
    let status = mcp.server_status("web").unwrap();
    assert_eq!(status.state, ServerState::Ready, "{status:?}");
    assert_eq!(status.transport, "http");
    assert_eq!(status.pid, None);
    let echo = tools.iter().find(|t| t.name() == "web__echo").unwrap();
    let out = echo
        .execute(json!({"message": "over http"}), ctx())
        .await
        .unwrap();
    assert_eq!(text(&out), "Echo: over http");
    mcp.shutdown().await;
}

struct KillOnDrop(std::process::Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

//! Finding node and the npm servers, and building managers around them.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

use pincer_agent::{ToolContext, ToolOutput};
use pincer_config::{McpConfig, McpServerConfig};
use pincer_mcp::McpManager;
use tokio_util::sync::CancellationToken;

/// `interop/.cache/node_modules/@modelcontextprotocol/<package>/dist/index.js`, or `None`
/// (with the reason printed) when it or node is missing. In CI a missing server fails.
pub fn npm_server(package: &str) -> Option<String> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../interop/.cache/node_modules/@modelcontextprotocol")
        .join(package)
        .join("dist/index.js");
    let node = std::process::Command::new("node").arg("--version").output();
    let why = if node.is_err() {
        Some("node is not installed".to_owned())
    } else if !path.is_file() {
        Some(format!(
            "{} is missing (.ci/run installs it)",
            path.display()
        ))
    } else {
        None
    };
    match why {
        None => Some(path.to_string_lossy().into_owned()),
        Some(why) if std::env::var("CI").is_ok_and(|v| v == "true") => {
            panic!("{package}: {why}")
        }
        Some(why) => {
            eprintln!("skipped: {package}: {why}");
            None
        }
    }
}

pub fn stdio(command: &str, args: &[&str]) -> McpServerConfig {
    McpServerConfig {
        command: Some(command.to_owned()),
        args: args.iter().map(|a| (*a).to_owned()).collect(),
        ..McpServerConfig::default()
    }
}

pub fn manager(servers: Vec<(&str, McpServerConfig)>) -> Arc<McpManager> {
    manager_hiding(servers, Vec::new())
}

/// [`manager`] whose sandboxed servers cannot see `hide`.
pub fn manager_hiding(
    servers: Vec<(&str, McpServerConfig)>,
    hide: Vec<std::path::PathBuf>,
) -> Arc<McpManager> {
    let config = McpConfig {
        servers: servers
            .into_iter()
            .map(|(n, c)| (n.to_owned(), c))
            .collect::<BTreeMap<_, _>>(),
        idle_timeout_ms: Some(0),
    };
    McpManager::hiding(&config, hide)
}

pub fn ctx() -> ToolContext {
    ToolContext::new("call-1", CancellationToken::new())
}

pub fn text(out: &ToolOutput) -> String {
    out.text_content()
}

/// Whether a process (group) with this id is still alive.
pub fn alive(pid: u32) -> bool {
    // Signal 0 probes; `kill` exits non-zero once the process is gone (zombies included
    // are reaped by the runtime).
    std::process::Command::new("kill")
        .args(["-0", &pid.to_string()])
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

pub async fn wait_dead(pid: u32) -> bool {
    for _ in 0..100 {
        if !alive(pid) {
            return true;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    false
}

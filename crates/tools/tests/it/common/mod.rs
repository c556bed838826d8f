//! Shared harness for the tool tests: a temp workspace with an outside to escape to, and
//! calling a tool by name through `AgentTool::execute` with JSON arguments.

#![allow(dead_code, clippy::unwrap_used)]

use std::path::PathBuf;
use std::sync::Arc;

use pincer_agent::{AgentTool, ToolContext, ToolError, ToolOutput};
use pincer_tools::PathPolicy;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

/// A tempdir with a `ws` workspace inside (so there is an outside to escape to).
pub fn workspace() -> (tempfile::TempDir, PathBuf, PathPolicy) {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    std::fs::create_dir(&ws).unwrap();
    let policy = PathPolicy::workspace(&ws).unwrap();
    (dir, ws, policy)
}

/// The tool called `name` from a tool set.
pub fn tool_named(tools: Vec<Arc<dyn AgentTool>>, name: &str) -> Arc<dyn AgentTool> {
    tools.into_iter().find(|t| t.name() == name).unwrap()
}

/// Run the tool called `name` from `tools(policy)` with `args`.
pub async fn call(
    tools: fn(PathPolicy) -> Vec<Arc<dyn AgentTool>>,
    policy: &PathPolicy,
    name: &str,
    args: Value,
) -> Result<ToolOutput, ToolError> {
    tool_named(tools(policy.clone()), name)
        .execute(args, ToolContext::new("c", CancellationToken::new()))
        .await
}

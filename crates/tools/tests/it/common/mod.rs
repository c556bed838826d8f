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

/// A tool set's constructor: `file_tools`, `basic_tools`.
pub type ToolSet = fn(PathPolicy) -> Vec<Arc<dyn AgentTool>>;

/// Run the tool called `name` from `tools(policy)` with `args`.
pub async fn call(
    tools: ToolSet,
    policy: &PathPolicy,
    name: &str,
    args: Value,
) -> Result<ToolOutput, ToolError> {
    tool_named(tools(policy.clone()), name)
        .execute(args, ToolContext::new("c", CancellationToken::new()))
        .await
}

/// A tool call's result, unwrapped the way the test expects it to have gone.
pub trait Outcome {
    /// The text of a call that must have succeeded.
    fn text(self) -> String;
    /// The message of a call that must have failed.
    fn refusal(self) -> String;
}

impl Outcome for Result<ToolOutput, ToolError> {
    fn text(self) -> String {
        self.unwrap().text_content()
    }

    fn refusal(self) -> String {
        self.unwrap_err().to_string()
    }
}

/// Where a refusal's message is checked against the expected words.
#[derive(Debug, Clone, Copy)]
pub enum Says {
    Exactly(&'static str),
    StartsWith(&'static str),
    Contains(&'static str),
}

impl Says {
    /// Asserts that `message` says this; `case` names the call in the failure.
    pub fn check(self, message: &str, case: impl std::fmt::Display) {
        match self {
            Says::Exactly(want) => assert_eq!(message, want, "{case}"),
            Says::StartsWith(want) => assert!(message.starts_with(want), "{case}: {message}"),
            Says::Contains(want) => assert!(message.contains(want), "{case}: {message}"),
        }
    }
}

/// The words every confinement refusal carries.
pub const OUTSIDE: Says = Says::Contains("outside the allowed directories");

/// Calls `name` with each case's arguments: each must answer with the case's text.
pub async fn assert_answers(
    tools: ToolSet,
    policy: &PathPolicy,
    name: &str,
    cases: &[(Value, &str)],
) {
    for (args, want) in cases {
        let got = call(tools, policy, name, args.clone()).await.text();
        assert_eq!(got, *want, "{name} {args}");
    }
}

/// Calls `name` with each case's arguments: each must be refused saying the case's words.
pub async fn assert_refusals(
    tools: ToolSet,
    policy: &PathPolicy,
    name: &str,
    cases: &[(Value, Says)],
) {
    for (args, says) in cases {
        let message = call(tools, policy, name, args.clone()).await.refusal();
        says.check(&message, format!("{name} {args}"));
    }
}

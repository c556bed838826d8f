//! Tool profiles and allow/deny lists (OpenClaw's `tools.profile`, `tools.allow`,
//! `tools.deny`). A profile names the built-in tools an agent starts with:
//!
//! - `full`: every tool, including ones from plugins and MCP servers.
//! - `coding`: the file tools (`read write edit ls grep find`), `exec` and `process`, the
//!   memory tools (`memory_search memory_get`), `web_search` and `web_fetch`, and the
//!   basics — what a coding agent needs.
//! - `messaging`: the basics plus read-only `read` and `ls`, the memory tools and
//!   `web_search`/`web_fetch` — a chat agent may look at its workspace, its memory and the
//!   web but not change files or run commands; and `message` (write to a chat on a
//!   channel, as OpenClaw's `group:messaging`).
//! - The session tools: `coding` has all of them (`sessions_list`, `sessions_history`,
//!   `sessions_send`, `sessions_spawn`, `session_status`, `agents_list`, `subagents`,
//!   `delegate_to_agent`), `messaging` the four that read and message sessions.
//! - `browser` (a real Chromium) is only in `full`, or where `allow` names it.
//! - `minimal`: `time.now` and `tools.echo` only — nothing that touches the machine.
//!
//! A [`ToolFilter`] adds names with `allow` and removes them with `deny`; deny always wins.
//! Both lists take exact names or globs (`fs.*`, `*`).

use std::sync::Arc;

use globset::{Glob, GlobMatcher};
use pincer_agent::AgentTool;
use serde::{Deserialize, Serialize};

/// The lainclaw basics every non-minimal profile includes.
pub const BASIC_TOOLS: [&str; 5] = [
    "time.now",
    "tools.echo",
    "shell.pwd",
    "fs.list_dir",
    "fs.read_file",
];

const CODING: [&str; 25] = [
    "read",
    "write",
    "edit",
    "ls",
    "grep",
    "find",
    "exec",
    "process",
    "memory_search",
    "memory_get",
    "web_search",
    "web_fetch",
    "sessions_list",
    "sessions_history",
    "sessions_send",
    "sessions_spawn",
    "session_status",
    "agents_list",
    "subagents",
    "delegate_to_agent",
    "time.now",
    "tools.echo",
    "shell.pwd",
    "fs.list_dir",
    "fs.read_file",
];

const MESSAGING: [&str; 16] = [
    "time.now",
    "tools.echo",
    "shell.pwd",
    "fs.list_dir",
    "fs.read_file",
    "read",
    "ls",
    "memory_search",
    "memory_get",
    "web_search",
    "web_fetch",
    "sessions_list",
    "sessions_history",
    "sessions_send",
    "session_status",
    "message",
];

const MINIMAL: [&str; 2] = ["time.now", "tools.echo"];

/// Which built-in tools an agent gets before allow/deny.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ToolProfile {
    /// Every tool.
    #[default]
    Full,
    /// Files, search, exec/process and the basics.
    Coding,
    /// The basics plus `read` and `ls`.
    Messaging,
    /// `time.now` and `tools.echo`.
    Minimal,
}

impl ToolProfile {
    /// The tool names the profile includes; `None` for `full` (everything).
    pub fn tool_names(self) -> Option<&'static [&'static str]> {
        match self {
            Self::Full => None,
            Self::Coding => Some(&CODING),
            Self::Messaging => Some(&MESSAGING),
            Self::Minimal => Some(&MINIMAL),
        }
    }

    /// Whether the profile includes the tool `name`.
    pub fn includes(self, name: &str) -> bool {
        self.tool_names().is_none_or(|names| names.contains(&name))
    }
}

/// A profile with allow and deny lists (exact names or globs).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct ToolFilter {
    pub profile: ToolProfile,
    /// Tools added beyond the profile.
    pub allow: Vec<String>,
    /// Tools removed whatever the profile and `allow` say.
    pub deny: Vec<String>,
}

impl ToolFilter {
    /// Just a profile.
    pub fn profile(profile: ToolProfile) -> Self {
        Self {
            profile,
            ..Self::default()
        }
    }

    /// Whether the tool `name` may be offered: not denied, and in the profile or allowed.
    pub fn permits(&self, name: &str) -> bool {
        if matches_any(&self.deny, name) {
            return false;
        }
        self.profile.includes(name) || matches_any(&self.allow, name)
    }

    /// The tools this filter permits, in their original order.
    pub fn apply(&self, tools: Vec<Arc<dyn AgentTool>>) -> Vec<Arc<dyn AgentTool>> {
        let deny = compile(&self.deny);
        let allow = compile(&self.allow);
        tools
            .into_iter()
            .filter(|tool| {
                let name = tool.name();
                !deny.iter().any(|p| p.matches(name))
                    && (self.profile.includes(name) || allow.iter().any(|p| p.matches(name)))
            })
            .collect()
    }
}

/// One allow/deny entry: a glob, or the exact name when it is not a valid glob.
enum NamePattern {
    Glob(GlobMatcher),
    Exact(String),
}

impl NamePattern {
    fn new(pattern: &str) -> Self {
        let pattern = pattern.trim();
        if !pattern.contains(['*', '?', '[', '{']) {
            return Self::Exact(pattern.to_owned());
        }
        match Glob::new(pattern) {
            Ok(glob) => Self::Glob(glob.compile_matcher()),
            Err(_) => Self::Exact(pattern.to_owned()),
        }
    }

    fn matches(&self, name: &str) -> bool {
        match self {
            Self::Glob(glob) => glob.is_match(name),
            Self::Exact(exact) => exact == name,
        }
    }
}

fn compile(patterns: &[String]) -> Vec<NamePattern> {
    patterns.iter().map(|p| NamePattern::new(p)).collect()
}

fn matches_any(patterns: &[String], name: &str) -> bool {
    patterns.iter().any(|p| NamePattern::new(p).matches(name))
}

//! `mcp`: the MCP servers whose tools Pincer's agents get (`mcp.servers.<name>`), each
//! started as a child process (`command`, stdio) or reached over Streamable HTTP (`url`).
//! `agents.list[].mcp` picks which servers an agent uses (default: all). The checks here
//! run with the rest of the config's rules (`validate.rs`).

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::KeyPath;

/// Default for `toolTimeoutMs`: how long one tool call may take.
pub const DEFAULT_MCP_TOOL_TIMEOUT_MS: u64 = 60_000;
/// Default for `startupTimeoutMs`: how long a server may take to start and initialize.
pub const DEFAULT_MCP_STARTUP_TIMEOUT_MS: u64 = 30_000;
/// Default for `mcp.idleTimeoutMs`: a server unused this long is stopped (started again on
/// the next use).
pub const DEFAULT_MCP_IDLE_TIMEOUT_MS: u64 = 600_000;

/// `mcp`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct McpConfig {
    /// The servers by name (`[A-Za-z0-9_-]+`); their tools are named `<name>__<tool>`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub servers: BTreeMap<String, McpServerConfig>,
    /// A server unused this long is stopped, and started again when next needed
    /// (default 600000; 0 keeps servers running).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idle_timeout_ms: Option<u64>,
}

/// `mcp.servers.<name>`: `command` (a child process speaking MCP on stdin/stdout) or `url`
/// (a Streamable HTTP endpoint), not both.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct McpServerConfig {
    /// The program to start (stdio servers).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    /// Its arguments.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub args: Vec<String>,
    /// Variables added to its environment.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub env: BTreeMap<String, String>,
    /// Its working directory (default: Pincer's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    /// The endpoint of an HTTP server (Streamable HTTP).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// Headers sent with every HTTP request, e.g. `Authorization: Bearer …`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub headers: BTreeMap<String, String>,
    /// Use this server (default true).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enabled: Option<bool>,
    /// How long one tool call may take, in ms (default 60000).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_timeout_ms: Option<u64>,
    /// How long the server may take to start and answer `initialize`, in ms (default 30000).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub startup_timeout_ms: Option<u64>,
    /// Only the tools matching one of these globs (`*`, `?`; the server's own tool names).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub allow_tools: Vec<String>,
    /// Never the tools matching one of these globs (wins over `allowTools`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub deny_tools: Vec<String>,
    /// Run the server under bubblewrap: the system read-only, only `cwd` (required)
    /// writable, no network, a private /tmp (stdio servers only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sandbox: Option<bool>,
    /// OAuth for an HTTP server that requires it (`pincer mcp login <name>`): a client
    /// registered in advance. Without it, Pincer registers itself dynamically.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub oauth: Option<McpOAuthConfig>,
}

/// `mcp.servers.<name>.oauth`: a client registered with the server's authorization server.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct McpOAuthConfig {
    /// The client id.
    pub client_id: String,
    /// The client secret (confidential clients only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_secret: Option<String>,
    /// The scopes asked for (default: what the server advertises).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub scopes: Vec<String>,
}

impl McpServerConfig {
    /// `enabled`, default true.
    pub fn is_enabled(&self) -> bool {
        self.enabled.unwrap_or(true)
    }

    /// `toolTimeoutMs` with its default.
    pub fn tool_timeout_ms(&self) -> u64 {
        self.tool_timeout_ms.unwrap_or(DEFAULT_MCP_TOOL_TIMEOUT_MS)
    }

    /// `startupTimeoutMs` with its default.
    pub fn startup_timeout_ms(&self) -> u64 {
        self.startup_timeout_ms
            .unwrap_or(DEFAULT_MCP_STARTUP_TIMEOUT_MS)
    }
}

impl McpConfig {
    /// `idleTimeoutMs` with its default (`None`: never stop idle servers).
    pub fn idle_timeout_ms(&self) -> Option<u64> {
        match self.idle_timeout_ms.unwrap_or(DEFAULT_MCP_IDLE_TIMEOUT_MS) {
            0 => None,
            ms => Some(ms),
        }
    }
}

/// A server name: 1 to 64 of `A-Z a-z 0-9 _ -` (it becomes part of tool names).
pub fn is_valid_mcp_server_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 64
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// The rules of `mcp` and of `agents.list[].mcp` (names it selects must exist).
pub(crate) fn check(config: &crate::PincerConfig, fail: &mut impl FnMut(KeyPath, String)) {
    let servers = KeyPath::root().key("mcp").key("servers");
    for (name, server) in &config.mcp.servers {
        let at = servers.key(name);
        if !is_valid_mcp_server_name(name) {
            fail(
                at.clone(),
                format!(
                    "invalid MCP server name \"{name}\": use 1 to 64 of A-Z, a-z, 0-9, _ and -"
                ),
            );
        }
        match (&server.command, &server.url) {
            (None, None) => fail(
                at.clone(),
                "needs `command` (a program speaking MCP on stdio) or `url` (Streamable HTTP)"
                    .to_owned(),
            ),
            (Some(_), Some(_)) => fail(
                at.clone(),
                "has both `command` and `url`: use one (stdio or HTTP)".to_owned(),
            ),
            (Some(command), None) => {
                if command.trim().is_empty() {
                    fail(at.key("command"), "must not be empty".to_owned());
                }
                if !server.headers.is_empty() {
                    fail(
                        at.key("headers"),
                        "only for HTTP servers (`url`)".to_owned(),
                    );
                }
                if server.oauth.is_some() {
                    fail(at.key("oauth"), "only for HTTP servers (`url`)".to_owned());
                }
            }
            (None, Some(url)) => {
                if !(url.starts_with("http://") || url.starts_with("https://")) {
                    fail(
                        at.key("url"),
                        format!("must be an http:// or https:// URL, not \"{url}\""),
                    );
                }
                for key in ["args", "env", "cwd", "sandbox"] {
                    let set = match key {
                        "args" => !server.args.is_empty(),
                        "env" => !server.env.is_empty(),
                        "cwd" => server.cwd.is_some(),
                        _ => server.sandbox.is_some(),
                    };
                    if set {
                        fail(at.key(key), "only for stdio servers (`command`)".to_owned());
                    }
                }
            }
        }
        if let Some(oauth) = &server.oauth
            && oauth.client_id.trim().is_empty()
        {
            fail(
                at.key("oauth").key("clientId"),
                "must not be empty".to_owned(),
            );
        }
        for (key, value) in [
            ("toolTimeoutMs", server.tool_timeout_ms),
            ("startupTimeoutMs", server.startup_timeout_ms),
        ] {
            if value == Some(0) {
                fail(at.key(key), "must be at least 1".to_owned());
            }
        }
    }
    let list = KeyPath::root().key("agents").key("list");
    for (i, agent) in config.agents.list.iter().enumerate() {
        for (j, name) in agent.mcp.iter().flatten().enumerate() {
            if !config.mcp.servers.contains_key(name) {
                fail(
                    list.index(i).key("mcp").index(j),
                    format!("no MCP server \"{name}\" in mcp.servers"),
                );
            }
        }
    }
}

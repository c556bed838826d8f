//! The MCP client: configured servers' tools as agent tools. One [`McpManager`] is shared
//! by every agent of the process; it starts a server the first time an agent needs its
//! tools, restarts one that died, stops one left idle, and stops them all on shutdown.
//! `connect` opens one connection, `server` keeps one server's state, `tool` and
//! `resources` are the agent tools, `result` maps what a tool returned and `names` makes
//! tool names providers accept.

pub mod auth;
mod connect;
mod manager;
pub mod names;
mod resources;
pub mod result;
mod server;
mod tool;

pub use connect::{ListedTool, parse_tools_page};
pub use manager::McpManager;
pub use result::{DEFAULT_MAX_RESULT_TEXT, map_call_result};
pub use server::{McpServerStatus, ServerState};

/// Why a server could not be used.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum McpError {
    #[error("invalid server configuration: {0}")]
    Config(String),
    #[error("cannot start the server: {0}")]
    Spawn(String),
    #[error("the server did not complete initialize within {0} ms")]
    StartTimeout(u64),
    #[error("initialize failed: {0}")]
    Initialize(String),
    #[error("{0}")]
    Protocol(String),
    #[error("no MCP server named \"{0}\"")]
    UnknownServer(String),
    #[error("the server is disabled (mcp.servers.{0}.enabled = false)")]
    Disabled(String),
    #[error("{error} (next attempt in {retry_in_s} s)")]
    Backoff { error: String, retry_in_s: u64 },
    #[error("the MCP manager has shut down")]
    ShutDown,
    /// The server answered 401 and there are no credentials for it.
    #[error("needs login: run pincer mcp login {0}")]
    NeedsLogin(String),
    #[error("OAuth: {0}")]
    OAuth(String),
}

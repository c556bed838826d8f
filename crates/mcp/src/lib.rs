//! The Model Context Protocol both ways. As a client, the tools of configured MCP servers
//! (`mcp.servers.<name>`) become agent tools named `<server>__<tool>`; as a server,
//! `pincer mcp serve` and the gateway's `/mcp` offer Pincer's sessions, memory and cron to
//! MCP clients.

pub mod server;

pub mod client;

pub use client::{McpError, McpManager, McpServerStatus, ServerState};

//! `pincer mcp list|status|tools|call`: the configured MCP servers (`mcp.servers.<name>`)
//! from the terminal — which are configured, whether they start, which tools they offer,
//! and calling one of their tools by hand.

use std::process::ExitCode;

use anyhow::{Result, bail};
use clap::Subcommand;

use crate::app::App;

#[derive(Debug, Subcommand)]
pub enum McpCommand {
    /// Serve Pincer to MCP clients (editors, desktop assistants) on stdin/stdout: tools
    /// ask, sessions_list, sessions_history, memory_search, cron_list and cron_add,
    /// answered by the running gateway.
    Serve,
    /// The configured MCP servers (without starting them).
    List {
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Start every enabled server and say how each one is: state, error, tools.
    Status {
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// The tools one server offers (as the agent sees them: `<server>__<tool>`).
    Tools {
        /// The server's name (`mcp.servers.<name>`).
        #[arg(value_name = "SERVER")]
        server: String,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Call one tool of a server by hand and print its result.
    Call {
        /// The server's name (`mcp.servers.<name>`).
        #[arg(value_name = "SERVER")]
        server: String,
        /// The tool's name as the server calls it.
        #[arg(value_name = "TOOL")]
        tool: String,
        /// The arguments, a JSON object.
        #[arg(long, value_name = "JSON", default_value = "{}")]
        args: String,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
}

pub async fn run(_app: &App, command: McpCommand) -> Result<ExitCode> {
    match command {
        McpCommand::Serve => crate::mcp_serve::run(_app).await,
        McpCommand::List { .. }
        | McpCommand::Status { .. }
        | McpCommand::Tools { .. }
        | McpCommand::Call { .. } => bail!("pincer mcp: not available yet"),
    }
}

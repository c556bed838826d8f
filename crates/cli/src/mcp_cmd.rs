//! `pincer mcp list|status|tools|call`: the configured MCP servers (`mcp.servers.<name>`)
//! from the terminal — which are configured, whether they start, which tools they offer,
//! and calling one of their tools by hand. `login|logout` (OAuth) are in `mcp_login`.

use std::process::ExitCode;

use anyhow::{Result, bail};
use clap::Subcommand;
use serde_json::json;

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
    /// Authorize Pincer with an HTTP server that requires OAuth: prints the URL to open,
    /// waits for the browser's redirect on 127.0.0.1 (5 minutes), saves the tokens in
    /// `$PINCER_HOME/mcp-auth/<server>.json`.
    Login {
        /// The server's name (`mcp.servers.<name>`).
        #[arg(value_name = "SERVER")]
        server: String,
    },
    /// Forget the OAuth tokens of a server (`pincer mcp login` saved them).
    Logout {
        /// The server's name (`mcp.servers.<name>`).
        #[arg(value_name = "SERVER")]
        server: String,
    },
}

pub async fn run(app: &App, command: McpCommand) -> Result<ExitCode> {
    match command {
        McpCommand::Serve => crate::mcp_serve::run(app).await,
        McpCommand::List { json } => list(app, json),
        McpCommand::Status { json } => status(app, json).await,
        McpCommand::Tools { server, json } => tools(app, &server, json).await,
        McpCommand::Call {
            server,
            tool,
            args,
            json,
        } => call(app, &server, &tool, &args, json).await,
        McpCommand::Login { server } => crate::mcp_login::login(app, &server).await,
        McpCommand::Logout { server } => crate::mcp_login::logout(app, &server).await,
    }
}

fn list(app: &App, json: bool) -> Result<ExitCode> {
    let servers: Vec<_> = app
        .config
        .mcp
        .servers
        .iter()
        .map(|(name, s)| {
            let target = match (&s.command, &s.url) {
                (Some(command), _) => std::iter::once(command.as_str())
                    .chain(s.args.iter().map(String::as_str))
                    .collect::<Vec<_>>()
                    .join(" "),
                (None, Some(url)) => url.clone(),
                (None, None) => String::new(),
            };
            let transport = if s.url.is_some() { "http" } else { "stdio" };
            (name, transport, target, s.is_enabled())
        })
        .collect();
    if json {
        let list: Vec<_> = servers
            .iter()
            .map(|(name, transport, target, enabled)| {
                json!({"name": name, "transport": transport, "target": target, "enabled": enabled})
            })
            .collect();
        println!(
            "{}",
            serde_json::to_string_pretty(&json!({ "servers": list }))?
        );
    } else if servers.is_empty() {
        println!("no MCP servers configured (mcp.servers)");
    } else {
        for (name, transport, target, enabled) in servers {
            let off = if enabled { "" } else { " (disabled)" };
            println!("{name}\t{transport}\t{target}{off}");
        }
    }
    Ok(ExitCode::SUCCESS)
}

async fn status(app: &App, json: bool) -> Result<ExitCode> {
    app.mcp.prepare(None).await;
    let status = app.mcp.status();
    if json {
        println!(
            "{}",
            serde_json::to_string_pretty(&json!({ "servers": status }))?
        );
    } else if status.is_empty() {
        println!("no MCP servers configured (mcp.servers)");
    } else {
        for s in &status {
            let state = serde_json::to_value(s.state)?;
            let state = state.as_str().unwrap_or_default();
            let mut line = format!("{}\t{}\t{state}\t{} tools", s.name, s.transport, s.tools);
            if s.resources {
                line.push_str(", resources");
            }
            if !s.prompts.is_empty() {
                line.push_str(&format!(", prompts: {}", s.prompts.join(" ")));
            }
            if let Some(error) = &s.error {
                line.push_str(&format!("\t{error}"));
            }
            println!("{line}");
        }
    }
    let failed = status
        .iter()
        .any(|s| s.state == pincer_mcp::ServerState::Failed);
    Ok(if failed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

async fn tools(app: &App, server: &str, json: bool) -> Result<ExitCode> {
    if !app.config.mcp.servers.contains_key(server) {
        bail!("no MCP server \"{server}\" in mcp.servers");
    }
    let only = [server.to_owned()];
    if let Err(e) = app.mcp.start(server).await {
        bail!("MCP server {server}: {e}");
    }
    let tools = app.mcp.tools(Some(&only), &Default::default());
    if json {
        let list: Vec<_> = tools
            .iter()
            .map(|t| json!({"name": t.name(), "description": t.description(), "inputSchema": t.parameters()}))
            .collect();
        println!(
            "{}",
            serde_json::to_string_pretty(&json!({ "tools": list }))?
        );
    } else {
        for t in &tools {
            let first = t.description().lines().next().unwrap_or_default();
            println!("{}\t{first}", t.name());
        }
    }
    Ok(ExitCode::SUCCESS)
}

async fn call(app: &App, server: &str, tool: &str, args: &str, json: bool) -> Result<ExitCode> {
    let args: serde_json::Value =
        serde_json::from_str(args).map_err(|e| anyhow::anyhow!("--args is not JSON: {e}"))?;
    let cancel = tokio_util::sync::CancellationToken::new();
    let abort = cancel.clone();
    let ctrl_c = tokio::spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            abort.cancel();
        }
    });
    let ctx = pincer_agent::ToolContext::new("mcp-call", cancel);
    let result = app.mcp.call(server, tool, args, ctx).await;
    ctrl_c.abort();
    match result {
        Ok(output) => {
            if json {
                println!("{}", serde_json::to_string_pretty(&output)?);
            } else {
                for block in &output.content {
                    match block {
                        pincer_ai::ContentBlock::Image(i) => {
                            println!("[image {} ({} bytes base64)]", i.mime_type, i.data.len())
                        }
                        other => {
                            if let Some(text) = pincer_ai::texts(std::slice::from_ref(other)).next()
                            {
                                println!("{text}");
                            }
                        }
                    }
                }
            }
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => {
            if json {
                println!(
                    "{}",
                    serde_json::to_string_pretty(&json!({ "error": e.to_string() }))?
                );
            } else {
                eprintln!("error: {e}");
            }
            Ok(ExitCode::from(1))
        }
    }
}

//! `mcp_resources`: one tool for the resources of the agent's MCP servers — `list` them
//! (all servers, or one) or `read` one by URI. Offered when a selected server has
//! resources.

use std::sync::Arc;

use pincer_agent::{ToolContext, ToolError, ToolOutput, TypedTool};
use rmcp::model::{CallToolResult, ContentBlock, ReadResourceRequestParams};
use schemars::JsonSchema;
use serde::Deserialize;

use super::result::map_call_result;
use super::server::Server;

/// Most resources listed per server.
const MAX_LISTED: usize = 200;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ResourceAction {
    /// The resources of every server (or of `server`).
    List,
    /// The content of `uri` on `server`.
    Read,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ResourceArgs {
    pub action: ResourceAction,
    /// The MCP server (required for `read`).
    #[serde(default)]
    pub server: Option<String>,
    /// The resource's URI (for `read`).
    #[serde(default)]
    pub uri: Option<String>,
}

pub struct ResourcesTool {
    pub servers: Vec<Arc<Server>>,
    pub max_text: usize,
}

impl TypedTool for ResourcesTool {
    type Args = ResourceArgs;
    const NAME: &'static str = "mcp_resources";
    const DESCRIPTION: &'static str = "The resources of the connected MCP servers: action `list` shows them (server, URI, name), action `read` returns one (`server` and `uri`).";

    async fn run(&self, args: ResourceArgs, ctx: ToolContext) -> Result<ToolOutput, ToolError> {
        let servers: Vec<&Arc<Server>> = match &args.server {
            Some(name) => {
                let found: Vec<_> = self.servers.iter().filter(|s| &s.name == name).collect();
                if found.is_empty() {
                    let names: Vec<&str> = self.servers.iter().map(|s| s.name.as_str()).collect();
                    return Err(ToolError::Failed(format!(
                        "no MCP server \"{name}\" with resources here (servers: {})",
                        names.join(", ")
                    )));
                }
                found
            }
            None => self.servers.iter().collect(),
        };
        let run = async {
            match args.action {
                ResourceAction::List => list(&servers).await,
                ResourceAction::Read => {
                    let (Some(_), [server]) = (&args.server, servers.as_slice()) else {
                        return Err(ToolError::Failed("`read` needs `server`".into()));
                    };
                    let Some(uri) = &args.uri else {
                        return Err(ToolError::Failed("`read` needs `uri`".into()));
                    };
                    read(server, uri, self.max_text).await
                }
            }
        };
        tokio::select! {
            out = run => out,
            () = ctx.cancel.cancelled() => Err(ToolError::Aborted),
        }
    }
}

async fn list(servers: &[&Arc<Server>]) -> Result<ToolOutput, ToolError> {
    let mut lines = Vec::new();
    for server in servers {
        let conn = server
            .ensure()
            .await
            .map_err(|e| ToolError::Failed(format!("MCP server {}: {e}", server.name)))?;
        if !conn.has_resources {
            continue;
        }
        let resources = conn.peer().list_all_resources().await.map_err(|e| {
            ToolError::Failed(format!("MCP server {}: resources/list: {e}", server.name))
        })?;
        let total = resources.len();
        for r in resources.into_iter().take(MAX_LISTED) {
            let mut line = format!("{}: {} — {}", server.name, r.uri, r.name);
            if let Some(mime) = &r.mime_type {
                line.push_str(&format!(" ({mime})"));
            }
            lines.push(line);
        }
        if total > MAX_LISTED {
            lines.push(format!("{}: … {} more", server.name, total - MAX_LISTED));
        }
    }
    if lines.is_empty() {
        lines.push("no resources".to_owned());
    }
    Ok(ToolOutput::text(lines.join("\n")))
}

async fn read(server: &Server, uri: &str, max_text: usize) -> Result<ToolOutput, ToolError> {
    let conn = server
        .ensure()
        .await
        .map_err(|e| ToolError::Failed(format!("MCP server {}: {e}", server.name)))?;
    let result = conn
        .peer()
        .read_resource(ReadResourceRequestParams::new(uri))
        .await
        .map_err(|e| {
            ToolError::Failed(format!(
                "MCP server {}: resources/read {uri}: {e}",
                server.name
            ))
        })?;
    let blocks = result
        .contents
        .into_iter()
        .map(ContentBlock::resource)
        .collect();
    map_call_result(CallToolResult::success(blocks), max_text)
}

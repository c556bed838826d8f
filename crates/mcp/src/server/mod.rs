//! Pincer as an MCP server (`pincer mcp serve`): six tools — `ask`, `sessions_list`,
//! `sessions_history`, `memory_search`, `cron_list`, `cron_add` — served over stdio by
//! [`serve_stdio`], each answered by a running gateway through the [`GatewayCalls`] port.
//! The handler is written out by hand (no rmcp macros): `tools/list` from [`tools::tools`],
//! `tools/call` reads the arguments into the tool's type (malformed ones are an MCP
//! `invalid_params` error) and answers the gateway's failures as tool errors (`isError`),
//! so a client sees "start the gateway" as the tool's answer, not a protocol failure.

mod ask;
pub mod frames;
pub mod http;
pub mod port;
pub mod tools;

use std::sync::Arc;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt as _};
use serde::de::DeserializeOwned;
use serde_json::Value;

use ask::{AskError, Progress};
pub use port::{BoxFuture, Followed, FrameSource, GatewayCalls, GatewayError};
use tools::ToolAnswer;

/// The name MCP clients see.
pub const SERVER_NAME: &str = "pincer";

/// Why serving stopped early.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// Boxed: rmcp's error is large, and this one is returned once.
    #[error("the MCP client did not complete the handshake: {0}")]
    Initialize(Box<rmcp::service::ServerInitializeError>),
    #[error("the MCP server stopped: {0}")]
    Stopped(#[from] tokio::task::JoinError),
}

/// The MCP server over a gateway.
#[derive(Clone)]
pub struct PincerServer {
    gateway: Arc<dyn GatewayCalls>,
    version: String,
}

impl PincerServer {
    /// A server answering through `gateway`, saying it is Pincer `version`.
    pub fn new(gateway: Arc<dyn GatewayCalls>, version: impl Into<String>) -> Self {
        Self {
            gateway,
            version: version.into(),
        }
    }

    async fn run(
        &self,
        name: &str,
        arguments: Value,
        context: RequestContext<RoleServer>,
    ) -> Result<ToolAnswer, ErrorData> {
        let gw = self.gateway.as_ref();
        Ok(match name {
            "ask" => {
                let progress = context.meta.get_progress_token().map(|token| Progress {
                    peer: context.peer.clone(),
                    token,
                });
                match ask::ask(gw, parse(name, arguments)?, progress, context.ct.clone()).await {
                    Ok(text) => Ok(text),
                    Err(AskError::Gateway(e)) => Err(e),
                    Err(AskError::Run(message)) => Err(GatewayError::Failed(message)),
                    Err(e @ AskError::Cancelled) => {
                        return Err(ErrorData::internal_error(e.to_string(), None));
                    }
                }
            }
            "sessions_list" => tools::sessions_list(gw, parse(name, arguments)?).await,
            "sessions_history" => tools::sessions_history(gw, parse(name, arguments)?).await,
            "memory_search" => tools::memory_search(gw, parse(name, arguments)?).await,
            "cron_list" => tools::cron_list(gw, parse(name, arguments)?).await,
            "cron_add" => {
                // Checked here for an MCP error naming the field; sent as given.
                parse::<pincer_automation::cron::NewCronJob>(name, arguments.clone())?;
                tools::cron_add(gw, arguments).await
            }
            other => {
                return Err(ErrorData::invalid_params(
                    format!(
                        "unknown tool {other:?}; the tools are {}",
                        tools::TOOL_NAMES.join(", ")
                    ),
                    None,
                ));
            }
        })
    }
}

/// Reads a tool's arguments; a mismatch is the client's mistake: `invalid_params`.
fn parse<T: DeserializeOwned>(tool: &str, arguments: Value) -> Result<T, ErrorData> {
    serde_json::from_value(arguments)
        .map_err(|e| ErrorData::invalid_params(format!("invalid arguments for {tool}: {e}"), None))
}

impl ServerHandler for PincerServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new(SERVER_NAME, self.version.clone()))
            .with_instructions(
                "Pincer, a personal AI-agent gateway: ask its agents, read its sessions and \
                 memory, schedule cron jobs. The gateway must be running (`pincer gateway \
                 start`).",
            )
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(tools::tools()))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        tools::tools().into_iter().find(|t| t.name == name)
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let arguments = Value::Object(request.arguments.unwrap_or_default());
        let result = match self.run(&request.name, arguments, context).await? {
            Ok(text) => CallToolResult::success(vec![ContentBlock::text(text)]),
            Err(e) => CallToolResult::error(vec![ContentBlock::text(e.to_string())]),
        };
        Ok(result.into())
    }
}

/// Serves `server` on stdin/stdout until the client closes them.
pub async fn serve_stdio(server: PincerServer) -> Result<(), ServeError> {
    let running = server
        .serve(rmcp::transport::stdio())
        .await
        .map_err(|e| ServeError::Initialize(Box::new(e)))?;
    running.waiting().await?;
    Ok(())
}

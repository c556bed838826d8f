//! The same MCP server over Streamable HTTP, for the gateway's `/mcp`: rmcp's tower service
//! (sessions kept in memory, replies as SSE so progress notifications reach the client), one
//! [`PincerServer`] per MCP session over the gateway's own port. Host, origin and token are
//! checked by the gateway in front of it, so rmcp's own host allowlist is turned off (it
//! would refuse the gateway's configured `allowedHosts`).

use std::sync::Arc;

use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};

use super::PincerServer;
use super::port::GatewayCalls;

/// The tower service answering `/mcp`.
pub type HttpService = StreamableHttpService<PincerServer, LocalSessionManager>;

/// Serves [`PincerServer`]s over `gateway`, saying they are Pincer `version`.
pub fn http_service(gateway: Arc<dyn GatewayCalls>, version: &str) -> HttpService {
    let version = version.to_owned();
    let config = StreamableHttpServerConfig::default().disable_allowed_hosts();
    StreamableHttpService::new(
        move || Ok(PincerServer::new(Arc::clone(&gateway), version.clone())),
        Arc::default(),
        config,
    )
}

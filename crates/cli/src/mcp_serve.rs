//! `pincer mcp serve`: Pincer as an MCP server on stdin/stdout for editors and desktop
//! assistants (`pincer_mcp::server`), answered by the running gateway over its WebSocket
//! protocol — as `openclaw mcp serve` bridges to its gateway. Each tool call opens its own
//! operator connection ([`GatewayClient`]), so a gateway started or restarted while the
//! client is attached is found on the next call, and one that is not running makes the
//! tool answer "start it", while the server itself keeps serving.

use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Result;
use pincer_mcp::server::{
    BoxFuture, Followed, FrameSource, GatewayCalls, GatewayError, PincerServer, serve_stdio,
};
use serde_json::Value;

use crate::app::App;
use crate::gateway::client::{CallError, Endpoint, GatewayClient, NotRunning};

/// Serves until the client closes stdin.
pub async fn run(app: &App) -> Result<ExitCode> {
    let gateway = WsGateway {
        endpoint: Endpoint::resolve(app)?,
    };
    let server = PincerServer::new(Arc::new(gateway), env!("CARGO_PKG_VERSION"));
    serve_stdio(server).await?;
    Ok(ExitCode::SUCCESS)
}

/// The local gateway, reached over WebSocket.
struct WsGateway {
    endpoint: Endpoint,
}

impl WsGateway {
    async fn connect(&self) -> Result<GatewayClient, GatewayError> {
        GatewayClient::connect(&self.endpoint)
            .await
            .map_err(|e| port_error("connect", e))
    }
}

/// The client's errors in the port's terms: nothing listening is `Unreachable` (its
/// message says how to start the gateway), a refusal keeps the gateway's code and words.
fn port_error(method: &str, e: anyhow::Error) -> GatewayError {
    if e.downcast_ref::<NotRunning>().is_some() {
        return GatewayError::Unreachable(e.to_string());
    }
    match e.downcast::<CallError>() {
        Ok(refused) => GatewayError::Refused {
            method: method.to_owned(),
            code: refused.code,
            message: refused.message,
        },
        Err(e) => GatewayError::Failed(format!("{e:#}")),
    }
}

impl GatewayCalls for WsGateway {
    fn call<'a>(
        &'a self,
        method: &'a str,
        params: Value,
    ) -> BoxFuture<'a, Result<Value, GatewayError>> {
        Box::pin(async move {
            let mut client = self.connect().await?;
            let answer = client
                .call(method, params)
                .await
                .map_err(|e| port_error(method, e));
            client.close().await;
            answer
        })
    }

    fn send_following<'a>(
        &'a self,
        method: &'a str,
        params: Value,
    ) -> BoxFuture<'a, Result<Followed, GatewayError>> {
        Box::pin(async move {
            let mut client = self.connect().await?;
            let request_id = client
                .send_request(method, params)
                .await
                .map_err(|e| port_error(method, e))?;
            Ok(Followed {
                request_id,
                frames: Box::new(WsFrames(client)),
            })
        })
    }
}

/// The frames of one connection, as they come.
struct WsFrames(GatewayClient);

impl FrameSource for WsFrames {
    fn next_frame(&mut self) -> BoxFuture<'_, Result<Value, GatewayError>> {
        Box::pin(async move {
            self.0
                .next_frame()
                .await
                .map_err(|e| GatewayError::Failed(format!("{e:#}")))
        })
    }
}

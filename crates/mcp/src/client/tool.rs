//! An MCP server's tool as an agent tool: `execute` makes sure the server runs, sends
//! `tools/call`, turns progress notifications into partial results, and on abort or
//! timeout tells the server with `notifications/cancelled`.

use std::sync::Arc;
use std::time::Duration;

use futures_util::StreamExt;
use futures_util::future::BoxFuture;
use pincer_agent::{AgentTool, ToolContext, ToolError, ToolOutput};
use rmcp::model::{
    CallToolRequestParams, CancelledNotificationParam, ClientRequest, Request, ServerResult,
};
use rmcp::service::{PeerRequestOptions, ServiceError};
use serde_json::Value;

use super::connect::Connection;
use super::result::map_call_result;
use super::server::Server;

pub struct McpTool {
    pub server: Arc<Server>,
    /// The name the agent calls it by (`<server>__<tool>`).
    pub name: String,
    /// The name the server knows it by.
    pub remote: String,
    pub description: String,
    pub schema: Value,
    pub max_text: usize,
}

impl AgentTool for McpTool {
    fn name(&self) -> &str {
        &self.name
    }
    fn description(&self) -> &str {
        &self.description
    }
    fn parameters(&self) -> &Value {
        &self.schema
    }
    fn execute(
        &self,
        args: Value,
        ctx: ToolContext,
    ) -> BoxFuture<'_, Result<ToolOutput, ToolError>> {
        Box::pin(call_tool(
            &self.server,
            &self.name,
            &self.remote,
            args,
            ctx,
            self.max_text,
        ))
    }
}

/// Call `remote` on `server` with the model's `args`.
pub async fn call_tool(
    server: &Server,
    local: &str,
    remote: &str,
    args: Value,
    ctx: ToolContext,
    max_text: usize,
) -> Result<ToolOutput, ToolError> {
    let arguments = match args {
        Value::Object(map) => Some(map),
        Value::Null => None,
        other => {
            return Err(ToolError::InvalidArguments {
                tool: local.to_owned(),
                message: format!("expected a JSON object, got {other}"),
            });
        }
    };
    if ctx.cancel.is_cancelled() {
        return Err(ToolError::Aborted);
    }
    let conn = server
        .ensure()
        .await
        .map_err(|e| ToolError::Failed(format!("MCP server {}: {e}", server.name)))?;
    let mut params = CallToolRequestParams::new(remote.to_owned());
    params.arguments = arguments;
    let peer = conn.peer().clone();
    let handle = peer
        .send_cancellable_request(
            ClientRequest::CallToolRequest(Request::new(params)),
            PeerRequestOptions::no_options(),
        )
        .await
        .map_err(|e| broken(server, &conn, e))?;
    let request_id = handle.id.clone();
    let mut progress = conn
        .handler
        .progress
        .subscribe(handle.progress_token.clone())
        .await;
    let response = handle.await_response();
    tokio::pin!(response);
    let deadline = Duration::from_millis(server.config.tool_timeout_ms());
    let sleep = tokio::time::sleep(deadline);
    tokio::pin!(sleep);
    let cancel = |reason: &'static str| {
        let peer = peer.clone();
        let request_id = request_id.clone();
        async move {
            let _ = peer
                .notify_cancelled(CancelledNotificationParam::new(
                    Some(request_id),
                    Some(reason.to_owned()),
                ))
                .await;
        }
    };
    let answer = loop {
        tokio::select! {
            answer = &mut response => break answer,
            Some(p) = progress.next() => ctx.update(ToolOutput::text(progress_text(&p))),
            () = ctx.cancel.cancelled() => {
                cancel("aborted by the user").await;
                return Err(ToolError::Aborted);
            }
            () = &mut sleep => {
                cancel("timed out").await;
                return Err(ToolError::Failed(format!(
                    "the MCP tool {remote} on {} did not answer within {} ms (toolTimeoutMs)",
                    server.name,
                    deadline.as_millis()
                )));
            }
        }
    };
    match answer.map_err(|e| broken(server, &conn, e))? {
        ServerResult::CallToolResult(result) => map_call_result(result, max_text),
        ServerResult::CustomResult(value) => {
            // rmcp's types refused the result: read what can be read of it.
            match serde_json::from_value(value.0) {
                Ok(result) => map_call_result(result, max_text),
                Err(e) => Err(ToolError::Failed(format!(
                    "the MCP server {} answered tools/call with something unreadable: {e}",
                    server.name
                ))),
            }
        }
        _ => Err(ToolError::Failed(format!(
            "the MCP server {} answered tools/call with another kind of result",
            server.name
        ))),
    }
}

fn broken(server: &Server, conn: &Connection, e: ServiceError) -> ToolError {
    match e {
        ServiceError::McpError(e) => ToolError::Failed(format!(
            "the MCP server {} refused the call: {}",
            server.name, e.message
        )),
        other => {
            server.note_broken(conn);
            ToolError::Failed(format!(
                "the MCP server {} stopped answering ({other}); it is started again at the next call",
                server.name
            ))
        }
    }
}

fn progress_text(p: &rmcp::model::ProgressNotificationParam) -> String {
    let amount = match p.total {
        Some(total) => format!("{}/{}", p.progress, total),
        None => format!("{}", p.progress),
    };
    match &p.message {
        Some(m) => format!("progress {amount}: {m}"),
        None => format!("progress {amount}"),
    }
}

//! `tools.invoke` (OpenClaw's): runs one of an agent's tools in the gateway, as a turn of
//! `sessionKey` would (default: the agent's main session), and answers
//! `{ok: true, toolName, output: {content, details}}` or `{ok: false, toolName, error:
//! {code, message}}`. Pincer's own RPC workers call the tools that live in the gateway
//! (the session tools, sub-agents, delegation) through it.

use std::sync::Arc;
use std::time::Duration;

use pincer_agent::{ToolContext, ToolError};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;

use super::super::Gateway;
use super::super::frames::MethodError;
use super::super::runtime::on_blocking_pool;
use super::params::parse;

/// The longest a tool may run for one call (a synchronous delegation waits up to its own
/// timeout, 300 s by default).
const INVOKE_TIMEOUT: Duration = Duration::from_secs(30 * 60);

/// `tools.invoke`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ToolsInvokeParams {
    /// The tool's name.
    name: String,
    /// Its arguments.
    args: Option<Map<String, Value>>,
    /// The session the call runs in (default: the agent's main session).
    session_key: Option<String>,
    /// The agent whose tool it is (default: the session key's, else the default agent).
    agent_id: Option<String>,
}

pub(super) async fn invoke(gw: &Gateway, p: &Value) -> Result<Value, MethodError> {
    let p: ToolsInvokeParams = parse(p)?;
    let name = p.name.trim().to_owned();
    if name.is_empty() {
        return Err(MethodError::invalid(
            "invalid tools.invoke params: name required",
        ));
    }
    let agent_id = p
        .agent_id
        .or_else(|| {
            p.session_key
                .as_deref()
                .and_then(|k| k.strip_prefix("agent:"))
                .and_then(|rest| rest.split(':').next())
                .map(str::to_owned)
        })
        .unwrap_or_else(|| gw.runtime.default_agent_id());
    if !gw.runtime.is_known_agent(&agent_id) {
        return Err(MethodError::invalid(format!("unknown agent {agent_id:?}")));
    }
    let key = p
        .session_key
        .unwrap_or_else(|| gw.runtime.main_session_key(&agent_id));
    let (agent, session, tool_name) = (agent_id.clone(), key.clone(), name.clone());
    let tool = on_blocking_pool(&gw.runtime, move |runtime| {
        runtime.agent_tool(&agent, &session, &tool_name)
    })
    .await
    .map_err(|e| MethodError::unavailable(format!("the tools task failed: {e}")))?;
    let Some(tool) = tool else {
        return Ok(failure(
            &name,
            "not_found",
            &format!("agent {agent_id} has no tool {name:?}"),
        ));
    };
    let cancel = CancellationToken::new();
    let ctx = ToolContext::new(
        format!("rpc-{}", pincer_base::id::hex_id8()),
        cancel.clone(),
    )
    .with_session_key(Some(Arc::from(key.as_str())));
    let args = Value::Object(p.args.unwrap_or_default());
    let shutdown = gw.shutdown.clone();
    let outcome = tokio::select! {
        outcome = tokio::time::timeout(INVOKE_TIMEOUT, tool.execute(args, ctx)) => outcome,
        () = shutdown.cancelled() => {
            cancel.cancel();
            return Ok(failure(&name, "unavailable", "the gateway is shutting down"));
        }
    };
    Ok(match outcome {
        Ok(Ok(output)) => json!({
            "ok": true,
            "toolName": name,
            "output": {"content": output.content, "details": output.details},
            "source": "core",
        }),
        Ok(Err(ToolError::InvalidArguments { message, .. })) => {
            failure(&name, "validation_error", &message)
        }
        Ok(Err(e)) => failure(&name, "tool_error", &e.to_string()),
        Err(_) => {
            cancel.cancel();
            failure(&name, "timeout", "the tool did not finish in time")
        }
    })
}

fn failure(name: &str, code: &str, message: &str) -> Value {
    json!({ "ok": false, "toolName": name, "error": { "code": code, "message": message } })
}

//! The tools that live in the gateway (the session tools, sub-agents, delegation), for a
//! `pincer rpc` worker the gateway started: each is a stand-in with the real tool's name,
//! description and schema that runs the call in the gateway through `tools.invoke`, for
//! the session the worker is serving (pi-gateway's gateway-tools extension, which calls
//! its gateway the same way).

use std::sync::Arc;
use std::time::Duration;

use anyhow::anyhow;
use futures_util::future::BoxFuture;
use pincer_agent::{AgentTool, ToolContext, ToolError, ToolOutput};
use serde_json::{Value, json};

use crate::gateway::client::{Endpoint, GatewayClient};

/// Set by the gateway in the environment of the workers it starts: they may call back.
pub const GATEWAY_TOOLS_ENV: &str = "PINCER_RPC_GATEWAY_TOOLS";
/// The longest one call waits (a delegation waits up to its own timeout, 300 s by
/// default; a `sessions_send` up to 600 s).
const CALL_TIMEOUT: Duration = Duration::from_secs(30 * 60);

/// One gateway tool, called through `tools.invoke`.
struct GatewayTool {
    name: String,
    label: String,
    description: String,
    parameters: Value,
    agent_id: String,
    endpoint: Endpoint,
}

/// Stand-ins for the team tools of `agent_id`, calling the gateway at `endpoint`.
pub fn gateway_tools(agent_id: &str, endpoint: Endpoint) -> Vec<Arc<dyn AgentTool>> {
    // The real tools, unbound: only their names, descriptions and schemas are used.
    let team = pincer_team::Team::new(pincer_team::TeamSettings::default());
    team.tools(agent_id)
        .iter()
        .map(|tool| {
            Arc::new(GatewayTool {
                name: tool.name().to_owned(),
                label: tool.label().to_owned(),
                description: tool.description().to_owned(),
                parameters: tool.parameters().clone(),
                agent_id: agent_id.to_owned(),
                endpoint: endpoint.clone(),
            }) as Arc<dyn AgentTool>
        })
        .collect()
}

impl GatewayTool {
    async fn invoke(&self, args: Value, session_key: Option<&str>) -> anyhow::Result<Value> {
        let mut client = GatewayClient::connect(&self.endpoint).await?;
        let mut params = json!({ "name": self.name, "args": args, "agentId": self.agent_id });
        if let Some(key) = session_key {
            params["sessionKey"] = json!(key);
        }
        let answer = client
            .call_with_timeout("tools.invoke", params, CALL_TIMEOUT)
            .await;
        client.close().await;
        answer
    }
}

impl AgentTool for GatewayTool {
    fn name(&self) -> &str {
        &self.name
    }

    fn label(&self) -> &str {
        &self.label
    }

    fn description(&self) -> &str {
        &self.description
    }

    fn parameters(&self) -> &Value {
        &self.parameters
    }

    fn execute(
        &self,
        args: Value,
        ctx: ToolContext,
    ) -> BoxFuture<'_, Result<ToolOutput, ToolError>> {
        Box::pin(async move {
            let answer = tokio::select! {
                answer = self.invoke(args, ctx.session_key()) => answer,
                () = ctx.cancel.cancelled() => return Err(ToolError::Aborted),
            };
            let answer = answer.map_err(|e| {
                ToolError::failed(format!("the gateway could not run {}: {e:#}", self.name))
            })?;
            output_of(answer).map_err(|e| ToolError::failed(e.to_string()))
        })
    }
}

/// A `tools.invoke` answer as the tool's result.
fn output_of(answer: Value) -> anyhow::Result<ToolOutput> {
    if answer["ok"] != true {
        let message = answer["error"]["message"]
            .as_str()
            .unwrap_or("the gateway refused the call without saying why");
        return Err(anyhow!("{message}"));
    }
    let output: ToolOutput = serde_json::from_value(answer["output"].clone())
        .map_err(|e| anyhow!("the gateway's answer is not a tool result: {e}"))?;
    Ok(output)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_answer_becomes_the_tools_result_or_its_error() {
        let ok = json!({"ok": true, "toolName": "x", "output": {"content": [{"type": "text", "text": "done"}], "details": {"a": 1}}});
        let output = output_of(ok).unwrap();
        assert_eq!(output.text_content(), "done");
        assert_eq!(output.details, Some(json!({"a": 1})));
        let refused = json!({"ok": false, "toolName": "x", "error": {"code": "tool_error", "message": "nope"}});
        assert_eq!(output_of(refused).unwrap_err().to_string(), "nope");
        assert!(output_of(json!({"ok": true, "output": 3})).is_err());
    }
}

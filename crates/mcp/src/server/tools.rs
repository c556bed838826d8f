//! The tools `pincer mcp serve` offers: their arguments as Rust types (the input schemas
//! are derived from them), their descriptions, and the gateway method each one calls.
//! `ask` follows a run and lives in `ask.rs`; the others are one call each.

use std::sync::Arc;

use pincer_automation::cron::NewCronJob;
use rmcp::model::{JsonObject, Tool};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use super::frames::history_view;
use super::port::{GatewayCalls, GatewayError};

/// The session `ask` talks in when none is named: the agent's own MCP session.
pub fn default_session_key(agent_id: Option<&str>) -> String {
    format!("agent:{}:mcp", agent_id.unwrap_or("main"))
}

/// `ask`: one turn of an agent in a session.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AskArgs {
    /// The message to the agent.
    pub message: String,
    /// The session to talk in (default `agent:<agentId>:mcp`, a session of its own for MCP).
    #[serde(default)]
    pub session_key: Option<String>,
    /// The agent (default `main`); ignored when `sessionKey` names one.
    #[serde(default)]
    pub agent_id: Option<String>,
    /// How long to wait for the reply, in seconds (default 600, at most 3600); the run is
    /// stopped when it takes longer.
    #[serde(default)]
    pub timeout_seconds: Option<u64>,
}

/// `sessions_list`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SessionsListArgs {
    /// Only this agent's sessions.
    #[serde(default)]
    pub agent_id: Option<String>,
    /// At most this many, most recent first (default 50).
    #[serde(default)]
    pub limit: Option<u32>,
}

/// `sessions_history`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SessionsHistoryArgs {
    /// The session, e.g. `agent:main:mcp` (see `sessions_list`).
    pub session_key: String,
    /// The last this many messages (default 50, at most 1000).
    #[serde(default)]
    pub limit: Option<u32>,
}

/// `memory_search`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct MemorySearchArgs {
    /// What to look for, in words.
    pub query: String,
    /// How many results at most (default 6, at most 50).
    #[serde(default)]
    pub max_results: Option<u32>,
    /// Whose memory (default the default agent's).
    #[serde(default)]
    pub agent_id: Option<String>,
}

/// `cron_list`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CronListArgs {
    /// Also the disabled jobs.
    #[serde(default)]
    pub include_disabled: Option<bool>,
}

/// The tools' names, in the order they are listed.
pub const TOOL_NAMES: [&str; 6] = [
    "ask",
    "sessions_list",
    "sessions_history",
    "memory_search",
    "cron_list",
    "cron_add",
];

/// The tools as `tools/list` shows them.
pub fn tools() -> Vec<Tool> {
    vec![
        tool::<AskArgs>(
            "ask",
            "Ask a Pincer agent something: one turn in a session (by default the agent's own \
             MCP session, which keeps its history); answers the agent's reply. Progress \
             notifications carry the reply as it streams.",
        ),
        tool::<SessionsListArgs>(
            "sessions_list",
            "List Pincer's sessions (key, when last used, model, tokens), most recent first.",
        ),
        tool::<SessionsHistoryArgs>(
            "sessions_history",
            "Read a Pincer session's recent messages (role and text).",
        ),
        tool::<MemorySearchArgs>(
            "memory_search",
            "Search a Pincer agent's memory files (MEMORY.md, memory/*.md) for passages \
             about a query.",
        ),
        tool::<CronListArgs>("cron_list", "List Pincer's scheduled (cron) jobs."),
        tool::<NewCronJob>(
            "cron_add",
            "Schedule a job in Pincer's cron (OpenClaw's job shape): `schedule` is {kind: \
             \"at\", at} or {kind: \"every\", everyMs} or {kind: \"cron\", expr, tz?}; \
             `payload` is {kind: \"agentTurn\", message} or {kind: \"systemEvent\", text}.",
        ),
    ]
}

fn tool<T: JsonSchema>(name: &'static str, description: &'static str) -> Tool {
    let mut schema = match serde_json::to_value(schemars::schema_for!(T)) {
        Ok(Value::Object(schema)) => schema,
        _ => JsonObject::new(),
    };
    // The type's name as a title says nothing to a client; the tool's name does.
    schema.remove("title");
    schema.insert("type".into(), json!("object"));
    Tool::new(name, description, Arc::new(schema))
}

/// What a tool answered: text for the client, or a failure told as a tool error.
pub type ToolAnswer = Result<String, GatewayError>;

/// Runs a one-call tool (everything but `ask`) whose arguments were read already.
pub async fn sessions_list(gw: &dyn GatewayCalls, args: SessionsListArgs) -> ToolAnswer {
    let mut params = json!({ "limit": args.limit.unwrap_or(50) });
    if let Some(agent_id) = args.agent_id {
        params["agentId"] = json!(agent_id);
    }
    let payload = gw.call("sessions.list", params).await?;
    Ok(pretty(
        &json!({ "count": payload["count"], "sessions": payload["sessions"] }),
    ))
}

pub async fn sessions_history(gw: &dyn GatewayCalls, args: SessionsHistoryArgs) -> ToolAnswer {
    let params = json!({ "sessionKey": args.session_key, "limit": args.limit.unwrap_or(50) });
    let payload = gw.call("chat.history", params).await?;
    Ok(pretty(&history_view(&payload)))
}

pub async fn memory_search(gw: &dyn GatewayCalls, args: MemorySearchArgs) -> ToolAnswer {
    let mut tool_args = json!({ "query": args.query });
    if let Some(max) = args.max_results {
        tool_args["maxResults"] = json!(max);
    }
    let mut params = json!({ "name": "memory_search", "args": tool_args });
    if let Some(agent_id) = args.agent_id {
        params["agentId"] = json!(agent_id);
    }
    let answer = gw.call("tools.invoke", params).await?;
    invoke_answer(&answer)
}

/// `tools.invoke`'s answer: the output's text blocks, or its error as a failure.
pub fn invoke_answer(answer: &Value) -> ToolAnswer {
    if answer["ok"] != true {
        return Err(GatewayError::Refused {
            method: "tools.invoke".into(),
            code: answer["error"]["code"]
                .as_str()
                .unwrap_or("tool_error")
                .to_owned(),
            message: answer["error"]["message"]
                .as_str()
                .unwrap_or("the tool failed without saying why")
                .to_owned(),
        });
    }
    let text: Vec<&str> = answer["output"]["content"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|b| b["type"] == "text")
        .filter_map(|b| b["text"].as_str())
        .collect();
    Ok(text.join("\n"))
}

pub async fn cron_list(gw: &dyn GatewayCalls, args: CronListArgs) -> ToolAnswer {
    let params = json!({ "includeDisabled": args.include_disabled.unwrap_or(false) });
    Ok(pretty(&gw.call("cron.list", params).await?))
}

/// `cron.add` with the arguments as given (they were checked as a [`NewCronJob`] already;
/// the gateway reads them the same way).
pub async fn cron_add(gw: &dyn GatewayCalls, job: Value) -> ToolAnswer {
    Ok(pretty(&gw.call("cron.add", job).await?))
}

fn pretty(value: &Value) -> String {
    serde_json::to_string_pretty(value).unwrap_or_else(|_| value.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_tool_has_an_object_schema_derived_from_its_arguments() {
        let tools = tools();
        let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
        assert_eq!(names, TOOL_NAMES);
        let ask = &tools[0].input_schema;
        assert_eq!(ask["type"], "object");
        assert_eq!(ask["required"], json!(["message"]));
        assert_eq!(ask["additionalProperties"], json!(false));
        let keys: Vec<&String> = ask["properties"].as_object().unwrap().keys().collect();
        assert_eq!(keys, ["agentId", "message", "sessionKey", "timeoutSeconds"]);
        let cron = &tools[5].input_schema;
        assert_eq!(cron["required"], json!(["name", "schedule", "payload"]));
        assert!(tools.iter().all(|t| t.input_schema.get("title").is_none()));
    }

    #[test]
    fn tools_invoke_answers_become_text_or_failures() {
        let ok = json!({"ok": true, "output": {"content": [{"type": "text", "text": "a"}, {"type": "image"}, {"type": "text", "text": "b"}]}});
        assert_eq!(invoke_answer(&ok).unwrap(), "a\nb");
        let failed = json!({"ok": false, "error": {"code": "not_found", "message": "agent main has no tool \"memory_search\""}});
        assert_eq!(
            invoke_answer(&failed).unwrap_err().to_string(),
            "the gateway refused tools.invoke: agent main has no tool \"memory_search\""
        );
        assert_eq!(
            invoke_answer(&json!(null)).unwrap_err().to_string(),
            "the gateway refused tools.invoke: the tool failed without saying why"
        );
        assert_eq!(invoke_answer(&json!({"ok": true})).unwrap(), "");
    }

    #[test]
    fn asks_session_defaults_to_the_agents_mcp_session() {
        assert_eq!(default_session_key(None), "agent:main:mcp");
        assert_eq!(default_session_key(Some("ops")), "agent:ops:mcp");
    }
}

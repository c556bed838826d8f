//! lainclaw's `ask` result object (`GatewayResult`), printed by `pincer ask --json`, and the
//! tool log it is built from: every tool call with its arguments, where it came from (the
//! model: `ask`; the `tool:` prefix: `cli`), its result and duration, and the first error
//! classified as `tool_not_found`, `invalid_args` or `execution_error`.

use std::collections::HashMap;
use std::time::Instant;

use pincer_agent::{AgentEvent, ToolOutput};
use serde::Serialize;
use serde_json::Value;

/// The result object (camelCase, as lainclaw prints it).
#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AskResult {
    pub success: bool,
    pub request_id: String,
    pub created_at: String,
    pub route: String,
    pub stage: String,
    pub result: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub provider: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub profile_id: Option<String>,
    pub session_key: String,
    pub session_id: String,
    pub memory_enabled: bool,
    /// This turn appended a block to the session's memory file.
    pub memory_updated: bool,
    /// The session's memory file (`memory/<key>.md` in the workspace), when memory is on.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub memory_file: Option<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCallRecord>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tool_results: Vec<ToolResultRecord>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_error: Option<ToolErrorRecord>,
    pub session_context_updated: bool,
}

/// What every result of one `ask` shares: the request and the session it ran in.
#[derive(Debug, Clone)]
pub struct AskContext {
    pub request_id: String,
    pub created_at: String,
    pub session_key: String,
    pub memory_enabled: bool,
    /// The session's memory file, reported when memory is on.
    pub memory_file: Option<String>,
}

impl AskResult {
    /// A successful result of `route`/`stage` with `result`, in session `session_id`;
    /// everything else empty, for the caller to fill in.
    pub fn new(
        cx: &AskContext,
        route: impl Into<String>,
        stage: impl Into<String>,
        result: String,
        session_id: String,
    ) -> Self {
        Self {
            success: true,
            request_id: cx.request_id.clone(),
            created_at: cx.created_at.clone(),
            route: route.into(),
            stage: stage.into(),
            result,
            session_key: cx.session_key.clone(),
            session_id,
            memory_enabled: cx.memory_enabled,
            memory_file: cx.memory_file.clone(),
            ..Self::default()
        }
    }
}

/// `{id, name, args, source}`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ToolCallRecord {
    pub id: String,
    pub name: String,
    pub args: Value,
    /// `ask` (the model called it) or `cli` (the `tool:` prefix).
    pub source: &'static str,
}

/// `{call, result}`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ToolResultRecord {
    pub call: ToolCallRecord,
    pub result: ToolRunResult,
}

/// `{ok, content?, data?, error?, meta}`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ToolRunResult {
    pub ok: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub content: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<ToolErrorRecord>,
    pub meta: ToolMeta,
}

/// `{tool, durationMs}`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolMeta {
    pub tool: String,
    pub duration_ms: u64,
}

/// `{code, tool, message}`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ToolErrorRecord {
    /// `tool_not_found`, `invalid_args` or `execution_error`.
    pub code: &'static str,
    pub tool: String,
    pub message: String,
}

impl ToolErrorRecord {
    /// Classifies a failed tool's message the way the agent words it.
    pub fn classify(tool: &str, message: &str) -> Self {
        let code = if message.starts_with(&format!("Tool {tool} not found"))
            || message.starts_with("tool not allowed")
        {
            "tool_not_found"
        } else if message.starts_with(&format!("invalid arguments for {tool}")) {
            "invalid_args"
        } else {
            "execution_error"
        };
        Self {
            code,
            tool: tool.to_owned(),
            message: message.to_owned(),
        }
    }
}

/// Collects tool calls and results from agent events (and from `tool:` runs).
#[derive(Debug, Default)]
pub struct ToolLog {
    pub calls: Vec<ToolCallRecord>,
    pub results: Vec<ToolResultRecord>,
    started: HashMap<String, Instant>,
    /// Wire-safe name (`time_now`) -> the tool's own name (`time.now`).
    names: HashMap<String, String>,
}

impl ToolLog {
    /// A log that reports calls under the tools' own names, not the wire-safe names the
    /// model used (`time_now` for `time.now`).
    pub fn for_tools(tools: &[std::sync::Arc<dyn pincer_agent::AgentTool>]) -> Self {
        let names = tools
            .iter()
            .map(|t| (pincer_agent::wire_name(t.name()), t.name().to_owned()))
            .collect();
        Self {
            names,
            ..Self::default()
        }
    }

    fn canonical(&self, name: &str) -> String {
        self.names
            .get(name)
            .cloned()
            .unwrap_or_else(|| name.to_owned())
    }

    /// Records the tool events of a model-driven run.
    pub fn event(&mut self, event: &AgentEvent) {
        match event {
            AgentEvent::ToolExecutionStart {
                tool_call_id,
                tool_name,
                args,
            } => {
                self.started.insert(tool_call_id.clone(), Instant::now());
                self.calls.push(ToolCallRecord {
                    id: tool_call_id.clone(),
                    name: self.canonical(tool_name),
                    args: args.clone(),
                    source: "ask",
                });
            }
            AgentEvent::ToolExecutionEnd {
                tool_call_id,
                tool_name,
                result,
                is_error,
            } => {
                let duration_ms = self
                    .started
                    .remove(tool_call_id)
                    .map_or(0, |t| t.elapsed().as_millis() as u64);
                let call = self
                    .calls
                    .iter()
                    .find(|c| &c.id == tool_call_id)
                    .cloned()
                    .unwrap_or_else(|| ToolCallRecord {
                        id: tool_call_id.clone(),
                        name: self.canonical(tool_name),
                        args: Value::Null,
                        source: "ask",
                    });
                self.push_result(call, result, *is_error, duration_ms);
            }
            _ => {}
        }
    }

    /// Records one finished call.
    pub fn push_result(
        &mut self,
        call: ToolCallRecord,
        output: &ToolOutput,
        is_error: bool,
        duration_ms: u64,
    ) {
        let text = output.text_content();
        let result = ToolRunResult {
            ok: !is_error,
            content: (!is_error).then(|| text.clone()),
            data: output.details.clone(),
            error: is_error.then(|| ToolErrorRecord::classify(&call.name, &text)),
            meta: ToolMeta {
                tool: call.name.clone(),
                duration_ms,
            },
        };
        self.results.push(ToolResultRecord { call, result });
    }

    /// The first error of the run.
    pub fn first_error(&self) -> Option<ToolErrorRecord> {
        self.results.iter().find_map(|r| r.result.error.clone())
    }
}

/// A request id of lainclaw's shape: `pc-<ms>-<4 hex>`.
pub fn request_id() -> String {
    format!(
        "pc-{}-{:04x}",
        pincer_base::now_ms(),
        pincer_base::id::random_u64() & 0xffff
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_are_classified_as_lainclaw_does() {
        let code = |tool: &str, msg: &str| ToolErrorRecord::classify(tool, msg).code;
        assert_eq!(
            code("teleport", "Tool teleport not found"),
            "tool_not_found"
        );
        assert_eq!(code("x", "tool not allowed: x"), "tool_not_found");
        assert_eq!(
            code("read", "invalid arguments for read: missing field `path`"),
            "invalid_args"
        );
        assert_eq!(code("read", "No such file"), "execution_error");
    }

    #[test]
    fn request_ids_have_lainclaws_shape() {
        let id = request_id();
        let parts: Vec<&str> = id.split('-').collect();
        assert_eq!(parts.len(), 3, "{id}");
        assert_eq!(parts[0], "pc");
        assert!(parts[1].parse::<u64>().is_ok());
        assert_eq!(parts[2].len(), 4);
    }
}

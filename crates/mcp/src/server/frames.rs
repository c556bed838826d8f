//! Reading what the gateway sends back, for MCP clients: the frames of a run started with
//! `chat.send` (its `res`, then `agent` events with reply deltas and tool calls, then the
//! `chat` event that ends it) sorted into [`RunStep`]s, and `chat.history`'s answer made
//! into a compact transcript (role and text per message) a model reads easily. Everything
//! here reads outside input: absent or mistyped fields are skipped, never a panic.

use serde_json::{Value, json};

/// What one frame means for the run being followed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RunStep {
    /// Not about this run (another run's events, presence, ticks).
    Ignore,
    /// Reply text streamed.
    Delta(String),
    /// The run started a tool (its name).
    Tool(String),
    /// The message joined a run already going on the session: its reply is that run's.
    Steered,
    /// The run ended with this reply.
    Done(String),
    /// The request was refused or the run failed; the gateway's words.
    Failed(String),
    /// The run was stopped.
    Aborted,
}

/// Sorts `frame` for the run `run_id` started by the request `request_id`.
pub fn run_step(frame: &Value, request_id: &str, run_id: &str) -> RunStep {
    match frame["type"].as_str() {
        Some("res") if frame["id"] == request_id => {
            if frame["ok"] != true {
                return RunStep::Failed(
                    frame["error"]["message"]
                        .as_str()
                        .unwrap_or("the gateway refused the message without saying why")
                        .to_owned(),
                );
            }
            if frame["payload"]["status"] == "steered" {
                RunStep::Steered
            } else {
                RunStep::Ignore
            }
        }
        Some("event") if frame["payload"]["runId"] == run_id => {
            let payload = &frame["payload"];
            match frame["event"].as_str() {
                Some("agent") => agent_step(payload),
                Some("chat") => chat_step(payload),
                _ => RunStep::Ignore,
            }
        }
        _ => RunStep::Ignore,
    }
}

fn agent_step(payload: &Value) -> RunStep {
    let data = &payload["data"];
    match (payload["stream"].as_str(), data["phase"].as_str()) {
        (Some("assistant"), _) => match data["delta"].as_str() {
            Some(delta) if !delta.is_empty() => RunStep::Delta(delta.to_owned()),
            _ => RunStep::Ignore,
        },
        (Some("tool"), Some("start")) => {
            RunStep::Tool(data["name"].as_str().unwrap_or("a tool").to_owned())
        }
        _ => RunStep::Ignore,
    }
}

fn chat_step(payload: &Value) -> RunStep {
    match payload["state"].as_str() {
        Some("final") => RunStep::Done(text_of(&payload["message"]["content"])),
        Some("aborted") => RunStep::Aborted,
        Some("error") => RunStep::Failed(
            payload["errorMessage"]
                .as_str()
                .unwrap_or("the run failed")
                .to_owned(),
        ),
        _ => RunStep::Ignore,
    }
}

/// The text of message content: a string, or the `text` blocks of a block list, joined.
fn text_of(content: &Value) -> String {
    match content {
        Value::String(text) => text.clone(),
        Value::Array(blocks) => blocks
            .iter()
            .filter(|b| b["type"] == "text")
            .filter_map(|b| b["text"].as_str())
            .collect::<Vec<_>>()
            .join(""),
        _ => String::new(),
    }
}

/// `chat.history`'s answer as `{sessionKey, totalMessages, hasMore, messages: [{role, text,
/// timestamp?}]}`: tool calls read `[tool call NAME ARGS]`, tool results `[NAME result]
/// TEXT`, thinking is left out.
pub fn history_view(payload: &Value) -> Value {
    let messages: Vec<Value> = payload["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(message_view)
        .collect();
    json!({
        "sessionKey": payload["sessionKey"],
        "totalMessages": payload["totalMessages"],
        "hasMore": payload["hasMore"],
        "messages": messages,
    })
}

fn message_view(message: &Value) -> Option<Value> {
    let role = message["role"].as_str()?;
    let content = &message["content"];
    let text = match role {
        "toolResult" => format!(
            "[{} result] {}",
            message["toolName"].as_str().unwrap_or("tool"),
            text_of(content)
        ),
        _ => {
            let mut parts = vec![text_of(content)];
            for call in content.as_array().into_iter().flatten() {
                if call["type"] == "toolCall" {
                    parts.push(format!(
                        "[tool call {} {}]",
                        call["name"].as_str().unwrap_or("?"),
                        call["arguments"]
                    ));
                }
            }
            parts.retain(|p| !p.is_empty());
            parts.join("\n")
        }
    };
    let mut view = json!({ "role": role, "text": text });
    if let Some(ts) = message.get("timestamp").filter(|t| t.is_number()) {
        view["timestamp"] = ts.clone();
    }
    Some(view)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_runs_frames_sort_into_steps_and_others_are_ignored() {
        let cases = [
            (
                json!({"type": "res", "id": "1", "ok": true, "payload": {"status": "started"}}),
                RunStep::Ignore,
            ),
            (
                json!({"type": "res", "id": "1", "ok": true, "payload": {"status": "steered"}}),
                RunStep::Steered,
            ),
            (
                json!({"type": "res", "id": "1", "ok": false, "error": {"message": "no such agent"}}),
                RunStep::Failed("no such agent".into()),
            ),
            (
                json!({"type": "res", "id": "2", "ok": false}),
                RunStep::Ignore,
            ),
            (
                json!({"type": "event", "event": "agent", "payload": {"runId": "r", "stream": "assistant", "data": {"delta": "Hel"}}}),
                RunStep::Delta("Hel".into()),
            ),
            (
                json!({"type": "event", "event": "agent", "payload": {"runId": "other", "stream": "assistant", "data": {"delta": "x"}}}),
                RunStep::Ignore,
            ),
            (
                json!({"type": "event", "event": "agent", "payload": {"runId": "r", "stream": "tool", "data": {"phase": "start", "name": "exec"}}}),
                RunStep::Tool("exec".into()),
            ),
            (
                json!({"type": "event", "event": "chat", "payload": {"runId": "r", "state": "final", "message": {"content": [{"type": "text", "text": "Hi"}, {"type": "thinking", "thinking": "x"}, {"type": "text", "text": "!"}]}}}),
                RunStep::Done("Hi!".into()),
            ),
            (
                json!({"type": "event", "event": "chat", "payload": {"runId": "r", "state": "aborted"}}),
                RunStep::Aborted,
            ),
            (
                json!({"type": "event", "event": "chat", "payload": {"runId": "r", "state": "error", "errorMessage": "model down"}}),
                RunStep::Failed("model down".into()),
            ),
            (
                json!({"type": "event", "event": "chat", "payload": {"runId": "r", "state": "delta"}}),
                RunStep::Ignore,
            ),
        ];
        for (frame, want) in cases {
            assert_eq!(run_step(&frame, "1", "r"), want, "{frame}");
        }
    }

    #[test]
    fn malformed_frames_are_ignored_or_read_with_defaults() {
        for frame in [
            json!(null),
            json!([1, 2]),
            json!("res"),
            json!({"type": 5}),
            json!({"type": "event", "payload": 3}),
        ] {
            assert_eq!(run_step(&frame, "1", "r"), RunStep::Ignore, "{frame}");
        }
        let refused = json!({"type": "res", "id": "1", "ok": "yes"});
        assert_eq!(
            run_step(&refused, "1", "r"),
            RunStep::Failed("the gateway refused the message without saying why".into())
        );
        let bare_final =
            json!({"type": "event", "event": "chat", "payload": {"runId": "r", "state": "final"}});
        assert_eq!(
            run_step(&bare_final, "1", "r"),
            RunStep::Done(String::new())
        );
    }

    #[test]
    fn history_becomes_roles_and_texts() {
        let payload = json!({
            "sessionKey": "agent:main:mcp", "totalMessages": 3, "hasMore": false,
            "messages": [
                {"role": "user", "content": "what time is it?", "timestamp": 5},
                {"role": "assistant", "content": [{"type": "thinking", "thinking": "hm"}, {"type": "text", "text": "Let me look."}, {"type": "toolCall", "name": "exec", "arguments": {"command": "date"}}]},
                {"role": "toolResult", "toolName": "exec", "content": [{"type": "text", "text": "noon"}]},
                {"content": "no role"},
                7
            ]
        });
        assert_eq!(
            history_view(&payload),
            json!({
                "sessionKey": "agent:main:mcp", "totalMessages": 3, "hasMore": false,
                "messages": [
                    {"role": "user", "text": "what time is it?", "timestamp": 5},
                    {"role": "assistant", "text": "Let me look.\n[tool call exec {\"command\":\"date\"}]"},
                    {"role": "toolResult", "text": "[exec result] noon"}
                ]
            })
        );
        assert_eq!(history_view(&json!("x"))["messages"], json!([]));
    }
}

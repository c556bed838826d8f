//! A run's agent events as OpenClaw's protocol events: `agent` (`stream` lifecycle,
//! assistant, tool; per-run `seq`) and `chat` (`state` delta, final, aborted, error, with the
//! assistant message so far), and the result the run ends with.
//!
//! Like OpenClaw, `chat` deltas are throttled (at most one per [`CHAT_DELTA_INTERVAL`]; the
//! `deltaText` of each covers everything since the previous one) while `agent` events carry
//! every token: chat clients redraw the message, and a token-by-token redraw on every
//! connected client is most of a busy gateway's work.

use std::sync::Arc;
use std::time::{Duration, Instant};

use pincer_agent::AgentEvent;
use pincer_ai::{AssistantMessageEvent, Message, StopReason};
use serde_json::{Value, json};

use super::runs::Runs;
use super::runtime::{TurnOrigin, TurnRequest};
use pincer_automation::heartbeat::{heartbeat_reply_delivery, sanitize_for_delivery};
use pincer_turns::turn::TurnOutcome;

/// How a run ended (`ok` or `error`: a run is never skipped).
pub use pincer_automation::cron::RunStatus;

/// What a finished run produced.
#[derive(Debug, Clone, PartialEq)]
pub struct RunResult {
    pub status: RunStatus,
    pub aborted: bool,
    /// The reply's text.
    pub text: String,
    pub error: Option<String>,
    pub stop_reason: String,
    pub provider: String,
    pub model: String,
    /// pi's usage object of the last reply.
    pub usage: Value,
    pub session_key: String,
    pub session_id: String,
    pub started_at: i64,
    pub ended_at: i64,
    pub duration_ms: u64,
}

/// The least time between two `chat` delta events of a run (OpenClaw's 150 ms).
pub const CHAT_DELTA_INTERVAL: Duration = Duration::from_millis(150);

/// Emits one run's events.
pub struct RunEmitter {
    run_id: String,
    session_key: String,
    agent_id: String,
    runs: Arc<Runs>,
    origin: TurnOrigin,
    seq: u64,
    started_at: i64,
    text: String,
    /// Text not yet sent in a `chat` delta, and when the last one went out.
    pending_delta: String,
    last_chat_delta: Option<Instant>,
    /// Running tool calls' last `update` events (throttled per call).
    tool_updates: super::tool_updates::ToolUpdates,
}

impl RunEmitter {
    pub fn new(run_id: &str, request: &TurnRequest, runs: Arc<Runs>) -> Self {
        Self {
            run_id: run_id.to_owned(),
            session_key: request.session_key.clone(),
            agent_id: request.agent_id.clone(),
            runs,
            origin: request.origin.clone(),
            seq: 0,
            started_at: pincer_ai::now_ms(),
            text: String::new(),
            pending_delta: String::new(),
            last_chat_delta: None,
            tool_updates: Default::default(),
        }
    }

    fn agent(&mut self, stream: &str, data: Value) {
        self.seq += 1;
        let payload = json!({
            "runId": self.run_id, "sessionKey": self.session_key, "agentId": self.agent_id,
            "stream": stream, "data": data, "seq": self.seq, "ts": pincer_ai::now_ms(),
        });
        self.runs.broadcast("agent", payload);
    }

    fn chat(&mut self, state: &str, extra: Value) {
        self.seq += 1;
        let mut payload = json!({
            "runId": self.run_id, "sessionKey": self.session_key, "seq": self.seq, "state": state,
        });
        if let (Value::Object(target), Value::Object(fields)) = (&mut payload, extra) {
            target.extend(fields);
        }
        self.runs.broadcast("chat", payload);
    }

    fn message(&self) -> Value {
        assistant_message(&self.text)
    }

    /// A heartbeat's or cron job's reply is held back until it ended: it may be nothing
    /// but `HEARTBEAT_OK`, which no client may see.
    fn streams_reply(&self) -> bool {
        matches!(self.origin, TurnOrigin::User)
    }

    /// What of the finished reply clients may see (`None`: nothing), for a turn that
    /// does not stream.
    fn deliverable(&self) -> Option<String> {
        match self.origin {
            TurnOrigin::Heartbeat {
                kind,
                ack_max_chars,
                deliver,
            } => deliver
                .then(|| heartbeat_reply_delivery(&self.text, kind, ack_max_chars))
                .flatten(),
            TurnOrigin::Cron { .. } => sanitize_for_delivery(&self.text),
            TurnOrigin::User => Some(self.text.clone()),
        }
    }

    /// Sends the text gathered since the last `chat` delta.
    fn flush_chat_delta(&mut self) {
        if self.pending_delta.is_empty() {
            return;
        }
        let delta = std::mem::take(&mut self.pending_delta);
        let message = self.message();
        self.chat("delta", json!({ "deltaText": delta, "message": message }));
        self.last_chat_delta = Some(Instant::now());
    }

    /// The run has its lane and begins.
    pub fn started(&mut self) {
        self.started_at = pincer_ai::now_ms();
        let started_at = self.started_at;
        self.agent(
            "lifecycle",
            json!({ "phase": "start", "startedAt": started_at }),
        );
    }

    /// One agent event.
    pub fn on_agent_event(&mut self, event: &AgentEvent) {
        match event {
            AgentEvent::MessageStart {
                message: Message::Assistant(_),
            } => self.text.clear(),
            AgentEvent::MessageUpdate {
                assistant_message_event: AssistantMessageEvent::TextDelta { delta, .. },
            } => {
                self.text.push_str(delta);
                if !self.streams_reply() {
                    return;
                }
                let text = self.text.clone();
                self.agent("assistant", json!({ "text": text, "delta": delta }));
                self.pending_delta.push_str(delta);
                if self
                    .last_chat_delta
                    .is_none_or(|last| last.elapsed() >= CHAT_DELTA_INTERVAL)
                {
                    self.flush_chat_delta();
                }
            }
            // A message's last words go out before the next message (or the end) begins.
            AgentEvent::MessageEnd {
                message: Message::Assistant(_),
            } => self.flush_chat_delta(),
            // A heartbeat may end in silence: its tool calls would leave a reply-less trace
            // on every client showing the session.
            AgentEvent::ToolExecutionStart { .. }
            | AgentEvent::ToolExecutionUpdate { .. }
            | AgentEvent::ToolExecutionEnd { .. }
                if matches!(self.origin, TurnOrigin::Heartbeat { .. }) => {}
            AgentEvent::ToolExecutionStart {
                tool_call_id,
                tool_name,
                args,
            } => self.agent(
                "tool",
                json!({ "phase": "start", "name": tool_name, "toolCallId": tool_call_id, "args": args }),
            ),
            // Throttled per call: one that is not due falls through to the end.
            AgentEvent::ToolExecutionUpdate {
                tool_call_id,
                tool_name,
                partial_result,
                ..
            } if self.tool_updates.due(tool_call_id) => {
                let data = super::tool_updates::update_data(tool_name, tool_call_id, partial_result);
                self.agent("tool", data);
            }
            AgentEvent::ToolExecutionEnd {
                tool_call_id,
                tool_name,
                result,
                is_error,
            } => {
                self.tool_updates.ended(tool_call_id);
                self.agent(
                    "tool",
                    json!({
                        "phase": "result", "name": tool_name, "toolCallId": tool_call_id,
                        "isError": is_error, "result": result.text_content(),
                    }),
                );
            }
            _ => {}
        }
    }

    /// The turn ended; emits the end events and returns the result.
    pub fn finished(mut self, outcome: &TurnOutcome, aborted: bool) -> RunResult {
        let reply = outcome.reply.clone().unwrap_or_default();
        let ended_at = pincer_ai::now_ms();
        let error = if aborted { None } else { outcome.error() };
        let stop_reason = reply.stop_reason.as_str().to_owned();
        self.text = reply.text();
        let started_at = self.started_at;
        self.agent(
            "lifecycle",
            json!({
                "phase": if error.is_some() { "error" } else { "end" },
                "startedAt": started_at, "endedAt": ended_at, "aborted": aborted,
                "stopReason": stop_reason, "error": error,
            }),
        );
        if !self.streams_reply() {
            let silent = matches!(self.origin, TurnOrigin::Heartbeat { deliver: false, .. });
            // Only what the HEARTBEAT_OK rules keep.
            match (&error, self.deliverable()) {
                _ if silent || aborted => {}
                (Some(e), _) => self.chat("error", json!({ "errorMessage": e })),
                (None, Some(text)) => {
                    let message = assistant_message(&text);
                    self.chat(
                        "final",
                        json!({ "stopReason": stop_reason, "message": message }),
                    );
                }
                (None, None) => {}
            }
        } else {
            let message = self.message();
            match (&error, aborted) {
                (_, true) => self.chat(
                    "aborted",
                    json!({ "stopReason": "aborted", "message": message }),
                ),
                (Some(e), false) => {
                    self.chat("error", json!({ "errorMessage": e, "message": message }))
                }
                (None, false) => self.chat(
                    "final",
                    json!({ "stopReason": stop_reason, "message": message }),
                ),
            }
        }
        RunResult {
            status: if error.is_some() || aborted || reply.stop_reason == StopReason::Error {
                RunStatus::Error
            } else {
                RunStatus::Ok
            },
            aborted,
            text: self.text,
            error: error.or_else(|| aborted.then(|| "aborted".to_owned())),
            stop_reason,
            provider: reply.provider.clone(),
            model: reply.model.clone(),
            usage: serde_json::to_value(&reply.usage).unwrap_or(Value::Null),
            session_key: outcome.session_key.clone(),
            session_id: outcome.session_id.clone(),
            started_at,
            ended_at,
            duration_ms: u64::try_from(ended_at - started_at).unwrap_or(0),
        }
    }

    /// The run could not start (no lane, a planning error, a store error).
    pub fn failed_before_start(mut self, message: &str, aborted: bool) -> RunResult {
        let ended_at = pincer_ai::now_ms();
        let started_at = self.started_at;
        self.agent(
            "lifecycle",
            json!({ "phase": "error", "startedAt": started_at, "endedAt": ended_at, "error": message }),
        );
        let state = if aborted { "aborted" } else { "error" };
        let silent = match self.origin {
            TurnOrigin::Heartbeat { deliver, .. } => {
                !deliver || aborted || message == pincer_turns::turn_rpc::NO_IDLE_WORKER
            }
            _ => false,
        };
        if !silent {
            self.chat(state, json!({ "errorMessage": message }));
        }
        RunResult {
            status: RunStatus::Error,
            aborted,
            text: String::new(),
            error: Some(message.to_owned()),
            stop_reason: if aborted { "aborted" } else { "error" }.to_owned(),
            provider: String::new(),
            model: String::new(),
            usage: Value::Null,
            session_key: self.session_key.clone(),
            session_id: String::new(),
            started_at,
            ended_at,
            duration_ms: u64::try_from(ended_at - started_at).unwrap_or(0),
        }
    }
}

/// An assistant message with one text block, as `chat` events carry it.
fn assistant_message(text: &str) -> Value {
    json!({
        "role": "assistant",
        "content": [{ "type": "text", "text": text }],
        "timestamp": pincer_ai::now_ms(),
    })
}

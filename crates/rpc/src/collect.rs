//! One whole turn over RPC, pi-gateway's `promptAndCollect`: send `prompt`, gather the
//! assistant's text from `message_update` / `text_delta` events until `agent_end`.

use std::time::Duration;

use serde_json::Value;
use tokio::sync::broadcast::error::RecvError;

use super::client::RpcClient;
use super::error::RpcError;
use super::protocol::RpcCommand;

/// What a turn produced.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct TurnCollected {
    /// Every `text_delta` of the turn, concatenated (all assistant messages, as pi-gateway).
    pub text: String,
    /// Events seen from `agent_start` to `agent_end`, both included.
    pub events: usize,
    /// `stopReason` of the last assistant message (`stop`, `length`, `toolUse`, `error`,
    /// `aborted`).
    pub stop_reason: Option<String>,
    /// `errorMessage` of the last assistant message, when it failed.
    pub error_message: Option<String>,
}

/// Folds a turn's events. Events before `agent_start` are ignored: a late `agent_end` of an
/// earlier, aborted turn must not end this one.
#[derive(Debug, Default)]
pub(super) struct TurnCollector {
    started: bool,
    turn: TurnCollected,
}

impl TurnCollector {
    /// Feeds one event; true once the turn is over.
    pub(super) fn feed(&mut self, event: &Value) -> bool {
        let ty = event.get("type").and_then(Value::as_str).unwrap_or("");
        if !self.started {
            if ty != "agent_start" {
                return false;
            }
            self.started = true;
        }
        self.turn.events += 1;
        match ty {
            "message_update" => {
                let delta = &event["assistantMessageEvent"];
                if delta.get("type").and_then(Value::as_str) == Some("text_delta")
                    && let Some(text) = delta.get("delta").and_then(Value::as_str)
                {
                    self.turn.text.push_str(text);
                }
            }
            "message_end" => self.note_message(&event["message"]),
            "agent_end" => {
                if self.turn.stop_reason.is_none()
                    && let Some(last) = event
                        .get("messages")
                        .and_then(Value::as_array)
                        .and_then(|m| m.iter().rfind(|m| m["role"] == "assistant"))
                {
                    self.note_message(last);
                }
                return true;
            }
            _ => {}
        }
        false
    }

    fn note_message(&mut self, message: &Value) {
        if message.get("role").and_then(Value::as_str) != Some("assistant") {
            return;
        }
        let text = |key: &str| message.get(key).and_then(Value::as_str).map(str::to_string);
        self.turn.stop_reason = text("stopReason");
        self.turn.error_message = text("errorMessage");
    }

    pub(super) fn finish(self) -> TurnCollected {
        self.turn
    }
}

impl RpcClient {
    /// Sends `prompt{message}` and collects the turn until `agent_end`, all within `timeout`.
    /// On timeout it sends `abort` (without waiting) and fails with [`RpcError::Timeout`]; a
    /// `success:false` answer to the prompt fails with [`RpcError::Command`].
    ///
    /// If this subscriber lagged behind and lost events, the text is fetched afterwards
    /// with `get_last_assistant_text` instead.
    pub async fn prompt_and_wait(
        &self,
        message: impl Into<String>,
        timeout: Duration,
    ) -> Result<TurnCollected, RpcError> {
        // Subscribe before sending, or the first events could slip past.
        let mut events = self.subscribe();
        let mut death = self.shared.death.subscribe();
        let deadline = tokio::time::Instant::now() + timeout;
        let response = self.request(RpcCommand::prompt(message), timeout);
        tokio::pin!(response);
        let mut acked = false;
        let mut lost = 0u64;
        let mut collector = TurnCollector::default();

        let turn = tokio::time::timeout_at(deadline, async {
            loop {
                tokio::select! {
                    reply = &mut response, if !acked => {
                        reply?;
                        acked = true;
                    }
                    event = events.recv() => match event {
                        Ok(event) => {
                            if collector.feed(&event) {
                                break;
                            }
                        }
                        Err(RecvError::Lagged(n)) => {
                            tracing::warn!(pid = self.pid(), missed = n, "prompt_and_wait lagged behind the worker's events");
                            lost += n;
                        }
                        // The sender lives as long as the client.
                        Err(RecvError::Closed) => return Err(RpcError::Closed),
                    },
                    _ = death.wait_for(Option::is_some) => {
                        return Err(self.exit_info().unwrap_or_default().to_error());
                    }
                }
            }
            if !acked {
                // `agent_end` came before the prompt's own answer: still honour a refusal.
                (&mut response).await?;
            }
            Ok::<_, RpcError>(())
        })
        .await;

        match turn {
            Ok(Ok(())) => {}
            Ok(Err(e)) => return Err(e),
            Err(_) => {
                let _ = self.send_no_wait(RpcCommand::Abort);
                return Err(RpcError::Timeout {
                    command: "prompt".into(),
                    after: timeout,
                });
            }
        }
        let mut turn = collector.finish();
        if lost > 0 {
            let left = deadline
                .saturating_duration_since(tokio::time::Instant::now())
                .max(Duration::from_secs(1));
            let data = self.request(RpcCommand::GetLastAssistantText, left).await?;
            turn.text = data
                .get("text")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string();
        }
        Ok(turn)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;
    use serde_json::json;

    fn delta(text: &str) -> Value {
        json!({"type":"message_update","assistantMessageEvent":{"type":"text_delta","delta":text}})
    }

    #[test]
    fn collects_text_deltas_between_agent_start_and_agent_end() {
        let mut c = TurnCollector::default();
        // A stale end of an earlier turn, before this turn starts, is ignored.
        assert!(!c.feed(&json!({"type":"agent_end","messages":[]})));
        assert!(!c.feed(&delta("stale")));
        let turn = [
            json!({"type":"agent_start"}),
            json!({"type":"message_start","message":{"role":"assistant"}}),
            delta("Hel"),
            json!({"type":"message_update","assistantMessageEvent":{"type":"thinking_delta","delta":"hmm"}}),
            delta("lo"),
            json!({"type":"message_update","assistantMessageEvent":{"type":"text_delta","delta":5}}),
            json!({"type":"message_end","message":{"role":"assistant","stopReason":"toolUse"}}),
            json!({"type":"tool_execution_start"}),
            json!({"type":"message_end","message":{"role":"toolResult"}}),
            delta("!"),
            json!({"type":"message_end","message":{"role":"assistant","stopReason":"stop"}}),
        ];
        for event in &turn {
            assert!(!c.feed(event));
        }
        assert!(c.feed(&json!({"type":"agent_end","messages":[]})));
        assert_eq!(
            c.finish(),
            TurnCollected {
                text: "Hello!".into(),
                events: 12,
                stop_reason: Some("stop".into()),
                error_message: None,
            }
        );
    }

    #[test]
    fn stop_reason_falls_back_to_agent_end_messages() {
        let mut c = TurnCollector::default();
        c.feed(&json!({"type":"agent_start"}));
        assert!(c.feed(&json!({"type":"agent_end","messages":[
            {"role":"user"},
            {"role":"assistant","stopReason":"error","errorMessage":"429"},
            {"role":"toolResult"}
        ]})));
        let turn = c.finish();
        assert_eq!(turn.stop_reason.as_deref(), Some("error"));
        assert_eq!(turn.error_message.as_deref(), Some("429"));
        assert_eq!(turn.events, 2);
    }

    #[test]
    fn odd_events_do_not_panic() {
        let mut c = TurnCollector::default();
        for event in [
            json!(null),
            json!([]),
            json!({"type":"agent_start"}),
            json!({"type":7}),
            json!({"type":"message_update"}),
            json!({"type":"message_end","message":"x"}),
            json!({"type":"agent_end","messages":"no"}),
        ] {
            c.feed(&event);
        }
        assert_eq!(c.finish().text, "");
    }
}

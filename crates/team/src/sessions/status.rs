//! `session_status`: a session's card (model, thinking, tokens, what is running, its
//! parent if it was spawned) — the caller's own unless it names another — and, with
//! `model`, the session's model switched (`default` goes back to the agent's).

use std::sync::Arc;

use pincer_agent::{AgentTool, ToolContext, ToolError, ToolOutput, TypedTool, typed};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Map, Value, json};

use super::{Caller, entry_of, expand_key, not_found, reach};
use crate::Team;
use crate::policy::Action;

/// The parameters of `session_status`.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct StatusArgs {
    /// The session (default: your current one).
    #[serde(default)]
    pub session_key: Option<String>,
    /// Switch the session's model (`provider/model`; `default` for the agent's own).
    #[serde(default)]
    pub model: Option<String>,
}

struct SessionStatus {
    team: Arc<Team>,
    agent: Arc<str>,
}

impl TypedTool for SessionStatus {
    type Args = StatusArgs;
    const NAME: &'static str = "session_status";
    const LABEL: &'static str = "Session Status";
    const DESCRIPTION: &'static str = "Show a session's status card (model, thinking level, \
        tokens, running work; default: your current session). With model, switch that session's \
        model (provider/model, or default).";

    async fn run(&self, args: StatusArgs, ctx: ToolContext) -> Result<ToolOutput, ToolError> {
        let port = self.team.port()?;
        let caller = Caller::of(port.as_ref(), &self.agent, &ctx);
        let key = args
            .session_key
            .as_deref()
            .map(str::trim)
            .filter(|k| !k.is_empty())
            .map_or_else(
                || caller.key.clone(),
                |k| expand_key(port.as_ref(), &caller, k),
            );
        let target = reach(&self.team, &caller, Action::Status, &key)?;
        let Some(mut entry) = entry_of(&port, &target.agent_id, &target.key).await? else {
            return Err(not_found(&target.key));
        };
        let mut changed = None;
        if let Some(model) = args
            .model
            .as_deref()
            .map(str::trim)
            .filter(|m| !m.is_empty())
        {
            let value = if model == "default" {
                Value::Null
            } else {
                json!(
                    port.resolve_model(&target.agent_id, model)
                        .map_err(ToolError::failed)?
                )
            };
            let store = port.store(&target.agent_id);
            let (k, patch) = (target.key.clone(), json!({ "model": value }));
            entry = store
                .run(move |store| store.patch(&k, &patch))
                .await
                .map_err(|e| {
                    ToolError::failed(format!("cannot change the session's model: {e}"))
                })?;
            changed = Some(if model == "default" {
                "default".to_owned()
            } else {
                value.as_str().unwrap_or_default().to_owned()
            });
        }
        let default_model = port
            .agents()
            .into_iter()
            .find(|a| a.id == target.agent_id)
            .and_then(|a| a.model);
        let model = entry.model.clone().or(default_model);
        let runs = port.active_runs(&target.key);
        let facts = transcript_facts(&port, &target.agent_id, &target.key).await;
        let mut card = Map::new();
        card.insert("sessionKey".into(), json!(target.key));
        card.insert("agentId".into(), json!(target.agent_id));
        card.insert("sessionId".into(), json!(entry.session_id));
        card.insert("model".into(), json!(model));
        card.insert(
            "thinkingLevel".into(),
            json!(entry.thinking_level.as_deref().unwrap_or("default")),
        );
        card.insert("inputTokens".into(), json!(entry.input_tokens.unwrap_or(0)));
        card.insert(
            "outputTokens".into(),
            json!(entry.output_tokens.unwrap_or(0)),
        );
        card.insert("totalTokens".into(), json!(entry.total_tokens.unwrap_or(0)));
        card.insert("compactions".into(), json!(entry.compaction_count));
        card.insert("costUsd".into(), json!(facts.cost));
        if let Some(error) = &facts.last_error {
            card.insert("lastError".into(), json!(error));
        }
        card.insert("activeRuns".into(), json!(runs.len()));
        card.insert("updatedAt".into(), json!(entry.updated_at));
        if let Some(record) = self.team.registry().get(&target.key) {
            card.insert("parentSessionKey".into(), json!(record.requester_key));
            card.insert("status".into(), json!(record.status.as_str()));
        }
        if let Some(model) = &changed {
            card.insert("modelChanged".into(), json!(model));
        }
        let text = render(&card);
        Ok(ToolOutput::text(text).with_details(Value::Object(card)))
    }
}

/// What the card reads from the transcript.
#[derive(Default)]
struct TranscriptFacts {
    /// What the replies cost, in dollars.
    cost: f64,
    /// The last reply's error, if it failed.
    last_error: Option<String>,
}

/// The session's cost so far and its last reply's error (an unreadable transcript reads as
/// none: the card still shows the rest).
async fn transcript_facts(
    port: &Arc<dyn crate::port::SessionPort>,
    agent_id: &str,
    key: &str,
) -> TranscriptFacts {
    let store = port.store(agent_id);
    let key = key.to_owned();
    let read = store
        .run(move |store| {
            let session = store.resume(&key)?;
            let mut facts = TranscriptFacts::default();
            for entry in session.transcript.entries() {
                if let pincer_store::EntryBody::Message(m) = &entry.body
                    && let pincer_ai::Message::Assistant(reply) = &m.message
                {
                    facts.cost += reply.usage.cost.total;
                    facts.last_error = match reply.stop_reason {
                        pincer_ai::StopReason::Error => Some(
                            reply
                                .error_message
                                .clone()
                                .unwrap_or_else(|| "unknown error".to_owned()),
                        ),
                        _ => None,
                    };
                }
            }
            Ok(facts)
        })
        .await;
    read.unwrap_or_default()
}

/// The card as the model reads it.
fn render(card: &Map<String, Value>) -> String {
    let s = |name: &str| {
        card.get(name)
            .and_then(Value::as_str)
            .unwrap_or("-")
            .to_owned()
    };
    let n = |name: &str| card.get(name).and_then(Value::as_u64).unwrap_or(0);
    let mut lines = vec![
        format!("Session: {} (agent {})", s("sessionKey"), s("agentId")),
        format!("Model: {} · Thinking: {}", s("model"), s("thinkingLevel")),
        format!(
            "Tokens: {} in / {} out ({} total) · Cost: ${:.4} · Compactions: {}",
            n("inputTokens"),
            n("outputTokens"),
            n("totalTokens"),
            card.get("costUsd").and_then(Value::as_f64).unwrap_or(0.0),
            n("compactions")
        ),
        match n("activeRuns") {
            0 => "Queue: idle".to_owned(),
            1 => "Queue: 1 run going".to_owned(),
            k => format!("Queue: {k} runs going or waiting"),
        },
    ];
    if card.contains_key("lastError") {
        lines.push(format!("Last error: {}", s("lastError")));
    }
    if card.contains_key("parentSessionKey") {
        lines.push(format!(
            "Spawned by: {} ({})",
            s("parentSessionKey"),
            s("status")
        ));
    }
    if card.contains_key("modelChanged") {
        lines.push(format!("Model switched to {}.", s("modelChanged")));
    }
    lines.join("\n")
}

/// The `session_status` tool of agent `agent`.
pub fn tool(team: Arc<Team>, agent: Arc<str>) -> Arc<dyn AgentTool> {
    typed(SessionStatus { team, agent })
}

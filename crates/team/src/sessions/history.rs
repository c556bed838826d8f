//! `sessions_history`: another session's transcript as the model would read it, its last
//! messages first cut to `limit`; tool calls, tool results and thinking left out unless
//! `includeTools`.

use std::sync::Arc;

use pincer_agent::{AgentTool, ToolContext, ToolError, ToolOutput, TypedTool, typed};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use super::{Caller, entry_of, expand_key, not_found, reach};
use crate::Team;
use crate::policy::Action;
use crate::port::SessionPort;

/// Messages when the call names no limit.
const DEFAULT_LIMIT: usize = 20;
/// Messages at most.
const MAX_LIMIT: usize = 200;
/// Characters of one text block at most: a long tool output must not flood the caller.
const MAX_BLOCK_CHARS: usize = 4000;

/// The parameters of `sessions_history`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct HistoryArgs {
    /// The session's key (from sessions_list), or `main` for your main session.
    pub session_key: String,
    /// The last N messages (default 20, at most 200).
    #[serde(default)]
    pub limit: Option<u32>,
    /// Keep tool calls and tool results (left out by default).
    #[serde(default)]
    pub include_tools: Option<bool>,
}

struct SessionsHistory {
    team: Arc<Team>,
    agent: Arc<str>,
}

impl TypedTool for SessionsHistory {
    type Args = HistoryArgs;
    const NAME: &'static str = "sessions_history";
    const LABEL: &'static str = "Session History";
    const DESCRIPTION: &'static str = "Read another session's conversation (a key from \
        sessions_list): its last messages, tool calls left out unless includeTools.";

    async fn run(&self, args: HistoryArgs, ctx: ToolContext) -> Result<ToolOutput, ToolError> {
        let port = self.team.port()?;
        let caller = Caller::of(port.as_ref(), &self.agent, &ctx);
        let key = expand_key(port.as_ref(), &caller, &args.session_key);
        let target = reach(&self.team, &caller, Action::History, &key)?;
        if entry_of(&port, &target.agent_id, &target.key)
            .await?
            .is_none()
        {
            return Err(not_found(&target.key));
        }
        let limit = args
            .limit
            .map_or(DEFAULT_LIMIT, |l| (l as usize).clamp(1, MAX_LIMIT));
        let include_tools = args.include_tools.unwrap_or(false);
        let messages =
            last_messages(&port, &target.agent_id, &target.key, limit, include_tools).await?;
        Ok(crate::json::output(json!({
            "sessionKey": target.key,
            "agentId": target.agent_id,
            "messages": messages,
        })))
    }
}

/// The last `limit` messages of session `key` of `agent_id`, as pi's JSON, filtered.
pub(crate) async fn last_messages(
    port: &Arc<dyn SessionPort>,
    agent_id: &str,
    key: &str,
    limit: usize,
    include_tools: bool,
) -> Result<Vec<Value>, ToolError> {
    let store = port.store(agent_id);
    let key = key.to_owned();
    let messages = store
        .run(move |store| Ok(store.resume(&key)?.transcript.context()))
        .await
        .map_err(|e| ToolError::failed(format!("cannot read the session: {e}")))?;
    let kept: Vec<Value> = messages
        .iter()
        .filter_map(|m| serde_json::to_value(m).ok())
        .filter_map(|m| filter_message(m, include_tools))
        .collect();
    let skip = kept.len().saturating_sub(limit);
    Ok(kept.into_iter().skip(skip).collect())
}

/// `message` without what the caller did not ask for: tool results, tool calls and
/// thinking (unless `include_tools`), usage and signatures; long texts shortened. `None`
/// when nothing is left of it.
fn filter_message(mut message: Value, include_tools: bool) -> Option<Value> {
    let role = message["role"].as_str().unwrap_or_default().to_owned();
    if role == "toolResult" && !include_tools {
        return None;
    }
    if let Some(object) = message.as_object_mut() {
        for noise in ["usage", "api", "provider", "stopReason", "responseId"] {
            object.remove(noise);
        }
    }
    if let Some(blocks) = message["content"].as_array_mut() {
        blocks.retain(|b| {
            let kind = b["type"].as_str().unwrap_or_default();
            kind != "thinking" && (include_tools || kind != "toolCall")
        });
        for block in blocks.iter_mut() {
            if let Some(text) = block["text"].as_str()
                && text.chars().count() > MAX_BLOCK_CHARS
            {
                let cut: String = text.chars().take(MAX_BLOCK_CHARS).collect();
                block["text"] = json!(format!("{cut}… (shortened)"));
            }
            if let Some(object) = block.as_object_mut() {
                object.remove("textSignature");
            }
        }
        if blocks.is_empty() {
            return None;
        }
    }
    Some(message)
}

/// The `sessions_history` tool of agent `agent`.
pub fn tool(team: Arc<Team>, agent: Arc<str>) -> Arc<dyn AgentTool> {
    typed(SessionsHistory { team, agent })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tool_noise_is_left_out_unless_asked_for() {
        let call = json!({"role": "assistant", "content": [
            {"type": "thinking", "thinking": "hmm"},
            {"type": "toolCall", "id": "1", "name": "exec", "arguments": {}},
        ], "usage": {"input": 1}});
        assert_eq!(filter_message(call.clone(), false), None);
        assert_eq!(
            filter_message(call, true),
            Some(json!({"role": "assistant", "content": [
                {"type": "toolCall", "id": "1", "name": "exec", "arguments": {}},
            ]}))
        );
        let result = json!({"role": "toolResult", "content": [{"type": "text", "text": "x"}]});
        assert_eq!(filter_message(result, false), None);
        let user = json!({"role": "user", "content": "hi", "timestamp": 1});
        assert_eq!(filter_message(user.clone(), false), Some(user));
    }
}

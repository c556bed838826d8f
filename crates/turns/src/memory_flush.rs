//! OpenClaw's pre-compaction memory flush: when a session nears auto-compaction, one extra
//! silent agent turn runs before the user's, asking the agent to write what it must not
//! forget to `memory/` in its workspace — compaction is about to replace the older history
//! with a summary.
//!
//! - **When.** The session's estimated context (its transcript's context plus the new
//!   input, pi's estimate: the last reply's reported usage plus chars/4 after it) exceeds
//!   `contextWindow − reserveTokens − softThresholdTokens` (4000 by default) of the turn's
//!   model, and no flush ran in this compaction cycle yet: the index entry's
//!   `memoryFlushCompactionCount` differs from its `compactionCount`. A compaction bumps
//!   `compactionCount`, so the next approach to the threshold flushes again. Never when
//!   auto-compaction is off, the model's window is unknown, or the agent has no tool that
//!   writes files (it could not store anything).
//! - **How.** On a copy of the turn's agent: the same model, tools and context (with the
//!   per-session `[memory]` message, if any), the system prompt with OpenClaw's flush
//!   addition, and OpenClaw's flush prompt as the user message. As OpenClaw does today, the
//!   flush runs on a detached view of the conversation: its prompt and replies are never
//!   appended to the transcript and none of its events reach the caller, so nothing of it
//!   is printed, streamed, delivered to a channel or sent as a `chat` event. Only what its
//!   tools write to disk stays, with its token usage counted in the session's totals.
//!   Compaction is off inside it (whatever it would summarise is thrown away anyway).
//! - **Record.** `memoryFlushAt` (ms) and `memoryFlushCompactionCount` (the cycle it ran
//!   in) are set in the index entry, even when the flush call failed, so a failing model
//!   costs one attempt per cycle, not one per turn.

use pincer_agent::compaction::estimate_context_tokens;
use pincer_agent::{Agent, AgentConfig};
use pincer_ai::{CancellationToken, Message, StopReason, Usage};
use pincer_store::{OpenSession, SessionEntry, SessionStore, StoreError, on_blocking_pool};

/// OpenClaw's default distance below the compaction threshold where a flush starts.
pub const DEFAULT_SOFT_THRESHOLD_TOKENS: u64 = 4000;

/// OpenClaw's flush prompt (the user message of the flush turn).
pub const DEFAULT_PROMPT: &str = "Pre-compaction memory flush. Store durable memories now (use memory/YYYY-MM-DD.md; create memory/ if needed). If nothing to store, reply with NO_REPLY.";

/// OpenClaw's addition to the system prompt of the flush turn.
pub const DEFAULT_SYSTEM_PROMPT: &str = "Pre-compaction memory flush turn. The session is near auto-compaction; capture durable memories to disk. You may reply, but usually NO_REPLY is correct.";

/// Tools that can write a file in the workspace; an agent without any is not flushed.
pub const WRITE_TOOLS: &[&str] = &[
    "write",
    "edit",
    "apply_patch",
    "fs.write_file",
    "fs.edit_file",
];

/// `agents.defaults.compaction.memoryFlush`, resolved (present only when enabled).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemoryFlushSettings {
    pub soft_threshold_tokens: u64,
    pub prompt: String,
    pub system_prompt: String,
}

impl Default for MemoryFlushSettings {
    fn default() -> Self {
        Self {
            soft_threshold_tokens: DEFAULT_SOFT_THRESHOLD_TOKENS,
            prompt: DEFAULT_PROMPT.to_owned(),
            system_prompt: DEFAULT_SYSTEM_PROMPT.to_owned(),
        }
    }
}

/// What a flush did.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FlushOutcome {
    /// The flush's last reply text (never shown to anyone; for logs and tests).
    pub reply: String,
    /// Every reply's usage, added to the session's token counts.
    pub usage: Vec<Usage>,
    /// The flush call's error, if it ended in one.
    pub error: Option<String>,
}

/// Whether the agent has a tool that writes files.
pub fn can_write(agent: &AgentConfig) -> bool {
    agent.tools.iter().any(|t| WRITE_TOOLS.contains(&t.name()))
}

/// The context size above which a flush is due, for this agent's model and compaction
/// settings; `None` when it never is (auto-compaction off, unknown window).
pub fn flush_threshold(agent: &AgentConfig, settings: &MemoryFlushSettings) -> Option<u64> {
    let window = agent.model.context_window;
    (agent.compaction.enabled && window > 0).then(|| {
        window
            .saturating_sub(agent.compaction.reserve_tokens)
            .saturating_sub(settings.soft_threshold_tokens)
    })
}

/// Whether a flush is due before a turn of `entry`'s session whose agent has `agent`
/// (its messages the session's context) and whose new messages are `input`.
pub fn flush_due(
    settings: &MemoryFlushSettings,
    agent: &AgentConfig,
    input: &[Message],
    entry: &SessionEntry,
) -> bool {
    if entry.memory_flush_compaction_count == Some(entry.compaction_count) || !can_write(agent) {
        return false;
    }
    let Some(threshold) = flush_threshold(agent, settings) else {
        return false;
    };
    let mut messages = agent.messages.clone();
    messages.extend(input.iter().cloned());
    estimate_context_tokens(&messages) > threshold
}

/// Runs the flush turn on a copy of `agent` (see the module doc). Cancelling `abort` stops
/// it like the user's turn.
pub async fn run_flush(
    agent: &AgentConfig,
    settings: &MemoryFlushSettings,
    abort: Option<&CancellationToken>,
) -> FlushOutcome {
    let mut config = agent.clone();
    config.system_prompt = if config.system_prompt.is_empty() {
        settings.system_prompt.clone()
    } else {
        format!("{}\n\n{}", config.system_prompt, settings.system_prompt)
    };
    config.compaction.enabled = false;
    let start = config.messages.len() + 1;
    let flusher = Agent::new(config);
    let run = flusher.prompt_messages(vec![Message::user(settings.prompt.clone())]);
    let result = match abort {
        Some(abort) => {
            tokio::pin!(run);
            tokio::select! {
                result = &mut run => result,
                () = abort.cancelled() => {
                    flusher.abort();
                    run.await
                }
            }
        }
        None => run.await,
    };
    let messages = flusher.state().messages;
    let added = messages.get(start..).unwrap_or_default();
    let mut outcome = FlushOutcome::default();
    for message in added {
        if let Message::Assistant(reply) = message {
            outcome.usage.push(reply.usage.clone());
            outcome.reply = reply.text();
            outcome.error = matches!(reply.stop_reason, StopReason::Error | StopReason::Aborted)
                .then(|| reply.error_message.clone().unwrap_or_default());
        }
    }
    if let Err(e) = result {
        outcome.error = Some(e.to_string());
    }
    outcome
}

/// Before a turn: runs a flush when one is due and records it in the index entry (on the
/// blocking pool; the session goes there and comes back). A failure to record is logged and
/// added to `errors`; the turn goes on either way.
pub(crate) async fn before_turn(
    store: &SessionStore,
    mut session: OpenSession,
    agent: &AgentConfig,
    input: &[Message],
    settings: &MemoryFlushSettings,
    abort: Option<&CancellationToken>,
    errors: &mut Vec<String>,
) -> Result<(Option<FlushOutcome>, OpenSession), StoreError> {
    if !flush_due(settings, agent, input, &session.entry) {
        return Ok((None, session));
    }
    let cycle = session.entry.compaction_count;
    tracing::info!(session = %session.key, cycle, "pre-compaction memory flush");
    let outcome = run_flush(agent, settings, abort).await;
    if let Some(error) = &outcome.error {
        tracing::warn!(session = %session.key, error = %error, "the memory flush failed");
    }
    let at = pincer_store::ids::now_ms();
    let store = store.clone();
    #[expect(clippy::disallowed_methods, reason = "inside on_blocking_pool")]
    let (session, recorded) = on_blocking_pool(move || {
        let recorded = store.update_session(&mut session, |e| {
            e.memory_flush_at = Some(at);
            e.memory_flush_compaction_count = Some(cycle);
        });
        Ok((session, recorded))
    })
    .await?;
    if let Err(e) = recorded {
        tracing::error!(error = %e, "cannot record the memory flush");
        errors.push(e.to_string());
    }
    Ok((Some(outcome), session))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_openclaws() {
        let s = MemoryFlushSettings::default();
        assert_eq!(s.soft_threshold_tokens, 4000);
        assert!(
            s.prompt
                .starts_with("Pre-compaction memory flush. Store durable")
        );
        assert!(s.prompt.ends_with("reply with NO_REPLY."));
        assert!(
            s.system_prompt
                .starts_with("Pre-compaction memory flush turn.")
        );
    }
}

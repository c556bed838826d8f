//! The chat commands added after the first five, answered like them (see
//! `chat_commands.rs`): `/usage` (token counts and cost summed over the transcript's
//! replies), `/queue [mode|default]` and `/verbose [on|off|default]` (kept on the session's
//! index entry as `queueMode` and `verboseLevel`, where `sessions.patch` keeps its fields),
//! all three worded by [`pincer_turns::command_answers`] as `pincer chat` words them, and
//! `/compact [instructions]`: a summary of the older conversation by the session's model
//! ([`pincer_turns::compact`]), in the session's lane, as OpenClaw's `/compact` does it (the
//! running reply is stopped first). WS `sessions.compact` stays OpenClaw's trim.

use std::sync::Arc;
use std::time::Duration;

use pincer_config::QueueMode;
use pincer_turns::command_answers::{
    queue_text, queue_value, session_queue_mode, usage_text, usage_totals, verbose_text,
    verbose_value,
};
use pincer_turns::commands::Setting;
use pincer_turns::compact::{COMPACT_TIMEOUT, CompactError, compact_reply, compact_session};
use serde_json::json;

use super::super::Gateway;
use super::super::runtime::{TurnRequest, on_blocking_pool};
use super::chat_commands::{entry, set};
use super::sessions::announce;

/// How long `/compact` waits for the reply it stopped to end (OpenClaw's 15 s).
const STOP_WAIT: Duration = Duration::from_secs(15);

/// The mode a message to session `key` that names none is queued with: the session's own
/// (`/queue`), else `default` (the configured one; also when the entry cannot be read).
pub(in crate::server) async fn queue_mode_of(
    gw: &Gateway,
    agent_id: &str,
    key: &str,
    default: QueueMode,
) -> QueueMode {
    match entry(gw, agent_id, key).await {
        Ok(entry) => entry
            .as_ref()
            .and_then(session_queue_mode)
            .unwrap_or(default),
        Err(e) => {
            tracing::warn!(error = %e, key, "cannot read the session's queue mode");
            default
        }
    }
}

/// `/usage`: what the session's replies so far cost, summed over its transcript.
pub(super) async fn usage(gw: &Gateway, agent_id: &str, key: &str) -> Result<String, String> {
    let owned = key.to_owned();
    let totals = gw
        .runtime
        .sessions(agent_id)
        .run(move |s| usage_totals(s, &owned))
        .await
        .map_err(|e| format!("Cannot read the session: {e}"))?;
    let entry = entry(gw, agent_id, key).await?;
    Ok(usage_text(&totals, entry.and_then(|e| e.total_tokens)))
}

/// `/queue [mode|default]`: shows or sets the session's queue mode.
pub(super) async fn queue(
    gw: &Gateway,
    agent_id: &str,
    key: &str,
    setting: Option<Setting>,
) -> Result<String, String> {
    if let Some(setting) = setting {
        set(
            gw,
            agent_id,
            key,
            json!({ "queueMode": queue_value(setting)? }),
        )
        .await?;
    }
    let entry = entry(gw, agent_id, key).await?;
    Ok(queue_text(entry.as_ref(), gw.runs.queue_settings().mode))
}

/// `/verbose [on|off|default]`: shows or sets the session's verbose level.
pub(super) async fn verbose(
    gw: &Gateway,
    agent_id: &str,
    key: &str,
    setting: Option<Setting>,
) -> Result<String, String> {
    if let Some(setting) = setting {
        set(
            gw,
            agent_id,
            key,
            json!({ "verboseLevel": verbose_value(setting)? }),
        )
        .await?;
    }
    let entry = entry(gw, agent_id, key).await?;
    Ok(verbose_text(entry.as_ref()))
}

/// `/compact [instructions]`: the session's older conversation summarised by the model its
/// turns use, `instructions` appended to the summary prompt. The reply running on the
/// session is stopped and the compaction waits for the lane (turns sent meanwhile wait for
/// it); the answer is OpenClaw's one line (`⚙️ Compacted (12k → 3.4k) • Context …`),
/// also queued for the agent as a system event of the session.
pub(super) async fn compact(
    gw: &Arc<Gateway>,
    agent_id: &str,
    key: &str,
    instructions: Option<String>,
) -> Result<String, String> {
    if entry(gw, agent_id, key).await?.is_none() {
        return Ok("⚙️ Compaction unavailable (missing session id).".to_owned());
    }
    let Some(hold) = gw.runs.hold_lane(key, true, STOP_WAIT).await else {
        return Ok("⚙️ Compaction unavailable: the previous run is still stopping.".to_owned());
    };
    // The plan a turn would get: the session's model, stream function and compaction
    // settings (its input is not used).
    let request = TurnRequest::user(agent_id, key, "");
    let plan = on_blocking_pool(&gw.runtime, move |runtime| runtime.plan(request))
        .await
        .map_err(|e| format!("⚙️ Compaction failed: {e}"))?
        .map_err(|e| format!("⚙️ Compaction failed: {e}"))?;
    let window = plan.agent.model.context_window;
    let attempt = compact_session(plan, instructions.as_deref(), COMPACT_TIMEOUT).await;
    match &attempt.outcome {
        Ok(_) => announce(gw, agent_id.to_owned(), key, "compact"),
        Err(CompactError::NothingToCompact) => {}
        Err(e) => tracing::warn!(error = %e, key, "/compact failed"),
    }
    let reply = compact_reply(&attempt, window);
    // As OpenClaw does, the agent hears of it with the session's next message: queued
    // before the lane is let go, so a turn that waited for it reads it.
    let line = reply.trim_start_matches("⚙️ ");
    if let Err(e) = gw
        .system_events
        .inject(key, line, gw.system_events.now_ms())
    {
        tracing::warn!(error = %e, key, "cannot tell the agent of the compaction");
    }
    drop(hold);
    Ok(reply)
}

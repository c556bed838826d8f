//! The chat commands added after the first five, answered like them (see
//! `chat_commands.rs`): `/usage` (token counts and cost summed over the transcript's
//! replies), `/queue [mode|default]` and `/verbose [on|off|default]` (kept on the session's
//! index entry as `queueMode` and `verboseLevel`, where `sessions.patch` keeps its fields)
//! and `/compact` (the `sessions.compact` path itself, so it is refused the same way while
//! a turn runs or waits).

use std::sync::Arc;

use pincer_ai::Message;
use pincer_config::{QUEUE_MODE_NAMES, QueueMode};
use pincer_store::{EntryBody, SessionEntry, SessionStore, StoreError};
use pincer_turns::commands::Setting;
use serde_json::{Value, json};

use super::super::Gateway;
use super::chat_commands::{entry, set};
use super::sessions;

/// The session's queue mode, if it has its own (`/queue`): what a message to it does while
/// it is busy, when the request names none.
fn session_queue_mode(entry: &SessionEntry) -> Option<QueueMode> {
    entry
        .extra
        .get("queueMode")
        .and_then(Value::as_str)
        .and_then(QueueMode::parse)
}

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
    let context = entry
        .as_ref()
        .and_then(|e| e.total_tokens)
        .map_or_else(|| "unknown".to_owned(), |t| t.to_string());
    Ok([
        format!("replies:    {}", totals.replies),
        format!("tokens in:  {}", totals.input),
        format!("tokens out: {}", totals.output),
        format!(
            "cache:      {} read, {} written",
            totals.cache_read, totals.cache_write
        ),
        format!("cost:       ${:.4}", totals.cost),
        format!("context:    {context}"),
    ]
    .join("\n"))
}

#[derive(Default)]
struct Totals {
    replies: u64,
    input: u64,
    output: u64,
    cache_read: u64,
    cache_write: u64,
    cost: f64,
}

/// Sums the usage of every reply in the session's transcript (none before its first).
#[expect(
    clippy::disallowed_methods,
    reason = "runs on the blocking pool: SessionStore::run"
)]
fn usage_totals(store: &SessionStore, key: &str) -> Result<Totals, StoreError> {
    let mut totals = Totals::default();
    if store.entry(key)?.is_none() {
        return Ok(totals);
    }
    let session = store.resume(key)?;
    for entry in session.transcript.entries() {
        if let EntryBody::Message(m) = &entry.body
            && let Message::Assistant(reply) = &m.message
        {
            let u = &reply.usage;
            totals.replies += 1;
            totals.input += u.input;
            totals.output += u.output;
            totals.cache_read += u.cache_read;
            totals.cache_write += u.cache_write;
            totals.cost += u.cost.total;
        }
    }
    Ok(totals)
}

/// `/queue [mode|default]`: shows or sets the session's queue mode.
pub(super) async fn queue(
    gw: &Gateway,
    agent_id: &str,
    key: &str,
    setting: Option<Setting>,
) -> Result<String, String> {
    if let Some(setting) = setting {
        let value = match setting {
            Setting::Default => Value::Null,
            Setting::Value(name) => json!(
                QueueMode::parse(&name)
                    .ok_or_else(|| format!(
                        "Queue mode {name:?} is not one of {QUEUE_MODE_NAMES} (or default)."
                    ))?
                    .as_str()
            ),
        };
        set(gw, agent_id, key, json!({ "queueMode": value })).await?;
    }
    let entry = entry(gw, agent_id, key).await?;
    Ok(match entry.as_ref().and_then(session_queue_mode) {
        Some(mode) => format!("queue: {mode}"),
        None => format!("queue: {} (default)", gw.runs.queue_settings().mode),
    })
}

/// `/verbose [on|off|default]`: shows or sets the session's verbose level.
pub(super) async fn verbose(
    gw: &Gateway,
    agent_id: &str,
    key: &str,
    setting: Option<Setting>,
) -> Result<String, String> {
    if let Some(setting) = setting {
        let value = match setting {
            Setting::Default => Value::Null,
            Setting::Value(level) if level == "on" || level == "off" => json!(level),
            Setting::Value(level) => {
                return Err(format!(
                    "Verbose level {level:?} is not one of on, off (or default)."
                ));
            }
        };
        set(gw, agent_id, key, json!({ "verboseLevel": value })).await?;
    }
    let entry = entry(gw, agent_id, key).await?;
    let level = entry.and_then(|e| e.verbose_level);
    Ok(format!("verbose: {}", level.as_deref().unwrap_or("off")))
}

/// `/compact [instructions]`: `sessions.compact` on the session, told in words.
pub(super) async fn compact(
    gw: &Arc<Gateway>,
    agent_id: &str,
    key: &str,
    instructions: Option<String>,
) -> Result<String, String> {
    let before = entry(gw, agent_id, key).await?.and_then(|e| e.total_tokens);
    let answer = sessions::compact(gw, &json!({ "key": key }))
        .await
        .map_err(|e| e.message)?;
    let answer = serde_json::to_value(answer).map_err(|e| e.to_string())?;
    let kept = answer["kept"].as_u64().unwrap_or(0);
    let mut text = if answer["compacted"] == true {
        let before = before.map_or_else(String::new, |t| format!("; {t} tokens were in context"));
        format!(
            "Compacted: kept the last {kept} transcript entries and archived the rest{before}. \
             The token count starts again with the next reply."
        )
    } else if answer["reason"].is_string() {
        "Nothing to compact: this session has no messages yet.".to_owned()
    } else {
        format!("Nothing to compact: the transcript has {kept} entries, within the 400 kept.")
    };
    if instructions.is_some() {
        // The compaction keeps entries as written; it writes no summary to steer.
        text.push_str(
            "\n(Compaction keeps the latest entries as they are: instructions are not used.)",
        );
    }
    Ok(text)
}

//! The announcement of a finished sub-agent: a turn of the requester session that is told
//! the result (the user there has not seen it) and replies in its own words; that reply
//! goes to the chat the requester session talks to, as its own message. A reply of
//! `ANNOUNCE_SKIP` / `NO_REPLY` stays silent.

use std::sync::Arc;
use std::time::Duration;

use super::registry::{SpawnRecord, SpawnStatus, shorten};
use crate::port::{SessionPort, TeamTurn};
use crate::sessions::send::is_skip;

/// How long the requester's relay turn may take.
const RELAY_TIMEOUT: Duration = Duration::from_secs(600);
/// Characters of the result handed to the relay turn at most.
const MAX_RESULT_CHARS: usize = 20_000;

/// The message the requester session gets about `record`.
pub fn announcement(record: &SpawnRecord, timeout: Option<Duration>) -> String {
    let status = match &record.status {
        SpawnStatus::Done => "completed successfully".to_owned(),
        SpawnStatus::TimedOut => match timeout {
            Some(t) => format!("timed out after {} s", t.as_secs()),
            None => "timed out".to_owned(),
        },
        SpawnStatus::Failed(e) => format!("failed: {e}"),
        SpawnStatus::Stopped => "was stopped".to_owned(),
        SpawnStatus::Queued | SpawnStatus::Running => "is still running".to_owned(),
    };
    let findings = record
        .result
        .as_deref()
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .map_or_else(
            || "(no output)".to_owned(),
            |t| shorten(t, MAX_RESULT_CHARS),
        );
    format!(
        "[Sub-agent \"{}\" {status} after {} s (session {})]\nTask: {}\nResult:\n{findings}\n\n\
         The user has not seen this result. Tell them what it found now, in your own words and \
         briefly; reply exactly ANNOUNCE_SKIP if they need not hear about it.",
        record.title(),
        record.runtime_secs(),
        record.child_key,
        shorten(record.task.trim(), 500),
    )
}

/// What the user gets when the requester's agent could not word the result itself.
fn plain_notice(record: &SpawnRecord) -> String {
    let result = record
        .result
        .as_deref()
        .map(str::trim)
        .filter(|t| !t.is_empty());
    match (&record.status, result) {
        (SpawnStatus::Done, Some(result)) => {
            format!("Sub-agent \"{}\" finished:\n\n{result}", record.title())
        }
        (SpawnStatus::Done, None) => {
            format!("Sub-agent \"{}\" finished without output.", record.title())
        }
        (SpawnStatus::TimedOut, _) => format!("Sub-agent \"{}\" timed out.", record.title()),
        (SpawnStatus::Failed(e), _) => format!("Sub-agent \"{}\" failed: {e}", record.title()),
        _ => format!("Sub-agent \"{}\" was stopped.", record.title()),
    }
}

/// Announces `record` to its requester session and relays the reply to its chat.
pub(crate) async fn announce(
    port: &Arc<dyn SessionPort>,
    record: &SpawnRecord,
    timeout: Option<Duration>,
) {
    let run_id = format!("announce-{}", record.run_id);
    let turn = TeamTurn {
        run_id: run_id.clone(),
        agent_id: record.requester_agent.clone(),
        session_key: record.requester_key.clone(),
        message: announcement(record, timeout),
    };
    if let Err(e) = port.start_turn(turn) {
        tracing::warn!(run = %record.run_id, error = %e, "sub-agent result not announced");
        return;
    }
    let Some(outcome) = port.wait(&run_id, RELAY_TIMEOUT).await else {
        tracing::warn!(run = %record.run_id, "the sub-agent announcement's turn did not end in time");
        return;
    };
    let text = if outcome.error.is_some() && outcome.text.trim().is_empty() {
        // The relay turn failed (its model is down, say): the user still hears the result.
        plain_notice(record)
    } else if outcome.aborted || is_skip(&outcome.text) {
        return;
    } else {
        outcome.text
    };
    match port
        .deliver(&record.requester_agent, &record.requester_key, &text)
        .await
    {
        Ok(_) => {}
        Err(e) => {
            tracing::warn!(run = %record.run_id, error = %e, "sub-agent announcement not delivered")
        }
    }
}

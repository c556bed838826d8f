//! A sub-agent's life after `sessions_spawn` accepted it: wait for a sub-agent slot, run
//! the task as a turn of the child session, stop it at its timeout, announce how it ended
//! to the requester, and archive the child session if `cleanup: delete`.

use std::sync::Arc;
use std::time::Duration;

use super::registry::SpawnStatus;
use super::spawn::Cleanup;
use crate::Team;
use crate::port::{SessionPort, TeamTurn};

/// How long a run without a timeout is waited for between checks that it still exists.
const WAIT_SLICE: Duration = Duration::from_secs(600);

/// Runs the sub-agent of `child_key` (recorded by the spawn) to its end.
pub(crate) async fn run(
    team: Arc<Team>,
    port: Arc<dyn SessionPort>,
    child_key: String,
    timeout: Option<Duration>,
    cleanup: Cleanup,
) {
    let Ok(slot) = Arc::clone(team.subagent_slots()).acquire_owned().await else {
        return;
    };
    let Some(record) = team.registry().get(&child_key) else {
        return;
    };
    if record.status != SpawnStatus::Queued {
        // Stopped while it waited for a slot: the slot is not its to keep while the
        // requester is told.
        drop(slot);
        team.save().await;
        super::announce::announce(&port, &record, timeout).await;
        return;
    }
    team.registry().update(&child_key, |r| {
        r.status = SpawnStatus::Running;
        r.started_at = Some(pincer_base::now_ms());
    });
    team.save().await;
    let message = format!(
        "[Sub-agent task from session {} (agent \"{}\")]\n{}\n\nYou are a sub-agent working in \
         the background: do the task with your tools, then reply with the complete result — \
         your final reply is reported to the session that asked, which sees nothing else of \
         your work.",
        record.requester_key, record.requester_agent, record.task
    );
    let started = port.start_turn(TeamTurn {
        run_id: record.run_id.clone(),
        agent_id: record.agent_id.clone(),
        session_key: child_key.clone(),
        message,
    });
    let (status, result) = match started {
        Err(e) => (SpawnStatus::Failed(e.to_string()), None),
        Ok(()) => wait(&port, &record.run_id, &child_key, timeout).await,
    };
    let stopped = team
        .registry()
        .get(&child_key)
        .is_some_and(|r| r.status == SpawnStatus::Stopped);
    let status = if stopped {
        SpawnStatus::Stopped
    } else {
        status
    };
    team.registry().update(&child_key, |r| {
        r.status = status.clone();
        r.result = result.clone();
        r.ended_at = Some(pincer_base::now_ms());
    });
    team.save().await;
    drop(slot);
    if let Some(record) = team.registry().get(&child_key) {
        super::announce::announce(&port, &record, timeout).await;
    }
    if cleanup == Cleanup::Delete {
        let store = port.store(&record.agent_id);
        let key = child_key.clone();
        if let Err(e) = store.run(move |store| store.archive(&key)).await {
            tracing::warn!(session = %child_key, error = %e, "cannot archive the sub-agent's session");
        }
    }
}

/// Waits for run `run_id` until `timeout` (aborting it then); how it ended and its reply.
async fn wait(
    port: &Arc<dyn SessionPort>,
    run_id: &str,
    child_key: &str,
    timeout: Option<Duration>,
) -> (SpawnStatus, Option<String>) {
    let outcome = match timeout {
        Some(limit) => port.wait(run_id, limit).await,
        None => loop {
            if let Some(outcome) = port.wait(run_id, WAIT_SLICE).await {
                break Some(outcome);
            }
            if port.active_runs(child_key).is_empty() {
                break None;
            }
        },
    };
    match outcome {
        None if timeout.is_some() => {
            port.abort(child_key);
            // The aborted run's partial reply, if it ends soon.
            let partial = port
                .wait(run_id, Duration::from_secs(5))
                .await
                .map(|o| o.text)
                .filter(|t| !t.trim().is_empty());
            (SpawnStatus::TimedOut, partial)
        }
        None => (SpawnStatus::Failed("the run was lost".into()), None),
        Some(o) if o.aborted => (SpawnStatus::Stopped, Some(o.text).filter(|t| !t.is_empty())),
        Some(o) => match o.error {
            Some(e) if o.text.trim().is_empty() => (SpawnStatus::Failed(e), None),
            _ => (SpawnStatus::Done, Some(o.text)),
        },
    }
}

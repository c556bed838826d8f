//! The methods' file work: every store, pairing and cron call that reads, locks, writes or
//! fsyncs a file, each one run only on tokio's blocking pool (through `SessionStore::run`,
//! the channel ingress's `on_store` or `CronService::blocking`), never on a runtime worker
//! thread. The handlers in the family modules decide what to do; these functions only touch
//! the disk.

use pincer_ai::Message;
use pincer_store::{OpenSession, SessionEntry, SessionStore, StoreError};
use serde_json::Value;

use crate::pairing::{Approved, PairingError, PairingStore, PendingRequest, Revoked};
use pincer_automation::cron::{CronJob, CronService, CronServiceError, NewCronJob, RunLogEntry};

use super::transcript_ids::{Identified, Identity, identified};

type StoreResult<T> = Result<T, StoreError>;

#[expect(
    clippy::disallowed_methods,
    reason = "runs on the blocking pool: SessionStore::run"
)]
pub(super) fn reset(store: &SessionStore, key: &str) -> StoreResult<OpenSession> {
    store.reset(key)
}

#[expect(
    clippy::disallowed_methods,
    reason = "runs on the blocking pool: SessionStore::run"
)]
pub(super) fn list(store: &SessionStore) -> StoreResult<Vec<(String, SessionEntry)>> {
    store.list()
}

#[expect(
    clippy::disallowed_methods,
    reason = "runs on the blocking pool: SessionStore::run"
)]
pub(super) fn patch(store: &SessionStore, key: &str, patch: &Value) -> StoreResult<SessionEntry> {
    store.patch(key, patch)
}

/// The index entry of `key`, if the session exists.
#[expect(
    clippy::disallowed_methods,
    reason = "runs on the blocking pool: SessionStore::run"
)]
pub(super) fn entry(store: &SessionStore, key: &str) -> StoreResult<Option<SessionEntry>> {
    store.entry(key)
}

/// Patches the session of `key`, creating it first when it has no entry yet (a setting
/// chosen before the first message needs somewhere to live).
#[expect(
    clippy::disallowed_methods,
    reason = "runs on the blocking pool: SessionStore::run"
)]
pub(super) fn ensure_and_patch(
    store: &SessionStore,
    key: &str,
    patch: &Value,
) -> StoreResult<SessionEntry> {
    if store.entry(key)?.is_none() {
        store.get_or_create(key)?;
    }
    store.patch(key, patch)
}

#[expect(
    clippy::disallowed_methods,
    reason = "runs on the blocking pool: SessionStore::run"
)]
pub(super) fn archive(store: &SessionStore, key: &str) -> StoreResult<Option<std::path::PathBuf>> {
    store.archive(key)
}

/// A session's entry and the messages of its transcript's context, each with its identity
/// (see `transcript_ids.rs`); `None` for a session that does not exist.
#[expect(
    clippy::disallowed_methods,
    reason = "runs on the blocking pool: SessionStore::run"
)]
pub(super) fn history(
    store: &SessionStore,
    key: &str,
) -> StoreResult<Option<(SessionEntry, Vec<Identified>)>> {
    let Some(entry) = store.entry(key)? else {
        return Ok(None);
    };
    let session = store.resume(key)?;
    Ok(Some((entry, identified(&session.transcript))))
}

/// Appends `message` to an existing session's transcript: `None` when there is no such
/// session; the append's own failure is kept apart from the lookup's. An appended message
/// comes back with its identity (its entry id and place among the context's messages).
#[expect(
    clippy::disallowed_methods,
    reason = "runs on the blocking pool: SessionStore::run"
)]
pub(super) fn append(
    store: &SessionStore,
    key: &str,
    message: Message,
) -> StoreResult<Option<StoreResult<Identity>>> {
    if store.entry(key)?.is_none() {
        return Ok(None);
    }
    let mut session = store.resume(key)?;
    let appended = session
        .transcript
        .append_message(message)
        .map(|entry| entry.id.clone());
    Ok(Some(appended.map(|id| Identity {
        id,
        seq: Some(session.transcript.context().len()),
        run_id: None,
        sent_by_run: false,
    })))
}

/// Creates the session of `key` (`sessions.create`), noting its parent and label: `None`
/// when it exists already.
#[expect(
    clippy::disallowed_methods,
    reason = "runs on the blocking pool: SessionStore::run"
)]
pub(super) fn create(
    store: &SessionStore,
    key: &str,
    parent: Option<&str>,
    label: Option<&str>,
) -> StoreResult<Option<SessionEntry>> {
    if store.entry(key)?.is_some() {
        return Ok(None);
    }
    let mut entry = store.get_or_create(key)?.entry;
    let mut patch = serde_json::Map::new();
    if let Some(parent) = parent {
        patch.insert("parentSessionKey".into(), parent.into());
        if let Some(parent_entry) = store.entry(parent)? {
            patch.insert("parentSessionId".into(), parent_entry.session_id.into());
        }
    }
    if let Some(label) = label {
        patch.insert("label".into(), label.into());
    }
    if !patch.is_empty() {
        entry = store.patch(key, &Value::Object(patch))?;
    }
    Ok(Some(entry))
}

#[expect(
    clippy::disallowed_methods,
    reason = "runs on the blocking pool: on_store"
)]
pub(super) fn pairing_list(
    store: &PairingStore,
    channel: Option<&str>,
    account: Option<&str>,
) -> Result<Vec<PendingRequest>, PairingError> {
    store.list(channel, account)
}

#[expect(
    clippy::disallowed_methods,
    reason = "runs on the blocking pool: on_store"
)]
pub(super) fn pairing_approve(
    store: &PairingStore,
    channel: &str,
    code: &str,
) -> Result<Approved, PairingError> {
    store.approve(channel, code)
}

#[expect(
    clippy::disallowed_methods,
    reason = "runs on the blocking pool: on_store"
)]
pub(super) fn pairing_revoke(
    store: &PairingStore,
    channel: &str,
    account: Option<&str>,
    entry: &str,
) -> Result<Revoked, PairingError> {
    store.revoke(channel, account, entry)
}

#[expect(
    clippy::disallowed_methods,
    reason = "runs on the blocking pool: CronService::blocking"
)]
pub(super) fn cron_add(cron: &CronService, input: NewCronJob) -> Result<CronJob, CronServiceError> {
    cron.add(input)
}

#[expect(
    clippy::disallowed_methods,
    reason = "runs on the blocking pool: CronService::blocking"
)]
pub(super) fn cron_update(
    cron: &CronService,
    id: &str,
    patch: &Value,
) -> Result<CronJob, CronServiceError> {
    cron.update(id, patch)
}

#[expect(
    clippy::disallowed_methods,
    reason = "runs on the blocking pool: CronService::blocking"
)]
pub(super) fn cron_remove(cron: &CronService, id: &str) -> Result<bool, CronServiceError> {
    cron.remove(id)
}

#[expect(
    clippy::disallowed_methods,
    reason = "runs on the blocking pool: CronService::blocking"
)]
pub(super) fn cron_runs(
    cron: &CronService,
    id: &str,
    limit: usize,
) -> Result<Vec<RunLogEntry>, CronServiceError> {
    cron.runs(id, limit)
}

/// Every run of every job (of `agent`, when given; a job without one belongs to
/// `default_agent`) with its job's name; a job whose log cannot be read is left out with a
/// warning rather than failing the whole history.
#[expect(
    clippy::disallowed_methods,
    reason = "runs on the blocking pool: CronService::blocking"
)]
pub(super) fn cron_runs_of_all(
    cron: &CronService,
    agent: Option<&str>,
    default_agent: &str,
) -> Result<Vec<(RunLogEntry, String)>, CronServiceError> {
    let mut all = Vec::new();
    for job in cron.list(true) {
        let job_agent = job.agent_id.as_deref().unwrap_or(default_agent);
        if agent.is_some_and(|a| a != job_agent) {
            continue;
        }
        match cron.runs(&job.id, usize::MAX) {
            Ok(runs) => all.extend(runs.into_iter().map(|run| (run, job.name.clone()))),
            Err(e) => {
                tracing::warn!(job = %job.id, error = %e, "cron.runs: a job's run log is unreadable")
            }
        }
    }
    Ok(all)
}

//! The sub-agents (and delegations) this gateway started: who spawned which session, how
//! deep, what it was asked and how it ended. Kept in memory and saved as they change (see
//! `persist.rs`), so a restart neither forgets them nor leaves their requesters waiting.
//! Finished runs are dropped from the list `archiveAfterMinutes` after they end.

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

use pincer_base::now_ms;
use serde::{Deserialize, Serialize};

/// Where a sub-agent stands.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", tag = "state", content = "error")]
pub enum SpawnStatus {
    /// Waiting for a free sub-agent slot (`maxConcurrent`).
    Queued,
    Running,
    Done,
    Failed(String),
    TimedOut,
    /// Stopped by `/subagents stop` or its requester's abort.
    Stopped,
}

impl SpawnStatus {
    /// OpenClaw's status word.
    pub fn as_str(&self) -> &'static str {
        match self {
            Self::Queued => "queued",
            Self::Running => "running",
            Self::Done => "done",
            Self::Failed(_) => "error",
            Self::TimedOut => "timeout",
            Self::Stopped => "stopped",
        }
    }

    pub fn is_finished(&self) -> bool {
        !matches!(self, Self::Queued | Self::Running)
    }
}

/// One spawned session.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SpawnRecord {
    pub run_id: String,
    pub child_key: String,
    pub agent_id: String,
    pub requester_key: String,
    pub requester_agent: String,
    pub label: Option<String>,
    pub task: String,
    /// 1 for a sub-agent of a top-level session, 2 for its own sub-agent, …
    pub depth: u32,
    /// Milliseconds since the epoch.
    pub created_at: i64,
    pub started_at: Option<i64>,
    pub ended_at: Option<i64>,
    pub status: SpawnStatus,
    /// The child's final reply.
    pub result: Option<String>,
    /// `delegate_to_agent` (synchronous) rather than `sessions_spawn`.
    pub delegated: bool,
}

impl SpawnRecord {
    /// The label, else the task's first line (shortened), for lists.
    pub fn title(&self) -> String {
        if let Some(label) = self.label.as_deref().filter(|l| !l.trim().is_empty()) {
            return label.trim().to_owned();
        }
        let first = self.task.lines().next().unwrap_or_default().trim();
        shorten(first, 60)
    }

    /// How long it ran (or has run so far), in whole seconds.
    pub fn runtime_secs(&self) -> u64 {
        let Some(start) = self.started_at else {
            return 0;
        };
        let end = self.ended_at.unwrap_or_else(now_ms);
        u64::try_from((end - start).max(0) / 1000).unwrap_or(0)
    }
}

/// `text` cut to `max` characters with an ellipsis.
pub(crate) fn shorten(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_owned();
    }
    let cut: String = text.chars().take(max.saturating_sub(1)).collect();
    format!("{cut}…")
}

/// Every spawn this process made, by child session key.
#[derive(Debug, Default)]
pub struct SpawnRegistry {
    records: Mutex<HashMap<String, SpawnRecord>>,
}

impl SpawnRegistry {
    fn lock(&self) -> MutexGuard<'_, HashMap<String, SpawnRecord>> {
        self.records.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub fn insert(&self, record: SpawnRecord) {
        self.lock().insert(record.child_key.clone(), record);
    }

    pub fn get(&self, child_key: &str) -> Option<SpawnRecord> {
        self.lock().get(child_key).cloned()
    }

    /// Changes the record of `child_key`, if it is still listed.
    pub fn update(&self, child_key: &str, change: impl FnOnce(&mut SpawnRecord)) {
        if let Some(record) = self.lock().get_mut(child_key) {
            change(record);
        }
    }

    /// How deep `key` is: 0 for a session nobody spawned.
    pub fn depth(&self, key: &str) -> u32 {
        self.lock().get(key).map_or(0, |r| r.depth)
    }

    /// Whether `key` was spawned by `ancestor`, directly or further down.
    pub fn descends_from(&self, key: &str, ancestor: &str) -> bool {
        let records = self.lock();
        let mut current = key;
        // Bounded by the number of records: a cycle cannot exist, but a bound costs nothing.
        for _ in 0..=records.len() {
            match records.get(current) {
                Some(record) if record.requester_key == ancestor => return true,
                Some(record) => current = &record.requester_key,
                None => return false,
            }
        }
        false
    }

    /// The records `keep` picks, oldest first.
    fn sorted(&self, keep: impl Fn(&SpawnRecord) -> bool) -> Vec<SpawnRecord> {
        let mut list: Vec<SpawnRecord> =
            self.lock().values().filter(|r| keep(r)).cloned().collect();
        list.sort_by(|a, b| (a.created_at, &a.run_id).cmp(&(b.created_at, &b.run_id)));
        list
    }

    /// The sub-agents `requester_key` spawned (not delegations), oldest first.
    pub fn spawned_by(&self, requester_key: &str) -> Vec<SpawnRecord> {
        self.sorted(|r| r.requester_key == requester_key && !r.delegated)
    }

    /// Every listed sub-agent, oldest first.
    pub fn all(&self) -> Vec<SpawnRecord> {
        self.sorted(|r| !r.delegated)
    }

    /// Drops the runs that ended more than `after` ago.
    pub fn sweep(&self, after: Duration) {
        let cutoff = now_ms() - i64::try_from(after.as_millis()).unwrap_or(i64::MAX);
        self.lock()
            .retain(|_, r| !r.status.is_finished() || r.ended_at.is_none_or(|t| t > cutoff));
    }

    /// Every record, delegations too (what is saved).
    pub fn snapshot(&self) -> Vec<SpawnRecord> {
        self.sorted(|_| true)
    }

    /// Sub-agents queued or running.
    pub fn active(&self) -> usize {
        self.lock()
            .values()
            .filter(|r| !r.delegated && !r.status.is_finished())
            .count()
    }
}

//! What a turn leaves in the index: token usage added up, the route of the last message
//! (`lastChannel`, `lastTo`, `lastAccountId`), compactions counted — each update a
//! read-modify-write of `sessions.json` under its lock, so concurrent turns of other
//! sessions are never lost.
//!
//! The turn runner's sequence:
//!
//! ```no_run
//! # fn run(store: &pincer_store::SessionStore, user: pincer_ai::Message,
//! #        reply: pincer_ai::AssistantMessage) -> pincer_store::Result<()> {
//! use pincer_store::TurnStats;
//! let mut session = store.get_or_create("agent:main:main")?;
//! // Lines reach the file at once; one fsync at the end of the turn is enough.
//! session.transcript.set_sync_each_append(false);
//! session.transcript.append_message(user)?;
//! let mut stats = TurnStats::default();
//! stats.add_usage(&reply.usage);
//! session.transcript.append_message(pincer_ai::Message::Assistant(reply))?;
//! store.finish_turn(&mut session, &stats.routed("telegram", "123", "default"))?;
//! # Ok(()) }
//! ```

use pincer_ai::Usage;

use crate::entry::{CompactionEntry, Entry, EntryBody};
use crate::error::{Result, StoreError};
use std::sync::atomic::Ordering;

use crate::group::IndexUpdate;
use crate::index::{SessionEntry, SessionIndex};
use crate::sessions::{OpenSession, SessionStore};
use crate::transcript::Transcript;

/// What one turn adds to its session's index entry.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TurnStats {
    /// Added to `inputTokens`.
    pub input_tokens: u64,
    /// Added to `outputTokens`.
    pub output_tokens: u64,
    /// Added to `totalTokens`.
    pub total_tokens: u64,
    /// Replaces `lastChannel` when set.
    pub last_channel: Option<String>,
    /// Replaces `lastTo` when set.
    pub last_to: Option<String>,
    /// Replaces `lastAccountId` when set.
    pub last_account_id: Option<String>,
}

impl TurnStats {
    /// Adds the usage of one assistant reply (a turn with tool calls has several).
    pub fn add_usage(&mut self, usage: &Usage) {
        self.input_tokens = self.input_tokens.saturating_add(usage.input);
        self.output_tokens = self.output_tokens.saturating_add(usage.output);
        self.total_tokens = self.total_tokens.saturating_add(usage.total_tokens);
    }

    /// These stats with the route the turn came from.
    pub fn routed(
        mut self,
        channel: impl Into<String>,
        to: impl Into<String>,
        account_id: impl Into<String>,
    ) -> Self {
        self.last_channel = Some(channel.into());
        self.last_to = Some(to.into());
        self.last_account_id = Some(account_id.into());
        self
    }

    fn apply(&self, entry: &mut SessionEntry) {
        let add = |field: &mut Option<u64>, n: u64| {
            *field = Some(field.unwrap_or(0).saturating_add(n));
        };
        add(&mut entry.input_tokens, self.input_tokens);
        add(&mut entry.output_tokens, self.output_tokens);
        add(&mut entry.total_tokens, self.total_tokens);
        for (field, value) in [
            (&mut entry.last_channel, &self.last_channel),
            (&mut entry.last_to, &self.last_to),
            (&mut entry.last_account_id, &self.last_account_id),
        ] {
            if value.is_some() {
                field.clone_from(value);
            }
        }
    }
}

impl SessionStore {
    /// Adds `stats` to the index entry of `key` and stamps its `updatedAt`, under the
    /// index lock. Returns the updated entry.
    pub fn record_turn(&self, key: &str, stats: &TurnStats) -> Result<SessionEntry> {
        let stats = stats.clone();
        self.update_entry_batched(key, None, true, move |e| stats.apply(e))
    }

    /// Ends a turn: fsyncs what the turn appended to the transcript, then records `stats`
    /// as [`SessionStore::record_turn`] does and refreshes `session.entry`. Fails with
    /// [`StoreError::SessionChanged`] (after the fsync) when the key was reset or archived
    /// meanwhile, so the new session is not charged for the old one's turn. Concurrent
    /// turns share the fsync and the index write ([`crate::group`]); this returns only once
    /// this turn's lines are durable.
    pub fn finish_turn(&self, session: &mut OpenSession, stats: &TurnStats) -> Result<()> {
        self.sync_transcript(&mut session.transcript)?;
        // The counters are not worth two more fsyncs per turn: the transcript above is
        // durable, and a power loss at worst takes back the last turns' token counts.
        let stats = stats.clone();
        let entry = self.update_entry_batched(
            &session.key,
            Some(&session.entry.session_id),
            false,
            move |e| stats.apply(e),
        )?;
        session.entry = entry;
        Ok(())
    }

    /// Makes everything appended through `transcript` durable, sharing the fsync with the
    /// other turns of this store that wait for one at the same time ([`crate::group`]).
    /// Returns once the bytes are on disk.
    pub fn sync_transcript(&self, transcript: &mut Transcript) -> Result<()> {
        if let Some(file) = transcript.unsynced_file() {
            self.commit
                .sync(file)
                .map_err(|e| StoreError::io(transcript.path(), e.into_io()))?;
            transcript.mark_synced();
        }
        Ok(())
    }

    /// Appends `compaction` to the session's transcript (fsynced, with everything appended
    /// before it), then bumps `compactionCount` and `updatedAt` in the index under its lock
    /// and refreshes `session.entry`. Returns the appended entry. The same
    /// [`StoreError::SessionChanged`] as [`SessionStore::finish_turn`] applies.
    pub fn record_compaction(
        &self,
        session: &mut OpenSession,
        compaction: CompactionEntry,
    ) -> Result<Entry> {
        let appended = session
            .transcript
            .append_body(EntryBody::Compaction(compaction))?
            .clone();
        self.sync_transcript(&mut session.transcript)?;
        let entry =
            self.update_entry_batched(&session.key, Some(&session.entry.session_id), true, |e| {
                e.compaction_count = e.compaction_count.saturating_add(1)
            })?;
        session.entry = entry;
        Ok(appended)
    }

    /// Changes the index entry of `session` under the lock (durably) and refreshes
    /// `session.entry`, for bookkeeping outside the counters (per-session memory, memory
    /// flushes). The same [`StoreError::SessionChanged`] as [`SessionStore::finish_turn`]
    /// applies, so a reset in between is never charged with the old session's state.
    pub fn update_session(
        &self,
        session: &mut OpenSession,
        change: impl FnOnce(&mut SessionEntry),
    ) -> Result<()> {
        let entry =
            self.update_entry(&session.key, Some(&session.entry.session_id), true, change)?;
        session.entry = entry;
        Ok(())
    }

    /// Read-modify-write of one index entry under the lock; `updatedAt` becomes now. With
    /// `session_id`, the entry must still be that session.
    fn update_entry(
        &self,
        key: &str,
        session_id: Option<&str>,
        durable: bool,
        change: impl FnOnce(&mut SessionEntry),
    ) -> Result<SessionEntry> {
        let lock = self.lock()?;
        let (mut index, _) = self.load_index_locked(&lock)?;
        let updated = apply_update(&mut index, key, session_id, change)?;
        self.save_index(&lock, index, durable)?;
        self.commit.index_writes.fetch_add(1, Ordering::Relaxed);
        Ok(updated)
    }

    /// [`SessionStore::update_entry`] through the index batcher: concurrent updates of this
    /// store are applied to one copy of the index and written once ([`crate::group`]).
    fn update_entry_batched(
        &self,
        key: &str,
        session_id: Option<&str>,
        durable: bool,
        change: impl FnOnce(&mut SessionEntry) + Send + 'static,
    ) -> Result<SessionEntry> {
        let update = IndexUpdate {
            key: key.to_owned(),
            session_id: session_id.map(str::to_owned),
            durable,
            change: Box::new(change),
        };
        self.commit.index.submit(
            update,
            |batch| self.apply_batch(batch),
            || {
                Err(StoreError::Task(
                    "the index batch carrying this update panicked".into(),
                ))
            },
        )
    }

    /// One batch of index updates: one hold of the lock, one write (none if every update
    /// failed), one result per update in order.
    fn apply_batch(&self, batch: Vec<IndexUpdate>) -> Vec<Result<SessionEntry>> {
        let n = batch.len();
        let run = || -> Result<Vec<Result<SessionEntry>>> {
            let lock = self.lock()?;
            let (mut index, _) = self.load_index_locked(&lock)?;
            let (mut changed, mut durable) = (false, false);
            let mut outs = Vec::with_capacity(n);
            for update in batch {
                let out = apply_update(
                    &mut index,
                    &update.key,
                    update.session_id.as_deref(),
                    update.change,
                );
                if out.is_ok() {
                    changed = true;
                    durable |= update.durable;
                }
                outs.push(out);
            }
            if changed {
                self.save_index(&lock, index, durable)?;
                self.commit.index_writes.fetch_add(1, Ordering::Relaxed);
            } else {
                self.keep_index(&lock, index);
            }
            Ok(outs)
        };
        match run() {
            Ok(outs) => outs,
            Err(e) => (0..n).map(|_| Err(share(&e))).collect(),
        }
    }
}

/// Changes the entry of `key` in `index` (which must still be `session_id`, when given) and
/// stamps its `updatedAt`; returns the new entry.
fn apply_update(
    index: &mut SessionIndex,
    key: &str,
    session_id: Option<&str>,
    change: impl FnOnce(&mut SessionEntry),
) -> Result<SessionEntry> {
    let entry = index.entry_mut(key)?;
    if let Some(expected) = session_id
        && entry.session_id != expected
    {
        return Err(StoreError::SessionChanged {
            key: key.to_owned(),
            expected: expected.to_owned(),
            found: entry.session_id.clone(),
        });
    }
    change(entry);
    entry.updated_at = crate::ids::now_ms().max(entry.updated_at);
    Ok(entry.clone())
}

/// A copy of a batch's error for each of its waiters.
fn share(e: &StoreError) -> StoreError {
    match e {
        StoreError::Io { path, source } => StoreError::Io {
            path: path.clone(),
            source: std::io::Error::new(source.kind(), source.to_string()),
        },
        StoreError::LockTimeout(t) => StoreError::LockTimeout(t.clone()),
        other => StoreError::Task(other.to_string()),
    }
}

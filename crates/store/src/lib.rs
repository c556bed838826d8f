//! Pincer's persistence layer: session transcripts in pi's JSONL format (version 3), the
//! per-agent session index (`sessions.json`) and atomic JSON state files.
//!
//! Layout under `$PINCER_HOME/agents/<agentId>/sessions/`: `sessions.json` (the index,
//! sessionKey -> [`SessionEntry`]) and `<sessionId>.jsonl` (one transcript per session).
//! Every state write is atomic (temp file, fsync, rename, fsync dir); transcripts are
//! append-only, one whole line per append under an exclusive file lock; old format versions
//! are migrated on open (the original kept as `<file>.v<N>.bak`); a corrupt index is rebuilt
//! from the transcripts; retention prunes the index and deletes only old archives. Index
//! updates wait at most [`DEFAULT_LOCK_TIMEOUT`] for another process's lock. Turns of one
//! store that end together share their fsync and their index write (group commit, see
//! `group.rs` and [`CommitStats`]); each still returns only once its own lines are
//! durable. Async code reaches the store only through [`SessionStore::run`] (the blocking
//! pool; see [`blocking`]).

mod archive;
pub mod atomic;
pub mod blocking;
mod context;
pub mod entry;
pub mod error;
mod group;
pub mod ids;
pub mod index;
mod index_cache;
pub mod migrate;
pub mod rebuild;
pub mod retention;
pub mod sessions;
pub mod transcript;
pub mod turns;

pub use atomic::{read_json, write_atomic, write_json};
pub use blocking::on_blocking_pool;
pub use entry::{
    BranchSummaryEntry, CURRENT_VERSION, CompactionEntry, CustomEntry, CustomMessageEntry, Entry,
    EntryBody, LabelEntry, MessageEntry, ModelChangeEntry, SessionHeader, SessionInfoEntry,
    ThinkingLevelChangeEntry,
};
pub use error::{Result, StoreError};
pub use group::CommitStats;
pub use index::{SessionEntry, SessionIndex};
pub use migrate::MigrationReport;
pub use rebuild::{RECOVERED_KEY_PREFIX, RebuildReport, RebuiltSession, UnreadableTranscript};
pub use retention::{
    OrphanTranscript, PruneReason, PruneReport, PrunedSession, RetentionMode, RetentionPolicy,
    parse_duration,
};
pub use sessions::{DEFAULT_LOCK_TIMEOUT, OpenSession, SessionStore};
pub use transcript::{
    BRANCH_SUMMARY_PREFIX, BRANCH_SUMMARY_SUFFIX, COMPACTION_SUMMARY_PREFIX,
    COMPACTION_SUMMARY_SUFFIX, LineIssue, LoadReport, TailRepair, Transcript, truncate_transcript,
};
pub use turns::TurnStats;

//! Inbound dedupe: remembers which channel messages were already taken in, so a message a
//! channel delivers twice (webhook retries, a long poll replayed after a reconnect) starts
//! one run, not two. Keyed by channel, account, peer and message id, as OpenClaw's inbound
//! dedupe cache: Telegram's message ids, for one, are only unique within a chat.
//!
//! A bounded cache with a TTL (OpenClaw's `createDedupeCache`): a repeat within the TTL
//! refreshes its entry, so a burst of retries keeps the key alive; past `capacity` the least
//! recently seen key is forgotten. Pure: the caller passes the time.

use std::collections::{BTreeMap, HashMap};
use std::time::{Duration, Instant};

/// OpenClaw's inbound dedupe TTL (lainclaw used 10 minutes).
pub const DEFAULT_DEDUPE_TTL: Duration = Duration::from_secs(20 * 60);
/// OpenClaw's inbound dedupe size.
pub const DEFAULT_DEDUPE_CAPACITY: usize = 5000;

/// One inbound message, as the channel adapter identifies it.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct DedupeKey {
    pub channel: String,
    pub account: String,
    /// The chat (or DM peer) the message arrived in.
    pub peer: String,
    pub message_id: String,
}

impl DedupeKey {
    pub fn new(
        channel: impl Into<String>,
        account: impl Into<String>,
        peer: impl Into<String>,
        message_id: impl Into<String>,
    ) -> Self {
        Self {
            channel: channel.into(),
            account: account.into(),
            peer: peer.into(),
            message_id: message_id.into(),
        }
    }
}

#[derive(Debug, Clone, Copy)]
struct Entry {
    seen_at: Instant,
    /// Position in `by_recency`.
    seq: u64,
}

/// The keys seen lately.
#[derive(Debug)]
pub struct Dedupe {
    capacity: usize,
    ttl: Duration,
    entries: HashMap<DedupeKey, Entry>,
    /// Keys by when they were last seen, oldest first: what expiry and eviction take from.
    by_recency: BTreeMap<u64, DedupeKey>,
    next_seq: u64,
}

impl Default for Dedupe {
    fn default() -> Self {
        Self::new(DEFAULT_DEDUPE_CAPACITY, DEFAULT_DEDUPE_TTL)
    }
}

impl Dedupe {
    /// A cache of at most `capacity` keys (at least 1), each forgotten `ttl` after it was
    /// last seen.
    pub fn new(capacity: usize, ttl: Duration) -> Self {
        Self {
            capacity: capacity.max(1),
            ttl,
            entries: HashMap::new(),
            by_recency: BTreeMap::new(),
            next_seq: 0,
        }
    }

    /// True the first time `key` is seen, false for a repeat within the TTL (which counts as
    /// seeing it again).
    pub fn first_seen(&mut self, key: &DedupeKey, now: Instant) -> bool {
        self.expire(now);
        let repeat = self
            .entries
            .get(key)
            .is_some_and(|entry| is_fresh(self.ttl, entry.seen_at, now));
        self.record(key, now);
        if !repeat {
            while self.entries.len() > self.capacity {
                let Some((_, oldest)) = self.by_recency.pop_first() else {
                    break;
                };
                self.entries.remove(&oldest);
            }
        }
        !repeat
    }

    /// How many keys are remembered (expired ones may linger until the next call).
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Makes `key` the most recently seen, at `now`.
    fn record(&mut self, key: &DedupeKey, now: Instant) {
        let seq = self.next_seq;
        self.next_seq += 1;
        let entry = Entry { seen_at: now, seq };
        match self.entries.insert(key.clone(), entry) {
            Some(old) => {
                let moved = self.by_recency.remove(&old.seq);
                self.by_recency
                    .insert(seq, moved.unwrap_or_else(|| key.clone()));
            }
            None => {
                self.by_recency.insert(seq, key.clone());
            }
        }
    }

    /// Forgets the least recently seen keys while they are expired. Time passed in out of
    /// order can leave a stale key behind a fresh one; lookups check freshness anyway and
    /// the capacity still bounds memory.
    fn expire(&mut self, now: Instant) {
        while let Some(entry) = self.by_recency.first_entry() {
            let fresh = self
                .entries
                .get(entry.get())
                .is_some_and(|e| is_fresh(self.ttl, e.seen_at, now));
            if fresh {
                break;
            }
            let key = entry.remove();
            self.entries.remove(&key);
        }
    }
}

/// A time earlier than the entry (a caller's clocks disagreeing) counts as fresh: a duplicate
/// slipping through would cost a whole second run.
fn is_fresh(ttl: Duration, seen_at: Instant, now: Instant) -> bool {
    now.saturating_duration_since(seen_at) < ttl
}

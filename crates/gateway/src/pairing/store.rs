//! The pairing store: pending DM pairing requests and approved senders, in
//! `$PINCER_HOME/credentials/` (OpenClaw's `~/.openclaw/credentials/` layout):
//!
//! - `<channel>-pairing.json`: `{"version": 1, "requests": [{"id", "code", "createdAt",
//!   "lastSeenAt", "accountId"?, "meta"?}]}`;
//! - `<channel>-allowFrom.json` (the whole channel) and `<channel>-<account>-allowFrom.json`
//!   (one account): `{"version": 1, "allowFrom": ["<sender id>", …]}`.
//!
//! Rules (OpenClaw's): a request lives [`DEFAULT_TTL`] from `createdAt`; expired requests are
//! pruned whenever the file is read under the lock and never count; a sender with a pending
//! request gets the same code again (per account: the approval lands in that account's
//! list); at most [`DEFAULT_MAX_PENDING`] pending requests per channel, all accounts together.
//! A repeat request rewrites the file only when it brings new meta or `lastSeenAt` is over
//! five minutes old, so a sender who keeps writing costs no write (and fsync) per message.
//! `None` as account means the channel's default account and the channel-wide file. Names
//! are `[a-z0-9_-]{1,64}`; since `-` is allowed, channel `a` with account `b-c` and channel
//! `a-b` with account `c` share a file name, as in OpenClaw: channel names are fixed ids
//! without such overlaps.
//!
//! Concurrency: every change of a channel's files holds an in-process mutex and an advisory
//! lock (`flock`) on `<channel>-pairing.json.lock`, so the gateway and a `pincer pairing
//! approve` in another process do not lose each other's writes. The lock is released with
//! the file handle, also when a process dies, so it never goes stale; one held by a stopped
//! process is waited for at most [`DEFAULT_LOCK_TIMEOUT`], then [`PairingError::LockTimeout`].
//! On a file system without locks the mutex and the atomic rename remain. Files are written
//! atomically with mode 0600 (temp file, fsync, rename, fsync dir); the directory is created
//! 0700. Everything is blocking file I/O: call it from `spawn_blocking` in async code (the
//! gateway's `ChannelIngress::on_store`).
#![expect(
    clippy::disallowed_methods,
    reason = "blocking file work, run on the blocking pool by ChannelIngress::on_store (and by the CLI)"
)]

use std::collections::{HashMap, HashSet};
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use serde::Serialize;
use serde_json::Value;

use super::code::{generate_unique_code, normalize_code};
use super::error::{PairingError, check_account, check_channel, is_valid_name};
use super::files::{
    PairingFile, RequestRecord, create_private_dir, read_allow_from, read_pairing, write_json,
};
use pincer_automation::cron::{format_iso_ms, parse_absolute_ms};
use pincer_automation::system_events::{Clock, SystemClock};

/// How long a pairing request stays pending (OpenClaw's `PAIRING_PENDING_TTL_MS`).
pub const DEFAULT_TTL: Duration = Duration::from_secs(3600);
/// Most pending requests per channel (OpenClaw's `PAIRING_PENDING_MAX`).
pub const DEFAULT_MAX_PENDING: usize = 3;
/// How long a channel's lock is waited for: pincer-base's default.
pub const DEFAULT_LOCK_TIMEOUT: Duration = pincer_base::DEFAULT_LOCK_TIMEOUT;

const PAIRING_SUFFIX: &str = "-pairing.json";
/// A repeat request moves `lastSeenAt` only when it is at least this old (5 minutes).
const LAST_SEEN_EVERY_MS: i64 = 5 * 60 * 1000;

/// What [`PairingStore::request`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PairingRequestOutcome {
    /// A new pending request: send the sender [`pairing_reply`](super::pairing_reply).
    Created { code: String },
    /// The sender already had a pending request: the same code (its `lastSeenAt` moved if it
    /// was over five minutes old). The sender was given the code when it was created.
    Existing { code: String },
    /// The channel already has the maximum of pending requests: nothing was stored.
    Full,
}

impl PairingRequestOutcome {
    /// The sender's code, unless the channel is full.
    pub fn code(&self) -> Option<&str> {
        match self {
            Self::Created { code } | Self::Existing { code } => Some(code),
            Self::Full => None,
        }
    }
}

/// A pending, unexpired request.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PendingRequest {
    pub channel: String,
    pub sender_id: String,
    pub code: String,
    pub account_id: Option<String>,
    pub meta: Option<Value>,
    pub created_at_ms: i64,
    /// `createdAt` when the file has no readable `lastSeenAt`.
    pub last_seen_at_ms: i64,
    pub expires_at_ms: i64,
}

/// An approved request: the sender is now in the allow-from file of `account_id` (the
/// channel-wide file when `None`).
#[derive(Debug, Clone, PartialEq)]
pub struct Approved {
    pub sender_id: String,
    pub account_id: Option<String>,
    pub meta: Option<Value>,
}

/// What [`PairingStore::revoke`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Revoked {
    /// Whether the entry was in the file.
    pub removed: bool,
    /// Entries left in that file.
    pub remaining: usize,
}

/// Pending pairing requests and approved senders of one credentials directory. Share it
/// (`Arc`): the operations take `&self` and serialise themselves.
pub struct PairingStore {
    dir: PathBuf,
    clock: Arc<dyn Clock>,
    ttl_ms: i64,
    max_pending: usize,
    /// Channels with their own TTL (ms) and maximum (`gateway.channels.<name>`).
    channel_limits: HashMap<String, (i64, usize)>,
    lock_timeout: Duration,
    mutex: Mutex<()>,
}

impl std::fmt::Debug for PairingStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PairingStore")
            .field("dir", &self.dir)
            .field("ttl_ms", &self.ttl_ms)
            .field("max_pending", &self.max_pending)
            .finish_non_exhaustive()
    }
}

/// Held while a channel's files change: the process's mutex, then the cross-process lock.
/// Fields drop in order: the file lock is released before the mutex.
struct ChannelLock<'a> {
    _file: Option<File>,
    _guard: MutexGuard<'a, ()>,
}

impl PairingStore {
    /// A store over `credentials_dir` (`$PINCER_HOME/credentials`), with the system clock,
    /// [`DEFAULT_TTL`] and [`DEFAULT_MAX_PENDING`]. Nothing is touched until used.
    pub fn new(credentials_dir: impl Into<PathBuf>) -> Self {
        Self {
            dir: credentials_dir.into(),
            clock: Arc::new(SystemClock),
            ttl_ms: duration_ms(DEFAULT_TTL),
            max_pending: DEFAULT_MAX_PENDING,
            channel_limits: HashMap::new(),
            lock_timeout: DEFAULT_LOCK_TIMEOUT,
            mutex: Mutex::new(()),
        }
    }

    /// The clock that stamps and expires requests (tests move it by hand).
    pub fn with_clock(mut self, clock: Arc<dyn Clock>) -> Self {
        self.clock = clock;
        self
    }

    /// How long a request stays pending after `createdAt`.
    pub fn with_ttl(mut self, ttl: Duration) -> Self {
        self.ttl_ms = duration_ms(ttl);
        self
    }

    /// Most pending requests per channel.
    pub fn with_max_pending(mut self, max: usize) -> Self {
        self.max_pending = max;
        self
    }

    /// `channel`'s own TTL and maximum, instead of the store's.
    pub fn with_channel_limits(mut self, channel: &str, ttl: Duration, max: usize) -> Self {
        self.channel_limits
            .insert(channel.to_owned(), (duration_ms(ttl), max));
        self
    }

    /// The TTL (ms) and maximum of pending requests on `channel`.
    fn limits(&self, channel: &str) -> (i64, usize) {
        self.channel_limits
            .get(channel)
            .copied()
            .unwrap_or((self.ttl_ms, self.max_pending))
    }

    /// How long a change waits for another process's lock before failing with
    /// [`PairingError::LockTimeout`] (default [`DEFAULT_LOCK_TIMEOUT`]).
    pub fn with_lock_timeout(mut self, timeout: Duration) -> Self {
        self.lock_timeout = timeout;
        self
    }

    /// The credentials directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// `<dir>/<channel>-pairing.json`.
    pub fn pairing_path(&self, channel: &str) -> Result<PathBuf, PairingError> {
        let channel = check_channel(channel)?;
        Ok(self.dir.join(format!("{channel}{PAIRING_SUFFIX}")))
    }

    /// `<dir>/<channel>-<account>-allowFrom.json`, or `<dir>/<channel>-allowFrom.json`
    /// without an account.
    pub fn allow_from_path(
        &self,
        channel: &str,
        account: Option<&str>,
    ) -> Result<PathBuf, PairingError> {
        let channel = check_channel(channel)?;
        Ok(match check_account(account)? {
            Some(account) => self.dir.join(format!("{channel}-{account}-allowFrom.json")),
            None => self.dir.join(format!("{channel}-allowFrom.json")),
        })
    }

    /// Records that `sender_id` asked for access on `channel` (through `account`). See
    /// [`PairingRequestOutcome`]. `meta` (username, name, …) replaces the stored one when
    /// given.
    pub fn request(
        &self,
        channel: &str,
        account: Option<&str>,
        sender_id: &str,
        meta: Option<Value>,
    ) -> Result<PairingRequestOutcome, PairingError> {
        let path = self.pairing_path(channel)?;
        let account = check_account(account)?;
        let id = normalize_id(sender_id)?;
        let meta = meta.filter(|m| !m.is_null());
        let _lock = self.lock_channel(channel)?;
        let now = self.clock.now_ms();
        let mut file = read_pairing(&path)?;
        let pruned = self.prune(channel, &mut file, now);

        if let Some(existing) = file
            .requests
            .iter_mut()
            .find(|r| r.id.trim() == id && r.account_id.as_deref() == account)
        {
            // A stranger who keeps writing must not cost a rewrite and fsync per message:
            // the file changes only for new meta, or to move a `lastSeenAt` that is stale.
            let seen_recently = existing
                .last_seen_at
                .as_deref()
                .and_then(parse_absolute_ms)
                .is_some_and(|seen| (0..LAST_SEEN_EVERY_MS).contains(&now.saturating_sub(seen)));
            let new_meta = meta.is_some() && meta != existing.meta;
            if new_meta {
                existing.meta = meta;
            }
            if !seen_recently {
                existing.last_seen_at = Some(iso(now));
            }
            let code = existing.code.trim().to_string();
            if new_meta || !seen_recently || pruned {
                write_json(&path, &file)?;
            }
            return Ok(PairingRequestOutcome::Existing { code });
        }

        if file.requests.len() >= self.limits(channel).1 {
            if pruned {
                write_json(&path, &file)?;
            }
            return Ok(PairingRequestOutcome::Full);
        }

        let taken: HashSet<String> = file
            .requests
            .iter()
            .map(|r| normalize_code(&r.code))
            .collect();
        let code = generate_unique_code(&taken)?;
        file.requests.push(RequestRecord {
            id: id.to_string(),
            code: code.clone(),
            created_at: iso(now),
            last_seen_at: Some(iso(now)),
            account_id: account.map(str::to_string),
            meta,
            extra: serde_json::Map::new(),
        });
        write_json(&path, &file)?;
        Ok(PairingRequestOutcome::Created { code })
    }

    /// The pending, unexpired requests of `channel` (every channel with a pairing file when
    /// `None`), only those of `account` when given; oldest first. Expired requests are
    /// removed from the files on the way.
    pub fn list(
        &self,
        channel: Option<&str>,
        account: Option<&str>,
    ) -> Result<Vec<PendingRequest>, PairingError> {
        let account = check_account(account)?;
        let channels = match channel {
            Some(channel) => vec![check_channel(channel)?.to_string()],
            None => self.channels()?,
        };
        let mut out = Vec::new();
        for channel in &channels {
            out.extend(
                self.list_channel(channel)?
                    .into_iter()
                    .filter(|r| account.is_none() || r.account_id.as_deref() == account),
            );
        }
        // Stable: equal times keep channel-name order, then file order.
        out.sort_by_key(|r| r.created_at_ms);
        Ok(out)
    }

    /// The channels that have a pairing file, sorted.
    pub fn channels(&self) -> Result<Vec<String>, PairingError> {
        let entries = match std::fs::read_dir(&self.dir) {
            Ok(entries) => entries,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(PairingError::io(&self.dir, e)),
        };
        let mut channels = Vec::new();
        for entry in entries {
            let entry = entry.map_err(|e| PairingError::io(&self.dir, e))?;
            let name = entry.file_name();
            let Some(channel) = name.to_str().and_then(|n| n.strip_suffix(PAIRING_SUFFIX)) else {
                continue;
            };
            if is_valid_name(channel) {
                channels.push(channel.to_string());
            }
        }
        channels.sort();
        Ok(channels)
    }

    /// Approves the pending request of `channel` with `code` (any case): removes it and adds
    /// its sender to the allow-from file of its account (channel-wide without one).
    pub fn approve(&self, channel: &str, code: &str) -> Result<Approved, PairingError> {
        let path = self.pairing_path(channel)?;
        let wanted = normalize_code(code);
        let unknown = || PairingError::UnknownCode {
            channel: channel.to_string(),
            code: wanted.clone(),
        };
        if wanted.is_empty() || !path.try_exists().map_err(|e| PairingError::io(&path, e))? {
            return Err(unknown());
        }
        let _lock = self.lock_channel(channel)?;
        let now = self.clock.now_ms();
        let mut file = read_pairing(&path)?;
        let pruned = self.prune(channel, &mut file, now);
        let Some(index) = file
            .requests
            .iter()
            .position(|r| normalize_code(&r.code) == wanted)
        else {
            if pruned {
                write_json(&path, &file)?;
            }
            return Err(unknown());
        };
        let request = file.requests.remove(index);
        let sender_id = request.id.trim().to_string();
        // The allow-list first: if it cannot be written the request stays, and the owner can
        // approve again; the other order could drop the request without letting anyone in.
        let allow_path = self.allow_from_path(channel, request.account_id.as_deref())?;
        let mut allow = read_allow_from(&allow_path)?;
        let mut entries = allow.entries();
        if !entries.contains(&sender_id) {
            entries.push(sender_id.clone());
            allow.set_entries(entries);
            write_json(&allow_path, &allow)?;
        }
        write_json(&path, &file)?;
        Ok(Approved {
            sender_id,
            account_id: request.account_id,
            meta: request.meta,
        })
    }

    /// Removes `entry` (a `<channel>:` prefix is ignored) from the allow-from file of
    /// `account`, or the channel-wide file without one.
    pub fn revoke(
        &self,
        channel: &str,
        account: Option<&str>,
        entry: &str,
    ) -> Result<Revoked, PairingError> {
        self.edit_allow_from(channel, account, entry, |entries, entry| {
            let before = entries.len();
            entries.retain(|e| *e != entry);
            let removed = entries.len() < before;
            (
                removed,
                Revoked {
                    removed,
                    remaining: entries.len(),
                },
            )
        })
    }

    /// Adds `entry` (a `<channel>:` prefix is dropped) to the allow-from file of `account`,
    /// or the channel-wide file without one. `false` when it was already there.
    pub fn add_allow_from(
        &self,
        channel: &str,
        account: Option<&str>,
        entry: &str,
    ) -> Result<bool, PairingError> {
        self.edit_allow_from(channel, account, entry, |entries, entry| {
            let added = !entries.contains(&entry);
            if added {
                entries.push(entry);
            }
            (added, added)
        })
    }

    /// Runs `edit` on the entries of the allow-from file of `account` (or the channel-wide
    /// one) and the normalized `entry`, under the channel's lock; the file is written back
    /// when `edit` says it changed them.
    fn edit_allow_from<R>(
        &self,
        channel: &str,
        account: Option<&str>,
        entry: &str,
        edit: impl FnOnce(&mut Vec<String>, String) -> (bool, R),
    ) -> Result<R, PairingError> {
        let path = self.allow_from_path(channel, account)?;
        let entry = normalize_entry(channel, entry)?;
        let _lock = self.lock_channel(channel)?;
        let mut file = read_allow_from(&path)?;
        let mut entries = file.entries();
        let (changed, result) = edit(&mut entries, entry);
        if changed {
            file.set_entries(entries);
            write_json(&path, &file)?;
        }
        Ok(result)
    }

    /// The approved senders for `account`: its own file's entries first, then the
    /// channel-wide file's, without duplicates. Read-only (the files are replaced by rename,
    /// so no lock is needed to see a whole one).
    pub fn allow_from(
        &self,
        channel: &str,
        account: Option<&str>,
    ) -> Result<Vec<String>, PairingError> {
        let mut out = Vec::new();
        if account.is_some() {
            out = read_allow_from(&self.allow_from_path(channel, account)?)?.entries();
        }
        for entry in read_allow_from(&self.allow_from_path(channel, None)?)?.entries() {
            if !out.contains(&entry) {
                out.push(entry);
            }
        }
        Ok(out)
    }

    fn list_channel(&self, channel: &str) -> Result<Vec<PendingRequest>, PairingError> {
        let path = self.pairing_path(channel)?;
        // Listing a channel that never had a request creates nothing (no lock file either).
        if !path.try_exists().map_err(|e| PairingError::io(&path, e))? {
            return Ok(Vec::new());
        }
        let _lock = self.lock_channel(channel)?;
        let now = self.clock.now_ms();
        let mut file = read_pairing(&path)?;
        if self.prune(channel, &mut file, now) {
            write_json(&path, &file)?;
        }
        let mut out: Vec<PendingRequest> = file
            .requests
            .into_iter()
            .filter_map(|r| {
                let created = parse_absolute_ms(&r.created_at)?;
                let last_seen = r
                    .last_seen_at
                    .as_deref()
                    .and_then(parse_absolute_ms)
                    .unwrap_or(created);
                Some(PendingRequest {
                    channel: channel.to_string(),
                    sender_id: r.id.trim().to_string(),
                    code: r.code.trim().to_string(),
                    account_id: r.account_id,
                    meta: r.meta,
                    created_at_ms: created,
                    last_seen_at_ms: last_seen,
                    expires_at_ms: created.saturating_add(self.limits(channel).0),
                })
            })
            .collect();
        out.sort_by_key(|r| r.created_at_ms);
        Ok(out)
    }

    /// Drops expired requests; whether any went. A `createdAt` that cannot be read counts as
    /// expired (as in OpenClaw): its age is unknown.
    fn prune(&self, channel: &str, file: &mut PairingFile, now: i64) -> bool {
        let (ttl_ms, _) = self.limits(channel);
        let before = file.requests.len();
        file.requests.retain(|r| {
            parse_absolute_ms(&r.created_at)
                .is_some_and(|created| now.saturating_sub(created) <= ttl_ms)
        });
        file.requests.len() < before
    }

    fn lock_channel(&self, channel: &str) -> Result<ChannelLock<'_>, PairingError> {
        let guard = self.mutex.lock().unwrap_or_else(PoisonError::into_inner);
        create_private_dir(&self.dir)?;
        let path = self.dir.join(format!("{channel}{PAIRING_SUFFIX}.lock"));
        let file = pincer_base::private_open_options()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .map_err(|e| PairingError::io(&path, e))?;
        let file = lock_within(file, &path, self.lock_timeout)?;
        Ok(ChannelLock {
            _file: file,
            _guard: guard,
        })
    }
}

/// The exclusive lock on `file` within `timeout` ([`pincer_base::lock_within`]); `None` on a
/// file system without advisory locks, where the mutex still serialises this process.
fn lock_within(file: File, path: &Path, timeout: Duration) -> Result<Option<File>, PairingError> {
    match pincer_base::lock_within(&file, timeout) {
        Ok(()) => Ok(Some(file)),
        Err(e) if e.kind() == std::io::ErrorKind::TimedOut => {
            Err(PairingError::LockTimeout(pincer_base::LockTimeout {
                path: path.to_path_buf(),
                waited: timeout,
            }))
        }
        Err(e) if e.kind() == std::io::ErrorKind::Unsupported => Ok(None),
        Err(e) => Err(PairingError::io(path, e)),
    }
}

fn duration_ms(d: Duration) -> i64 {
    i64::try_from(d.as_millis()).unwrap_or(i64::MAX)
}

/// JavaScript's `toISOString`; epoch-ms digits for a clock outside years ±9999 (still read
/// back by [`parse_absolute_ms`]).
fn iso(ms: i64) -> String {
    format_iso_ms(ms).unwrap_or_else(|| ms.to_string())
}

fn normalize_id(sender_id: &str) -> Result<&str, PairingError> {
    let id = sender_id.trim();
    if id.is_empty() {
        return Err(PairingError::InvalidEntry {
            entry: sender_id.to_string(),
        });
    }
    Ok(id)
}

/// An allow-from entry as stored: trimmed, without a `<channel>:` prefix (any case), never
/// empty or `*`.
fn normalize_entry(channel: &str, entry: &str) -> Result<String, PairingError> {
    let trimmed = entry.trim();
    let bare = trimmed
        .split_once(':')
        .filter(|(prefix, _)| prefix.eq_ignore_ascii_case(channel))
        .map_or(trimmed, |(_, rest)| rest.trim());
    if bare.is_empty() || bare == "*" {
        return Err(PairingError::InvalidEntry {
            entry: entry.to_string(),
        });
    }
    Ok(bare.to_string())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn entries_lose_their_channel_prefix_only() {
        assert_eq!(normalize_entry("telegram", " 123 ").unwrap(), "123");
        assert_eq!(normalize_entry("telegram", "Telegram:123").unwrap(), "123");
        assert_eq!(normalize_entry("signal", "uuid:abc").unwrap(), "uuid:abc");
        assert!(normalize_entry("telegram", "*").is_err());
        assert!(normalize_entry("telegram", "telegram:").is_err());
        assert!(normalize_entry("telegram", "  ").is_err());
    }

    #[test]
    fn paths() {
        let store = PairingStore::new("/c");
        assert_eq!(
            store.pairing_path("telegram").unwrap(),
            Path::new("/c/telegram-pairing.json")
        );
        assert_eq!(
            store.allow_from_path("telegram", None).unwrap(),
            Path::new("/c/telegram-allowFrom.json")
        );
        assert_eq!(
            store.allow_from_path("telegram", Some("work")).unwrap(),
            Path::new("/c/telegram-work-allowFrom.json")
        );
        assert!(matches!(
            store.allow_from_path("telegram", Some("../x")),
            Err(PairingError::InvalidAccount { .. })
        ));
    }
}

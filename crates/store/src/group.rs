//! Group commit: concurrent turns of one store share their fsyncs and index writes.
//!
//! Each caller blocks (it is on the blocking pool, like every store call) until its own
//! request is done. The first caller to find nobody working becomes the *leader*: it takes
//! every request waiting at that moment, does them in one go, hands each waiter its result
//! and wakes them; requests that arrive while it works wait for the next batch, which the
//! first of their callers to wake leads. No thread of its own, no timer: a lone turn is
//! served at once, and batches grow only as large as what arrives during one fsync. The
//! queue is bounded by the callers blocked on it (at most the blocking pool's threads).
//!
//! Two batchers per store ([`Commit`]):
//! - **syncs**: the transcripts a batch of turns appended to become durable together. One
//!   file is `fdatasync`ed; several distinct files on one Linux filesystem are made durable
//!   by one `syncfs` (one journal commit for all of them instead of one each: measured
//!   5–10 ms for 100 files against 20–110 ms for 100 `fdatasync`s on this machine's ext4).
//!   Elsewhere each distinct file is `fdatasync`ed once.
//! - **index updates**: the entries a batch of turns changes are applied to one copy of
//!   `sessions.json` under one hold of its lock and written once.
//!
//! Nobody's result is given before the batch's I/O has returned, so a waiter that got `Ok`
//! has its bytes on disk exactly as if it had fsynced them itself.

use std::collections::HashMap;
use std::fs::File;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};

use crate::error::StoreError;

/// How much batching happened in one store (all clones), for tests and metrics.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CommitStats {
    /// Transcript syncs asked for (one per turn that appended something).
    pub syncs_requested: u64,
    /// `fdatasync`/`syncfs` calls made for them.
    pub fsyncs: u64,
    /// Index entry updates asked for (one per finished turn, compaction, bookkeeping).
    pub index_updates: u64,
    /// `sessions.json` writes made for them.
    pub index_writes: u64,
}

/// The batchers of one store, shared by its clones.
#[derive(Debug, Default)]
pub(crate) struct Commit {
    pub(crate) syncs: Batcher<Arc<File>, Result<(), SharedIo>>,
    pub(crate) fsyncs: AtomicU64,
    pub(crate) index: Batcher<IndexUpdate, Result<crate::index::SessionEntry, StoreError>>,
    pub(crate) index_writes: AtomicU64,
}

impl Commit {
    pub(crate) fn stats(&self) -> CommitStats {
        CommitStats {
            syncs_requested: self.syncs.requests.load(Ordering::Relaxed),
            fsyncs: self.fsyncs.load(Ordering::Relaxed),
            index_updates: self.index.requests.load(Ordering::Relaxed),
            index_writes: self.index_writes.load(Ordering::Relaxed),
        }
    }

    /// Makes what was written to `file` durable, sharing the fsync with whoever else is
    /// waiting for one.
    pub(crate) fn sync(&self, file: Arc<File>) -> Result<(), SharedIo> {
        self.syncs.submit(
            file,
            |files| {
                let result = sync_files(&files, &self.fsyncs);
                files.iter().map(|_| result.clone()).collect()
            },
            || Err(SharedIo::lost()),
        )
    }
}

/// One change of one index entry, waiting for its batch.
pub(crate) struct IndexUpdate {
    pub key: String,
    /// The entry must still be this session (see [`StoreError::SessionChanged`]).
    pub session_id: Option<String>,
    pub durable: bool,
    pub change: Box<dyn FnOnce(&mut crate::index::SessionEntry) + Send>,
}

impl std::fmt::Debug for IndexUpdate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("IndexUpdate")
            .field("key", &self.key)
            .field("session_id", &self.session_id)
            .field("durable", &self.durable)
            .finish_non_exhaustive()
    }
}

/// An I/O error every waiter of a failed batch gets a copy of.
#[derive(Debug, Clone)]
pub(crate) struct SharedIo {
    kind: std::io::ErrorKind,
    message: String,
}

impl SharedIo {
    fn lost() -> Self {
        Self {
            kind: std::io::ErrorKind::Other,
            message: "the batch carrying this write panicked".into(),
        }
    }

    pub(crate) fn into_io(self) -> std::io::Error {
        std::io::Error::new(self.kind, self.message)
    }
}

impl From<&std::io::Error> for SharedIo {
    fn from(e: &std::io::Error) -> Self {
        Self {
            kind: e.kind(),
            message: e.to_string(),
        }
    }
}

/// Makes every file of `files` durable with as few calls as it can (see the module doc).
fn sync_files(files: &[Arc<File>], count: &AtomicU64) -> Result<(), SharedIo> {
    let mut by_device: HashMap<u64, Vec<&File>> = HashMap::new();
    let mut seen = std::collections::HashSet::new();
    for file in files {
        let (dev, ino) = identity(file).map_err(|e| SharedIo::from(&e))?;
        if seen.insert((dev, ino)) {
            by_device.entry(dev).or_default().push(file);
        }
    }
    for group in by_device.values() {
        match group.as_slice() {
            [one] => {
                count.fetch_add(1, Ordering::Relaxed);
                one.sync_data().map_err(|e| SharedIo::from(&e))?;
            }
            many => sync_many(many, count)?,
        }
    }
    Ok(())
}

/// Several files of one filesystem: one `syncfs` on Linux (it waits for the data and
/// metadata of every file of that filesystem, and reports write-back errors since Linux
/// 5.8), an `fdatasync` each elsewhere.
#[cfg(target_os = "linux")]
fn sync_many(files: &[&File], count: &AtomicU64) -> Result<(), SharedIo> {
    count.fetch_add(1, Ordering::Relaxed);
    match files.first() {
        Some(first) => nix::unistd::syncfs(first).map_err(|e| SharedIo::from(&e.into())),
        None => Ok(()),
    }
}

#[cfg(not(target_os = "linux"))]
fn sync_many(files: &[&File], count: &AtomicU64) -> Result<(), SharedIo> {
    for file in files {
        count.fetch_add(1, Ordering::Relaxed);
        file.sync_data().map_err(|e| SharedIo::from(&e))?;
    }
    Ok(())
}

#[cfg(unix)]
fn identity(file: &File) -> std::io::Result<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    let m = file.metadata()?;
    Ok((m.dev(), m.ino()))
}

#[cfg(not(unix))]
fn identity(file: &File) -> std::io::Result<(u64, u64)> {
    // No cheap identity: every file is its own group (an fsync each).
    Ok((0, std::ptr::from_ref(file) as u64))
}

/// A leader/follower batcher: [`Batcher::submit`] blocks until `work` has handled the
/// request, in a batch with whatever else was waiting.
#[derive(Debug)]
pub(crate) struct Batcher<Req, Out> {
    state: Mutex<State<Req, Out>>,
    done: Condvar,
    requests: AtomicU64,
}

#[derive(Debug)]
struct State<Req, Out> {
    next_ticket: u64,
    pending: Vec<(u64, Req)>,
    /// Results not picked up yet, by ticket (each waiter removes its own).
    results: HashMap<u64, Out>,
    /// A leader is working on a batch.
    busy: bool,
}

impl<Req, Out> Default for Batcher<Req, Out> {
    fn default() -> Self {
        Self {
            state: Mutex::new(State {
                next_ticket: 0,
                pending: Vec::new(),
                results: HashMap::new(),
                busy: false,
            }),
            done: Condvar::new(),
            requests: AtomicU64::new(0),
        }
    }
}

impl<Req, Out> Batcher<Req, Out> {
    /// Queues `request` and blocks until it is done. `work` gets a batch and returns one
    /// result per request, in order; if it panics (or returns too few), the batch's waiters
    /// get `lost()`.
    pub(crate) fn submit(
        &self,
        request: Req,
        work: impl FnOnce(Vec<Req>) -> Vec<Out>,
        lost: impl Fn() -> Out,
    ) -> Out {
        self.requests.fetch_add(1, Ordering::Relaxed);
        let mut state = self.lock();
        let ticket = state.next_ticket;
        state.next_ticket += 1;
        state.pending.push((ticket, request));
        let mut work = Some(work);
        loop {
            if let Some(out) = state.results.remove(&ticket) {
                return out;
            }
            if !state.busy
                && let Some(work) = work.take()
            {
                // Our request is still pending (results come only from batches that
                // took it): lead the next batch, which includes it.
                state.busy = true;
                let batch = std::mem::take(&mut state.pending);
                drop(state);
                let (tickets, requests): (Vec<u64>, Vec<Req>) = batch.into_iter().unzip();
                let outs = catch_unwind(AssertUnwindSafe(|| work(requests))).unwrap_or_default();
                state = self.lock();
                let mut outs = outs.into_iter();
                for t in tickets {
                    let out = outs.next().unwrap_or_else(&lost);
                    state.results.insert(t, out);
                }
                state.busy = false;
                self.done.notify_all();
                continue;
            }
            state = self.done.wait(state).unwrap_or_else(|e| e.into_inner());
        }
    }

    fn lock(&self) -> MutexGuard<'_, State<Req, Out>> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

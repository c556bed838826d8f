//! The cron jobs file, `$PINCER_HOME/cron/jobs.json`, in OpenClaw's shape
//! (`CronStoreFile = {version: 1, jobs: CronJob[]}`, `src/cron/types.ts`; OpenClaw reads it
//! with JSON5, so JSON5 is accepted here too and plain JSON is written).
//!
//! Owns: loading (a file that is not a jobs file at all is moved aside to
//! `jobs.json.corrupt.<ms>` and reported, so the caller can start with no jobs and show
//! why), keeping every job it cannot use (unknown shape, invalid, duplicate id) verbatim
//! and reported instead of dropping it, and atomic 0600 writes after every change. A
//! change that cannot be written is not applied in memory either.
//!
//! Everything here is blocking file I/O: the scheduler's async paths reach it through
//! [`CronService::blocking`](super::CronService::blocking) and the blocking pool.
#![expect(
    clippy::disallowed_methods,
    reason = "the jobs file's blocking side, called by CronService on the blocking pool (and the CLI's one-shot commands)"
)]

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::Serialize;
use serde_json::Value;

use super::job::{CronJob, CronJobState, Extra};
use super::run_log::RunLog;
use super::validate::{CronJobError, validate_job};
use crate::system_events::Clock;

/// The jobs file's name inside the cron directory.
pub const JOBS_FILE: &str = "jobs.json";
/// The run history directory's name inside the cron directory.
pub const RUNS_DIR: &str = "runs";

/// What went wrong with the cron store.
#[derive(Debug, thiserror::Error)]
pub enum CronStoreError {
    #[error(transparent)]
    Io(#[from] pincer_store::StoreError),
    /// The file is not a cron jobs file; it was moved to `kept_at`.
    #[error("{}: not a valid cron jobs file ({reason}); it was kept as {}", path.display(), kept_at.display())]
    Corrupt {
        path: PathBuf,
        kept_at: PathBuf,
        reason: String,
    },
    #[error("no cron job with id {id:?}")]
    UnknownJob { id: String },
    #[error("a cron job with id {id:?} already exists")]
    DuplicateId { id: String },
    #[error(transparent)]
    Job(#[from] CronJobError),
}

/// A job of the file that Pincer cannot schedule. It stays in the file as it was.
#[derive(Debug, Clone, PartialEq)]
pub struct UnreadableJob {
    /// Its position in the file's `jobs` array.
    pub index: usize,
    /// Its `id`, when it has a string one.
    pub id: Option<String>,
    /// Why it cannot be used.
    pub error: String,
    /// The job as read.
    pub raw: Value,
}

#[derive(Debug, Clone)]
enum Entry {
    Job(Box<CronJob>),
    Unreadable(UnreadableJob),
}

/// The jobs of `$PINCER_HOME/cron/`. Not shared: wrap it in a lock to share it.
pub struct CronStore {
    dir: PathBuf,
    clock: Arc<dyn Clock>,
    version: Value,
    /// Top-level fields other than `version` and `jobs`, kept for a newer writer.
    extra: Extra,
    entries: Vec<Entry>,
}

impl std::fmt::Debug for CronStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CronStore")
            .field("dir", &self.dir)
            .field("entries", &self.entries.len())
            .finish_non_exhaustive()
    }
}

impl CronStore {
    /// A store with no jobs over `dir` (the `cron` directory); nothing is written yet.
    pub fn empty(dir: impl Into<PathBuf>, clock: Arc<dyn Clock>) -> Self {
        Self {
            dir: dir.into(),
            clock,
            version: Value::from(1),
            extra: Extra::new(),
            entries: Vec::new(),
        }
    }

    /// Loads `dir/jobs.json`; a missing or empty file is an empty store. A file that is not a jobs
    /// file is renamed to `jobs.json.corrupt.<now ms>` and [`CronStoreError::Corrupt`] says
    /// so; the caller decides whether to go on with [`CronStore::empty`].
    pub fn open(dir: impl Into<PathBuf>, clock: Arc<dyn Clock>) -> Result<Self, CronStoreError> {
        let mut store = Self::empty(dir, clock);
        let path = store.jobs_path();
        let bytes = match fs::read(&path) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(store),
            Err(e) => return Err(io_error(&path, e)),
        };
        // An empty file holds no jobs to lose (OpenClaw reads it as none as well).
        if bytes.iter().all(u8::is_ascii_whitespace) {
            return Ok(store);
        }
        match parse_file(&bytes) {
            Ok((version, extra, jobs)) => {
                store.version = version;
                store.extra = extra;
                store.entries = read_entries(jobs);
                Ok(store)
            }
            Err(reason) => {
                let kept_at = store.keep_aside(&path)?;
                Err(CronStoreError::Corrupt {
                    path,
                    kept_at,
                    reason,
                })
            }
        }
    }

    /// The cron directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// `dir/jobs.json`.
    pub fn jobs_path(&self) -> PathBuf {
        self.dir.join(JOBS_FILE)
    }

    /// The run history of this store's jobs (`dir/runs/`).
    pub fn run_log(&self) -> RunLog {
        RunLog::new(self.dir.join(RUNS_DIR))
    }

    /// The usable jobs, in file order.
    pub fn list(&self) -> impl Iterator<Item = &CronJob> + '_ {
        self.entries.iter().filter_map(|e| match e {
            Entry::Job(job) => Some(job.as_ref()),
            Entry::Unreadable(_) => None,
        })
    }

    /// The jobs of the file that cannot be scheduled, with the reason.
    pub fn unreadable(&self) -> impl Iterator<Item = &UnreadableJob> + '_ {
        self.entries.iter().filter_map(|e| match e {
            Entry::Unreadable(u) => Some(u),
            Entry::Job(_) => None,
        })
    }

    /// The job with `id`.
    pub fn get(&self, id: &str) -> Option<&CronJob> {
        self.list().find(|job| job.id == id)
    }

    /// Adds `job` (checked, id unused) and writes the file.
    pub fn add(&mut self, job: CronJob) -> Result<(), CronStoreError> {
        validate_job(&job)?;
        if self.position(&job.id).is_some() {
            return Err(CronStoreError::DuplicateId { id: job.id });
        }
        self.entries.push(Entry::Job(Box::new(job)));
        if let Err(e) = self.save() {
            self.entries.pop();
            return Err(e);
        }
        Ok(())
    }

    /// Changes the job `id` with `change`, stamps `updatedAtMs`, checks it and writes the
    /// file. The caller recomputes `state.nextRunAtMs` when the schedule changed.
    pub fn update(
        &mut self,
        id: &str,
        change: impl FnOnce(&mut CronJob),
    ) -> Result<&CronJob, CronStoreError> {
        let now = self.clock.now_ms();
        self.replace(id, |job| {
            change(job);
            job.updated_at_ms = now;
        })
    }

    /// Changes only the scheduler state of job `id` (the hot path after each run; like
    /// OpenClaw's `stateOnly` save it leaves `updatedAtMs` alone) and writes the file.
    pub fn update_state(
        &mut self,
        id: &str,
        change: impl FnOnce(&mut CronJobState),
    ) -> Result<&CronJob, CronStoreError> {
        self.replace(id, |job| change(&mut job.state))
    }

    /// Removes job `id`, usable or not, and writes the file. `false` when there was none.
    /// Its run history stays (see [`RunLog::remove`]).
    pub fn remove(&mut self, id: &str) -> Result<bool, CronStoreError> {
        let Some(index) = self.position(id) else {
            return Ok(false);
        };
        let removed = self.entries.remove(index);
        if let Err(e) = self.save() {
            self.entries.insert(index, removed);
            return Err(e);
        }
        Ok(true)
    }

    /// Writes the file atomically with mode 0600 (its directory 0700).
    pub fn save(&self) -> Result<(), CronStoreError> {
        create_private_dir(&self.dir)?;
        let file = FileOut {
            version: &self.version,
            jobs: self
                .entries
                .iter()
                .map(|e| match e {
                    Entry::Job(job) => EntryOut::Job(job),
                    Entry::Unreadable(u) => EntryOut::Raw(&u.raw),
                })
                .collect(),
            extra: &self.extra,
        };
        pincer_store::write_json(&self.jobs_path(), &file, Some(0o600))?;
        Ok(())
    }

    fn replace(
        &mut self,
        id: &str,
        change: impl FnOnce(&mut CronJob),
    ) -> Result<&CronJob, CronStoreError> {
        let index = self
            .entries
            .iter()
            .position(|e| matches!(e, Entry::Job(job) if job.id == id))
            .ok_or_else(|| CronStoreError::UnknownJob { id: id.to_string() })?;
        let Entry::Job(job) = &self.entries[index] else {
            return Err(CronStoreError::UnknownJob { id: id.to_string() });
        };
        let mut changed = job.clone();
        change(&mut changed);
        // The id names the job and its run log: a change may not move it.
        changed.id = id.to_string();
        validate_job(&changed)?;
        let previous = std::mem::replace(&mut self.entries[index], Entry::Job(changed));
        if let Err(e) = self.save() {
            self.entries[index] = previous;
            return Err(e);
        }
        match &self.entries[index] {
            Entry::Job(job) => Ok(job),
            Entry::Unreadable(_) => Err(CronStoreError::UnknownJob { id: id.to_string() }),
        }
    }

    fn position(&self, id: &str) -> Option<usize> {
        self.entries.iter().position(|e| match e {
            Entry::Job(job) => job.id == id,
            Entry::Unreadable(u) => u.id.as_deref() == Some(id),
        })
    }

    /// Renames a corrupt file to `jobs.json.corrupt.<ms>` (a free name).
    fn keep_aside(&self, path: &Path) -> Result<PathBuf, CronStoreError> {
        let ts = self.clock.now_ms();
        let mut n = 0u32;
        loop {
            let name = match n {
                0 => format!("{JOBS_FILE}.corrupt.{ts}"),
                n => format!("{JOBS_FILE}.corrupt.{ts}-{n}"),
            };
            let target = self.dir.join(name);
            if !target.exists() {
                fs::rename(path, &target).map_err(|e| io_error(path, e))?;
                return Ok(target);
            }
            n += 1;
        }
    }
}

#[derive(Serialize)]
struct FileOut<'a> {
    version: &'a Value,
    jobs: Vec<EntryOut<'a>>,
    #[serde(flatten)]
    extra: &'a Extra,
}

#[derive(Serialize)]
#[serde(untagged)]
enum EntryOut<'a> {
    Job(&'a CronJob),
    Raw(&'a Value),
}

/// Splits a jobs file into its version, other top-level fields and raw jobs, or says why
/// it is not one.
fn parse_file(bytes: &[u8]) -> Result<(Value, Extra, Vec<Value>), String> {
    let value: Value = match serde_json::from_slice(bytes) {
        Ok(value) => value,
        Err(json_err) => {
            // OpenClaw parses the file with JSON5; accept what it accepts.
            let text = std::str::from_utf8(bytes).map_err(|_| "not UTF-8 text".to_string())?;
            json5::from_str(text).map_err(|_| format!("invalid JSON: {json_err}"))?
        }
    };
    let Value::Object(mut top) = value else {
        return Err("the top level is not an object".to_string());
    };
    let version = top.remove("version").unwrap_or_else(|| Value::from(1));
    let jobs = match top.remove("jobs") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(jobs)) => jobs,
        Some(_) => return Err("`jobs` is not an array".to_string()),
    };
    Ok((version, top, jobs))
}

/// Reads each raw job; what cannot be used is kept as [`UnreadableJob`].
fn read_entries(jobs: Vec<Value>) -> Vec<Entry> {
    let mut entries: Vec<Entry> = Vec::with_capacity(jobs.len());
    for (index, raw) in jobs.into_iter().enumerate() {
        // OpenClaw drops `null` entries (`jobs.filter(Boolean)`); so does Pincer.
        if raw.is_null() {
            continue;
        }
        let id = raw.get("id").and_then(Value::as_str).map(str::to_string);
        let parsed = serde_json::from_value::<CronJob>(raw.clone())
            .map_err(|e| e.to_string())
            .and_then(|job| validate_job(&job).map(|()| job).map_err(|e| e.to_string()));
        let duplicate = id.as_deref().is_some_and(|id| {
            entries.iter().any(|e| match e {
                Entry::Job(job) => job.id == id,
                Entry::Unreadable(u) => u.id.as_deref() == Some(id),
            })
        });
        let entry = match parsed {
            Ok(_) if duplicate => Entry::Unreadable(UnreadableJob {
                index,
                id,
                error: "another job has the same id".to_string(),
                raw,
            }),
            Ok(job) => Entry::Job(Box::new(job)),
            Err(error) => Entry::Unreadable(UnreadableJob {
                index,
                id,
                error,
                raw,
            }),
        };
        entries.push(entry);
    }
    entries
}

pub(super) fn io_error(path: &Path, source: std::io::Error) -> CronStoreError {
    CronStoreError::Io(pincer_store::StoreError::Io {
        path: path.to_path_buf(),
        source,
    })
}

/// The file the process that runs the jobs of a cron directory keeps locked while it runs.
pub const SCHEDULER_LOCK_FILE: &str = "scheduler.lock";

/// Held while a process owns a cron directory (the gateway for its life, `pincer cron` for
/// one edit while the gateway is down): two schedulers would run every job twice, and an
/// edit of the files behind a running gateway would be overwritten by its next save.
/// Released when dropped (or when the process dies: an advisory `flock`).
#[derive(Debug)]
pub struct SchedulerLock {
    _file: std::fs::File,
}

/// Takes the lock of `dir` (created 0700 if missing); `None` while another process holds
/// it.
pub fn try_lock_scheduler(dir: &Path) -> Result<Option<SchedulerLock>, CronStoreError> {
    create_private_dir(dir)?;
    let path = dir.join(SCHEDULER_LOCK_FILE);
    let file = pincer_base::private_open_options()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .map_err(|e| io_error(&path, e))?;
    match file.try_lock() {
        Ok(()) => Ok(Some(SchedulerLock { _file: file })),
        Err(std::fs::TryLockError::WouldBlock) => Ok(None),
        Err(std::fs::TryLockError::Error(e)) => Err(io_error(&path, e)),
    }
}

/// Creates `dir` (and parents) with mode 0700 when missing: job texts are private.
pub(crate) fn create_private_dir(dir: &Path) -> Result<(), CronStoreError> {
    pincer_base::create_private_dir_all(dir).map_err(|e| io_error(dir, e))
}

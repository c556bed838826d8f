//! A job's run history, `$PINCER_HOME/cron/runs/<jobId>.jsonl`, one JSON line per finished
//! run in OpenClaw's `CronRunLogEntry` shape (`src/cron/run-log.ts`):
//! `{ts, jobId, action: "finished", status, error?, summary?, runAtMs, durationMs,
//! nextRunAtMs, …}`.
//!
//! Owns: appending one whole line per run (a torn last line left by a crash is closed
//! first so the new entry stays readable), pruning to the last 2,000 lines once the file
//! passes 2 MB (OpenClaw's defaults), and reading the last N entries while skipping lines
//! that do not parse, as OpenClaw does. Blocking file I/O, like the jobs file.
#![expect(
    clippy::disallowed_methods,
    reason = "the run log's blocking side, called by CronService on the blocking pool"
)]

use std::fs::{self, File};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::job::{Extra, RunStatus};
use super::store::{CronStoreError, create_private_dir, io_error};
use super::validate::validate_job_id;

/// OpenClaw's `DEFAULT_CRON_RUN_LOG_MAX_BYTES`.
pub const DEFAULT_MAX_BYTES: u64 = 2_000_000;
/// OpenClaw's `DEFAULT_CRON_RUN_LOG_KEEP_LINES`.
pub const DEFAULT_KEEP_LINES: usize = 2_000;

/// The only action OpenClaw writes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum RunAction {
    #[default]
    #[serde(rename = "finished")]
    Finished,
}

/// One finished run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RunLogEntry {
    /// When the line was written (ms).
    pub ts: i64,
    pub job_id: String,
    pub action: RunAction,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<RunStatus>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub summary: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub delivered: Option<bool>,
    /// `delivered` | `not-delivered` | `unknown` | `not-requested`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub delivery_status: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub delivery_error: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session_key: Option<String>,
    /// When the run started (ms).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub run_at_ms: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_run_at_ms: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub provider: Option<String>,
    /// Fields Pincer does not model (`usage`, `errorReason`, …), kept as written.
    #[serde(flatten)]
    pub extra: Extra,
}

impl RunLogEntry {
    /// A `finished` entry of `job_id` written at `ts` with `status`; the rest unset.
    pub fn finished(job_id: impl Into<String>, ts: i64, status: RunStatus) -> Self {
        Self {
            ts,
            job_id: job_id.into(),
            action: RunAction::Finished,
            status: Some(status),
            ..Self::default()
        }
    }
}

/// The run history files of one cron directory.
#[derive(Debug, Clone)]
pub struct RunLog {
    dir: PathBuf,
    max_bytes: u64,
    keep_lines: usize,
}

impl RunLog {
    /// The history under `runs_dir` with OpenClaw's pruning defaults.
    pub fn new(runs_dir: impl Into<PathBuf>) -> Self {
        Self {
            dir: runs_dir.into(),
            max_bytes: DEFAULT_MAX_BYTES,
            keep_lines: DEFAULT_KEEP_LINES,
        }
    }

    /// Prune to the last `keep_lines` lines once a file passes `max_bytes`.
    pub fn with_limits(mut self, max_bytes: u64, keep_lines: usize) -> Self {
        self.max_bytes = max_bytes;
        self.keep_lines = keep_lines.max(1);
        self
    }

    /// `runs/<jobId>.jsonl`; the id must be a plain file name.
    pub fn path(&self, job_id: &str) -> Result<PathBuf, CronStoreError> {
        validate_job_id(job_id)?;
        Ok(self.dir.join(format!("{job_id}.jsonl")))
    }

    /// Appends `entry` as one line of its job's file (mode 0600).
    pub fn append(&self, entry: &RunLogEntry) -> Result<(), CronStoreError> {
        let path = self.path(&entry.job_id)?;
        create_private_dir(&self.dir)?;
        let mut line = serde_json::to_vec(entry).map_err(|source| {
            CronStoreError::Io(pincer_store::StoreError::Serialize {
                path: path.clone(),
                source,
            })
        })?;
        line.push(b'\n');
        let mut file = open_append(&path).map_err(|e| io_error(&path, e))?;
        if !ends_with_newline(&mut file).map_err(|e| io_error(&path, e))? {
            // A crash tore the previous line: end it so this entry starts a line of its own.
            line.insert(0, b'\n');
        }
        file.write_all(&line).map_err(|e| io_error(&path, e))?;
        let len = file.metadata().map_err(|e| io_error(&path, e))?.len();
        drop(file);
        if len > self.max_bytes {
            self.prune(&path)?;
        }
        Ok(())
    }

    /// The last `limit` entries of `job_id`, oldest first. Lines that do not parse (a torn
    /// last line, garbage) and entries of other jobs are skipped; a missing file is empty.
    pub fn read_last(
        &self,
        job_id: &str,
        limit: usize,
    ) -> Result<Vec<RunLogEntry>, CronStoreError> {
        let path = self.path(job_id)?;
        let text = match fs::read(&path) {
            Ok(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(io_error(&path, e)),
        };
        let mut skipped = 0usize;
        let mut entries: Vec<RunLogEntry> = text
            .lines()
            .map(str::trim)
            .filter(|line| !line.is_empty())
            .filter_map(|line| match serde_json::from_str::<RunLogEntry>(line) {
                Ok(entry) => Some(entry),
                Err(_) => {
                    skipped += 1;
                    None
                }
            })
            .filter(|entry| entry.job_id == job_id)
            .collect();
        if skipped > 0 {
            tracing::warn!(path = %path.display(), skipped, "cron run log: skipped unreadable lines");
        }
        // Lines are appended in time order, but a clock step can disorder them; OpenClaw
        // sorts by `ts`. The sort is stable, so equal times keep file order.
        entries.sort_by_key(|entry| entry.ts);
        let start = entries.len().saturating_sub(limit);
        Ok(entries.split_off(start))
    }

    /// Deletes the history of `job_id`; `false` when it had none.
    pub fn remove(&self, job_id: &str) -> Result<bool, CronStoreError> {
        let path = self.path(job_id)?;
        match fs::remove_file(&path) {
            Ok(()) => Ok(true),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
            Err(e) => Err(io_error(&path, e)),
        }
    }

    /// Keeps the last `keep_lines` non-empty lines, rewritten atomically.
    fn prune(&self, path: &Path) -> Result<(), CronStoreError> {
        let bytes = fs::read(path).map_err(|e| io_error(path, e))?;
        let text = String::from_utf8_lossy(&bytes);
        let lines: Vec<&str> = text
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .collect();
        let kept = &lines[lines.len().saturating_sub(self.keep_lines)..];
        let mut out = kept.join("\n");
        out.push('\n');
        pincer_store::write_atomic(path, out.as_bytes(), Some(0o600))?;
        Ok(())
    }
}

fn open_append(path: &Path) -> std::io::Result<File> {
    pincer_base::private_open_options()
        .read(true)
        .append(true)
        .create(true)
        .open(path)
}

/// `true` for an empty file or one whose last byte is a newline.
fn ends_with_newline(file: &mut File) -> std::io::Result<bool> {
    if file.metadata()?.len() == 0 {
        return Ok(true);
    }
    file.seek(SeekFrom::End(-1))?;
    let mut last = [0u8; 1];
    file.read_exact(&mut last)?;
    Ok(last[0] == b'\n')
}

//! The background side of an [`super::RpcClient`]: the state its tasks share (pending
//! requests, event fan-out, counters, stderr tail, the exit) and the four tasks per worker —
//! stdout reader, stderr reader, stdin writer, and the waiter that owns the process.
//!
//! Faults stay local: a bad stdout line is logged and counted; a worker that exits or closes
//! stdout fails every pending request once, with its exit status and stderr tail.

use std::collections::HashMap;
use std::process::ExitStatus;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStderr, ChildStdin, ChildStdout};
use tokio::sync::{broadcast, mpsc, oneshot, watch};
use tokio::task::JoinHandle;

use super::error::{ExitInfo, RpcError};
use super::line::{LineError, MAX_LINE_BYTES, read_line_limited};
use super::protocol::{WorkerLine, decode_worker_line};

/// How much of a worker's stderr is kept for [`ExitInfo::stderr_tail`].
pub(super) const STDERR_TAIL_BYTES: usize = 4096;
/// A stderr line longer than this is logged in pieces (stderr is for people, not parsing).
const STDERR_LOG_LINE: usize = 8192;
/// pi-gateway's grace between SIGTERM and SIGKILL.
pub(super) const TERM_GRACE: Duration = Duration::from_secs(2);
/// How long a worker that closed stdout may take to exit on its own before it is killed.
const EXIT_AFTER_EOF: Duration = Duration::from_secs(1);
/// How long the last stderr bytes may take to arrive after the exit.
const STDERR_DRAIN: Duration = Duration::from_millis(500);
/// Longest preview of a bad line in the logs.
const PREVIEW_CHARS: usize = 160;

/// Counters of what a worker wrote; see [`super::RpcClient::stats`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct RpcStats {
    /// Non-empty stdout lines read (good or bad).
    pub lines: u64,
    pub responses: u64,
    pub events: u64,
    /// Lines that are not protocol: not UTF-8, not JSON, not an object with a `type`.
    pub garbage_lines: u64,
    /// Lines over [`MAX_LINE_BYTES`], skipped.
    pub too_long_lines: u64,
    /// Responses for no pending request (late answers after a timeout, answers to
    /// `send_no_wait`).
    pub unmatched_responses: u64,
    /// Requests that gave up waiting.
    pub timeouts: u64,
}

#[derive(Default)]
pub(super) struct Counters {
    lines: AtomicU64,
    responses: AtomicU64,
    events: AtomicU64,
    garbage_lines: AtomicU64,
    too_long_lines: AtomicU64,
    unmatched_responses: AtomicU64,
    pub(super) timeouts: AtomicU64,
}

fn bump(counter: &AtomicU64) {
    counter.fetch_add(1, Ordering::Relaxed);
}

impl Counters {
    fn snapshot(&self) -> RpcStats {
        let get = |c: &AtomicU64| c.load(Ordering::Relaxed);
        RpcStats {
            lines: get(&self.lines),
            responses: get(&self.responses),
            events: get(&self.events),
            garbage_lines: get(&self.garbage_lines),
            too_long_lines: get(&self.too_long_lines),
            unmatched_responses: get(&self.unmatched_responses),
            timeouts: get(&self.timeouts),
        }
    }
}

pub(super) type Reply = Result<Value, RpcError>;

struct Pending {
    seq: u64,
    command: String,
    tx: oneshot::Sender<Reply>,
}

/// Requests the waiter task acts on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Control {
    /// SIGTERM to the group, SIGKILL after [`TERM_GRACE`].
    Terminate,
    Kill,
}

pub(super) struct Shared {
    pub(super) pid: Option<u32>,
    pending: Mutex<HashMap<String, Pending>>,
    pub(super) events: broadcast::Sender<Arc<Value>>,
    pub(super) counters: Counters,
    stderr_tail: Mutex<Vec<u8>>,
    /// Set once, when the worker is gone and every pending request has been failed.
    pub(super) death: watch::Sender<Option<ExitInfo>>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panic elsewhere while holding the lock leaves plain data behind; keep going.
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Shared {
    pub(super) fn new(pid: Option<u32>, event_capacity: usize) -> Self {
        Self {
            pid,
            pending: Mutex::new(HashMap::new()),
            events: broadcast::channel(event_capacity).0,
            counters: Counters::default(),
            stderr_tail: Mutex::new(Vec::new()),
            death: watch::channel(None).0,
        }
    }

    pub(super) fn stats(&self) -> RpcStats {
        self.counters.snapshot()
    }

    pub(super) fn exit_info(&self) -> Option<ExitInfo> {
        self.death.borrow().clone()
    }

    /// Registers a request; fails with the exit if the worker is already gone. Checked
    /// under the same lock [`Shared::mark_dead`] drains with, so no request is left waiting.
    pub(super) fn register(
        &self,
        id: String,
        seq: u64,
        command: String,
        tx: oneshot::Sender<Reply>,
    ) -> Result<(), RpcError> {
        let mut pending = lock(&self.pending);
        if let Some(info) = self.death.borrow().as_ref() {
            return Err(info.to_error());
        }
        pending.insert(id, Pending { seq, command, tx });
        Ok(())
    }

    pub(super) fn forget(&self, id: &str) {
        lock(&self.pending).remove(id);
    }

    /// Records the end of the worker (first call wins) and fails every pending request.
    pub(super) fn mark_dead(&self, mut info: ExitInfo) {
        if info.stderr_tail.is_empty() {
            info.stderr_tail = self.stderr_tail();
        }
        let mut pending = lock(&self.pending);
        let first = self.death.send_if_modified(|d| {
            if d.is_some() {
                return false;
            }
            *d = Some(info.clone());
            true
        });
        if !first {
            return;
        }
        let drained: Vec<Pending> = pending.drain().map(|(_, p)| p).collect();
        drop(pending);
        tracing::info!(
            pid = self.pid,
            code = info.code,
            signal = info.signal,
            failed_requests = drained.len(),
            "rpc worker is gone"
        );
        for p in drained {
            let _ = p.tx.send(Err(info.to_error()));
        }
    }

    fn stderr_tail(&self) -> String {
        let tail = lock(&self.stderr_tail);
        String::from_utf8_lossy(&tail).trim_end().to_string()
    }

    fn push_stderr(&self, bytes: &[u8]) {
        let mut tail = lock(&self.stderr_tail);
        tail.extend_from_slice(bytes);
        if tail.len() > STDERR_TAIL_BYTES {
            let cut = tail.len() - STDERR_TAIL_BYTES;
            tail.drain(..cut);
        }
    }

    /// Handles one stdout line.
    fn dispatch(&self, line: &str) {
        if line.trim().is_empty() {
            return;
        }
        bump(&self.counters.lines);
        match decode_worker_line(line) {
            Err(e) => {
                bump(&self.counters.garbage_lines);
                tracing::warn!(pid = self.pid, error = %e, line = %preview(line), "rpc worker wrote a non-protocol line");
            }
            Ok(WorkerLine::Event(event)) => {
                bump(&self.counters.events);
                // No subscriber is fine; a lagging one loses the oldest events, never blocks us.
                let _ = self.events.send(Arc::new(event));
            }
            Ok(WorkerLine::Response {
                id,
                command,
                success,
                data,
                error,
            }) => {
                bump(&self.counters.responses);
                let reply = if success {
                    Ok(data.unwrap_or(Value::Null))
                } else {
                    Err(RpcError::Command {
                        command: command.clone(),
                        message: error.unwrap_or_default(),
                    })
                };
                let found = {
                    let mut pending = lock(&self.pending);
                    match &id {
                        Some(Value::String(id)) => pending.remove(id),
                        // pi answers unknown commands (and lines it could not parse) without
                        // their id: give it to the oldest request of that command type.
                        None => pending
                            .iter()
                            .filter(|(_, p)| p.command == command)
                            .min_by_key(|(_, p)| p.seq)
                            .map(|(id, _)| id.clone())
                            .and_then(|id| pending.remove(&id)),
                        Some(_) => None,
                    }
                };
                match found {
                    Some(p) => {
                        let _ = p.tx.send(reply);
                    }
                    None => {
                        bump(&self.counters.unmatched_responses);
                        tracing::debug!(pid = self.pid, ?id, %command, "rpc response for no pending request");
                    }
                }
            }
        }
    }
}

fn preview(line: &str) -> String {
    let mut chars = line.char_indices();
    match chars.nth(PREVIEW_CHARS) {
        Some((cut, _)) => format!("{}… ({} bytes)", &line[..cut], line.len()),
        None => line.to_string(),
    }
}

/// Reads stdout until EOF, then waits for the exit and fails what is still pending.
pub(super) async fn read_stdout(
    shared: Arc<Shared>,
    stdout: ChildStdout,
    exited: watch::Receiver<Option<ExitInfo>>,
    stderr_done: JoinHandle<()>,
    control: mpsc::UnboundedSender<Control>,
) {
    let mut reader = BufReader::with_capacity(64 * 1024, stdout);
    loop {
        match read_line_limited(&mut reader, MAX_LINE_BYTES).await {
            Ok(Some(Ok(line))) => shared.dispatch(&line),
            Ok(Some(Err(LineError::TooLong { len }))) => {
                bump(&shared.counters.lines);
                bump(&shared.counters.too_long_lines);
                tracing::warn!(
                    pid = shared.pid,
                    len,
                    "rpc worker wrote an over-long line; skipped"
                );
            }
            Ok(Some(Err(LineError::InvalidUtf8))) => {
                bump(&shared.counters.lines);
                bump(&shared.counters.garbage_lines);
                tracing::warn!(
                    pid = shared.pid,
                    "rpc worker wrote a line that is not UTF-8"
                );
            }
            Ok(None) => break,
            Err(e) => {
                tracing::warn!(pid = shared.pid, error = %e, "reading rpc worker stdout failed");
                break;
            }
        }
    }
    // Responses written before the exit are all delivered by now. A worker that closed
    // stdout but lives on can never answer again: give it a moment, then kill it.
    let mut info = wait_exit(&exited, EXIT_AFTER_EOF).await;
    if info.is_none() {
        tracing::warn!(
            pid = shared.pid,
            "rpc worker closed stdout but kept running; killing it"
        );
        let _ = control.send(Control::Kill);
        info = wait_exit(&exited, TERM_GRACE).await;
    }
    let _ = tokio::time::timeout(STDERR_DRAIN, stderr_done).await;
    let mut info = info.unwrap_or_default();
    info.stderr_tail = shared.stderr_tail();
    shared.mark_dead(info);
}

async fn wait_exit(
    exited: &watch::Receiver<Option<ExitInfo>>,
    within: Duration,
) -> Option<ExitInfo> {
    let mut rx = exited.clone();
    match tokio::time::timeout(within, rx.wait_for(Option::is_some)).await {
        Ok(Ok(info)) => info.clone(),
        _ => None,
    }
}

/// Keeps the stderr tail and forwards stderr to `tracing` at debug level, line by line.
pub(super) async fn read_stderr(shared: Arc<Shared>, mut stderr: ChildStderr) {
    let mut buf = vec![0u8; 8192];
    let mut line: Vec<u8> = Vec::new();
    let log = |line: &[u8]| {
        let text = String::from_utf8_lossy(line);
        tracing::debug!(pid = shared.pid, "rpc worker stderr: {}", text.trim_end());
    };
    loop {
        let n = match stderr.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        let chunk = &buf[..n];
        shared.push_stderr(chunk);
        for piece in chunk.split_inclusive(|&b| b == b'\n') {
            line.extend_from_slice(piece);
            if piece.ends_with(b"\n") || line.len() >= STDERR_LOG_LINE {
                log(&line);
                line.clear();
            }
        }
    }
    if !line.is_empty() {
        log(&line);
    }
}

/// Writes whole lines to stdin in order; the queue closing closes stdin.
pub(super) async fn write_stdin(
    pid: Option<u32>,
    mut stdin: ChildStdin,
    mut lines: mpsc::UnboundedReceiver<String>,
) {
    while let Some(line) = lines.recv().await {
        if let Err(e) = stdin.write_all(line.as_bytes()).await {
            // The worker is going away; the stdout reader reports that to the requests.
            tracing::debug!(pid, error = %e, "writing to rpc worker stdin failed");
            break;
        }
    }
    let _ = stdin.shutdown().await;
}

/// Sends `signal` to the worker's process group (it is its own group leader).
pub(super) fn signal_group(pid: Option<u32>, signal: nix::sys::signal::Signal) {
    let Some(pid) = pid.and_then(|p| i32::try_from(p).ok()).filter(|&p| p > 0) else {
        return;
    };
    // ESRCH (already gone) is the normal case after an exit.
    let _ = nix::sys::signal::killpg(nix::unistd::Pid::from_raw(pid), signal);
}

fn exit_info(status: std::io::Result<ExitStatus>) -> ExitInfo {
    use std::os::unix::process::ExitStatusExt;
    match status {
        Ok(status) => ExitInfo {
            code: status.code(),
            signal: status.signal(),
            stderr_tail: String::new(),
        },
        Err(_) => ExitInfo::default(),
    }
}

/// Owns the process: reaps it, and terminates or kills it on request. After the exit it
/// kills what is left of its process group (children holding our pipes open would keep the
/// stdout reader waiting), publishes the status on `exited`, and fails the pending requests
/// itself if the stdout reader has not done so shortly after.
pub(super) async fn wait_child(
    shared: Arc<Shared>,
    mut child: Child,
    mut control: mpsc::UnboundedReceiver<Control>,
    exited: watch::Sender<Option<ExitInfo>>,
) {
    use nix::sys::signal::Signal;
    let pid = shared.pid;
    let status = tokio::select! {
        status = child.wait() => status,
        ctl = control.recv() => match ctl {
            Some(Control::Terminate) => {
                signal_group(pid, Signal::SIGTERM);
                match tokio::time::timeout(TERM_GRACE, child.wait()).await {
                    Ok(status) => status,
                    Err(_) => {
                        tracing::warn!(pid, "rpc worker ignored SIGTERM; killing it");
                        signal_group(pid, Signal::SIGKILL);
                        let _ = child.start_kill();
                        child.wait().await
                    }
                }
            }
            Some(Control::Kill) | None => {
                signal_group(pid, Signal::SIGKILL);
                let _ = child.start_kill();
                child.wait().await
            }
        },
    };
    signal_group(pid, Signal::SIGKILL);
    let info = exit_info(status);
    let _ = exited.send(Some(info.clone()));
    let mut death = shared.death.subscribe();
    let reported = tokio::time::timeout(
        EXIT_AFTER_EOF + STDERR_DRAIN + TERM_GRACE,
        death.wait_for(Option::is_some),
    )
    .await;
    if reported.is_err() {
        tracing::warn!(pid, "rpc worker exited but its stdout stayed open");
        shared.mark_dead(info);
    }
}

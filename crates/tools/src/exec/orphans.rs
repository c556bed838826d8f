//! No exec process outlives its owner, even one killed with SIGKILL (which runs no
//! cleanup). Three layers:
//!
//! - the command's shell gets `PR_SET_PDEATHSIG(SIGKILL)` (Linux): it dies with the owner.
//!   Its children do not inherit that, so
//! - each session's process group has a [`Watchdog`]: a tiny `sh` outside the group whose
//!   stdin is a pipe only the owner holds. When the owner dies the pipe closes and the
//!   watchdog kills the whole group; when the session ends normally the owner writes
//!   `done` and the watchdog exits without killing anything;
//! - with a record directory (the gateway passes `$PINCER_HOME/run/exec`), each live group
//!   is recorded in `<owner-pid>-<pgid>.json` (0600, removed when the group ends), and
//!   [`reap_orphans`] — run at gateway start — kills the groups of dead owners that are
//!   still alive. A group is killed only when its leader's start time (from
//!   `/proc/<pid>/stat`) still matches the record, so a reused pid is never touched.
//!
//! The death signal is tied to the thread that spawned the child, not the process:
//! sessions are spawned from async tasks, on runtime worker threads that live as long as
//! the owner's runtime. Spawning one from `spawn_blocking` (or after `block_in_place`)
//! would kill it when that thread retires.

use std::io;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::OnceLock;
use std::time::Duration;

use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use serde::{Deserialize, Serialize};
use tokio::io::AsyncWriteExt as _;
use tokio::process::{Child, ChildStdin};

/// How long a released watchdog is waited for.
const RELEASE_WAIT: Duration = Duration::from_secs(2);

/// Kill the child with SIGKILL when its parent (this thread) dies, and give it the user's
/// umask. Linux only; elsewhere the watchdog alone does the killing.
#[cfg(target_os = "linux")]
#[allow(unsafe_code)]
pub(super) fn set_up_child(command: &mut tokio::process::Command) {
    let owner = nix::unistd::getpid();
    // The binary runs with umask 077 (its home is private); the agent's commands get the
    // user's own umask back, so what they create outside the home has the usual modes.
    // Read here, in the parent: the child may not touch the environment.
    let user_umask = pincer_base::user_umask()
        .map(|mask| nix::sys::stat::Mode::from_bits_truncate(mask as nix::libc::mode_t));
    // SAFETY: the closure runs in the forked child before exec, where only
    // async-signal-safe calls are allowed: it makes three raw syscalls (umask, prctl,
    // getppid), allocates nothing and takes no locks. `owner` and `user_umask` are plain
    // integers copied in.
    unsafe {
        command.pre_exec(move || {
            if let Some(mask) = user_umask {
                nix::sys::stat::umask(mask);
            }
            nix::sys::prctl::set_pdeathsig(Signal::SIGKILL).map_err(io::Error::from)?;
            // The owner may have died between fork and prctl: then no signal will come.
            if nix::unistd::getppid() != owner {
                return Err(io::Error::other("the owner exited"));
            }
            Ok(())
        });
    }
}

#[cfg(not(target_os = "linux"))]
pub(super) fn set_up_child(_command: &mut tokio::process::Command) {}

/// The process group led by `pid` (a pid past `i32::MAX` maps to one no group has).
pub(super) fn pgid_of(pid: u32) -> Pid {
    Pid::from_raw(i32::try_from(pid).unwrap_or(i32::MAX))
}

/// Kills a process group when the owner dies (see the module docs).
pub(super) struct Watchdog {
    child: Child,
    stdin: Option<ChildStdin>,
}

impl Watchdog {
    /// Start the watchdog of group `pgid`.
    pub(super) fn spawn(pgid: u32) -> io::Result<Self> {
        let mut command = tokio::process::Command::new("sh");
        command
            .arg("-c")
            // `read` and `kill` are builtins: no PATH needed. dash's `kill` takes no `--`
            // (it reads it as a pid): `-9 -PGID` is the form both shells accept.
            .arg(r#"read x; [ "$x" = done ] || kill -9 "-$1""#)
            .arg("pincer-exec-watchdog")
            .arg(pgid.to_string())
            .env_clear()
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            // Its own group: a signal to the owner's group (Ctrl-C) must not take it first.
            .process_group(0)
            .kill_on_drop(false);
        let mut child = command.spawn()?;
        let stdin = child.stdin.take();
        Ok(Self { child, stdin })
    }

    /// The session ended normally: tell the watchdog to exit without killing.
    pub(super) async fn release(mut self) {
        if let Some(mut stdin) = self.stdin.take() {
            let _ = stdin.write_all(b"done\n").await;
            let _ = stdin.flush().await;
        }
        let _ = tokio::time::timeout(RELEASE_WAIT, self.child.wait()).await;
    }
}

/// One live process group, as recorded on disk.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Record {
    owner_pid: u32,
    /// The owner's start time (clock ticks since boot).
    owner_start: u64,
    pgid: u32,
    /// The group leader's start time.
    leader_start: u64,
}

/// The record file of group `pgid` owned by this process, written once the group exists.
pub(super) async fn write_record(dir: &Path, pgid: u32) -> Option<PathBuf> {
    let dir = dir.to_owned();
    let written = tokio::task::spawn_blocking(move || record_blocking(&dir, pgid)).await;
    match written {
        Ok(Ok(path)) => Some(path),
        Ok(Err(e)) => {
            tracing::warn!(error = %e, "could not record an exec process group");
            None
        }
        Err(_) => None,
    }
}

fn record_blocking(dir: &Path, pgid: u32) -> io::Result<PathBuf> {
    use std::io::Write as _;
    let owner_pid = std::process::id();
    let gone = || io::Error::other("no start time in /proc");
    let record = Record {
        owner_pid,
        owner_start: own_start_time().ok_or_else(gone)?,
        pgid,
        leader_start: start_time(pgid).ok_or_else(gone)?,
    };
    pincer_base::create_private_dir_all(dir)?;
    let path = dir.join(format!("{owner_pid}-{pgid}.json"));
    let mut file = pincer_base::private_open_options()
        .write(true)
        .create(true)
        .truncate(true)
        .open(&path)?;
    file.write_all(&serde_json::to_vec(&record).map_err(io::Error::other)?)?;
    Ok(path)
}

pub(super) async fn remove_record(path: &Path) {
    let _ = tokio::fs::remove_file(path).await;
}

/// What [`reap_orphans`] did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ReapReport {
    /// Process groups of dead owners that were still alive and were killed.
    pub killed: Vec<u32>,
    /// Records removed without killing (group gone, or its pid now someone else's).
    pub stale: usize,
}

/// Kill the process groups recorded in `dir` by owners that are no longer alive, when
/// their leader is still the recorded process; remove those records. Blocking (reads
/// `/proc`); call it once at start, before new sessions are recorded.
pub fn reap_orphans(dir: &Path) -> ReapReport {
    let mut report = ReapReport::default();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return report;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.extension().is_none_or(|e| e != "json") {
            continue;
        }
        let record = std::fs::read(&path)
            .ok()
            .and_then(|bytes| serde_json::from_slice::<Record>(&bytes).ok());
        let Some(record) = record else {
            let _ = std::fs::remove_file(&path);
            report.stale += 1;
            continue;
        };
        if start_time(record.owner_pid) == Some(record.owner_start) {
            // The owner is alive: its groups are its own business.
            continue;
        }
        if record.pgid > 1 && start_time(record.pgid) == Some(record.leader_start) {
            if killpg(pgid_of(record.pgid), Signal::SIGKILL).is_ok() {
                report.killed.push(record.pgid);
            }
        } else {
            report.stale += 1;
        }
        let _ = std::fs::remove_file(&path);
    }
    report
}

/// This process's start time, read from `/proc` once: it never changes.
fn own_start_time() -> Option<u64> {
    static OWN: OnceLock<u64> = OnceLock::new();
    if let Some(start) = OWN.get() {
        return Some(*start);
    }
    let start = start_time(std::process::id())?;
    Some(*OWN.get_or_init(|| start))
}

/// The start time of `pid` (field 22 of `/proc/<pid>/stat`), or `None` when it is not
/// running (or there is no `/proc`).
fn start_time(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) may hold spaces and parentheses: split after its `)`.
    let (_, rest) = stat.rsplit_once(')')?;
    let mut fields = rest.split_whitespace();
    let state = fields.next()?;
    if state.starts_with('Z') || state.starts_with('X') {
        return None;
    }
    // `rest` starts at field 3 (state); starttime is field 22.
    fields.nth(22 - 4)?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_its_own_start_time() {
        let own = start_time(std::process::id());
        assert!(own.is_some());
        assert_eq!(own, start_time(std::process::id()));
        assert_eq!(own_start_time(), own);
        assert_eq!(start_time(u32::MAX), None);
    }
}

//! Running one Chromium from start to end: the code both the supervisor process and an
//! in-process (direct) runtime run.
//!
//! Chromium is started through `/bin/sh -c 'exec "$0" "$@" 3<&0 4>&1 …'` with
//! `--remote-debugging-pipe`: its fds 3 and 4 become pipes whose other ends this process
//! holds, and Chromium shuts down as soon as fd 3 reads end-of-file — that is, as soon as
//! this process is gone, however it died (SIGKILL included). That gives the
//! parent-death guarantee without `PR_SET_PDEATHSIG` (which needs an `unsafe` `pre_exec`);
//! the shell only moves the pipes to fds 3 and 4 and `exec`s, keeping the pid. The CDP
//! clients use the port (`--remote-debugging-port=0`, read back from `DevToolsActivePort`);
//! the pipe carries nothing.
//!
//! Chromium leads a process group of its own (its zygote, renderers and utilities join it),
//! so an end kills the whole group; its stderr goes to a bounded log beside the record.

use std::ffi::OsString;
use std::process::Stdio;
use std::time::{Duration, Instant};

use nix::sys::signal::Signal;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::process::{Child, ChildStdin};
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

use super::guard::{self, Guard};
use super::paths::Paths;
use super::record::{self, RuntimeRecord};
use super::supervisor::SupervisorArgs;
use super::{probe, procs};
use crate::RuntimeError;

/// When `chromium.log` is rotated to `chromium.log.1`: at most twice this on disk.
const LOG_CAP: u64 = 1024 * 1024;
/// How long Chromium gets to exit on its own before its group is killed.
const GRACE: Duration = Duration::from_secs(3);
/// How long the idle check or the crash clean-up waits for the profile's lock before it
/// leaves the decision to whoever holds it.
const LOCK_PATIENCE: Duration = Duration::from_secs(2);

/// Moves the pipes on stdin/stdout to fds 3 and 4, then becomes the browser (same pid).
const SHELL: &str = r#"exec "$0" "$@" 3<&0 4>&1 0</dev/null 1>/dev/null"#;

/// How a browser's run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ended {
    /// It never became ready (the error went to the ready channel).
    NotStarted,
    /// Chromium exited by itself (a crash, or a `stop` from another process).
    Exited,
    /// Asked to stop (SIGTERM to the supervisor, or the direct runtime's `stop`/drop).
    Stopped,
    /// Unused for longer than the idle timeout.
    Idle,
    /// The runtime's navigation guard lost its connection and could not connect again:
    /// the browser was ended rather than left unguarded.
    GuardLost,
}

/// How often the idle clock is read: often enough that a short timeout is kept to within
/// a quarter of it, at most every 5 s.
pub(crate) fn idle_check_every(idle: Duration) -> Duration {
    (idle / 4).clamp(Duration::from_millis(100), Duration::from_secs(5))
}

/// Starts Chromium as `args` says, reports the record (or why it could not start) on
/// `ready`, then watches it until it exits, `stop` is cancelled or it idles out; every end
/// leaves no process of the profile behind. `supervisor` is the supervising process's pid,
/// recorded so `stop` from elsewhere can signal it.
pub(crate) async fn run_browser(
    args: &SupervisorArgs,
    supervisor: Option<u32>,
    ready: oneshot::Sender<Result<RuntimeRecord, RuntimeError>>,
    stop: CancellationToken,
) -> Ended {
    let paths = Paths::new(args.state_dir.clone());
    let mut running = match start(args, &paths, supervisor).await {
        Ok(running) => running,
        Err(e) => {
            let _ = ready.send(Err(e));
            return Ended::NotStarted;
        }
    };
    // The guard is on before anyone learns where the browser is.
    let mut guard = match &args.navigation_guard {
        None => None,
        Some(policy) => match Guard::open(&running.record.ws_url, policy.clone()).await {
            Ok(guard) => Some(guard),
            Err(e) => {
                let why = format!("the navigation guard could not connect: {e}");
                guard::log(
                    &paths.supervisor_log(),
                    &format!("{why}; browser not started"),
                )
                .await;
                running.shut_down().await;
                let _ = ready.send(Err(RuntimeError::Start(why)));
                return Ended::NotStarted;
            }
        },
    };
    record::touch_now(&paths.last_used()).await;
    if let Err(e) = record::write(&paths.record(), &running.record).await {
        running.shut_down().await;
        let _ = ready.send(Err(e));
        return Ended::NotStarted;
    }
    if ready.send(Ok(running.record.clone())).is_err() {
        // Whoever asked gave up waiting: nobody knows this browser.
        record::remove_if_pid(&paths.record(), running.pid).await;
        running.shut_down().await;
        return Ended::Stopped;
    }
    let every = idle_check_every(args.idle_timeout);
    loop {
        tokio::select! {
            _ = running.child.wait() => {
                // Gone by itself: clean up after it unless another process is already
                // replacing it (then it holds the lock and handles the stale record, and
                // waits for this process to exit before it starts a new browser). The lock
                // is held until the cleanup is over: the cleanup ends every process of the
                // profile, and a browser started meanwhile would be one of them.
                let lock = record::lock(&paths.lock(), LOCK_PATIENCE).await.ok();
                if lock.is_some() {
                    record::remove_if_pid(&paths.record(), running.pid).await;
                }
                running.shut_down().await;
                drop(lock);
                return Ended::Exited;
            }
            () = stop.cancelled() => {
                // No lock here: `stop` from another process holds it while it waits for
                // this. The record still names this browser, so removing it is safe.
                record::remove_if_pid(&paths.record(), running.pid).await;
                running.shut_down().await;
                return Ended::Stopped;
            }
            () = guard_lost(guard.as_ref()) => {
                if !matches!(running.child.try_wait(), Ok(None)) {
                    // The browser is gone, which closed the guard: the branch above ends
                    // the run.
                    guard = None;
                    continue;
                }
                let Some(current) = guard.as_mut() else { continue };
                let reconnected = tokio::select! {
                    result = current.reconnect() => result,
                    // The stop branch above handles it.
                    () = stop.cancelled() => continue,
                };
                let log = paths.supervisor_log();
                match reconnected {
                    Ok(()) => {
                        guard::log(&log, "the navigation guard's connection dropped; reconnected").await;
                    }
                    Err(e) => {
                        let why = format!(
                            "the navigation guard's connection dropped and could not be made again ({e}); ending the browser rather than leaving its pages unchecked"
                        );
                        guard::log(&log, &why).await;
                        record::remove_if_pid(&paths.record(), running.pid).await;
                        running.shut_down().await;
                        return Ended::GuardLost;
                    }
                }
            }
            () = tokio::time::sleep(every) => {
                if !idle(&paths, args.idle_timeout).await {
                    continue;
                }
                // Decide under the lock, so an `ensure_running` that is reusing the browser
                // right now (and touches last-used under the same lock) wins.
                let Ok(_lock) = record::lock(&paths.lock(), LOCK_PATIENCE).await else {
                    continue;
                };
                if idle(&paths, args.idle_timeout).await {
                    record::remove_if_pid(&paths.record(), running.pid).await;
                    running.shut_down().await;
                    return Ended::Idle;
                }
            }
        }
    }
}

/// Returns when the guard's connection dropped; never without a guard.
async fn guard_lost(guard: Option<&Guard>) {
    match guard {
        Some(guard) => guard.lost().await,
        None => std::future::pending().await,
    }
}

async fn idle(paths: &Paths, timeout: Duration) -> bool {
    // A missing clock counts as just used: a user deleting files must not end the browser.
    record::idle_for(&paths.last_used())
        .await
        .is_some_and(|idle| idle > timeout)
}

/// A started, answering Chromium.
struct Running {
    child: Child,
    pid: u32,
    record: RuntimeRecord,
    user_data_arg: String,
    /// Closing it (dropping it) makes Chromium exit: see the module's comment.
    pipe: Option<ChildStdin>,
    log_task: tokio::task::JoinHandle<()>,
}

impl Running {
    /// Ends Chromium and everything of its profile: pipe closed and SIGTERM, then after
    /// [`GRACE`] SIGKILL to its group, then any process still carrying its user-data dir.
    async fn shut_down(&mut self) {
        self.pipe.take();
        // Once the leader is reaped its pid may be reused: signal it only while unreaped.
        if matches!(self.child.try_wait(), Ok(None)) {
            procs::signal_pid(self.pid, Signal::SIGTERM);
            if tokio::time::timeout(GRACE, self.child.wait())
                .await
                .is_err()
            {
                procs::signal_group(self.pid, Signal::SIGKILL);
                let _ = tokio::time::timeout(GRACE, self.child.wait()).await;
            }
        }
        // Helpers may outlive the leader a moment. While any does, the group (and so its id)
        // still exists and cannot name another process's group.
        if !procs::profile_processes(&self.user_data_arg)
            .await
            .is_empty()
        {
            procs::signal_group(self.pid, Signal::SIGKILL);
        }
        let left = procs::reap_profile(&self.user_data_arg, GRACE).await;
        if !left.is_empty() {
            tracing::warn!(?left, "browser processes outlived SIGKILL");
        }
        let _ = tokio::time::timeout(Duration::from_secs(1), &mut self.log_task).await;
    }
}

/// Spawns Chromium and waits until it answers `/json/version`; on any failure nothing of
/// it is left running and the error carries its log's last lines.
async fn start(
    args: &SupervisorArgs,
    paths: &Paths,
    supervisor: Option<u32>,
) -> Result<Running, RuntimeError> {
    prepare(paths).await?;
    let log = open_log(paths).await?;
    let mut command = tokio::process::Command::new("/bin/sh");
    command
        .arg("-c")
        .arg(SHELL)
        .arg(&args.executable)
        .arg(paths.user_data_arg())
        .args(["--remote-debugging-port=0", "--remote-debugging-pipe"])
        .args(&args.browser_args)
        .arg("about:blank")
        .current_dir(paths.dir())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(true);
    let mut child = command
        .spawn()
        .map_err(|e| RuntimeError::Start(format!("{}: {e}", args.executable.display())))?;
    let pid = child.id().unwrap_or(0);
    let pipe = child.stdin.take();
    if let Some(mut out) = child.stdout.take() {
        // Nothing is sent on the pipe, so nothing should come back; drain it anyway so a
        // full pipe can never block the browser.
        tokio::spawn(async move {
            let mut sink = tokio::io::sink();
            let _ = tokio::io::copy(&mut out, &mut sink).await;
        });
    }
    let log_task = match child.stderr.take() {
        Some(stderr) => tokio::spawn(write_log(stderr, log, paths.clone())),
        None => tokio::spawn(async {}),
    };
    let mut running = Running {
        child,
        pid,
        record: RuntimeRecord {
            pid,
            pid_start: None,
            supervisor_pid: supervisor,
            supervisor_start: None,
            ws_url: String::new(),
            http_base: String::new(),
            executable: args.executable.display().to_string(),
            headless: args.headless,
            started_at: pincer_base::time::iso_now(),
        },
        user_data_arg: paths.user_data_arg(),
        pipe,
        log_task,
    };
    match wait_ready(&mut running.child, paths, args.start_timeout).await {
        Ok((port, ws_url)) => {
            running.record.pid_start = procs::start_time(pid).await;
            if let Some(supervisor) = supervisor {
                running.record.supervisor_start = procs::start_time(supervisor).await;
            }
            running.record.http_base = format!("http://127.0.0.1:{port}");
            running.record.ws_url = ws_url;
            Ok(running)
        }
        Err(reason) => {
            running.shut_down().await;
            let tail = log_tail(paths).await;
            let executable = args.executable.display();
            Err(RuntimeError::Start(if tail.is_empty() {
                format!("{executable}: {reason}")
            } else {
                format!("{executable}: {reason}; its last words:\n{tail}")
            }))
        }
    }
}

/// Clears what a previous run left that would confuse this one: the old port file, and
/// Chromium's singleton lock (no process of this profile runs now: the caller made sure).
async fn prepare(paths: &Paths) -> Result<(), RuntimeError> {
    record::ensure_dir(&paths.user_data()).await?;
    let user_data = paths.user_data();
    for name in [
        "DevToolsActivePort",
        "SingletonLock",
        "SingletonSocket",
        "SingletonCookie",
    ] {
        let _ = tokio::fs::remove_file(user_data.join(name)).await;
    }
    let _ = tokio::fs::rename(paths.log(), paths.old_log()).await;
    Ok(())
}

async fn open_log(paths: &Paths) -> Result<tokio::fs::File, RuntimeError> {
    let path = paths.log();
    let mut options = tokio::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true).mode(0o600);
    options.open(&path).await.map_err(|e| RuntimeError::State {
        path: path.display().to_string(),
        reason: e.to_string(),
    })
}

/// Copies Chromium's stderr into `chromium.log`, rotating it to `chromium.log.1` whenever it
/// passes [`LOG_CAP`].
async fn write_log(
    mut stderr: tokio::process::ChildStderr,
    mut log: tokio::fs::File,
    paths: Paths,
) {
    let mut written = 0u64;
    let mut buf = vec![0u8; 8192];
    loop {
        let n = match stderr.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        if written >= LOG_CAP {
            let _ = log.flush().await;
            let _ = tokio::fs::rename(paths.log(), paths.old_log()).await;
            match open_log(&paths).await {
                Ok(fresh) => log = fresh,
                Err(_) => break,
            }
            written = 0;
        }
        if log.write_all(&buf[..n]).await.is_err() {
            break;
        }
        written += n as u64;
    }
    let _ = log.flush().await;
    // Keep draining after a write error so Chromium never blocks on a full pipe.
    let _ = tokio::io::copy(&mut stderr, &mut tokio::io::sink()).await;
}

/// Waits for `DevToolsActivePort` and a matching `/json/version`; the port and the browser's
/// WebSocket URL, or why not (exited, timed out).
async fn wait_ready(
    child: &mut Child,
    paths: &Paths,
    timeout: Duration,
) -> Result<(u16, String), String> {
    let deadline = Instant::now() + timeout;
    let port_file = paths.devtools_active_port();
    let mut last_probe = String::from("it wrote no DevToolsActivePort");
    loop {
        if let Ok(Some(status)) = child.try_wait() {
            return Err(format!("it exited at once ({status})"));
        }
        if let Ok(text) = tokio::fs::read_to_string(&port_file).await
            && let Some((port, path)) = probe::parse_devtools_active_port(&text)
        {
            match probe::json_version(port, Duration::from_secs(2)).await {
                Ok(version) if version.ws_url.ends_with(&path) => {
                    return Ok((port, version.ws_url));
                }
                Ok(version) => {
                    last_probe = format!(
                        "/json/version names {} but DevToolsActivePort {path}",
                        version.ws_url
                    );
                }
                Err(e) => last_probe = format!("/json/version: {e}"),
            }
        }
        if Instant::now() >= deadline {
            return Err(format!("not ready within {timeout:?} ({last_probe})"));
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// The last lines of `chromium.log` worth reading: D-Bus complaints (every headless
/// Chromium without a session bus makes them) left out, at most 8 lines of 300 chars.
pub(crate) async fn log_tail(paths: &Paths) -> String {
    let Ok(bytes) = tokio::fs::read(paths.log()).await else {
        return String::new();
    };
    let from = bytes.len().saturating_sub(16 * 1024);
    let text = String::from_utf8_lossy(&bytes[from..]);
    let lines: Vec<String> = text
        .lines()
        .map(str::trim_end)
        .filter(|line| !line.is_empty() && !line.contains("dbus"))
        .map(|line| line.chars().take(300).collect())
        .collect();
    lines[lines.len().saturating_sub(8)..].join("\n")
}

/// The arguments for the executable: the fixed ones Pincer needs, then the user's.
pub(crate) fn browser_args(headless: bool, no_sandbox: bool, extra: &[String]) -> Vec<OsString> {
    let mut args: Vec<OsString> = [
        "--no-first-run",
        "--no-default-browser-check",
        "--disable-background-networking",
        "--disable-sync",
        "--disable-default-apps",
        "--disable-component-update",
        "--disable-features=Translate,MediaRouter",
        "--disable-session-crashed-bubble",
        "--hide-crash-restore-bubble",
        "--password-store=basic",
        "--use-mock-keychain",
    ]
    .into_iter()
    .map(OsString::from)
    .collect();
    if headless {
        args.push("--headless=new".into());
    }
    if no_sandbox {
        args.push("--no-sandbox".into());
    }
    if cfg!(target_os = "linux") {
        // Containers give /dev/shm 64 MiB; Chromium's renderers crash on it.
        args.push("--disable-dev-shm-usage".into());
    }
    args.extend(extra.iter().map(OsString::from));
    args
}

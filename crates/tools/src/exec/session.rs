//! One exec session: a `sh -c <command>` child that leads its own process group, with
//! stdout and stderr merged into one pipe (so output keeps its arrival order), a piped
//! stdin for `process write`, and a supervisor task that owns the child. With `pty` the
//! child runs on a pseudo-terminal instead ([`super::pty`]). The supervisor
//! sanitises output into the session buffer, streams it to the foreground tool call,
//! enforces the timeout, carries out kill requests (SIGTERM to the group, SIGKILL after a
//! grace period) and reaps the child.
//!
//! When the shell exits, whatever it left behind in its group (`cmd &`) is killed: no
//! process outlives its session, nor its owner ([`super::orphans`]: a death signal on the
//! shell, a watchdog per group, a record of the group for the next gateway start). A process that leaves the group (`setsid`) escapes this;
//! that needs a cgroup or a sandbox: bwrap's PID namespace ([`super::sandboxed`]) dies
//! with bwrap, which is in the group.

use std::os::fd::OwnedFd;
use std::os::unix::process::ExitStatusExt;
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant, SystemTime};

use futures_util::FutureExt as _;
use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use pincer_agent::{ToolContext, ToolOutput};
use serde_json::json;
use tokio::io::AsyncReadExt;
use tokio::process::Child;
use tokio::sync::watch;
use tokio::time::sleep_until;
use tokio_util::sync::CancellationToken;

use super::orphans::{Watchdog, pgid_of, remove_record, set_up_child, write_record};
use super::output::{MAX_OUTPUT_BYTES, OutputBuffer, Sanitizer, TAIL_CHARS};
use super::pty::{self, Input, OutputStream, Spawned};

/// Time between SIGTERM and SIGKILL.
pub const KILL_GRACE: Duration = Duration::from_secs(2);
/// How long output is still read after the shell exited before the rest of the group is
/// killed (it holds the pipe open).
const DRAIN_AFTER_EXIT: Duration = Duration::from_millis(200);
/// How long to keep reading after that kill.
const DRAIN_AFTER_KILL: Duration = Duration::from_secs(1);

/// Where a session stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SessionStatus {
    Running,
    /// Exited with this code.
    Exited(i32),
    /// Ended by this signal (e.g. `SIGKILL`).
    Signaled(String),
    /// Could not be waited for.
    Failed(String),
}

impl SessionStatus {
    pub fn is_running(&self) -> bool {
        matches!(self, Self::Running)
    }

    /// `running`, `completed` (code 0) or `failed` (anything else), as in OpenClaw.
    pub fn label(&self) -> &'static str {
        match self {
            Self::Running => "running",
            Self::Exited(0) => "completed",
            _ => "failed",
        }
    }

    pub fn exit_code(&self) -> Option<i32> {
        match self {
            Self::Exited(code) => Some(*code),
            _ => None,
        }
    }

    pub fn signal(&self) -> Option<&str> {
        match self {
            Self::Signaled(sig) => Some(sig),
            _ => None,
        }
    }
}

/// Why a session was asked to stop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KillReason {
    Timeout,
    /// The agent run was aborted while the call waited.
    Aborted,
    /// `process kill`.
    Killed,
    /// `process remove`.
    Removed,
    Shutdown,
}

impl KillReason {
    /// SIGTERM first (a chance to clean up), or SIGKILL straight away.
    fn graceful(self) -> bool {
        matches!(self, Self::Timeout | Self::Aborted)
    }
}

/// What to start.
#[derive(Debug, Clone)]
pub struct SpawnSpec {
    pub id: String,
    pub scope: String,
    pub command: String,
    pub cwd: PathBuf,
    pub env: Vec<(String, String)>,
    pub timeout: Duration,
    pub notify_on_exit: bool,
    /// Run on a pseudo-terminal.
    pub pty: bool,
    /// Where live process groups are recorded for [`super::orphans::reap_orphans`].
    pub record_dir: Option<PathBuf>,
    /// Run inside this sandbox ([`super::sandboxed`]); `None`: with the user's rights.
    pub sandbox: Option<pincer_sandbox::SandboxPolicy>,
}

impl SpawnSpec {
    /// `sh -c <command>` in `cwd` with exactly `env`, killed when dropped: what both the
    /// piped and the pty spawn start from. In a sandbox, what runs is the sandbox's
    /// wrapper (bwrap, or `pincer sandbox-exec`), which then runs the shell; an
    /// unavailable sandbox is an error, never a fallback.
    pub(super) fn shell(&self) -> std::io::Result<tokio::process::Command> {
        let (program, args) = super::sandboxed::shell_command(self)?;
        let mut command = tokio::process::Command::new(program);
        command
            .args(args)
            .current_dir(&self.cwd)
            .env_clear()
            .envs(self.env.iter().map(|(k, v)| (k, v)))
            .kill_on_drop(true);
        Ok(command)
    }
}

/// Called by the supervisor once the session has ended.
pub type ExitHook = Box<dyn FnOnce(&Session) + Send>;

struct State {
    output: OutputBuffer,
    poll_cursor: usize,
    status: SessionStatus,
    ended_at: Option<Instant>,
    backgrounded: bool,
    notify_on_exit: bool,
    kill_reason: Option<KillReason>,
    foreground: Option<ToolContext>,
}

/// One running or finished command.
pub struct Session {
    pub id: String,
    pub scope: String,
    pub command: String,
    pub cwd: PathBuf,
    /// Pid of the shell, also the process group id.
    pub pid: u32,
    pub started_at: SystemTime,
    started: Instant,
    state: Mutex<State>,
    stdin: tokio::sync::Mutex<Option<Input>>,
    kill: CancellationToken,
    done: watch::Sender<bool>,
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session")
            .field("id", &self.id)
            .field("pid", &self.pid)
            .field("command", &self.command)
            .finish_non_exhaustive()
    }
}

/// A point-in-time view of a session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionSnapshot {
    pub id: String,
    pub pid: u32,
    pub command: String,
    pub cwd: PathBuf,
    pub started_at: SystemTime,
    pub runtime: Duration,
    pub status: SessionStatus,
    pub backgrounded: bool,
    pub tail: String,
}

/// Start `spec` and its supervisor (needs a tokio runtime).
pub fn spawn(spec: SpawnSpec, on_exit: ExitHook) -> std::io::Result<std::sync::Arc<Session>> {
    let Spawned {
        child,
        input,
        output,
    } = if spec.pty {
        pty::spawn(&spec)?
    } else {
        spawn_piped(&spec)?
    };
    let Some(pid) = child.id() else {
        return Err(std::io::Error::other(
            "the child exited before it had a pid",
        ));
    };
    // Without a watchdog the group could outlive a killed owner: do not run it at all.
    let watchdog = match Watchdog::spawn(pid) {
        Ok(watchdog) => watchdog,
        Err(e) => {
            let _ = killpg(pgid_of(pid), Signal::SIGKILL);
            return Err(e);
        }
    };
    let session = std::sync::Arc::new(Session {
        id: spec.id,
        scope: spec.scope,
        command: spec.command,
        cwd: spec.cwd,
        pid,
        started_at: SystemTime::now(),
        started: Instant::now(),
        state: Mutex::new(State {
            output: OutputBuffer::new(MAX_OUTPUT_BYTES),
            poll_cursor: 0,
            status: SessionStatus::Running,
            ended_at: None,
            backgrounded: false,
            notify_on_exit: spec.notify_on_exit,
            kill_reason: None,
            foreground: None,
        }),
        stdin: tokio::sync::Mutex::new(input),
        kill: CancellationToken::new(),
        done: watch::channel(false).0,
    });
    tokio::spawn(supervise(
        session.clone(),
        child,
        output,
        Guards {
            timeout: spec.timeout,
            watchdog,
            record_dir: spec.record_dir,
        },
        on_exit,
    ));
    Ok(session)
}

/// Start `sh -c <command>` in a new process group, stdout and stderr on one pipe.
fn spawn_piped(spec: &SpawnSpec) -> std::io::Result<Spawned> {
    let (reader, writer) = std::io::pipe()?;
    let writer_err = writer.try_clone()?;
    let mut command = spec.shell()?;
    command
        .stdin(Stdio::piped())
        .stdout(Stdio::from(writer))
        .stderr(Stdio::from(writer_err))
        .process_group(0);
    set_up_child(&mut command);
    let spawned = command.spawn();
    // The command holds our copies of the pipe's write end: close them, or EOF never comes.
    drop(command);
    let mut child = spawned?;
    let reader = tokio::net::unix::pipe::Receiver::from_owned_fd(OwnedFd::from(reader))?;
    Ok(Spawned {
        input: child.stdin.take().map(Input::Pipe),
        child,
        output: Box::new(reader),
    })
}

impl Session {
    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn pgid(&self) -> Pid {
        pgid_of(self.pid)
    }

    /// Send `signal` to the whole process group (errors such as "no such group" ignored).
    pub fn signal_group(&self, signal: Signal) {
        let _ = killpg(self.pgid(), signal);
    }

    pub fn status(&self) -> SessionStatus {
        self.state().status.clone()
    }

    pub fn is_backgrounded(&self) -> bool {
        self.state().backgrounded
    }

    pub fn kill_reason(&self) -> Option<KillReason> {
        self.state().kill_reason
    }

    pub fn runtime(&self) -> Duration {
        let state = self.state();
        state
            .ended_at
            .unwrap_or_else(Instant::now)
            .duration_since(self.started)
    }

    pub(crate) fn ended_at(&self) -> Option<Instant> {
        self.state().ended_at
    }

    pub fn snapshot(&self) -> SessionSnapshot {
        let state = self.state();
        SessionSnapshot {
            id: self.id.clone(),
            pid: self.pid,
            command: self.command.clone(),
            cwd: self.cwd.clone(),
            started_at: self.started_at,
            runtime: state
                .ended_at
                .unwrap_or_else(Instant::now)
                .duration_since(self.started),
            status: state.status.clone(),
            backgrounded: state.backgrounded,
            tail: state.output.tail(TAIL_CHARS).to_owned(),
        }
    }

    pub fn tail(&self, max_chars: usize) -> String {
        self.state().output.tail(max_chars).to_owned()
    }

    /// All kept output and how many bytes were dropped before it.
    pub fn output(&self) -> (String, usize) {
        let state = self.state();
        (state.output.text().to_owned(), state.output.dropped())
    }

    /// The tail, and move the poll cursor to the end: what the model was just shown is
    /// not repeated by the next poll (`log` still has everything).
    pub fn tail_and_mark_polled(&self, max_chars: usize) -> String {
        let mut state = self.state();
        state.poll_cursor = state.output.end();
        state.output.tail(max_chars).to_owned()
    }

    /// Output since the last poll (and bytes lost from it); moves the cursor.
    pub fn poll(&self) -> (String, usize, SessionStatus) {
        let mut state = self.state();
        let (text, lost) = state.output.since(state.poll_cursor);
        let text = text.to_owned();
        state.poll_cursor = state.output.end();
        (text, lost, state.status.clone())
    }

    /// Stream output to this call while it waits in the foreground.
    pub fn attach(&self, ctx: ToolContext) {
        let mut state = self.state();
        if state.status.is_running() {
            state.foreground = Some(ctx);
        }
    }

    /// Hand the session over to the registry. False when it has already ended.
    pub fn background(&self) -> bool {
        let mut state = self.state();
        state.foreground = None;
        if state.status.is_running() {
            state.backgrounded = true;
            true
        } else {
            false
        }
    }

    /// Whether the exit should be announced: backgrounded, notify on, not stopped on
    /// request (the agent that killed or removed it already knows).
    pub fn should_notify(&self) -> bool {
        let state = self.state();
        state.backgrounded
            && state.notify_on_exit
            && !state.status.is_running()
            && !matches!(
                state.kill_reason,
                Some(KillReason::Killed | KillReason::Removed | KillReason::Shutdown)
            )
    }

    /// Ask the supervisor to stop the group. The first reason wins.
    pub fn request_kill(&self, reason: KillReason) {
        {
            let mut state = self.state();
            if !state.status.is_running() {
                return;
            }
            state.kill_reason.get_or_insert(reason);
        }
        if !reason.graceful() {
            self.signal_group(Signal::SIGKILL);
        }
        self.kill.cancel();
    }

    /// Wait until the supervisor has reaped the child and recorded the status.
    pub async fn wait(&self) -> SessionStatus {
        let mut done = self.done.subscribe();
        let _ = done.wait_for(|d| *d).await;
        self.status()
    }

    /// Write to the command's stdin; `eof` closes it afterwards (on a pty: sends Ctrl-D).
    pub async fn write_stdin(&self, data: &str, eof: bool) -> Result<(), String> {
        let mut stdin = self.stdin.lock().await;
        let Some(input) = stdin.as_mut() else {
            return Err("stdin is already closed".into());
        };
        if let Err(e) = input.write(data.as_bytes(), eof).await {
            *stdin = None;
            return Err(format!("writing to stdin failed: {e}"));
        }
        if eof {
            *stdin = None;
        }
        Ok(())
    }

    fn append(&self, text: &str) {
        if text.is_empty() {
            return;
        }
        let update = {
            let mut state = self.state();
            state.output.push(text);
            state
                .foreground
                .clone()
                .map(|ctx| (ctx, state.output.tail(TAIL_CHARS).to_owned()))
        };
        if let Some((ctx, tail)) = update {
            let details = json!({
                "status": "running",
                "sessionId": self.id,
                "pid": self.pid,
                "cwd": self.cwd.display().to_string(),
                "tail": tail,
            });
            ctx.update(ToolOutput::text(tail).with_details(details));
        }
    }

    fn finish(&self, status: SessionStatus) {
        let mut state = self.state();
        state.status = status;
        state.ended_at = Some(Instant::now());
        state.foreground = None;
    }
}

/// Kills the group if the supervisor is dropped before it finished (runtime shutdown).
struct GroupGuard {
    pgid: Pid,
    armed: bool,
}

impl Drop for GroupGuard {
    fn drop(&mut self) {
        if self.armed {
            let _ = killpg(self.pgid, Signal::SIGKILL);
        }
    }
}

/// What keeps a session's group in bounds besides the supervisor itself.
struct Guards {
    timeout: Duration,
    /// Kills the group if this process dies.
    watchdog: Watchdog,
    /// Where the live group is recorded (for the reap at the next gateway start).
    record_dir: Option<PathBuf>,
}

async fn supervise(
    session: std::sync::Arc<Session>,
    mut child: Child,
    mut out: OutputStream,
    guards: Guards,
    on_exit: ExitHook,
) {
    let Guards {
        timeout,
        watchdog,
        record_dir,
    } = guards;
    let mut guard = GroupGuard {
        pgid: session.pgid(),
        armed: true,
    };
    let record = match &record_dir {
        Some(dir) => write_record(dir, session.pid).await,
        None => None,
    };
    let mut sanitizer = Sanitizer::default();
    let mut buf = vec![0u8; 8192];
    let far = tokio::time::Instant::now() + Duration::from_secs(86_400 * 365);
    // The timeout comes from a model: never let it overflow the clock.
    let deadline = tokio::time::Instant::now()
        .checked_add(timeout)
        .map_or(far, |d| d.min(far));
    let mut hard_kill: Option<tokio::time::Instant> = None;
    let mut drain_until: Option<tokio::time::Instant> = None;
    let mut drained_once = false;
    let mut exit: Option<std::io::Result<std::process::ExitStatus>> = None;
    let mut eof = false;
    let mut killing = false;
    while exit.is_none() || !eof {
        tokio::select! {
            // A read error ends the output like EOF (a pty's EIO already reads as EOF).
            read = out.read(&mut buf), if !eof => match read {
                Ok(0) | Err(_) => eof = true,
                Ok(n) => session.append(&sanitizer.push(&buf[..n])),
            },
            status = child.wait(), if exit.is_none() => {
                exit = Some(status);
                hard_kill = None;
                drain_until = Some(tokio::time::Instant::now() + DRAIN_AFTER_EXIT);
            }
            _ = sleep_until(drain_until.unwrap_or(far)), if drain_until.is_some() && !eof => {
                if drained_once {
                    // The timer may win the race against output that is already there
                    // (a starved machine): take what can be read without waiting.
                    while let Some(Ok(n)) = out.read(&mut buf).now_or_never() {
                        if n == 0 {
                            break;
                        }
                        session.append(&sanitizer.push(&buf[..n]));
                    }
                    eof = true;
                } else {
                    drained_once = true;
                    session.signal_group(Signal::SIGKILL);
                    drain_until = Some(tokio::time::Instant::now() + DRAIN_AFTER_KILL);
                }
            }
            _ = sleep_until(deadline), if !killing && exit.is_none() => {
                killing = true;
                session.request_kill(KillReason::Timeout);
                session.signal_group(Signal::SIGTERM);
                hard_kill = Some(tokio::time::Instant::now() + KILL_GRACE);
            }
            _ = session.kill.cancelled(), if !killing && exit.is_none() => {
                killing = true;
                session.signal_group(Signal::SIGTERM);
                hard_kill = Some(tokio::time::Instant::now() + KILL_GRACE);
            }
            _ = sleep_until(hard_kill.unwrap_or(far)), if hard_kill.is_some() => {
                session.signal_group(Signal::SIGKILL);
                hard_kill = None;
            }
        }
    }
    // Anything the shell left in its group goes now.
    session.signal_group(Signal::SIGKILL);
    guard.armed = false;
    session.append(&sanitizer.finish());
    let status = match exit {
        Some(Ok(status)) => match (status.code(), status.signal()) {
            (Some(code), _) => SessionStatus::Exited(code),
            (None, Some(sig)) => SessionStatus::Signaled(signal_name(sig)),
            (None, None) => SessionStatus::Failed("unknown exit status".into()),
        },
        Some(Err(e)) => SessionStatus::Failed(e.to_string()),
        None => SessionStatus::Failed("never exited".into()),
    };
    session.finish(status);
    *session.stdin.lock().await = None;
    session.done.send_replace(true);
    on_exit(&session);
    // The group is gone: the watchdog may go, and so may the record.
    watchdog.release().await;
    if let Some(record) = record {
        remove_record(&record).await;
    }
}

/// `SIGKILL` for 9.
pub fn signal_name(signo: i32) -> String {
    Signal::try_from(signo)
        .map(|s| s.as_str().to_owned())
        .unwrap_or_else(|_| format!("signal {signo}"))
}

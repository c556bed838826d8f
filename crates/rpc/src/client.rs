//! [`RpcClient`]: one RPC worker process (`pincer rpc`, `pi --mode rpc`, or anything speaking
//! pi's protocol) driven over its stdin/stdout, the way pi-gateway's `rpc-client.ts` does:
//! requests with ids `req_N` resolved by their response, events fanned out to subscribers,
//! `abort` written without waiting, SIGTERM then SIGKILL after 2 s to stop.
//!
//! The worker is its own process group, so stopping it also ends the tools it started; the
//! client never leaves it running: dropping the client kills it.

use std::path::PathBuf;
use std::process::Stdio;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use serde_json::{Map, Value};
use tokio::sync::{broadcast, mpsc, oneshot, watch};

use super::error::{ExitInfo, RpcError};
use super::protocol::{RpcCommand, RpcRequest, json_line};
use super::ui::ExtensionUiResponse;
use super::worker_io::{
    Control, Reply, RpcStats, Shared, TERM_GRACE, read_stderr, read_stdout, wait_child, write_stdin,
};

/// Longest command line the client writes (pi-gateway's gateway rejects such inputs too;
/// a bigger one is almost surely a bug or an abuse, and would stall the worker's parser).
pub const MAX_COMMAND_BYTES: usize = 1024 * 1024;
/// pi-gateway's request timeout.
pub const DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_secs(30);
/// Events buffered per subscriber before the slowest one starts losing the oldest.
const EVENT_CAPACITY: usize = 4096;

/// What to run.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct WorkerSpec {
    pub program: PathBuf,
    pub args: Vec<String>,
    /// Added to (or overriding) the gateway's own environment.
    pub env: Vec<(String, String)>,
    pub cwd: Option<PathBuf>,
}

impl WorkerSpec {
    pub fn new(program: impl Into<PathBuf>) -> Self {
        Self {
            program: program.into(),
            ..Self::default()
        }
    }

    pub fn arg(mut self, arg: impl Into<String>) -> Self {
        self.args.push(arg.into());
        self
    }

    pub fn env(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.env.push((key.into(), value.into()));
        self
    }
}

/// A command to send: a typed one, or a raw JSON object with a string `type` (extension
/// commands, or commands of a newer pi than this crate knows).
#[derive(Debug, Clone, PartialEq)]
pub enum OutgoingCommand {
    Typed(RpcCommand),
    Raw(Value),
}

impl From<RpcCommand> for OutgoingCommand {
    fn from(command: RpcCommand) -> Self {
        Self::Typed(command)
    }
}

impl From<Value> for OutgoingCommand {
    fn from(value: Value) -> Self {
        Self::Raw(value)
    }
}

impl OutgoingCommand {
    /// The line to write (with its `\n`) and the command type.
    fn encode(self, id: &str) -> Result<(String, String), RpcError> {
        let (mut line, command) = match self {
            Self::Typed(command) => {
                let ty = command.command_type().to_string();
                let request = RpcRequest {
                    id: Some(Value::String(id.to_string())),
                    command,
                };
                (json_line(&request), ty)
            }
            Self::Raw(Value::Object(map)) => {
                let Some(Value::String(ty)) = map.get("type") else {
                    return Err(RpcError::Invalid {
                        message: "no string \"type\"".into(),
                    });
                };
                let ty = ty.clone();
                let mut with_id = Map::new();
                with_id.insert("id".into(), Value::String(id.to_string()));
                with_id.extend(map.into_iter().filter(|(k, _)| k != "id"));
                (json_line(&with_id), ty)
            }
            Self::Raw(_) => {
                return Err(RpcError::Invalid {
                    message: "not a JSON object".into(),
                });
            }
        };
        if line.len() > MAX_COMMAND_BYTES {
            return Err(RpcError::TooLarge {
                len: line.len(),
                max: MAX_COMMAND_BYTES,
            });
        }
        line.push('\n');
        Ok((line, command))
    }
}

/// Answers a worker's dialogs (see [`RpcClient::ui_answerer`]).
#[derive(Clone, Debug)]
pub struct UiAnswerer {
    tx: Option<mpsc::WeakUnboundedSender<String>>,
}

impl UiAnswerer {
    pub fn answer(&self, response: &ExtensionUiResponse) -> Result<(), RpcError> {
        let line = ui_line(response)?;
        match self
            .tx
            .as_ref()
            .and_then(mpsc::WeakUnboundedSender::upgrade)
        {
            Some(tx) if tx.send(line).is_ok() => Ok(()),
            _ => Err(RpcError::Closed),
        }
    }
}

/// The line of a dialog answer, refused over [`MAX_COMMAND_BYTES`].
fn ui_line(response: &ExtensionUiResponse) -> Result<String, RpcError> {
    let mut line = json_line(response);
    if line.len() > MAX_COMMAND_BYTES {
        return Err(RpcError::TooLarge {
            len: line.len(),
            max: MAX_COMMAND_BYTES,
        });
    }
    line.push('\n');
    Ok(line)
}

/// A running worker. Created inside a tokio runtime (spawn fails outside one).
pub struct RpcClient {
    pub(super) shared: Arc<Shared>,
    /// `None` once [`RpcClient::stop`] closed stdin.
    writer: Mutex<Option<mpsc::UnboundedSender<String>>>,
    control: mpsc::UnboundedSender<Control>,
    next_id: AtomicU64,
}

/// Removes a request from the pending table however its future ends (answered, timed out,
/// or dropped by the caller).
struct PendingGuard<'a> {
    shared: &'a Shared,
    id: String,
}

impl Drop for PendingGuard<'_> {
    fn drop(&mut self) {
        self.shared.forget(&self.id);
    }
}

impl RpcClient {
    /// Starts the worker with stdin, stdout and stderr piped, in its own process group.
    pub fn spawn(spec: WorkerSpec) -> Result<RpcClient, RpcError> {
        let mut cmd = tokio::process::Command::new(&spec.program);
        cmd.args(&spec.args)
            .envs(spec.env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .process_group(0);
        if let Some(cwd) = &spec.cwd {
            cmd.current_dir(cwd);
        }
        let spawn_error = |source| RpcError::Spawn {
            program: spec.program.display().to_string(),
            source,
        };
        // The client's tasks (and tokio's child reaper) need a runtime: refuse rather than
        // panic without one.
        tokio::runtime::Handle::try_current()
            .map_err(|e| spawn_error(std::io::Error::other(e.to_string())))?;
        let mut child = cmd.spawn().map_err(spawn_error)?;
        let missing = || spawn_error(std::io::Error::other("a standard stream was not piped"));
        let (Some(stdin), Some(stdout), Some(stderr)) =
            (child.stdin.take(), child.stdout.take(), child.stderr.take())
        else {
            return Err(missing());
        };
        let pid = child.id();
        tracing::debug!(pid, program = %spec.program.display(), "rpc worker started");

        let shared = Arc::new(Shared::new(pid, EVENT_CAPACITY));
        let (line_tx, line_rx) = mpsc::unbounded_channel();
        let (control_tx, control_rx) = mpsc::unbounded_channel();
        let (exited_tx, exited_rx) = watch::channel(None);
        tokio::spawn(write_stdin(pid, stdin, line_rx));
        let stderr_done = tokio::spawn(read_stderr(shared.clone(), stderr));
        tokio::spawn(read_stdout(
            shared.clone(),
            stdout,
            exited_rx,
            stderr_done,
            control_tx.clone(),
        ));
        tokio::spawn(wait_child(shared.clone(), child, control_rx, exited_tx));
        Ok(RpcClient {
            shared,
            writer: Mutex::new(Some(line_tx)),
            control: control_tx,
            next_id: AtomicU64::new(1),
        })
    }

    /// The worker's process id (also its process group id).
    pub fn pid(&self) -> Option<u32> {
        self.shared.pid
    }

    /// False once the worker has exited or closed its stdout.
    pub fn is_alive(&self) -> bool {
        self.shared.death.borrow().is_none()
    }

    /// How the worker ended, once it has.
    pub fn exit_info(&self) -> Option<ExitInfo> {
        self.shared.exit_info()
    }

    /// Resolves when the worker is gone (immediately if it already is).
    pub async fn exited(&self) -> ExitInfo {
        let mut death = self.shared.death.subscribe();
        match death.wait_for(Option::is_some).await {
            Ok(info) => info.clone().unwrap_or_default(),
            // The sender lives in `shared`, which outlives this borrow.
            Err(_) => ExitInfo::default(),
        }
    }

    /// Counters of what the worker wrote.
    pub fn stats(&self) -> RpcStats {
        self.shared.stats()
    }

    /// Every event (non-response line) from now on. A subscriber that falls more than 4096
    /// events behind loses the oldest (`RecvError::Lagged`); reading stdout never waits.
    pub fn subscribe(&self) -> broadcast::Receiver<Arc<Value>> {
        self.shared.events.subscribe()
    }

    fn next_request_id(&self) -> (u64, String) {
        let n = self.next_id.fetch_add(1, Ordering::Relaxed);
        (n, format!("req_{n}"))
    }

    fn write_line(&self, line: String) -> Result<(), RpcError> {
        let writer = self.writer.lock().unwrap_or_else(PoisonError::into_inner);
        match writer.as_ref() {
            Some(tx) if tx.send(line).is_ok() => Ok(()),
            _ => Err(self.exit_info().map_or(RpcError::Closed, |i| i.to_error())),
        }
    }

    /// Sends a command and waits up to `timeout` for its response's `data` (`Null` when the
    /// response has none). A timeout fails only this request; its late answer is dropped.
    pub async fn request(
        &self,
        command: impl Into<OutgoingCommand>,
        timeout: Duration,
    ) -> Result<Value, RpcError> {
        let (seq, id) = self.next_request_id();
        let (line, command) = command.into().encode(&id)?;
        let (tx, rx) = oneshot::channel::<Reply>();
        self.shared.register(id.clone(), seq, command.clone(), tx)?;
        let _guard = PendingGuard {
            shared: &self.shared,
            id,
        };
        self.write_line(line)?;
        match tokio::time::timeout(timeout, rx).await {
            Ok(Ok(reply)) => reply,
            // Only `mark_dead` drops a sender without sending, after setting the exit.
            Ok(Err(_)) => Err(self.exit_info().unwrap_or_default().to_error()),
            Err(_) => {
                self.shared
                    .counters
                    .timeouts
                    .fetch_add(1, Ordering::Relaxed);
                tracing::warn!(pid = self.pid(), %command, ?timeout, "rpc request timed out");
                Err(RpcError::Timeout {
                    command,
                    after: timeout,
                })
            }
        }
    }

    /// Writes a command without waiting for its answer (pi-gateway sends `abort` this way:
    /// the turn's own events say when it stopped).
    pub fn send_no_wait(&self, command: impl Into<OutgoingCommand>) -> Result<(), RpcError> {
        let (_, id) = self.next_request_id();
        let (line, _) = command.into().encode(&id)?;
        self.write_line(line)
    }

    /// Answers an `extension_ui_request` dialog.
    pub fn answer_ui(&self, response: &ExtensionUiResponse) -> Result<(), RpcError> {
        self.write_line(ui_line(response)?)
    }

    /// A handle that answers this worker's dialogs from another task without keeping the
    /// worker (or its stdin) alive: once the client stops, answering fails with `Closed`.
    pub fn ui_answerer(&self) -> UiAnswerer {
        let writer = self.writer.lock().unwrap_or_else(PoisonError::into_inner);
        UiAnswerer {
            tx: writer.as_ref().map(mpsc::UnboundedSender::downgrade),
        }
    }

    /// Closes stdin, sends SIGTERM to the worker's group, SIGKILL after 2 s, and returns
    /// once the process is reaped and every pending request has failed.
    pub async fn stop(&self) -> ExitInfo {
        self.writer
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        let _ = self.control.send(Control::Terminate);
        // Bounded by the waiter: TERM_GRACE, then SIGKILL, then the stdout reader's drain.
        match tokio::time::timeout(TERM_GRACE * 5, self.exited()).await {
            Ok(info) => info,
            Err(_) => {
                tracing::error!(pid = self.pid(), "rpc worker did not go away after SIGKILL");
                self.exit_info().unwrap_or_default()
            }
        }
    }
}

impl Drop for RpcClient {
    fn drop(&mut self) {
        if self.is_alive() {
            // The waiter kills the group; `kill_on_drop` covers a runtime already gone.
            let _ = self.control.send(Control::Kill);
        }
    }
}

impl std::fmt::Debug for RpcClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RpcClient")
            .field("pid", &self.pid())
            .field("alive", &self.is_alive())
            .finish()
    }
}

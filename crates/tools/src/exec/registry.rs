//! The process registry: every exec session of the daemon, each tagged with the scope (agent
//! id) that started it. Lookups take a scope, so one agent never sees or touches another's
//! sessions. Backgrounded sessions that exit are announced through an optional callback
//! (the gateway turns the [`ExecExitNotice`] into a system event and a heartbeat wake).
//! Finished sessions are kept for [`FINISHED_TTL`] (at most [`MAX_FINISHED`]) so the agent
//! can still `poll`/`log` them.
//!
//! No orphans: [`ProcessRegistry::shutdown`] kills every process group and waits for the
//! supervisors to reap; dropping the last handle kills whatever still runs.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, PoisonError, RwLock, Weak};
use std::time::{Duration, Instant};

use nix::sys::signal::Signal;

use super::output::{NOTIFY_TAIL_CHARS, one_line, tail_chars};
use super::session::{self, ExitHook, KillReason, Session, SessionSnapshot, SpawnSpec};

/// How long a finished session stays listed.
pub const FINISHED_TTL: Duration = Duration::from_secs(30 * 60);
/// Most finished sessions kept (oldest forgotten first).
pub const MAX_FINISHED: usize = 64;
/// How long shutdown waits for supervisors to reap.
const SHUTDOWN_WAIT: Duration = Duration::from_secs(5);

/// A backgrounded session ended (OpenClaw's `maybeNotifyOnExit`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExecExitNotice {
    /// The scope (agent id) that started the session.
    pub scope: String,
    pub session_id: String,
    /// `completed` (exit code 0) or `failed`.
    pub status: String,
    pub exit_code: Option<i32>,
    pub signal: Option<String>,
    /// `Exec completed (<id8>, code 0) :: <tail>`, ready for a system event.
    pub text: String,
}

/// Receives exit notices.
pub type ExitCallback = Arc<dyn Fn(ExecExitNotice) + Send + Sync>;

/// A session id nobody can see, or an ambiguous prefix.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LookupError {
    #[error(
        "no session {0:?} in this agent's process list; call process with action \"list\" to see session ids"
    )]
    Unknown(String),
    #[error("session id prefix {0:?} matches several sessions; give more characters")]
    Ambiguous(String),
}

/// Why a session could not start.
#[derive(Debug, thiserror::Error)]
pub enum SpawnError {
    #[error("the process registry is shut down")]
    ShutDown,
    #[error("could not start the command: {0}")]
    Io(#[from] std::io::Error),
}

struct Inner {
    sessions: Mutex<HashMap<String, Arc<Session>>>,
    on_exit: RwLock<Option<ExitCallback>>,
    notify_on_exit: AtomicBool,
    closed: AtomicBool,
    record_dir: OnceLock<PathBuf>,
}

impl Drop for Inner {
    fn drop(&mut self) {
        let sessions = self
            .sessions
            .get_mut()
            .unwrap_or_else(PoisonError::into_inner);
        for session in sessions.values() {
            if session.status().is_running() {
                session.signal_group(Signal::SIGKILL);
            }
        }
    }
}

/// All exec sessions of the daemon; cheap to clone (shared).
#[derive(Clone)]
pub struct ProcessRegistry {
    inner: Arc<Inner>,
}

impl Default for ProcessRegistry {
    fn default() -> Self {
        Self::new()
    }
}

impl std::fmt::Debug for ProcessRegistry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProcessRegistry")
            .field("sessions", &self.sessions().len())
            .finish_non_exhaustive()
    }
}

impl ProcessRegistry {
    pub fn new() -> Self {
        Self {
            inner: Arc::new(Inner {
                sessions: Mutex::new(HashMap::new()),
                on_exit: RwLock::new(None),
                notify_on_exit: AtomicBool::new(true),
                closed: AtomicBool::new(false),
                record_dir: OnceLock::new(),
            }),
        }
    }

    /// Builder form of [`set_exit_callback`](Self::set_exit_callback).
    pub fn with_exit_callback(self, callback: ExitCallback) -> Self {
        self.set_exit_callback(callback);
        self
    }

    /// Where exit notices of backgrounded sessions go.
    pub fn set_exit_callback(&self, callback: ExitCallback) {
        *self
            .inner
            .on_exit
            .write()
            .unwrap_or_else(PoisonError::into_inner) = Some(callback);
    }

    /// Record each live process group in `dir`, so that a later start can kill the groups
    /// of an owner that died without cleaning up ([`super::orphans::reap_orphans`]). Set
    /// once, at start-up: a later call is ignored (with a warning), since the records
    /// already written live in the first directory.
    pub fn set_record_dir(&self, dir: PathBuf) {
        if let Err(dir) = self.inner.record_dir.set(dir) {
            tracing::warn!(dir = %dir.display(), "exec record directory already set; keeping the first");
        }
    }

    /// Whether new sessions announce their exit when neither the call nor the agent's
    /// tool says (default on).
    pub fn set_notify_on_exit(&self, notify: bool) {
        self.inner.notify_on_exit.store(notify, Ordering::Relaxed);
    }

    /// The default [`set_notify_on_exit`](Self::set_notify_on_exit) set.
    pub fn notify_on_exit(&self) -> bool {
        self.inner.notify_on_exit.load(Ordering::Relaxed)
    }

    fn sessions(&self) -> MutexGuard<'_, HashMap<String, Arc<Session>>> {
        self.inner
            .sessions
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// The sessions `scope` can see, oldest first.
    pub fn list(&self, scope: &str) -> Vec<SessionSnapshot> {
        let mut list: Vec<SessionSnapshot> =
            self.scoped(scope).iter().map(|s| s.snapshot()).collect();
        list.sort_by_key(|s| s.started_at);
        list
    }

    /// How many sessions are still running (all scopes).
    pub fn running(&self) -> usize {
        self.sessions()
            .values()
            .filter(|s| s.status().is_running())
            .count()
    }

    pub(crate) fn scoped(&self, scope: &str) -> Vec<Arc<Session>> {
        self.sessions()
            .values()
            .filter(|s| s.scope == scope)
            .cloned()
            .collect()
    }

    /// A session of `scope` by full id or unique prefix (at least 4 characters).
    pub(crate) fn get(&self, scope: &str, id: &str) -> Result<Arc<Session>, LookupError> {
        let id = id.trim();
        let sessions = self.sessions();
        if let Some(s) = sessions.get(id).filter(|s| s.scope == scope) {
            return Ok(s.clone());
        }
        let mut matches = sessions
            .values()
            .filter(|s| s.scope == scope && id.len() >= 4 && s.id.starts_with(id));
        match (matches.next(), matches.next()) {
            (Some(s), None) => Ok(s.clone()),
            (Some(_), Some(_)) => Err(LookupError::Ambiguous(id.to_owned())),
            _ => Err(LookupError::Unknown(id.to_owned())),
        }
    }

    pub(crate) fn forget(&self, id: &str) {
        self.sessions().remove(id);
    }

    /// Start a session (see [`session::spawn`]) and register it.
    pub(crate) fn spawn(&self, mut spec: SpawnSpec) -> Result<Arc<Session>, SpawnError> {
        if self.inner.closed.load(Ordering::SeqCst) {
            return Err(SpawnError::ShutDown);
        }
        self.prune();
        spec.id = self.new_id();
        spec.record_dir = self.inner.record_dir.get().cloned();
        let weak = Arc::downgrade(&self.inner);
        let hook: ExitHook = Box::new(move |s: &Session| notify(&weak, s));
        let session = session::spawn(spec, hook)?;
        self.sessions().insert(session.id.clone(), session.clone());
        Ok(session)
    }

    /// Kill every process group, wait for the reaping, forget all sessions, refuse new ones.
    pub async fn shutdown(&self) {
        self.inner.closed.store(true, Ordering::SeqCst);
        let sessions: Vec<Arc<Session>> = self.sessions().drain().map(|(_, s)| s).collect();
        for session in &sessions {
            session.request_kill(KillReason::Shutdown);
        }
        let all = futures_util::future::join_all(sessions.iter().map(|s| s.wait()));
        let _ = tokio::time::timeout(SHUTDOWN_WAIT, all).await;
    }

    /// 16 hex digits (pincer-base's generator), unpredictable and unique within the daemon.
    fn new_id(&self) -> String {
        loop {
            let id = pincer_base::id::hex_id16();
            if !self.sessions().contains_key(&id) {
                return id;
            }
        }
    }

    /// Forget finished sessions past their TTL, and the oldest beyond the cap.
    fn prune(&self) {
        let mut sessions = self.sessions();
        let now = Instant::now();
        sessions.retain(|_, s| {
            s.ended_at()
                .is_none_or(|ended| now.duration_since(ended) < FINISHED_TTL)
        });
        let mut finished: Vec<(Instant, String)> = sessions
            .values()
            .filter_map(|s| s.ended_at().map(|t| (t, s.id.clone())))
            .collect();
        if finished.len() > MAX_FINISHED {
            finished.sort();
            for (_, id) in finished.iter().take(finished.len() - MAX_FINISHED) {
                sessions.remove(id);
            }
        }
    }
}

/// The exit notice text: `Exec completed (<id8>, code 0) :: <tail>`.
pub fn notice_text(session: &Session) -> Option<ExecExitNotice> {
    let status = session.status();
    if status.is_running() {
        return None;
    }
    let id8: String = session.id.chars().take(8).collect();
    let label = match (&status.exit_code(), status.signal()) {
        (_, Some(sig)) => format!("signal {sig}"),
        (Some(code), _) => format!("code {code}"),
        (None, None) => "code 1".to_owned(),
    };
    let output = one_line(tail_chars(
        &session.tail(NOTIFY_TAIL_CHARS * 4),
        NOTIFY_TAIL_CHARS,
    ));
    let output = tail_chars(&output, NOTIFY_TAIL_CHARS).to_owned();
    let verb = status.label();
    let text = if output.is_empty() {
        format!("Exec {verb} ({id8}, {label})")
    } else {
        format!("Exec {verb} ({id8}, {label}) :: {output}")
    };
    Some(ExecExitNotice {
        scope: session.scope.clone(),
        session_id: session.id.clone(),
        status: verb.to_owned(),
        exit_code: status.exit_code(),
        signal: status.signal().map(str::to_owned),
        text,
    })
}

fn notify(registry: &Weak<Inner>, session: &Session) {
    if !session.should_notify() {
        return;
    }
    let Some(inner) = registry.upgrade() else {
        return;
    };
    let callback = inner
        .on_exit
        .read()
        .unwrap_or_else(PoisonError::into_inner)
        .clone();
    if let (Some(callback), Some(notice)) = (callback, notice_text(session)) {
        callback(notice);
    }
}

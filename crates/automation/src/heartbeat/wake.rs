//! [`HeartbeatWake`]: one agent's heartbeat clock — the `every` timer and the
//! `request_now(reason)` coalescer — calling the gateway's run callback one run at a time.
//! It is OpenClaw's `heartbeat-wake.ts` (coalescing, busy retry) joined with the scheduling
//! half of `startHeartbeatRunner` in `heartbeat-runner.ts` (per-agent `nextDueMs`).
//!
//! The rules, as OpenClaw has them:
//! - **Coalescing.** A request schedules a run [`COALESCE_WINDOW`] (250 ms) out unless one
//!   is already scheduled sooner, so requests within 250 ms of the first become one run.
//!   Their reasons merge by priority (exec/manual/hook > other > interval > retry; newest
//!   wins a tie) and the run gets the survivor.
//! - **One at a time.** A request arriving during a run is kept and served right after it,
//!   as one more run however many arrived.
//! - **Busy.** A run that reports [`RunOutcome::Busy`] (the session's lane has work) is
//!   retried with the same reason [`BUSY_RETRY`] (1 s) later; that retry timer is a hard
//!   minimum which new requests do not cut short. A panicking run is retried the same way.
//! - **Timer runs and the interval floor.** The timer fires `every` after the last run of
//!   *any* kind: every completed run, requested or timed (and a skip other than
//!   `"disabled"`), moves the next timer run to `now + every`. So timer runs are never
//!   closer than `every` to any run, and a requested run postpones the next timer run
//!   instead of adding to it. Requested runs are not held to the interval: each one that
//!   survives coalescing runs (an exec exit should be relayed now, not in 30 min). What keeps
//!   a burst of exec exits from flooding the model is the coalescing plus one-at-a-time: any
//!   number of exits within 250 ms, or during a run, cost one run.
//! - **Off.** `every` = 0 turns the heartbeat off: no timer, and requests end as
//!   `Skipped("disabled")` without calling the runner (OpenClaw's runner skips them too;
//!   pending events then wait for the session's next turn).
//!
//! Sleeping uses tokio time (tests pause it); the injected [`Clock`] only stamps the wall
//! times reported in [`WakeStatus`].

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::reason::{ReasonKind, normalize_reason};
use super::wake_driver::Driver;
use crate::system_events::Clock;

/// Requests this close together make one run (OpenClaw's `DEFAULT_COALESCE_MS`).
pub const COALESCE_WINDOW: Duration = Duration::from_millis(250);
/// How long a busy (or panicked) run waits before its retry (`DEFAULT_RETRY_MS`).
pub const BUSY_RETRY: Duration = Duration::from_secs(1);

/// What the runner is asked to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WakeRequest {
    /// Why: `interval`, `exec:<id>:exit`, `cron:<jobId>`, `hook:wake`, `manual`, …
    pub reason: String,
}

impl WakeRequest {
    pub fn kind(&self) -> ReasonKind {
        ReasonKind::of(&self.reason)
    }
}

/// How a run went, as the runner reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RunOutcome {
    /// The model was called (whether or not anything was delivered).
    Ran,
    /// Nothing to do: `quiet-hours`, `empty-heartbeat-file`, `no-idle-runner`…
    /// `"disabled"` leaves the schedule alone; any other reason counts as a run.
    Skipped(String),
    /// The session's lane has work: retried in [`BUSY_RETRY`].
    Busy,
    /// The run failed (logged by the runner); counts as a run, not retried.
    Failed(String),
}

/// The boxed future a runner returns.
pub type RunFuture = Pin<Box<dyn Future<Output = RunOutcome> + Send + 'static>>;

/// The gateway's heartbeat run for one agent. Any `Fn(WakeRequest) -> impl Future` works.
pub trait HeartbeatRunner: Send + Sync + 'static {
    fn run(&self, request: WakeRequest) -> RunFuture;
}

impl<F, Fut> HeartbeatRunner for F
where
    F: Fn(WakeRequest) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = RunOutcome> + Send + 'static,
{
    fn run(&self, request: WakeRequest) -> RunFuture {
        Box::pin(self(request))
    }
}

/// A snapshot for status displays.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct WakeStatus {
    /// The timer's period; 0 = off.
    pub every_ms: u64,
    /// A run is in progress.
    pub running: bool,
    /// The reason the next run will get, if one is waiting.
    pub pending_reason: Option<String>,
    /// How many times the runner was called.
    pub runs: u64,
    /// Wall time of the last run that counted (see the module doc).
    pub last_run_at_ms: Option<i64>,
    pub last_reason: Option<String>,
    pub last_outcome: Option<RunOutcome>,
    /// Wall time the timer fires next, while it is set.
    pub next_due_at_ms: Option<i64>,
    /// How many times a run was asked for ([`HeartbeatWake::request_now`]), and the last
    /// reason given, counted as the request is made (before coalescing).
    pub requests: u64,
    pub last_request: Option<String>,
}

/// What a handle tells the driver.
pub(super) enum Command {
    Request(String),
    SetEvery(Duration),
}

struct Inner {
    tx: mpsc::UnboundedSender<Command>,
    status: Arc<Mutex<WakeStatus>>,
    stop: CancellationToken,
}

impl Drop for Inner {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

/// Handle to one agent's heartbeat clock. Clones share it; it stops when the last clone
/// goes or [`Self::stop`] is called.
#[derive(Clone)]
pub struct HeartbeatWake {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for HeartbeatWake {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HeartbeatWake")
            .field("status", &self.status())
            .finish_non_exhaustive()
    }
}

impl HeartbeatWake {
    /// Starts the clock on the current tokio runtime: the first timer run comes `every`
    /// from now (0 = off); `runner` is called for each run.
    pub fn spawn(every: Duration, clock: Arc<dyn Clock>, runner: impl HeartbeatRunner) -> Self {
        let (tx, rx) = mpsc::unbounded_channel();
        let status = Arc::new(Mutex::new(WakeStatus::default()));
        let stop = CancellationToken::new();
        let every = (!every.is_zero()).then_some(every);
        let driver = Driver::new(Arc::new(runner), clock, status.clone(), stop.clone(), every);
        tokio::spawn(driver.run(rx));
        Self {
            inner: Arc::new(Inner { tx, status, stop }),
        }
    }

    /// Asks for a run soon (see the module doc for coalescing); `reason` blank =
    /// `requested`. A no-op once stopped.
    pub fn request_now(&self, reason: &str) {
        let reason = normalize_reason(reason);
        {
            let mut status = lock(&self.inner.status);
            status.requests += 1;
            status.last_request = Some(reason.clone());
        }
        // A closed channel means the clock stopped; nothing to wake.
        let _ = self.inner.tx.send(Command::Request(reason));
    }

    /// Changes the period (config reload): the next timer run is `every` after the last
    /// run, or from now if there was none; 0 turns the heartbeat off.
    pub fn set_every(&self, every: Duration) {
        let _ = self.inner.tx.send(Command::SetEvery(every));
    }

    pub fn status(&self) -> WakeStatus {
        lock(&self.inner.status).clone()
    }

    /// Stops the clock; a run in progress is abandoned.
    pub fn stop(&self) {
        self.inner.stop.cancel();
    }
}

pub(super) fn lock(status: &Mutex<WakeStatus>) -> MutexGuard<'_, WakeStatus> {
    // Each update is a plain field write, so a poisoned lock still holds a usable status.
    status.lock().unwrap_or_else(|e| e.into_inner())
}

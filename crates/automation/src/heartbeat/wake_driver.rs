//! The task behind a [`super::HeartbeatWake`]: it owns the pending reason, the wake timer
//! (coalesce or retry), the interval timer and the last run, and calls the runner. The
//! rules it implements are documented on [`super::wake`]; comments here say how.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::mpsc;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::reason::{REASON_INTERVAL, ReasonKind};
use super::wake::{
    BUSY_RETRY, COALESCE_WINDOW, Command, HeartbeatRunner, RunOutcome, WakeRequest, WakeStatus,
    lock,
};
use crate::system_events::Clock;

/// The skip reason that leaves the schedule alone (OpenClaw's `disabled`).
const DISABLED: &str = "disabled";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum TimerKind {
    Normal,
    /// The busy-retry cooldown: not cut short by later requests.
    Retry,
}

#[derive(Debug, Clone, Copy)]
struct WakeTimer {
    at: Instant,
    kind: TimerKind,
}

struct Pending {
    reason: String,
    priority: u8,
}

pub(super) struct Driver {
    runner: Arc<dyn HeartbeatRunner>,
    clock: Arc<dyn Clock>,
    status: Arc<Mutex<WakeStatus>>,
    stop: CancellationToken,
    every: Option<Duration>,
    pending: Option<Pending>,
    wake: Option<WakeTimer>,
    /// When the timer run is due; armed unless it fired and its run has not finished.
    next_due: Option<Instant>,
    due_armed: bool,
    last_run: Option<Instant>,
    rx_open: bool,
}

impl Driver {
    pub(super) fn new(
        runner: Arc<dyn HeartbeatRunner>,
        clock: Arc<dyn Clock>,
        status: Arc<Mutex<WakeStatus>>,
        stop: CancellationToken,
        every: Option<Duration>,
    ) -> Self {
        let driver = Self {
            runner,
            clock,
            status,
            stop,
            every,
            pending: None,
            wake: None,
            // OpenClaw does not run at start-up: the first tick is one period away.
            next_due: every.map(|e| Instant::now() + e),
            due_armed: every.is_some(),
            last_run: None,
            rx_open: true,
        };
        driver.publish();
        driver
    }

    pub(super) async fn run(mut self, mut rx: mpsc::UnboundedReceiver<Command>) {
        loop {
            let wake_at = self.wake.map(|w| w.at);
            let due_at = self.next_due.filter(|_| self.due_armed);
            tokio::select! {
                biased;
                () = self.stop.cancelled() => break,
                cmd = rx.recv(), if self.rx_open => match cmd {
                    Some(cmd) => self.on_command(cmd),
                    None => self.rx_open = false,
                },
                () = sleep_until(wake_at) => self.fire(&mut rx).await,
                () = sleep_until(due_at) => {
                    // The tick goes through the wake path like any request, with no
                    // coalescing delay (OpenClaw: `requestHeartbeatNow({reason: "interval",
                    // coalesceMs: 0})`), and stays disarmed until its run settles.
                    self.due_armed = false;
                    self.request(REASON_INTERVAL.to_owned(), Duration::ZERO);
                }
            }
            self.publish();
        }
    }

    fn on_command(&mut self, cmd: Command) {
        match cmd {
            Command::Request(reason) => self.request(reason, COALESCE_WINDOW),
            Command::SetEvery(every) => self.set_every(every),
        }
    }

    fn request(&mut self, reason: String, delay: Duration) {
        self.merge_pending(reason);
        self.schedule(delay, TimerKind::Normal);
    }

    /// OpenClaw's `queuePendingWakeReason`: the higher priority survives, newest on a tie.
    fn merge_pending(&mut self, reason: String) {
        let priority = ReasonKind::of(&reason).priority();
        if self.pending.as_ref().is_some_and(|p| p.priority > priority) {
            return;
        }
        self.pending = Some(Pending { reason, priority });
    }

    /// OpenClaw's `schedule`: keep a retry cooldown, keep a timer that fires no later,
    /// otherwise (re)arm for `delay` from now.
    fn schedule(&mut self, delay: Duration, kind: TimerKind) {
        let at = Instant::now() + delay;
        if let Some(current) = self.wake
            && (current.kind == TimerKind::Retry || current.at <= at)
        {
            return;
        }
        self.wake = Some(WakeTimer { at, kind });
    }

    /// OpenClaw's `resolveNextDue` on a config update.
    fn set_every(&mut self, every: Duration) {
        let now = Instant::now();
        let every = (!every.is_zero()).then_some(every);
        self.next_due = every.map(|e| match (self.last_run, self.next_due) {
            (Some(last), _) => last + e,
            (None, Some(due)) if self.every == Some(e) && due > now => due,
            _ => now + e,
        });
        self.every = every;
        self.due_armed = every.is_some();
    }

    async fn fire(&mut self, rx: &mut mpsc::UnboundedReceiver<Command>) {
        self.wake = None;
        let Some(pending) = self.pending.take() else {
            return;
        };
        if self.every.is_none() {
            let outcome = RunOutcome::Skipped(DISABLED.to_owned());
            self.record(&pending.reason, outcome, false, false);
            return;
        }
        let now = Instant::now();
        if ReasonKind::of(&pending.reason) == ReasonKind::Interval
            && self.next_due.is_some_and(|due| now < due)
        {
            // A stale tick (a requested run moved the schedule): OpenClaw's `not-due`.
            self.due_armed = true;
            return;
        }
        lock(&self.status).running = true;
        self.publish();
        let request = WakeRequest {
            reason: pending.reason.clone(),
        };
        // Its own task, so a panicking run is reported here instead of ending the clock.
        let mut task = tokio::spawn(self.runner.run(request));
        let joined = loop {
            tokio::select! {
                biased;
                () = self.stop.cancelled() => {
                    task.abort();
                    return;
                }
                cmd = rx.recv(), if self.rx_open => match cmd {
                    // Requests during a run wait for it: its timer is checked afterwards,
                    // and by then has usually passed, so the follow-up runs right away.
                    Some(cmd) => self.on_command(cmd),
                    None => self.rx_open = false,
                },
                joined = &mut task => break joined,
            }
        };
        let (outcome, retry) = match joined {
            Ok(RunOutcome::Busy) => (RunOutcome::Busy, true),
            Ok(outcome) => (outcome, false),
            Err(e) => {
                let what = if e.is_panic() {
                    "panicked"
                } else {
                    "was cancelled"
                };
                tracing::warn!(reason = %pending.reason, "heartbeat run {what}; retrying");
                (
                    RunOutcome::Failed(format!("the heartbeat run {what}")),
                    true,
                )
            }
        };
        if retry {
            self.merge_pending(pending.reason.clone());
            self.schedule(BUSY_RETRY, TimerKind::Retry);
        }
        let counts = !retry && outcome != RunOutcome::Skipped(DISABLED.to_owned());
        if counts {
            let now = Instant::now();
            self.last_run = Some(now);
            self.next_due = self.every.map(|e| now + e);
            self.due_armed = self.every.is_some();
        }
        if self.pending.is_some() && self.wake.is_none() {
            self.schedule(COALESCE_WINDOW, TimerKind::Normal);
        }
        self.record(&pending.reason, outcome, true, counts);
    }

    /// Notes a settled wake: `called` when the runner ran, `counts` when it moved the
    /// schedule.
    fn record(&self, reason: &str, outcome: RunOutcome, called: bool, counts: bool) {
        let mut status = lock(&self.status);
        if called {
            status.runs += 1;
        }
        status.running = false;
        if counts {
            status.last_run_at_ms = Some(self.clock.now_ms());
        }
        status.last_reason = Some(reason.to_owned());
        status.last_outcome = Some(outcome);
    }

    fn publish(&self) {
        let now = Instant::now();
        let wall = self.clock.now_ms();
        let mut status = lock(&self.status);
        status.every_ms = self.every.map_or(0, |e| millis(e).unsigned_abs());
        status.pending_reason = self.pending.as_ref().map(|p| p.reason.clone());
        status.next_due_at_ms = self
            .next_due
            .filter(|_| self.due_armed)
            .map(|due| wall.saturating_add(millis(due.saturating_duration_since(now))));
    }
}

async fn sleep_until(at: Option<Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}

fn millis(d: Duration) -> i64 {
    i64::try_from(d.as_millis()).unwrap_or(i64::MAX)
}

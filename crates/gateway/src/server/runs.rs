//! Agent runs started over the protocol: one serial lane per session (see `lanes.rs`), the
//! queue modes of messages that arrive while their session is busy (see `queue.rs`), a
//! global cap on runs at once, idempotency by run id (OpenClaw: the `idempotencyKey` is the
//! run id), abort, the result clients wait for (`agent` final response, `agent.wait`), and
//! the `agent`/`chat` events every connection receives.
//!
//! Every admitted request gets a run id entry of its own, whatever its queue mode did with
//! it: a steered message's entry ends with the result of the turn that took it, a gathered
//! one's with the gathered turn's result, so `agent.wait` and idempotent retries work the
//! same for all of them.
//!
//! Events go out on a broadcast channel: a sender never waits for a slow client (a client
//! that falls behind is dropped by its connection), so one stuck socket cannot stall runs.

use pincer_automation::system_events::SystemEvents;
use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use pincer_ai::CancellationToken;
use pincer_store::SessionStore;
use serde_json::{Value, json};
use tokio::sync::{Semaphore, broadcast, watch};

use super::frames::StateVersion;
use super::lanes::{Admission, Busy, CollectBatch, Lanes, Ticket};
use super::methods::{Change, broadcast_change, message_observer, spawn_change};
use super::queue::{QueueMode, QueueSettings, collect_prompt};
use super::runtime::{Runtime, TurnOrigin, TurnRequest, on_blocking_pool};
use super::turn_events::{RunEmitter, RunResult};
use pincer_turns::turn::{SteerHandle, open_turn, run_open_steerable_turn};

mod lane_hold;
pub use lane_hold::LaneHold;

/// Finished runs kept for `agent.wait` and idempotent retries.
const KEEP_FINISHED: usize = 1000;
/// Events buffered per subscriber before it counts as too slow.
const EVENT_BUFFER: usize = 4096;

/// An event for every connection: the event name, its payload and, for events about shared
/// state (`presence`, `health`), the state versions the frame carries.
#[derive(Debug, Clone, PartialEq)]
pub struct GatewayEvent {
    pub event: &'static str,
    pub payload: Value,
    pub state_version: Option<StateVersion>,
    /// The frame without its per-connection `seq`, serialized by the first connection that
    /// sends it and reused by the others (an event goes to every client).
    frame_head: std::sync::OnceLock<String>,
}

impl GatewayEvent {
    pub fn new(event: &'static str, payload: Value) -> Self {
        Self {
            event,
            payload,
            state_version: None,
            frame_head: std::sync::OnceLock::new(),
        }
    }

    /// An event whose frame carries `stateVersion`.
    pub fn versioned(event: &'static str, payload: Value, state: StateVersion) -> Self {
        Self {
            state_version: Some(state),
            ..Self::new(event, payload)
        }
    }

    /// The event's frame with this connection's `seq`.
    pub fn frame(&self, seq: u64) -> String {
        let head = self.frame_head.get_or_init(|| {
            super::frames::event_frame_head(self.event, &self.payload, self.state_version)
        });
        super::frames::finish_event_frame(head, seq)
    }
}

/// Where a run stands.
#[derive(Debug, Clone, PartialEq)]
pub enum RunState {
    Running,
    Done(Arc<RunResult>),
}

struct RunEntry {
    session_key: String,
    abort: CancellationToken,
    state: watch::Receiver<RunState>,
    started_at: i64,
}

/// What `start` did.
#[derive(Debug, Clone, PartialEq)]
pub enum Started {
    /// A new run began (or waits for its session, behind the running one).
    New { accepted_at: i64 },
    /// A run with this id is still going (an idempotent retry).
    InFlight,
    /// A run with this id already finished.
    Finished(Arc<RunResult>),
}

/// What `submit` did with a request.
#[derive(Debug, Clone, PartialEq)]
pub enum Submitted {
    /// The session was idle: the request's run starts now.
    Started { accepted_at: i64 },
    /// It runs as a turn of its own once the session is free: followup mode, interrupt mode
    /// (after aborting `interrupted`), or steer mode with no turn to steer into yet.
    Queued {
        accepted_at: i64,
        interrupted: Option<String>,
    },
    /// Handed to the running turn `active_run_id`: the request's run id ends with that
    /// turn's result, and the reply streams under that turn's run id.
    Steered {
        accepted_at: i64,
        active_run_id: String,
    },
    /// Gathered (collect mode) into the turn that streams under `batch_run_id`.
    Collected {
        accepted_at: i64,
        batch_run_id: String,
    },
    /// A request with this id is still going (an idempotent retry).
    InFlight,
    /// A request with this id already finished.
    Finished(Arc<RunResult>),
}

impl Submitted {
    /// The `status` of `chat.send`'s answer: OpenClaw's `started` / `in_flight` / `ok`, plus
    /// `steered` and `queued` for the queue modes.
    pub fn status(&self) -> &'static str {
        match self {
            Self::Started { .. } => "started",
            Self::Queued { .. } | Self::Collected { .. } => "queued",
            Self::Steered { .. } => "steered",
            Self::InFlight => "in_flight",
            Self::Finished(_) => "ok",
        }
    }

    /// When the request was admitted, if this call admitted it.
    pub fn accepted_at(&self) -> Option<i64> {
        match self {
            Self::Started { accepted_at }
            | Self::Queued { accepted_at, .. }
            | Self::Steered { accepted_at, .. }
            | Self::Collected { accepted_at, .. } => Some(*accepted_at),
            Self::InFlight | Self::Finished(_) => None,
        }
    }
}

/// What one turn task does once it holds its session's gate.
enum Work {
    /// One request, run as it was sent.
    Single(Ticket),
    /// A collect batch: wait for the quiet window, then run everything gathered.
    Batch(Arc<CollectBatch>),
}

/// Every run of the server.
pub struct Runs {
    runs: Mutex<HashMap<String, RunEntry>>,
    lanes: Lanes,
    queue: QueueSettings,
    global: Arc<Semaphore>,
    events: broadcast::Sender<Arc<GatewayEvent>>,
    /// Finished run ids, oldest first.
    finished: Mutex<VecDeque<String>>,
    /// Drained into each turn's message as it starts.
    system_events: SystemEvents,
    /// RPC workers' dialogs waiting for a client's answer.
    dialogs: Arc<super::dialogs::Dialogs>,
}

impl Runs {
    /// Runs with at most `max_concurrent` agent runs at once across all sessions and the
    /// default queue settings.
    pub fn new(max_concurrent: usize) -> Self {
        Self::with_queue(
            max_concurrent,
            QueueSettings::default(),
            SystemEvents::default(),
        )
    }

    /// Runs with at most `max_concurrent` agent runs at once, `queue` for busy sessions and
    /// the system events each turn's message starts with.
    pub fn with_queue(
        max_concurrent: usize,
        queue: QueueSettings,
        system_events: SystemEvents,
    ) -> Self {
        let (events, _) = broadcast::channel(EVENT_BUFFER);
        Self {
            runs: Mutex::default(),
            lanes: Lanes::default(),
            queue,
            global: Arc::new(Semaphore::new(max_concurrent.max(1))),
            events,
            finished: Mutex::default(),
            system_events,
            dialogs: Arc::default(),
        }
    }

    /// Dialogs of RPC workers shown to clients.
    pub fn dialogs(&self) -> &Arc<super::dialogs::Dialogs> {
        &self.dialogs
    }

    /// The queue settings requests fall back on.
    pub fn queue_settings(&self) -> QueueSettings {
        self.queue
    }

    fn runs(&self) -> MutexGuard<'_, HashMap<String, RunEntry>> {
        self.runs.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Every event from now on.
    pub fn subscribe(&self) -> broadcast::Receiver<Arc<GatewayEvent>> {
        self.events.subscribe()
    }

    /// Sends an event to every connection.
    pub fn broadcast(&self, event: &'static str, payload: Value) {
        self.broadcast_event(GatewayEvent::new(event, payload));
    }

    /// Sends a prepared event (e.g. one carrying `stateVersion`) to every connection.
    pub fn broadcast_event(&self, event: GatewayEvent) {
        // No subscriber is not an error: the event is simply not for anyone.
        let _ = self.events.send(Arc::new(event));
    }

    /// Starts run `run_id` of `request` unless one with that id exists. The run waits for
    /// its session's lane (one run per session at a time) and a global slot; it always runs
    /// as its own turn (followup mode), for callers that follow their run's own events.
    pub fn start(
        self: &Arc<Self>,
        runtime: Arc<dyn Runtime>,
        run_id: &str,
        request: TurnRequest,
    ) -> Started {
        match self.submit(runtime, run_id, request, QueueMode::Followup) {
            Submitted::InFlight => Started::InFlight,
            Submitted::Finished(result) => Started::Finished(result),
            other => Started::New {
                accepted_at: other.accepted_at().unwrap_or_else(pincer_ai::now_ms),
            },
        }
    }

    /// Admits request `run_id` unless one with that id exists: it runs at once when its
    /// session is idle, else as `mode` says.
    pub fn submit(
        self: &Arc<Self>,
        runtime: Arc<dyn Runtime>,
        run_id: &str,
        request: TurnRequest,
        mode: QueueMode,
    ) -> Submitted {
        let accepted_at = pincer_ai::now_ms();
        let key = request.session_key.clone();
        let ticket = match self.register(run_id, request, accepted_at) {
            Ok(ticket) => ticket,
            Err(existing) => return existing,
        };
        let busy = match mode {
            QueueMode::Steer => Busy::Steer,
            QueueMode::Followup => Busy::Followup,
            QueueMode::Collect => Busy::Collect {
                cap: self.queue.collect_cap,
            },
            QueueMode::Interrupt => Busy::Interrupt,
        };
        self.admit(runtime, key, ticket, busy, accepted_at)
    }

    /// Starts run `run_id` only if its session is idle right now (checked and admitted
    /// under one lock, so no user message slips in between): what a heartbeat does, which
    /// must never queue behind or in front of a user's turn. `false` when the session is
    /// busy or the id is taken.
    pub fn start_if_idle(
        self: &Arc<Self>,
        runtime: Arc<dyn Runtime>,
        run_id: &str,
        request: TurnRequest,
    ) -> bool {
        let accepted_at = pincer_ai::now_ms();
        let key = request.session_key.clone();
        let Ok(ticket) = self.register(run_id, request, accepted_at) else {
            return false;
        };
        match self.admit(runtime, key, ticket, Busy::Refuse, accepted_at) {
            Submitted::Started { .. } => true,
            _ => {
                self.runs().remove(run_id);
                false
            }
        }
    }

    fn admit(
        self: &Arc<Self>,
        runtime: Arc<dyn Runtime>,
        key: String,
        ticket: Ticket,
        busy: Busy,
        accepted_at: i64,
    ) -> Submitted {
        match self.lanes.admit(&key, ticket, busy) {
            Admission::Run {
                gate,
                ticket,
                queued,
                interrupted,
            } => {
                self.spawn_turn(runtime, key, gate, Work::Single(*ticket));
                if queued {
                    Submitted::Queued {
                        accepted_at,
                        interrupted,
                    }
                } else {
                    Submitted::Started { accepted_at }
                }
            }
            Admission::Steered { active_run_id } => Submitted::Steered {
                accepted_at,
                active_run_id,
            },
            Admission::Collected { lead_run_id } => Submitted::Collected {
                accepted_at,
                batch_run_id: lead_run_id,
            },
            // Only `start_if_idle` refuses; it forgets the registered run itself.
            Admission::Refused => Submitted::InFlight,
            Admission::NewBatch { gate, batch } => {
                let batch_run_id = batch.lead_run_id.clone();
                self.spawn_turn(runtime, key, gate, Work::Batch(batch));
                Submitted::Collected {
                    accepted_at,
                    batch_run_id,
                }
            }
        }
    }

    /// Records run `run_id` as running; an existing id answers for itself instead.
    fn register(
        &self,
        run_id: &str,
        request: TurnRequest,
        accepted_at: i64,
    ) -> Result<Ticket, Submitted> {
        let (tx, rx) = watch::channel(RunState::Running);
        let abort = CancellationToken::new();
        let mut runs = self.runs();
        if let Some(existing) = runs.get(run_id) {
            return Err(match &*existing.state.borrow() {
                RunState::Running => Submitted::InFlight,
                RunState::Done(result) => Submitted::Finished(Arc::clone(result)),
            });
        }
        runs.insert(
            run_id.to_owned(),
            RunEntry {
                session_key: request.session_key.clone(),
                abort: abort.clone(),
                state: rx,
                started_at: accepted_at,
            },
        );
        Ok(Ticket {
            run_id: run_id.to_owned(),
            tx,
            abort,
            request,
        })
    }

    /// Runs `work` as a turn of session `key` once it holds the session's `gate`.
    fn spawn_turn(
        self: &Arc<Self>,
        runtime: Arc<dyn Runtime>,
        key: String,
        gate: Arc<tokio::sync::Mutex<()>>,
        work: Work,
    ) {
        let this = Arc::clone(self);
        tokio::spawn(async move {
            let guard = gate.lock_owned().await;
            let tickets = match work {
                Work::Single(ticket) => vec![ticket],
                Work::Batch(batch) => this.gather(&key, &batch).await,
            };
            this.run_tickets(runtime, &key, tickets).await;
            drop(guard);
            this.lanes.turn_done(&key);
        });
    }

    /// Waits out a batch's quiet window (each message added restarts it; a full batch does
    /// not wait) and returns what it gathered that was not cancelled meanwhile.
    async fn gather(self: &Arc<Self>, key: &str, batch: &Arc<CollectBatch>) -> Vec<Ticket> {
        let quiet = Duration::from_millis(self.queue.collect_debounce_ms);
        while self.lanes.is_open(key, batch) {
            if tokio::time::timeout(quiet, batch.arrived.notified())
                .await
                .is_err()
            {
                break;
            }
        }
        let (wanted, cancelled): (Vec<Ticket>, Vec<Ticket>) = self
            .lanes
            .take_batch(key, batch)
            .into_iter()
            .partition(|t| !t.abort.is_cancelled());
        for ticket in cancelled {
            self.resolve_aborted(ticket);
        }
        wanted
    }

    /// Runs one turn for `tickets` (several when gathered; the first one's run id names the
    /// turn), then settles every ticket the turn answered. Messages steered into the turn
    /// that it never picked up run as turns of their own.
    async fn run_tickets(
        self: &Arc<Self>,
        runtime: Arc<dyn Runtime>,
        key: &str,
        tickets: Vec<Ticket>,
    ) {
        let mut tickets = tickets.into_iter();
        let Some(lead) = tickets.next() else { return };
        let others: Vec<Ticket> = tickets.collect();
        let request = if others.is_empty() {
            lead.request.clone()
        } else {
            let texts: Vec<String> = std::iter::once(&lead)
                .chain(&others)
                .map(|t| t.request.message.clone())
                .collect();
            // The gathered messages' files all come with the batch.
            let media = std::iter::once(&lead)
                .chain(&others)
                .flat_map(|t| t.request.media.iter().cloned())
                .collect();
            TurnRequest {
                message: collect_prompt(&texts),
                media,
                ..lead.request.clone()
            }
        };
        let steer = SteerHandle::new();
        let steerable = request.origin == TurnOrigin::User;
        let announced = announces(&request.origin).then(|| request.agent_id.clone());
        self.lanes
            .set_active(key, &lead.run_id, &lead.abort, &steer, steerable);
        let result = self
            .execute(
                Arc::clone(&runtime),
                &lead.run_id,
                request,
                &lead.abort,
                &steer,
            )
            .await;
        let result = Arc::new(result);
        let (took, missed) = self.lanes.end_active(key);
        for ticket in took {
            self.resolve(ticket, Arc::clone(&result));
        }
        for ticket in missed {
            if ticket.abort.is_cancelled() {
                self.resolve_aborted(ticket);
            } else {
                // Not lost: the message runs as the next turn of its own.
                let gate = self.lanes.admit_turn(key);
                self.spawn_turn(
                    Arc::clone(&runtime),
                    key.to_owned(),
                    gate,
                    Work::Single(ticket),
                );
            }
        }
        let lead_run_id = lead.run_id.clone();
        self.resolve(lead, Arc::clone(&result));
        for ticket in others {
            self.resolve(ticket, Arc::clone(&result));
        }
        // Told once the run is over, so the row no longer counts it as active.
        if let Some(agent_id) = announced {
            let phase = match result.status {
                super::turn_events::RunStatus::Ok => "end",
                _ => "error",
            };
            let change = Change {
                agent_id,
                key: key.to_owned(),
                reason: None,
                phase: Some((phase, lead_run_id)),
            };
            spawn_change(&runtime, self, change);
        }
    }

    async fn execute(
        self: &Arc<Self>,
        runtime: Arc<dyn Runtime>,
        run_id: &str,
        request: TurnRequest,
        abort: &CancellationToken,
        steer: &SteerHandle,
    ) -> RunResult {
        let _slot = Arc::clone(&self.global).acquire_owned().await;
        let mut emitter = RunEmitter::new(run_id, &request, Arc::clone(self));
        emitter.started();
        if abort.is_cancelled() {
            return emitter.failed_before_start("aborted before it started", true);
        }
        // Drained only now that the turn really starts: a run aborted while waiting leaves
        // the events for the next one.
        let key = request.session_key.clone();
        let events = self.system_events.consume(&key);
        let request = TurnRequest {
            message: with_events(&events, &request.message),
            ..request
        };
        // Planning and opening the session are file work: one trip to the blocking pool for
        // both, so the message reaches the model without a second hop between threads.
        let dialogs = super::dialogs::RunDialogs {
            runs: Arc::clone(self),
            run_id: run_id.to_owned(),
            session_key: key.clone(),
        };
        let abort_turn = abort.clone();
        // Subscribers hear of the run once its session is open, then of each message.
        let announced = announces(&request.origin).then(|| {
            let observer = message_observer(&runtime, self, &request.agent_id, &key);
            let start = Change {
                agent_id: request.agent_id.clone(),
                key: key.clone(),
                reason: None,
                phase: Some(("start", run_id.to_owned())),
            };
            (observer, start, Arc::clone(self), run_id.to_owned())
        });
        let prepared = on_blocking_pool(&runtime, move |runtime| {
            let mut plan = runtime.plan(request).map_err(|e| e.to_string())?;
            plan.abort = Some(abort_turn);
            if let Some(rpc) = plan.rpc.as_mut() {
                rpc.dialogs = Some(Arc::new(dialogs));
            }
            // OpenClaw's steer mode injects everything queued at the next boundary together.
            plan.agent.steering_mode = pincer_agent::QueueMode::All;
            let mut turn = open_turn(plan);
            if let (Ok(turn), Some((observer, start, runs, run_id))) = (&mut turn, announced) {
                turn.observe_messages(&run_id, observer);
                broadcast_change(runtime, &runs, start);
            }
            Ok(turn)
        })
        .await
        .unwrap_or_else(|e| Err(format!("planning the turn failed: {e}")));
        let turn = match prepared {
            Ok(Ok(turn)) => turn,
            Ok(Err(e)) => return emitter.failed_before_start(&e.to_string(), abort.is_cancelled()),
            Err(e) => {
                // The turn never reached the transcript: its events wait for the next one.
                self.system_events.restore(&key, events);
                return emitter.failed_before_start(&e, false);
            }
        };
        match run_open_steerable_turn(turn, steer, |event| emitter.on_agent_event(event)).await {
            Ok(outcome) => emitter.finished(&outcome, abort.is_cancelled()),
            Err(e) => {
                let message = e.to_string();
                if message == pincer_turns::turn_rpc::NO_IDLE_WORKER {
                    // Skipped before the worker saw anything: the events wait for the next turn.
                    self.system_events.restore(&key, events);
                }
                emitter.failed_before_start(&message, abort.is_cancelled())
            }
        }
    }

    /// Ends `ticket`'s run with `result`.
    fn resolve(&self, ticket: Ticket, result: Arc<RunResult>) {
        ticket.tx.send_replace(RunState::Done(result));
        self.finish(&ticket.run_id);
    }

    /// Ends `ticket`'s run as aborted before it started (its own `chat` aborted event).
    fn resolve_aborted(self: &Arc<Self>, ticket: Ticket) {
        let emitter = RunEmitter::new(&ticket.run_id, &ticket.request, Arc::clone(self));
        let result = emitter.failed_before_start("aborted before it started", true);
        self.resolve(ticket, Arc::new(result));
    }

    /// The runs going on session `key` (`hasActiveRun`, `activeRunIds`).
    pub fn active_run_ids(&self, key: &str) -> Vec<String> {
        let mut ids: Vec<String> = self
            .runs()
            .iter()
            .filter(|(_, e)| e.session_key == key && matches!(*e.state.borrow(), RunState::Running))
            .map(|(id, _)| id.clone())
            .collect();
        ids.sort();
        ids
    }

    /// Whether session `key` has a turn admitted, running or being gathered.
    pub fn is_busy(&self, key: &str) -> bool {
        self.lanes.is_busy(key)
    }

    /// Runs `work` on session `key`'s `store` on the blocking pool while no turn can start
    /// there (turns admitted meanwhile wait): the seam for file work that must not interleave
    /// with a turn (a compaction, a heartbeat's prune, a cron note). `Ok(None)` without
    /// running it when the session is busy; `Err` when the task failed (it panicked).
    pub async fn on_idle_session<T, F>(
        self: &Arc<Self>,
        key: &str,
        store: SessionStore,
        work: F,
    ) -> Result<Option<T>, tokio::task::JoinError>
    where
        T: Send + 'static,
        F: FnOnce(&SessionStore, &str) -> T + Send + 'static,
    {
        let (runs, key) = (Arc::clone(self), key.to_owned());
        tokio::task::spawn_blocking(move || {
            let guard = runs.lanes.try_exclusive(&key)?;
            let out = work(&store, &key);
            drop(guard);
            runs.lanes.forget_if_idle(&key);
            Some(out)
        })
        .await
    }

    /// Keeps the map bounded: the oldest finished runs go first.
    fn finish(&self, run_id: &str) {
        let expired: Vec<String> = {
            let mut finished = self.finished.lock().unwrap_or_else(|e| e.into_inner());
            finished.push_back(run_id.to_owned());
            let excess = finished.len().saturating_sub(KEEP_FINISHED);
            finished.drain(..excess).collect()
        };
        if !expired.is_empty() {
            let mut runs = self.runs();
            for id in expired {
                runs.remove(&id);
            }
        }
    }

    /// The state of a run, if it is known.
    pub fn state(&self, run_id: &str) -> Option<(RunState, i64)> {
        self.runs()
            .get(run_id)
            .map(|e| (e.state.borrow().clone(), e.started_at))
    }

    /// Waits up to `timeout` for run `run_id` to finish. `None`: no such run.
    pub async fn wait(&self, run_id: &str, timeout: Duration) -> Option<(RunState, i64)> {
        let (mut rx, started_at) = {
            let runs = self.runs();
            let entry = runs.get(run_id)?;
            (entry.state.clone(), entry.started_at)
        };
        let _ =
            tokio::time::timeout(timeout, rx.wait_for(|s| matches!(s, RunState::Done(_)))).await;
        let state = rx.borrow().clone();
        Some((state, started_at))
    }

    /// Aborts the runs of `session_key` (only `run_id` when given); returns how many. A
    /// queued, steered or gathered request that is aborted before its turn takes it never
    /// runs.
    pub fn abort(&self, session_key: &str, run_id: Option<&str>) -> usize {
        let runs = self.runs();
        let mut n = 0;
        for (id, entry) in runs.iter() {
            let running = matches!(*entry.state.borrow(), RunState::Running);
            if running && entry.session_key == session_key && run_id.is_none_or(|r| r == id) {
                entry.abort.cancel();
                n += 1;
            }
        }
        n
    }

    /// Aborts every run (shutdown).
    pub fn abort_all(&self) {
        for entry in self.runs().values() {
            entry.abort.cancel();
        }
    }

    /// How many runs are going.
    pub fn running(&self) -> usize {
        self.runs()
            .values()
            .filter(|e| matches!(*e.state.borrow(), RunState::Running))
            .count()
    }
}

/// Whether subscribers hear of a run's start, end and messages: not of a heartbeat's, whose
/// reply may be nothing anyone may see (and is pruned from the transcript).
fn announces(origin: &TurnOrigin) -> bool {
    !matches!(origin, TurnOrigin::Heartbeat { .. })
}

/// `message` with `events` in front as `System:` lines (unchanged without events).
fn with_events(events: &[pincer_automation::system_events::SystemEvent], message: &str) -> String {
    if events.is_empty() {
        return message.to_owned();
    }
    format!(
        "{}\n\n{message}",
        pincer_automation::system_events::format_for_prompt(events)
    )
}

/// The `agent` method's final payload for a finished run (OpenClaw's shape).
pub fn final_payload(run_id: &str, result: &RunResult) -> Value {
    let mut payload = json!({
        "runId": run_id,
        "status": result.status.as_str(),
        "summary": if result.status.as_str() == "ok" { "completed" } else { result.status.as_str() },
        "result": {
            "payloads": [{ "text": result.text, "mediaUrl": Value::Null }],
            "meta": {
                "durationMs": result.duration_ms,
                "agentMeta": {
                    "sessionId": result.session_id,
                    "provider": result.provider,
                    "model": result.model,
                    "usage": result.usage,
                },
            },
        },
    });
    if let Some(error) = &result.error {
        payload["error"] = json!(error);
    }
    payload
}

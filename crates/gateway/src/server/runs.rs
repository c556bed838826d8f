//! Agent runs started over the protocol: one serial lane per session, a global cap on runs
//! at once, idempotency by run id (OpenClaw: the `idempotencyKey` is the run id), abort, the
//! result clients wait for (`agent` final response, `agent.wait`), and the `agent`/`chat`
//! events every connection receives.
//!
//! Events go out on a broadcast channel: a sender never waits for a slow client (a client
//! that falls behind is dropped by its connection), so one stuck socket cannot stall runs.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use pincer_ai::CancellationToken;
use serde_json::{Value, json};
use tokio::sync::{Semaphore, broadcast, watch};

use super::runtime::{Runtime, TurnRequest};
use super::turn_events::{RunEmitter, RunResult};
use crate::turn::run_turn;

/// Finished runs kept for `agent.wait` and idempotent retries.
const KEEP_FINISHED: usize = 1000;
/// Events buffered per subscriber before it counts as too slow.
const EVENT_BUFFER: usize = 4096;

/// An event for every connection: the event name and its payload.
#[derive(Debug, Clone, PartialEq)]
pub struct GatewayEvent {
    pub event: &'static str,
    pub payload: Value,
    /// The frame without its per-connection `seq`, serialized by the first connection that
    /// sends it and reused by the others (an event goes to every client).
    frame_head: std::sync::OnceLock<String>,
}

impl GatewayEvent {
    pub fn new(event: &'static str, payload: Value) -> Self {
        Self {
            event,
            payload,
            frame_head: std::sync::OnceLock::new(),
        }
    }

    /// The event's frame with this connection's `seq`.
    pub fn frame(&self, seq: u64) -> String {
        let head = self
            .frame_head
            .get_or_init(|| super::frames::event_frame_head(self.event, &self.payload));
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
    /// A new run began.
    New { accepted_at: i64 },
    /// A run with this id is still going (an idempotent retry).
    InFlight,
    /// A run with this id already finished.
    Finished(Arc<RunResult>),
}

/// Every run of the server.
pub struct Runs {
    runs: Mutex<HashMap<String, RunEntry>>,
    lanes: Mutex<HashMap<String, Arc<tokio::sync::Mutex<()>>>>,
    global: Arc<Semaphore>,
    events: broadcast::Sender<Arc<GatewayEvent>>,
    /// Finished run ids, oldest first.
    finished: Mutex<VecDeque<String>>,
}

impl Runs {
    /// Runs with at most `max_concurrent` agent runs at once across all sessions.
    pub fn new(max_concurrent: usize) -> Self {
        let (events, _) = broadcast::channel(EVENT_BUFFER);
        Self {
            runs: Mutex::default(),
            lanes: Mutex::default(),
            global: Arc::new(Semaphore::new(max_concurrent.max(1))),
            events,
            finished: Mutex::default(),
        }
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
        let _ = self
            .events
            .send(Arc::new(GatewayEvent::new(event, payload)));
    }

    /// Starts run `run_id` of `request` unless one with that id exists. The run waits for
    /// its session's lane (one run per session at a time) and a global slot.
    pub fn start(
        self: &Arc<Self>,
        runtime: Arc<dyn Runtime>,
        run_id: &str,
        request: TurnRequest,
    ) -> Started {
        let (tx, rx) = watch::channel(RunState::Running);
        let abort = CancellationToken::new();
        let accepted_at = pincer_ai::now_ms();
        {
            let mut runs = self.runs();
            if let Some(existing) = runs.get(run_id) {
                return match &*existing.state.borrow() {
                    RunState::Running => Started::InFlight,
                    RunState::Done(result) => Started::Finished(Arc::clone(result)),
                };
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
        }
        let this = Arc::clone(self);
        let run_id = run_id.to_owned();
        tokio::spawn(async move {
            let result = this.execute(runtime, &run_id, request, abort).await;
            let result = Arc::new(result);
            let _ = tx.send(RunState::Done(Arc::clone(&result)));
            this.finish(&run_id);
        });
        Started::New { accepted_at }
    }

    async fn execute(
        self: &Arc<Self>,
        runtime: Arc<dyn Runtime>,
        run_id: &str,
        request: TurnRequest,
        abort: CancellationToken,
    ) -> RunResult {
        let lane = {
            let mut lanes = self.lanes.lock().unwrap_or_else(|e| e.into_inner());
            Arc::clone(lanes.entry(request.session_key.clone()).or_default())
        };
        let _lane = lane.lock().await;
        let _slot = Arc::clone(&self.global).acquire_owned().await;
        let mut emitter = RunEmitter::new(run_id, &request, Arc::clone(self));
        emitter.started();
        if abort.is_cancelled() {
            return emitter.failed_before_start("aborted before it started", true);
        }
        let mut plan = match runtime.plan(request.clone()).await {
            Ok(plan) => plan,
            Err(message) => return emitter.failed_before_start(&message, false),
        };
        plan.abort = Some(abort.clone());
        match run_turn(plan, |event| emitter.on_agent_event(event)).await {
            Ok(outcome) => emitter.finished(&outcome, abort.is_cancelled()),
            Err(e) => emitter.failed_before_start(&e.to_string(), false),
        }
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

    /// Aborts the runs of `session_key` (only `run_id` when given); returns how many.
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

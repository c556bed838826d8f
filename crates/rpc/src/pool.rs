//! [`RpcPool`]: the worker processes of the gateway (pi-gateway's `rpc-pool.ts`). A session
//! asks for a worker with a [`CapabilityProfile`]; the pool answers, in this order, with
//! 1. the idle worker already bound to that session, if its profile still matches exactly;
//! 2. an idle worker with exactly that profile;
//! 3. an idle worker with the same hard signature and at least the soft resources asked
//!    for, its model and thinking level changed over RPC to match;
//! 4. a new worker, while there are fewer than `max`;
//! 5. a new worker in place of the least recently used idle one, which is stopped;
//! 6. otherwise the request waits, by priority (then arrival), for a worker to be freed.
//!
//! A new worker is set up as pi-gateway sets up its workers (auto-compaction and auto-retry
//! on, steering and follow-ups one at a time) before anyone gets it, and, unless told
//! otherwise, its extension dialogs are answered by pi-gateway's policy (the first option,
//! yes, or cancel) so a worker never hangs on a question nobody sees.
//!
//! A [`PooledWorker`] goes back to the pool when dropped. [`RpcPool::find_best_match`] only
//! takes idle workers (steps 1–3) and never spawns or waits: what the heartbeat uses, so it
//! never starts a process or holds up a user. Maintenance (every 30 s) drops dead workers,
//! stops workers idle past `idle_timeout` while more than `min` run, and tops the pool up
//! to `min` with the profile last used.

use std::collections::BinaryHeap;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

use super::client::RpcClient;
use super::error::RpcError;
use super::profile::CapabilityProfile;
use super::protocol::RpcCommand;

/// How often maintenance runs.
pub const MAINTENANCE_INTERVAL: Duration = Duration::from_secs(30);
/// How long adapting a worker's model, or setting a new one up, may take.
const ADAPT_TIMEOUT: Duration = Duration::from_secs(10);

/// The pool's limits (`agent.pool`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PoolSettings {
    pub min: usize,
    pub max: usize,
    pub idle_timeout: Duration,
    /// Answer workers' extension dialogs automatically (pi-gateway's policy). Off when the
    /// caller forwards them to a person instead.
    pub auto_answer_ui: bool,
}

impl Default for PoolSettings {
    /// pi-gateway's: at least 1, at most 4, idle workers stop after 5 minutes.
    fn default() -> Self {
        Self {
            min: 1,
            max: 4,
            idle_timeout: Duration::from_secs(300),
            auto_answer_ui: true,
        }
    }
}

/// Starts a worker for a profile (the gateway: its `workerCommand` with the profile's args).
pub trait WorkerSpawner: Send + Sync + 'static {
    fn spawn(&self, profile: &CapabilityProfile) -> Result<RpcClient, RpcError>;
}

/// How an acquired worker was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reuse {
    /// It was serving this session already.
    Bound,
    /// An idle worker with exactly this profile.
    Exact,
    /// An idle worker with the same hard profile, its model or thinking level changed.
    Adapted,
    /// Started for this request.
    Spawned,
}

impl Reuse {
    /// Whether the worker was serving another session (or none): the caller points it at
    /// this session's transcript.
    pub fn needs_session_switch(self) -> bool {
        self != Self::Bound
    }
}

/// Why no worker could be had.
#[derive(Debug, thiserror::Error)]
pub enum PoolError {
    #[error("cannot start an RPC worker: {0}")]
    Spawn(#[from] RpcError),
    #[error("the worker pool is shutting down")]
    ShuttingDown,
}

/// Numbers for status displays and benchmarks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PoolStats {
    pub workers: usize,
    pub busy: usize,
    pub waiting: usize,
    pub spawned: u64,
    pub stopped: u64,
}

struct Slot {
    id: u64,
    client: Arc<RpcClient>,
    profile: CapabilityProfile,
    signature: String,
    hard_signature: String,
    busy: bool,
    session: Option<String>,
    last_used: Instant,
}

struct Waiter {
    priority: u8,
    /// Arrival order: earlier first among equal priorities.
    seq: u64,
    wake: oneshot::Sender<()>,
}

impl PartialEq for Waiter {
    fn eq(&self, other: &Self) -> bool {
        (self.priority, self.seq) == (other.priority, other.seq)
    }
}
impl Eq for Waiter {}
impl PartialOrd for Waiter {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Waiter {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        // A max-heap: higher priority first, then the lower (earlier) seq.
        self.priority
            .cmp(&other.priority)
            .then(other.seq.cmp(&self.seq))
    }
}

#[derive(Default)]
struct State {
    slots: Vec<Slot>,
    waiters: BinaryHeap<Waiter>,
    next_id: u64,
    next_seq: u64,
    /// Spawns in progress (they count against `max`).
    starting: usize,
    last_profile: Option<CapabilityProfile>,
    spawned: u64,
    stopped: u64,
    closed: bool,
}

struct Inner {
    settings: PoolSettings,
    spawner: Box<dyn WorkerSpawner>,
    state: Mutex<State>,
}

/// The pool. Cheap to clone.
#[derive(Clone)]
pub struct RpcPool {
    inner: Arc<Inner>,
}

/// A worker taken from the pool; back to it when dropped.
pub struct PooledWorker {
    inner: Arc<Inner>,
    id: u64,
    client: Arc<RpcClient>,
    pub reuse: Reuse,
}

impl std::fmt::Debug for PooledWorker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PooledWorker")
            .field("id", &self.id)
            .field("pid", &self.client.pid())
            .field("reuse", &self.reuse)
            .finish()
    }
}

impl PooledWorker {
    pub fn client(&self) -> &RpcClient {
        &self.client
    }

    /// The client for tasks that run beside the caller (steering, an abort's deadline).
    pub fn shared_client(&self) -> Arc<RpcClient> {
        Arc::clone(&self.client)
    }

    /// Takes the worker out of the pool and stops it: for a worker whose state can no
    /// longer be trusted (it ignored an abort, or still holds messages of a turn that
    /// ended), so no other session ever gets it.
    pub async fn discard(self) {
        {
            let mut state = lock(&self.inner.state);
            let before = state.slots.len();
            state.slots.retain(|s| s.id != self.id);
            state.stopped += (before - state.slots.len()) as u64;
        }
        self.client.stop().await;
        // Dropping `self` now wakes a waiter: there is room for a new worker.
    }
}

impl Drop for PooledWorker {
    fn drop(&mut self) {
        let mut state = lock(&self.inner.state);
        if let Some(slot) = state.slots.iter_mut().find(|s| s.id == self.id) {
            slot.busy = false;
            slot.last_used = Instant::now();
        }
        wake_one(&mut state);
    }
}

/// What one pass of the acquire steps decided.
enum Step {
    Got(PooledWorker),
    Adapt(u64, Arc<RpcClient>),
    Spawn { evict: Option<Arc<RpcClient>> },
    Wait(oneshot::Receiver<()>),
}

/// What a lease asks for: the session and the capability profile, with the profile's
/// signatures computed once.
struct Wanted<'a> {
    session_key: &'a str,
    profile: &'a CapabilityProfile,
    signature: String,
    hard: String,
}

impl<'a> Wanted<'a> {
    fn new(session_key: &'a str, profile: &'a CapabilityProfile) -> Self {
        Self {
            session_key,
            profile,
            signature: profile.signature(),
            hard: profile.hard_signature(),
        }
    }
}

impl RpcPool {
    pub fn new(settings: PoolSettings, spawner: impl WorkerSpawner) -> Self {
        Self {
            inner: Arc::new(Inner {
                settings: PoolSettings {
                    max: settings.max.max(1),
                    min: settings.min.min(settings.max.max(1)),
                    ..settings
                },
                spawner: Box::new(spawner),
                state: Mutex::default(),
            }),
        }
    }

    /// A worker for `session_key` with `profile`; see the module doc for the order.
    pub async fn acquire(
        &self,
        session_key: &str,
        profile: &CapabilityProfile,
        priority: u8,
    ) -> Result<PooledWorker, PoolError> {
        let wanted = Wanted::new(session_key, profile);
        loop {
            let step = {
                let mut state = lock(&self.inner.state);
                if state.closed {
                    return Err(PoolError::ShuttingDown);
                }
                state.last_profile = Some(profile.clone());
                self.decide(&mut state, &wanted, priority)
            };
            match step {
                Step::Got(worker) => return Ok(worker),
                Step::Adapt(id, client) => {
                    match adapt(&client, profile).await {
                        Ok(()) => return Ok(self.finish_adapt(id, client, session_key, profile)),
                        Err(e) => {
                            // A worker that cannot switch models is not one to keep.
                            tracing::warn!(error = %e, "rpc pool: adapting a worker failed; replacing it");
                            self.remove(id);
                            client.stop().await;
                        }
                    }
                }
                Step::Spawn { evict } => {
                    if let Some(old) = evict {
                        old.stop().await;
                    }
                    return self.spawn_for(session_key, profile).await;
                }
                Step::Wait(rx) => {
                    // Woken when a worker is freed; then the steps run again.
                    let _ = rx.await;
                }
            }
        }
    }

    /// An idle worker for `session_key` (steps 1–3), never spawning or waiting.
    pub async fn find_best_match(
        &self,
        session_key: &str,
        profile: &CapabilityProfile,
    ) -> Option<PooledWorker> {
        let wanted = Wanted::new(session_key, profile);
        let step = {
            let mut state = lock(&self.inner.state);
            if state.closed {
                return None;
            }
            self.take_idle(&mut state, &wanted)
        }?;
        match step {
            Step::Got(worker) => Some(worker),
            Step::Adapt(id, client) => match adapt(&client, profile).await {
                Ok(()) => Some(self.finish_adapt(id, client, session_key, profile)),
                Err(_) => {
                    self.release_id(id);
                    None
                }
            },
            _ => None,
        }
    }

    fn decide(&self, state: &mut State, wanted: &Wanted<'_>, priority: u8) -> Step {
        if let Some(step) = self.take_idle(state, wanted) {
            return step;
        }
        let max = self.inner.settings.max;
        if state.slots.len() + state.starting < max {
            state.starting += 1;
            return Step::Spawn { evict: None };
        }
        let lru = state
            .slots
            .iter()
            .enumerate()
            .filter(|(_, s)| !s.busy)
            .min_by_key(|(_, s)| s.last_used)
            .map(|(i, _)| i);
        if let Some(index) = lru {
            let old = state.slots.remove(index);
            state.stopped += 1;
            state.starting += 1;
            return Step::Spawn {
                evict: Some(old.client),
            };
        }
        let (tx, rx) = oneshot::channel();
        let seq = state.next_seq;
        state.next_seq += 1;
        state.waiters.push(Waiter {
            priority,
            seq,
            wake: tx,
        });
        Step::Wait(rx)
    }

    /// Steps 1–3 under the lock: marks the worker busy. Dead workers are dropped first.
    fn take_idle(&self, state: &mut State, wanted: &Wanted<'_>) -> Option<Step> {
        let (session_key, profile) = (wanted.session_key, wanted.profile);
        let (signature, hard) = (wanted.signature.as_str(), wanted.hard.as_str());
        let before = state.slots.len();
        state.slots.retain(|s| s.busy || s.client.is_alive());
        state.stopped += (before - state.slots.len()) as u64;
        let idle = |s: &&mut Slot| !s.busy;
        let pick = |state: &mut State, id: u64, reuse: Reuse| {
            let slot = state.slots.iter_mut().find(|s| s.id == id)?;
            slot.busy = true;
            slot.session = Some(session_key.to_owned());
            Some(Step::Got(PooledWorker {
                inner: Arc::clone(&self.inner),
                id,
                client: Arc::clone(&slot.client),
                reuse,
            }))
        };
        if let Some(id) = state
            .slots
            .iter_mut()
            .filter(idle)
            .find(|s| s.session.as_deref() == Some(session_key) && s.signature == signature)
            .map(|s| s.id)
        {
            return pick(state, id, Reuse::Bound);
        }
        if let Some(id) = state
            .slots
            .iter_mut()
            .filter(idle)
            .find(|s| s.signature == signature)
            .map(|s| s.id)
        {
            return pick(state, id, Reuse::Exact);
        }
        let adaptable = state
            .slots
            .iter_mut()
            .filter(idle)
            .find(|s| s.hard_signature == hard && s.profile.has_resources_for(profile))?;
        adaptable.busy = true;
        Some(Step::Adapt(adaptable.id, Arc::clone(&adaptable.client)))
    }

    fn finish_adapt(
        &self,
        id: u64,
        client: Arc<RpcClient>,
        session_key: &str,
        profile: &CapabilityProfile,
    ) -> PooledWorker {
        let mut state = lock(&self.inner.state);
        if let Some(slot) = state.slots.iter_mut().find(|s| s.id == id) {
            slot.profile.provider = profile.provider.clone();
            slot.profile.model = profile.model.clone();
            slot.profile.thinking = profile.thinking.clone();
            slot.signature = slot.profile.signature();
            slot.session = Some(session_key.to_owned());
        }
        PooledWorker {
            inner: Arc::clone(&self.inner),
            id,
            client,
            reuse: Reuse::Adapted,
        }
    }

    async fn spawn_for(
        &self,
        session_key: &str,
        profile: &CapabilityProfile,
    ) -> Result<PooledWorker, PoolError> {
        let spawned = match self.start_worker(profile).await {
            Ok(client) => client,
            Err(e) => {
                let mut state = lock(&self.inner.state);
                state.starting -= 1;
                wake_one(&mut state);
                return Err(e.into());
            }
        };
        let mut state = lock(&self.inner.state);
        state.starting -= 1;
        let client = Arc::new(spawned);
        let id = state.next_id;
        state.next_id += 1;
        state.spawned += 1;
        state.slots.push(Slot {
            id,
            client: Arc::clone(&client),
            profile: profile.clone(),
            signature: profile.signature(),
            hard_signature: profile.hard_signature(),
            busy: true,
            session: Some(session_key.to_owned()),
            last_used: Instant::now(),
        });
        Ok(PooledWorker {
            inner: Arc::clone(&self.inner),
            id,
            client,
            reuse: Reuse::Spawned,
        })
    }

    /// Starts a worker for `profile`. One that fails over its model (a provider or model it
    /// does not know) is started once more without `--provider`/`--model`, on its own
    /// default model, as pi-gateway does: a session answered by another model beats no
    /// answer at all.
    async fn start_worker(&self, profile: &CapabilityProfile) -> Result<RpcClient, RpcError> {
        match self.start_exactly(profile).await {
            Err(e)
                if (profile.provider.is_some() || profile.model.is_some())
                    && is_model_error(&e) =>
            {
                tracing::warn!(error = %e, "rpc pool: the worker refused its model; starting it on its default model");
                let fallback = CapabilityProfile {
                    provider: None,
                    model: None,
                    ..profile.clone()
                };
                self.start_exactly(&fallback).await
            }
            other => other,
        }
    }

    /// Starts a worker and sets it up; one that cannot be set up is stopped.
    async fn start_exactly(&self, profile: &CapabilityProfile) -> Result<RpcClient, RpcError> {
        let client = self.inner.spawner.spawn(profile)?;
        if self.inner.settings.auto_answer_ui {
            tokio::spawn(answer_dialogs(client.subscribe(), client.ui_answerer()));
        }
        if let Err(e) = set_up(&client).await {
            client.stop().await;
            return Err(e);
        }
        Ok(client)
    }

    fn remove(&self, id: u64) {
        let mut state = lock(&self.inner.state);
        state.slots.retain(|s| s.id != id);
        state.stopped += 1;
        wake_one(&mut state);
    }

    fn release_id(&self, id: u64) {
        let mut state = lock(&self.inner.state);
        if let Some(slot) = state.slots.iter_mut().find(|s| s.id == id) {
            slot.busy = false;
        }
        wake_one(&mut state);
    }

    /// One maintenance pass: drops dead workers, stops those idle past `idle_timeout`
    /// while more than `min` run, and tops the pool up to `min`.
    pub async fn maintain(&self) {
        let settings = self.inner.settings;
        let (to_stop, to_start) = {
            let mut state = lock(&self.inner.state);
            let before = state.slots.len();
            state.slots.retain(|s| s.busy || s.client.is_alive());
            state.stopped += (before - state.slots.len()) as u64;
            let mut to_stop = Vec::new();
            let now = Instant::now();
            while state.slots.len() > settings.min {
                let expired = state
                    .slots
                    .iter()
                    .enumerate()
                    .filter(|(_, s)| {
                        !s.busy && now.duration_since(s.last_used) >= settings.idle_timeout
                    })
                    .min_by_key(|(_, s)| s.last_used)
                    .map(|(i, _)| i);
                let Some(index) = expired else { break };
                to_stop.push(state.slots.remove(index).client);
                state.stopped += 1;
            }
            let missing = settings
                .min
                .saturating_sub(state.slots.len() + state.starting);
            let profile = state.last_profile.clone();
            wake_one(&mut state);
            (to_stop, profile.map(|p| (p, missing)))
        };
        for client in to_stop {
            client.stop().await;
        }
        if let Some((profile, missing)) = to_start {
            for _ in 0..missing {
                let spawned = self.start_worker(&profile).await;
                let mut state = lock(&self.inner.state);
                match spawned {
                    Ok(client) => {
                        let id = state.next_id;
                        state.next_id += 1;
                        state.spawned += 1;
                        state.slots.push(Slot {
                            id,
                            client: Arc::new(client),
                            profile: profile.clone(),
                            signature: profile.signature(),
                            hard_signature: profile.hard_signature(),
                            busy: false,
                            session: None,
                            last_used: Instant::now(),
                        });
                        wake_one(&mut state);
                    }
                    Err(e) => {
                        tracing::warn!(error = %e, "rpc pool: cannot start a worker");
                        break;
                    }
                }
            }
        }
    }

    /// Runs [`Self::maintain`] every `every` until `stop`.
    pub async fn run_maintenance(self, every: Duration, stop: CancellationToken) {
        let mut tick = tokio::time::interval(every);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        tick.tick().await;
        loop {
            tokio::select! {
                () = stop.cancelled() => return,
                _ = tick.tick() => self.maintain().await,
            }
        }
    }

    /// The limits the pool runs with.
    pub fn settings(&self) -> PoolSettings {
        self.inner.settings
    }

    /// Whether a worker could be started without evicting one.
    pub fn has_room(&self) -> bool {
        let state = lock(&self.inner.state);
        !state.closed && state.slots.len() + state.starting < self.inner.settings.max
    }

    pub fn stats(&self) -> PoolStats {
        let state = lock(&self.inner.state);
        PoolStats {
            workers: state.slots.len(),
            busy: state.slots.iter().filter(|s| s.busy).count(),
            waiting: state.waiters.len(),
            spawned: state.spawned,
            stopped: state.stopped,
        }
    }

    /// Stops every worker; later acquires fail.
    pub async fn shutdown(&self) {
        let clients: Vec<Arc<RpcClient>> = {
            let mut state = lock(&self.inner.state);
            state.closed = true;
            state.waiters.clear();
            state.slots.drain(..).map(|s| s.client).collect()
        };
        for client in clients {
            client.stop().await;
        }
    }
}

/// Whether a worker's failure is about its model: pi says `Unknown provider "x"` or
/// `Model "x" not found`, Pincer `unknown model "p/m"`.
fn is_model_error(error: &RpcError) -> bool {
    let text = error.to_string().to_ascii_lowercase();
    text.contains("provider") || text.contains("model")
}

/// pi-gateway's setup of a new worker.
async fn set_up(client: &RpcClient) -> Result<(), RpcError> {
    use super::protocol::QueueMode;
    for command in [
        RpcCommand::SetAutoCompaction { enabled: true },
        RpcCommand::SetAutoRetry { enabled: true },
        RpcCommand::SetSteeringMode {
            mode: QueueMode::OneAtATime,
        },
        RpcCommand::SetFollowUpMode {
            mode: QueueMode::OneAtATime,
        },
    ] {
        client.request(command, ADAPT_TIMEOUT).await?;
    }
    Ok(())
}

/// Answers every dialog a worker opens with pi-gateway's automatic answer, until the
/// worker's events end.
async fn answer_dialogs(
    mut events: tokio::sync::broadcast::Receiver<Arc<serde_json::Value>>,
    answer: super::client::UiAnswerer,
) {
    use tokio::sync::broadcast::error::RecvError;
    loop {
        match events.recv().await {
            Ok(event) => {
                let Some(request) = super::ui::ExtensionUiRequest::from_event(&event) else {
                    continue;
                };
                if let Some(response) = request.auto_answer() {
                    tracing::info!(method = %request.method, "rpc pool: answering a worker's dialog automatically");
                    if answer.answer(&response).is_err() {
                        return;
                    }
                }
            }
            Err(RecvError::Lagged(_)) => {}
            Err(RecvError::Closed) => return,
        }
    }
}

/// Switches a worker's model and thinking level to the profile's.
async fn adapt(client: &RpcClient, profile: &CapabilityProfile) -> Result<(), RpcError> {
    if let (Some(provider), Some(model)) = (&profile.provider, &profile.model) {
        client
            .request(
                RpcCommand::SetModel {
                    provider: provider.clone(),
                    model_id: model.clone(),
                },
                ADAPT_TIMEOUT,
            )
            .await?;
    }
    if let Some(level) = &profile.thinking {
        client
            .request(
                RpcCommand::SetThinkingLevel {
                    level: level.clone(),
                },
                ADAPT_TIMEOUT,
            )
            .await?;
    }
    Ok(())
}

/// Wakes the first waiter that is still waiting.
fn wake_one(state: &mut State) {
    while let Some(waiter) = state.waiters.pop() {
        if waiter.wake.send(()).is_ok() {
            return;
        }
    }
}

fn lock(state: &Mutex<State>) -> MutexGuard<'_, State> {
    state.lock().unwrap_or_else(|e| e.into_inner())
}

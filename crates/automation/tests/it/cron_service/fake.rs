//! The test double of the gateway's cron executor, and the helpers the cron service tests
//! share: a service over a temp dir on a [`ManualClock`], job inputs from JSON, an event
//! recorder.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::future::BoxFuture;
use jiff::tz::TimeZone;
use pincer_automation::cron::{
    CronExecutor, CronJob, CronRunOutput, CronService, CronSettings, NewCronJob,
};
use pincer_automation::system_events::ManualClock;
use serde_json::Value;

/// 2026-01-01T00:00:00Z.
pub const T0: i64 = 1_767_225_600_000;

/// One call the service made.
#[derive(Debug, Clone, PartialEq)]
pub struct Call {
    pub job_id: String,
    /// `main` or `isolated`.
    pub target: &'static str,
    /// The text given to `enqueue_main`, or the isolated job's message.
    pub text: String,
    /// The clock when the call was made.
    pub at_ms: i64,
}

#[derive(Default)]
struct Inner {
    calls: Mutex<Vec<Call>>,
    /// Scripted results, first call first; when empty: success.
    main_results: Mutex<VecDeque<Result<(), String>>>,
    outputs: Mutex<VecDeque<CronRunOutput>>,
    active: AtomicUsize,
    max_active: AtomicUsize,
    run_for_ms: AtomicU64,
    clock_step_ms: AtomicU64,
}

/// Records calls and answers from a script. Isolated runs last [`run_for`] of tokio time and
/// move the manual clock by [`clock_step`] when they end.
///
/// [`run_for`]: FakeExecutor::run_for
/// [`clock_step`]: FakeExecutor::clock_step
#[derive(Clone)]
pub struct FakeExecutor {
    inner: Arc<Inner>,
    clock: ManualClock,
}

impl FakeExecutor {
    pub fn new(clock: &ManualClock) -> Self {
        Self {
            inner: Arc::default(),
            clock: clock.clone(),
        }
    }

    pub fn run_for(&self, ms: u64) {
        self.inner.run_for_ms.store(ms, Ordering::SeqCst);
    }

    pub fn clock_step(&self, ms: u64) {
        self.inner.clock_step_ms.store(ms, Ordering::SeqCst);
    }

    pub fn calls(&self) -> Vec<Call> {
        self.inner.calls.lock().unwrap().clone()
    }

    pub fn script_main(&self, result: Result<(), String>) {
        self.inner.main_results.lock().unwrap().push_back(result);
    }

    pub fn script_isolated(&self, output: CronRunOutput) {
        self.inner.outputs.lock().unwrap().push_back(output);
    }

    /// The most isolated runs that were in flight at once.
    pub fn max_active(&self) -> usize {
        self.inner.max_active.load(Ordering::SeqCst)
    }

    fn record(&self, job: &CronJob, target: &'static str, text: &str) {
        self.inner.calls.lock().unwrap().push(Call {
            job_id: job.id.clone(),
            target,
            text: text.to_string(),
            at_ms: pincer_automation::system_events::Clock::now_ms(&self.clock),
        });
    }
}

impl CronExecutor for FakeExecutor {
    fn enqueue_main(&self, job: &CronJob, text: &str) -> Result<(), String> {
        self.record(job, "main", text);
        self.inner
            .main_results
            .lock()
            .unwrap()
            .pop_front()
            .unwrap_or(Ok(()))
    }

    fn run_isolated(&self, job: CronJob) -> BoxFuture<'static, CronRunOutput> {
        let message = match &job.payload {
            pincer_automation::cron::CronPayload::AgentTurn(p) => p.message.clone(),
            pincer_automation::cron::CronPayload::SystemEvent(p) => p.text.clone(),
        };
        self.record(&job, "isolated", &message);
        let this = self.clone();
        Box::pin(async move {
            let inner = &this.inner;
            let now = inner.active.fetch_add(1, Ordering::SeqCst) + 1;
            inner.max_active.fetch_max(now, Ordering::SeqCst);
            let run_for = inner.run_for_ms.load(Ordering::SeqCst);
            if run_for > 0 {
                tokio::time::sleep(Duration::from_millis(run_for)).await;
            }
            let step = inner.clock_step_ms.load(Ordering::SeqCst);
            this.clock.advance(Duration::from_millis(step));
            inner.active.fetch_sub(1, Ordering::SeqCst);
            let scripted = inner.outputs.lock().unwrap().pop_front();
            scripted.unwrap_or_else(|| CronRunOutput::ok("done"))
        })
    }
}

/// A service over `dir/cron` at `clock`, in UTC, with `settings`, the fake attached.
pub fn service_with(
    dir: &tempfile::TempDir,
    clock: &ManualClock,
    settings: CronSettings,
) -> (Arc<CronService>, FakeExecutor) {
    let service = CronService::open(
        dir.path().join("cron"),
        settings,
        Arc::new(clock.clone()),
        TimeZone::UTC,
    );
    let fake = FakeExecutor::new(clock);
    service.attach(Arc::new(fake.clone()));
    (service, fake)
}

/// [`service_with`] the default settings.
pub fn service(dir: &tempfile::TempDir, clock: &ManualClock) -> (Arc<CronService>, FakeExecutor) {
    service_with(dir, clock, CronSettings::default())
}

/// A fresh scheduler at [`T0`] with the default settings: its directory (kept alive by the
/// caller), clock, service and fake.
pub fn fresh() -> (
    tempfile::TempDir,
    ManualClock,
    Arc<CronService>,
    FakeExecutor,
) {
    let dir = tempfile::tempdir().unwrap();
    let clock = ManualClock::at(T0);
    let (service, fake) = service(&dir, &clock);
    (dir, clock, service, fake)
}

/// A job input from its JSON (the `cron.add` params).
pub fn new_job(value: Value) -> NewCronJob {
    serde_json::from_value(value).unwrap()
}

/// A `main` reminder every `every_ms`.
pub fn reminder(name: &str, every_ms: i64, text: &str) -> NewCronJob {
    new_job(serde_json::json!({
        "name": name,
        "schedule": {"kind": "every", "everyMs": every_ms},
        "payload": {"kind": "systemEvent", "text": text},
    }))
}

/// An isolated task every `every_ms`.
pub fn task(name: &str, every_ms: i64, message: &str) -> NewCronJob {
    new_job(serde_json::json!({
        "name": name,
        "schedule": {"kind": "every", "everyMs": every_ms},
        "payload": {"kind": "agentTurn", "message": message},
    }))
}

/// Records the events the service emits.
pub fn record_events(service: &CronService) -> Arc<Mutex<Vec<Value>>> {
    let events = Arc::new(Mutex::new(Vec::new()));
    let sink = Arc::clone(&events);
    service.set_event_sink(Arc::new(move |event| sink.lock().unwrap().push(event)));
    events
}

/// The `action`s of the recorded events, in order.
pub fn actions(events: &Mutex<Vec<Value>>) -> Vec<String> {
    events
        .lock()
        .unwrap()
        .iter()
        .map(|e| e["action"].as_str().unwrap().to_string())
        .collect()
}

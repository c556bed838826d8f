//! The heartbeat clock under paused tokio time: coalescing, busy retry, the interval floor,
//! off at `every = 0`, one run at a time; and an exec exit relayed end to end through the
//! system events, the exec prompt and the reply rules, with `HEARTBEAT_OK` never delivered.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use pincer_automation::heartbeat::{
    EXEC_EVENT_PROMPT, HEARTBEAT_OK, HeartbeatRunner, HeartbeatSettings, HeartbeatWake, PromptKind,
    PromptOptions, RunOutcome, WakeRequest, build_heartbeat_prompt_with, exec_exit_reason,
    heartbeat_reply_delivery,
};
use pincer_automation::system_events::{Clock, ManualClock, SystemEvents};
use tokio::time::{Instant, sleep};

const T0_MS: i64 = 1_736_950_205_000; // 2025-01-15 14:10:05 UTC
const MIN: Duration = Duration::from_secs(60);

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

/// What the fake runner does on a call.
enum Step {
    Return(RunOutcome),
    Take(Duration, RunOutcome),
    Panic,
}

/// A scripted runner recording when it was called and with what reason.
struct Script {
    t0: Instant,
    calls: Mutex<Vec<(Duration, String)>>,
    steps: Mutex<VecDeque<Step>>,
    active: AtomicUsize,
    max_active: AtomicUsize,
}

impl Script {
    fn new(steps: Vec<Step>) -> Arc<Self> {
        Arc::new(Self {
            t0: Instant::now(),
            calls: Mutex::new(Vec::new()),
            steps: Mutex::new(steps.into()),
            active: AtomicUsize::new(0),
            max_active: AtomicUsize::new(0),
        })
    }

    fn calls(&self) -> Vec<(Duration, String)> {
        self.calls.lock().unwrap().clone()
    }

    fn times(&self) -> Vec<Duration> {
        self.calls().into_iter().map(|(t, _)| t).collect()
    }

    fn runner(self: &Arc<Self>) -> impl HeartbeatRunner {
        let script = self.clone();
        move |req: WakeRequest| {
            let script = script.clone();
            async move {
                let at = Instant::now() - script.t0;
                script.calls.lock().unwrap().push((at, req.reason));
                let step = script.steps.lock().unwrap().pop_front();
                let active = script.active.fetch_add(1, Ordering::SeqCst) + 1;
                script.max_active.fetch_max(active, Ordering::SeqCst);
                let outcome = match step.unwrap_or(Step::Return(RunOutcome::Ran)) {
                    Step::Return(outcome) => outcome,
                    Step::Take(how_long, outcome) => {
                        sleep(how_long).await;
                        outcome
                    }
                    Step::Panic => panic!("scripted panic"),
                };
                script.active.fetch_sub(1, Ordering::SeqCst);
                outcome
            }
        }
    }
}

fn clock() -> Arc<ManualClock> {
    Arc::new(ManualClock::at(T0_MS))
}

#[tokio::test(start_paused = true)]
async fn five_requests_within_the_window_make_one_run() {
    let script = Script::new(vec![]);
    let wake = HeartbeatWake::spawn(30 * MIN, clock(), script.runner());
    wake.request_now("exec:one:exit");
    for reason in ["requested", "exec:two:exit", "interval", "cron:job"] {
        sleep(ms(40)).await;
        wake.request_now(reason);
    }
    sleep(ms(5_000)).await;
    // One run, 250 ms after the first request; the newest highest-priority reason.
    assert_eq!(script.calls(), [(ms(250), "exec:two:exit".to_owned())]);
    sleep(29 * MIN).await;
    assert_eq!(script.calls().len(), 1, "no extra run before the next tick");
    sleep(2 * MIN).await;
    let calls = script.calls();
    assert_eq!(calls.len(), 2);
    assert_eq!(calls[1], (30 * MIN + ms(250), "interval".to_owned()));
}

#[tokio::test(start_paused = true)]
async fn a_busy_lane_is_retried_after_a_second() {
    let script = Script::new(vec![
        Step::Return(RunOutcome::Busy),
        Step::Return(RunOutcome::Busy),
        Step::Return(RunOutcome::Ran),
    ]);
    let wake = HeartbeatWake::spawn(30 * MIN, clock(), script.runner());
    wake.request_now("exec:abc:exit");
    sleep(ms(600)).await;
    // A request during the cooldown neither cuts it short nor replaces the exec reason.
    wake.request_now("requested");
    sleep(ms(10_000)).await;
    let reason = "exec:abc:exit".to_owned();
    assert_eq!(
        script.calls(),
        [
            (ms(250), reason.clone()),
            (ms(1_250), reason.clone()),
            (ms(2_250), reason)
        ]
    );
    assert_eq!(wake.status().last_outcome, Some(RunOutcome::Ran));
}

#[tokio::test(start_paused = true)]
async fn the_interval_is_a_floor_for_timer_runs() {
    let script = Script::new(vec![]);
    let wake = HeartbeatWake::spawn(10 * MIN, clock(), script.runner());
    sleep(12 * MIN).await;
    wake.request_now("exec:a:exit");
    sleep(25 * MIN).await;
    let calls = script.calls();
    let reasons: Vec<&str> = calls.iter().map(|(_, r)| r.as_str()).collect();
    // The requested run at 12:00.25 postpones the next tick to 22:00.25, not 20:00.
    assert_eq!(
        script.times(),
        [
            10 * MIN,
            12 * MIN + ms(250),
            22 * MIN + ms(250),
            32 * MIN + ms(250)
        ]
    );
    assert_eq!(reasons, ["interval", "exec:a:exit", "interval", "interval"]);

    // Requested runs are not held to the interval: spaced-out exits each run once.
    let before = script.calls().len();
    for i in 0..3 {
        wake.request_now(&format!("exec:{i}:exit"));
        sleep(ms(2_000)).await;
    }
    assert_eq!(script.calls().len(), before + 3);
}

#[tokio::test(start_paused = true)]
async fn every_zero_turns_the_heartbeat_off() {
    let script = Script::new(vec![]);
    let wake = HeartbeatWake::spawn(Duration::ZERO, clock(), script.runner());
    sleep(180 * MIN).await;
    wake.request_now("exec:a:exit");
    sleep(ms(5_000)).await;
    assert!(script.calls().is_empty());
    let status = wake.status();
    assert_eq!(status.every_ms, 0);
    assert_eq!(status.runs, 0);
    assert_eq!(
        status.last_outcome,
        Some(RunOutcome::Skipped("disabled".into()))
    );
    assert_eq!(status.next_due_at_ms, None);

    // Turned on by a config reload: the first tick is one period from then.
    wake.set_every(5 * MIN);
    sleep(6 * MIN).await;
    let t = script.times();
    assert_eq!(t.len(), 1);
    assert_eq!(t[0], 180 * MIN + ms(5_000) + 5 * MIN);
}

#[tokio::test(start_paused = true)]
async fn requests_during_a_run_make_one_follow_up() {
    let script = Script::new(vec![Step::Take(ms(2_000), RunOutcome::Ran)]);
    let wake = HeartbeatWake::spawn(30 * MIN, clock(), script.runner());
    wake.request_now("exec:a:exit");
    sleep(ms(1_000)).await;
    assert!(wake.status().running);
    for i in 0..5 {
        wake.request_now(&format!("exec:b{i}:exit"));
        sleep(ms(100)).await;
    }
    sleep(ms(10_000)).await;
    assert_eq!(
        script.calls(),
        [
            (ms(250), "exec:a:exit".to_owned()),
            (ms(2_250), "exec:b4:exit".to_owned())
        ]
    );
    assert_eq!(
        script.max_active.load(Ordering::SeqCst),
        1,
        "never two at once"
    );
}

#[tokio::test(start_paused = true)]
async fn a_panicking_run_is_retried_and_the_clock_survives() {
    let script = Script::new(vec![Step::Panic]);
    let wake = HeartbeatWake::spawn(30 * MIN, clock(), script.runner());
    wake.request_now("manual");
    sleep(ms(5_000)).await;
    assert_eq!(script.times(), [ms(250), ms(1_250)]);
    assert_eq!(wake.status().runs, 2);
}

#[tokio::test(start_paused = true)]
async fn status_reports_wall_times_from_the_clock() {
    let clock = clock();
    let script = Script::new(vec![]);
    let wake = HeartbeatWake::spawn(30 * MIN, clock.clone(), script.runner());
    sleep(ms(10)).await;
    let status = wake.status();
    assert_eq!(status.every_ms, 1_800_000);
    assert_eq!(status.runs, 0);
    // Stamped when last published (at spawn); the manual clock has not moved since.
    assert_eq!(status.next_due_at_ms, Some(T0_MS + 1_800_000));
    clock.set(T0_MS + 60_000);
    wake.request_now("");
    sleep(ms(300)).await;
    let status = wake.status();
    assert_eq!(status.runs, 1);
    assert_eq!(status.last_reason.as_deref(), Some("requested"));
    assert_eq!(status.last_run_at_ms, Some(T0_MS + 60_000));
    assert_eq!(status.next_due_at_ms, Some(T0_MS + 60_000 + 1_800_000));
    assert!(!status.running);
    assert_eq!(status.pending_reason, None);
}

#[tokio::test(start_paused = true)]
async fn a_stopped_clock_runs_nothing() {
    let script = Script::new(vec![]);
    let wake = HeartbeatWake::spawn(MIN, clock(), script.runner());
    let other = wake.clone();
    wake.stop();
    other.request_now("manual");
    sleep(10 * MIN).await;
    assert!(script.calls().is_empty());
    drop(other);
    drop(wake);
}

/// One agent: its main session's events, a fake model, and what reached the user.
struct Gateway {
    events: SystemEvents,
    settings: HeartbeatSettings,
    prompts: Mutex<Vec<(PromptKind, String)>>,
    delivered: Mutex<Vec<String>>,
}

const MAIN: &str = "agent:main:main";

impl Gateway {
    /// The run callback the gateway would register, minus lanes and files.
    async fn run(self: Arc<Self>, req: WakeRequest) -> RunOutcome {
        let events = self.events.consume(MAIN);
        if events.is_empty() && req.kind().is_event_driven() {
            return RunOutcome::Skipped("no-events".into());
        }
        let prompt = build_heartbeat_prompt_with(
            &events,
            &PromptOptions {
                override_prompt: self.settings.prompt.as_deref(),
                reason: Some(&req.reason),
                deliver_to_user: self.settings.delivers(),
            },
        );
        // The model relays exec results, acks everything else, and decorates both.
        let reply = match prompt.kind {
            PromptKind::ExecEvent => "**All 142 tests passed.** HEARTBEAT_OK",
            _ => "<b>HEARTBEAT_OK</b>",
        };
        self.prompts
            .lock()
            .unwrap()
            .push((prompt.kind, prompt.text));
        if let Some(text) =
            heartbeat_reply_delivery(reply, prompt.kind, self.settings.ack_max_chars)
        {
            self.delivered.lock().unwrap().push(text);
        }
        RunOutcome::Ran
    }
}

#[tokio::test(start_paused = true)]
async fn an_exec_exit_is_relayed_and_heartbeat_ok_is_never_delivered() {
    let clock = clock();
    let gateway = Arc::new(Gateway {
        events: SystemEvents::new(clock.clone()),
        settings: HeartbeatSettings::default(),
        prompts: Mutex::new(Vec::new()),
        delivered: Mutex::new(Vec::new()),
    });
    let g = gateway.clone();
    let wake = HeartbeatWake::spawn(
        gateway.settings.every(),
        clock.clone(),
        move |req: WakeRequest| g.clone().run(req),
    );

    // A background exec exits: the notifier's event and wake, as OpenClaw's
    // `maybeNotifyOnExit` does.
    let summary = "Exec completed (abcd1234, code 0) :: 142 passed in 3m22s";
    gateway
        .events
        .inject(MAIN, summary, clock.now_ms())
        .unwrap();
    wake.request_now(&exec_exit_reason("abcd1234-5678"));
    sleep(ms(1_000)).await;

    let prompts = gateway.prompts.lock().unwrap().clone();
    assert_eq!(prompts.len(), 1);
    assert_eq!(prompts[0].0, PromptKind::ExecEvent);
    assert_eq!(
        prompts[0].1,
        format!("System: [2025-01-15 14:10:05 UTC] {summary}\n\n{EXEC_EVENT_PROMPT}")
    );
    assert_eq!(
        gateway.delivered.lock().unwrap().clone(),
        ["**All 142 tests passed.**"]
    );
    assert!(
        !gateway.events.has_pending(MAIN),
        "the run drained the events"
    );

    // The next tick has nothing to say: the wrapped ack stays silent.
    sleep(31 * MIN).await;
    let prompts = gateway.prompts.lock().unwrap().clone();
    assert_eq!(prompts.len(), 2);
    assert_eq!(prompts[1].0, PromptKind::Heartbeat);
    let delivered = gateway.delivered.lock().unwrap().clone();
    assert_eq!(delivered.len(), 1);
    assert!(delivered.iter().all(|text| !text.contains(HEARTBEAT_OK)));
}

//! The cron scheduler through its public API: which jobs a tick runs and how (main vs
//! isolated), what a run leaves in the job state and the run log, one-shot cleanup, retries
//! with backoff and giving up, the concurrency limit, catch-up after downtime, runs
//! interrupted by a stop, a corrupt jobs file, `update` patches, `remove`, `run_now`, the
//! event stream, and the loop itself under paused tokio time. Time is a `ManualClock`; a
//! fake executor records calls and answers from a script.

#[path = "cron_service/fake.rs"]
mod fake;

use std::sync::Arc;
use std::time::Duration;

use fake::{T0, actions, fresh, new_job, record_events, reminder, service, service_with, task};
use pincer_automation::cron::{
    CronJob, CronRunOutput, CronSettings, INTERRUPTED_ERROR, RunStatus, format_iso_ms,
};
use pincer_automation::system_events::ManualClock;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

const MIN: i64 = 60_000;
const HOUR: i64 = 3_600_000;

fn advance_ms(clock: &ManualClock, ms: i64) {
    clock.advance(Duration::from_millis(u64::try_from(ms).unwrap()));
}

#[tokio::test]
async fn added_jobs_are_listed_by_next_run() {
    let (dir, _clock, service, _fake) = fresh();
    let later = service.add(reminder("later", 2 * MIN, "b")).unwrap();
    let sooner = service.add(reminder("sooner", MIN, "a")).unwrap();
    let mut off = reminder("off", MIN, "c");
    off.enabled = Some(false);
    let off = service.add(off).unwrap();

    assert_eq!(sooner.state.next_run_at_ms, Some(T0 + MIN));
    assert_eq!(later.state.next_run_at_ms, Some(T0 + 2 * MIN));
    assert_eq!(off.state.next_run_at_ms, None);
    let names = |jobs: Vec<pincer_automation::cron::CronJob>| {
        jobs.into_iter().map(|j| j.name).collect::<Vec<_>>()
    };
    assert_eq!(names(service.list(false)), ["sooner", "later"]);
    assert_eq!(names(service.list(true)), ["sooner", "later", "off"]);
    assert_eq!(service.get(&sooner.id).unwrap(), sooner);

    let status = service.status();
    assert!(status.enabled);
    assert_eq!(status.jobs, 3);
    assert_eq!(status.next_wake_at_ms, Some(T0 + MIN));
    assert_eq!(status.store_path, dir.path().join("cron/jobs.json"));
    assert_eq!(status.load_error, None);
    let json = status.to_json();
    assert_eq!(json["nextWakeAtMs"], T0 + MIN);
    assert_eq!(json["jobs"], 3);
}

#[tokio::test]
async fn a_tick_runs_only_due_jobs_and_main_jobs_enqueue_their_text() {
    let (_dir, clock, service, fake) = fresh();
    let every_min = service.add(reminder("m", MIN, "stand up")).unwrap();
    let every_two = service.add(reminder("t", 2 * MIN, "drink")).unwrap();

    assert_eq!(service.tick().await, 0);
    advance_ms(&clock, MIN);
    assert_eq!(service.tick().await, 1);
    let calls = fake.calls();
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0].job_id, every_min.id);
    assert_eq!(calls[0].target, "main");
    assert_eq!(calls[0].text, "stand up");

    let job = service.get(&every_min.id).unwrap();
    assert_eq!(job.state.last_status, Some(RunStatus::Ok));
    assert_eq!(job.state.last_run_at_ms, Some(T0 + MIN));
    assert_eq!(job.state.next_run_at_ms, Some(T0 + 2 * MIN));
    assert_eq!(job.state.running_at_ms, None);
    assert_eq!(
        service.get(&every_two.id).unwrap().state.last_run_at_ms,
        None
    );

    advance_ms(&clock, MIN);
    assert_eq!(service.tick().await, 2);
    assert_eq!(fake.calls().len(), 3);
}

#[tokio::test]
async fn a_failing_enqueue_is_a_failed_run() {
    let (_dir, clock, service, fake) = fresh();
    let job = service.add(reminder("m", HOUR, "x")).unwrap();
    fake.script_main(Err("no main session".into()));
    advance_ms(&clock, HOUR);
    assert_eq!(service.tick().await, 1);
    let job = service.get(&job.id).unwrap();
    assert_eq!(job.state.last_status, Some(RunStatus::Error));
    assert_eq!(job.state.last_error.as_deref(), Some("no main session"));
}

#[tokio::test]
async fn an_isolated_run_lands_in_the_state_and_the_run_log() {
    let (_dir, clock, service, fake) = fresh();
    let job = service
        .add(task("report", HOUR, "write the report"))
        .unwrap();
    fake.clock_step(4_000);
    fake.script_isolated(CronRunOutput {
        summary: Some("report sent".into()),
        delivered: Some(true),
        delivery_status: Some("delivered".into()),
        session_id: Some("s-1".into()),
        session_key: Some(format!("agent:main:cron:{}", job.id)),
        model: Some("gpt-test".into()),
        provider: Some("openai".into()),
        ..CronRunOutput::default()
    });
    advance_ms(&clock, HOUR);
    assert_eq!(service.tick().await, 1);
    assert_eq!(fake.calls()[0].target, "isolated");
    assert_eq!(fake.calls()[0].text, "write the report");

    let state = service.get(&job.id).unwrap().state;
    assert_eq!(state.last_status, Some(RunStatus::Ok));
    assert_eq!(state.last_run_status, Some(RunStatus::Ok));
    assert_eq!(state.last_run_at_ms, Some(T0 + HOUR));
    assert_eq!(state.last_duration_ms, Some(4_000));
    assert_eq!(state.last_delivered, Some(true));
    assert_eq!(state.last_delivery_status.as_deref(), Some("delivered"));
    assert_eq!(state.consecutive_errors, Some(0));
    assert_eq!(state.next_run_at_ms, Some(T0 + 2 * HOUR));

    let runs = service.runs(&job.id, 10).unwrap();
    assert_eq!(runs.len(), 1);
    let run = &runs[0];
    assert_eq!(run.status, Some(RunStatus::Ok));
    assert_eq!(run.summary.as_deref(), Some("report sent"));
    assert_eq!(run.run_at_ms, Some(T0 + HOUR));
    assert_eq!(run.duration_ms, Some(4_000));
    assert_eq!(run.ts, T0 + HOUR + 4_000);
    assert_eq!(run.next_run_at_ms, Some(T0 + 2 * HOUR));
    assert_eq!(run.delivered, Some(true));
    assert_eq!(run.session_key, Some(format!("agent:main:cron:{}", job.id)));
    assert_eq!(run.model.as_deref(), Some("gpt-test"));
    assert_eq!(run.provider.as_deref(), Some("openai"));
}

fn at_job(name: &str, delete_after_run: Option<bool>) -> pincer_automation::cron::NewCronJob {
    let mut job = new_job(json!({
        "name": name,
        "schedule": {"kind": "at", "at": "10m"},
        "payload": {"kind": "systemEvent", "text": "ping"},
    }));
    job.delete_after_run = delete_after_run;
    job
}

#[tokio::test]
async fn a_one_shot_job_is_deleted_after_success_or_disabled_when_kept() {
    let (_dir, clock, service, _fake) = fresh();
    let deleted = service.add(at_job("gone", None)).unwrap();
    let kept = service.add(at_job("kept", Some(false))).unwrap();
    assert_eq!(deleted.delete_after_run, Some(true));
    assert_eq!(deleted.state.next_run_at_ms, Some(T0 + 10 * MIN));

    advance_ms(&clock, 10 * MIN);
    assert_eq!(service.tick().await, 2);
    assert_eq!(service.get(&deleted.id), None);
    assert_eq!(service.runs(&deleted.id, 5).unwrap().len(), 1);
    let kept = service.get(&kept.id).unwrap();
    assert!(!kept.enabled);
    assert_eq!(kept.state.next_run_at_ms, None);
    assert_eq!(kept.state.last_status, Some(RunStatus::Ok));

    advance_ms(&clock, HOUR);
    assert_eq!(service.tick().await, 0);
}

#[tokio::test]
async fn a_failing_one_shot_job_is_retried_with_backoff_then_given_up() {
    let (_dir, clock, service, fake) = fresh();
    let job = service.add(at_job("flaky", None)).unwrap();
    for _ in 0..4 {
        fake.script_main(Err("boom".into()));
    }
    advance_ms(&clock, 10 * MIN);
    let mut now = T0 + 10 * MIN;
    for (attempt, backoff) in [(1, 60_000), (2, 120_000), (3, 300_000)] {
        assert_eq!(service.tick().await, 1);
        let state = service.get(&job.id).unwrap().state;
        assert_eq!(state.consecutive_errors, Some(attempt));
        assert_eq!(
            state.next_run_at_ms,
            Some(now + backoff),
            "attempt {attempt}"
        );
        // Not before the backoff is over.
        advance_ms(&clock, backoff - 1);
        assert_eq!(service.tick().await, 0);
        advance_ms(&clock, 1);
        now += backoff;
    }
    assert_eq!(service.tick().await, 1);
    let job = service.get(&job.id).unwrap();
    assert!(!job.enabled);
    assert_eq!(job.state.next_run_at_ms, None);
    assert_eq!(job.state.consecutive_errors, Some(4));
    assert_eq!(job.state.last_error.as_deref(), Some("boom"));
    assert_eq!(job.state.last_run_status, Some(RunStatus::Error));
    let runs = service.runs(&job.id, 10).unwrap();
    assert_eq!(runs.len(), 4);
    assert!(runs.iter().all(|r| r.status == Some(RunStatus::Error)));
    assert_eq!(runs[3].summary.as_deref(), Some("gave up after 4 attempts"));
    assert_eq!(runs[2].summary, None);
    assert_eq!(fake.calls().len(), 4);
}

#[tokio::test]
async fn a_failing_recurring_job_retries_then_keeps_its_schedule() {
    let dir = tempfile::tempdir().unwrap();
    let clock = ManualClock::at(T0);
    let settings = CronSettings {
        retry_max_attempts: 2,
        ..CronSettings::default()
    };
    let (service, fake) = service_with(&dir, &clock, settings);
    let job = service
        .add(new_job(json!({
            "name": "hourly",
            "schedule": {"kind": "cron", "expr": "0 * * * *", "tz": "UTC", "staggerMs": 0},
            "payload": {"kind": "agentTurn", "message": "check"},
        })))
        .unwrap();
    assert_eq!(job.state.next_run_at_ms, Some(T0 + HOUR));
    for _ in 0..3 {
        fake.script_isolated(CronRunOutput::failed("model down"));
    }
    advance_ms(&clock, HOUR);
    service.tick().await;
    assert_eq!(
        service.get(&job.id).unwrap().state.next_run_at_ms,
        Some(T0 + HOUR + MIN)
    );
    advance_ms(&clock, MIN);
    service.tick().await;
    assert_eq!(
        service.get(&job.id).unwrap().state.next_run_at_ms,
        Some(T0 + HOUR + 3 * MIN)
    );
    advance_ms(&clock, 2 * MIN);
    service.tick().await;
    let job_now = service.get(&job.id).unwrap();
    assert!(job_now.enabled);
    assert_eq!(job_now.state.consecutive_errors, Some(3));
    assert_eq!(job_now.state.next_run_at_ms, Some(T0 + 2 * HOUR));
    // The next success resets the count.
    advance_ms(&clock, HOUR - 3 * MIN);
    assert_eq!(service.tick().await, 1);
    let state = service.get(&job.id).unwrap().state;
    assert_eq!(state.consecutive_errors, Some(0));
    assert_eq!(state.last_error, None);
    assert_eq!(state.next_run_at_ms, Some(T0 + 3 * HOUR));
}

async fn peak_concurrency(max_concurrent_runs: usize) -> (usize, usize) {
    let dir = tempfile::tempdir().unwrap();
    let clock = ManualClock::at(T0);
    let settings = CronSettings {
        max_concurrent_runs,
        ..CronSettings::default()
    };
    let (service, fake) = service_with(&dir, &clock, settings);
    fake.run_for(1_000);
    for name in ["a", "b", "c"] {
        service.add(task(name, MIN, name)).unwrap();
    }
    advance_ms(&clock, MIN);
    let ran = service.tick().await;
    (ran, fake.max_active())
}

#[tokio::test(start_paused = true)]
async fn max_concurrent_runs_limits_runs_in_flight() {
    assert_eq!(peak_concurrency(1).await, (3, 1));
    assert_eq!(peak_concurrency(2).await, (3, 2));
}

/// A job added by an earlier gateway run, whose service is gone.
fn added_earlier(dir: &tempfile::TempDir, clock: &ManualClock, name: &str, text: &str) -> CronJob {
    let (before, _) = service(dir, clock);
    before.add(reminder(name, MIN, text)).unwrap()
}

/// Rewrites `cron/jobs.json` through `edit`, as a crash or a hand edit would leave it.
fn edit_jobs_file(dir: &tempfile::TempDir, edit: impl FnOnce(&mut Value)) {
    let path = dir.path().join("cron/jobs.json");
    let mut file: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    edit(&mut file);
    std::fs::write(&path, serde_json::to_vec(&file).unwrap()).unwrap();
}

/// Waits (paused tokio time) until `cond` holds.
async fn until(mut cond: impl FnMut() -> bool) {
    for _ in 0..1_000 {
        if cond() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("condition not reached");
}

#[tokio::test(start_paused = true)]
async fn a_job_missed_while_down_runs_once_on_start() {
    let dir = tempfile::tempdir().unwrap();
    let clock = ManualClock::at(T0);
    let job = added_earlier(&dir, &clock, "tick", "tick");
    // Down from T0 until 3 slots (T0+1m, +2m, +3m) have passed.
    advance_ms(&clock, 3 * MIN + 30_000);
    let (service, fake) = service(&dir, &clock);
    let stop = CancellationToken::new();
    let executor: Arc<dyn pincer_automation::cron::CronExecutor> = Arc::new(fake.clone());
    let handle = tokio::spawn(Arc::clone(&service).run(executor, stop.clone()));
    until(|| !service.runs(&job.id, 5).unwrap().is_empty()).await;
    tokio::time::sleep(Duration::from_secs(1)).await;

    assert_eq!(fake.calls().len(), 1);
    let runs = service.runs(&job.id, 5).unwrap();
    assert_eq!(runs.len(), 1);
    assert_eq!(
        runs[0].summary.as_deref(),
        Some(
            format!(
                "catch-up: 3 runs missed since {} while the gateway was down; ran once",
                format_iso_ms(T0 + MIN).unwrap()
            )
            .as_str()
        )
    );
    let now = T0 + 3 * MIN + 30_000;
    assert_eq!(runs[0].run_at_ms, Some(now));
    let next = service.get(&job.id).unwrap().state.next_run_at_ms.unwrap();
    assert_eq!(next, now + MIN);
    stop.cancel();
    handle.await.unwrap();
}

#[tokio::test(start_paused = true)]
async fn a_run_interrupted_by_a_stop_is_recorded_as_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let clock = ManualClock::at(T0);
    let job = added_earlier(&dir, &clock, "tick", "tick");
    // The gateway died 30 s into a run.
    edit_jobs_file(&dir, |file| {
        file["jobs"][0]["state"]["runningAtMs"] = json!(T0 + 30_000);
    });
    advance_ms(&clock, 40_000);

    let (service, fake) = service(&dir, &clock);
    let events = record_events(&service);
    let stop = CancellationToken::new();
    let handle = tokio::spawn(Arc::clone(&service).run(Arc::new(fake.clone()), stop.clone()));
    until(|| !service.runs(&job.id, 5).unwrap().is_empty()).await;
    stop.cancel();
    handle.await.unwrap();

    let state = service.get(&job.id).unwrap().state;
    assert_eq!(state.running_at_ms, None);
    assert_eq!(state.last_status, Some(RunStatus::Error));
    assert_eq!(state.last_run_status, Some(RunStatus::Error));
    assert_eq!(state.last_error.as_deref(), Some(INTERRUPTED_ERROR));
    assert_eq!(state.last_run_at_ms, Some(T0 + 30_000));
    assert_eq!(state.consecutive_errors, Some(1));
    // The natural slot (last run + 1 min) comes before the 60 s backoff from now.
    assert_eq!(state.next_run_at_ms, Some(T0 + 90_000));
    let runs = service.runs(&job.id, 5).unwrap();
    assert_eq!(runs.len(), 1);
    assert_eq!(runs[0].error.as_deref(), Some(INTERRUPTED_ERROR));
    assert_eq!(runs[0].run_at_ms, Some(T0 + 30_000));
    assert!(fake.calls().is_empty());
    assert_eq!(actions(&events), ["finished"]);
}

#[tokio::test]
async fn a_corrupt_jobs_file_is_reported_and_the_service_still_works() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("cron")).unwrap();
    std::fs::write(dir.path().join("cron/jobs.json"), "{ not json").unwrap();
    let clock = ManualClock::at(T0);
    let (service, _fake) = service(&dir, &clock);
    let status = service.status();
    let error = status.load_error.clone().unwrap();
    assert!(error.contains("not a valid cron jobs file"), "{error}");
    assert_eq!(service.load_error(), Some(error.as_str()));
    assert_eq!(status.to_json()["loadError"], error.as_str());
    assert_eq!(status.jobs, 0);
    let kept = std::fs::read_dir(dir.path().join("cron"))
        .unwrap()
        .filter(|e| {
            let name = e.as_ref().unwrap().file_name();
            name.to_string_lossy().starts_with("jobs.json.corrupt.")
        })
        .count();
    assert_eq!(kept, 1);

    service.add(reminder("fresh", MIN, "x")).unwrap();
    assert_eq!(service.list(true).len(), 1);
}

#[path = "cron_service/manage.rs"]
mod manage;

#[tokio::test]
async fn an_unreadable_job_is_shown_and_never_run() {
    let dir = tempfile::tempdir().unwrap();
    let clock = ManualClock::at(T0);
    let good = added_earlier(&dir, &clock, "good", "x");
    edit_jobs_file(&dir, |file| {
        let mut bad = file["jobs"][0].clone();
        bad["id"] = json!("bad-1");
        bad["schedule"] = json!({"kind": "every", "everyMs": 0});
        file["jobs"].as_array_mut().unwrap().push(bad);
    });

    let (service, fake) = service(&dir, &clock);
    let status = service.status();
    assert_eq!(status.jobs, 1);
    assert_eq!(status.unreadable.len(), 1);
    assert_eq!(status.unreadable[0].id.as_deref(), Some("bad-1"));
    assert_eq!(status.to_json()["unreadable"][0]["id"], "bad-1");

    advance_ms(&clock, MIN);
    assert_eq!(service.tick().await, 1);
    assert!(fake.calls().iter().all(|c| c.job_id == good.id));
    let err = service.run_now("bad-1", true).await.unwrap_err();
    assert!(
        matches!(
            err,
            pincer_automation::cron::CronServiceError::Unreadable { .. }
        ),
        "{err}"
    );
    assert!(service.remove("bad-1").unwrap());
    assert!(service.status().unreadable.is_empty());
}

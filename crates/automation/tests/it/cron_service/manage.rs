//! Managing jobs through the service: `update` patches, `remove`, `run_now`, the event
//! stream, and the scheduler loop firing under paused tokio time.

use std::sync::Arc;
use std::time::Duration;

use pincer_automation::cron::{
    CronExecutor, CronJobError, CronPayload, CronService, CronServiceError, CronSettings, RunNow,
    RunStatus,
};
use pincer_automation::system_events::ManualClock;
use serde_json::json;
use tokio_util::sync::CancellationToken;

use super::fake::{T0, actions, fresh, new_job, record_events, reminder, service_with, task};
use super::{MIN, advance_ms, at_job, until};

#[tokio::test]
async fn update_merges_payloads_and_recomputes_the_next_run() {
    let (_dir, clock, service, _fake) = fresh();
    let events = record_events(&service);
    let job = service
        .add(new_job(json!({
            "name": "digest",
            "schedule": {"kind": "every", "everyMs": MIN},
            "payload": {"kind": "agentTurn", "message": "a", "model": "m1"},
        })))
        .unwrap();

    // Same kind: merged, the model stays.
    let job2 = service
        .update(
            &job.id,
            &json!({"payload": {"message": "b"}, "name": "Digest"}),
        )
        .unwrap();
    let CronPayload::AgentTurn(turn) = &job2.payload else {
        panic!("{:?}", job2.payload)
    };
    assert_eq!(
        (turn.message.as_str(), turn.model.as_deref()),
        ("b", Some("m1"))
    );
    assert_eq!(job2.name, "Digest");
    assert_eq!(job2.state.next_run_at_ms, Some(T0 + MIN));

    // Another kind: replaced whole (no model carried over to a systemEvent).
    let job3 = service
        .update(
            &job.id,
            &json!({
                "sessionTarget": "main",
                "payload": {"kind": "systemEvent", "text": "x"},
                "delivery": null,
            }),
        )
        .unwrap();
    assert_eq!(job3.payload, CronPayload::system_event("x"));
    assert_eq!(job3.delivery, None);

    // A new schedule gets a new next run.
    advance_ms(&clock, 10_000);
    let job4 = service
        .update(
            &job.id,
            &json!({"schedule": {"kind": "every", "everyMs": 5 * MIN}}),
        )
        .unwrap();
    assert_eq!(job4.state.next_run_at_ms, Some(T0 + 10_000 + 5 * MIN));
    assert_eq!(job4.updated_at_ms, T0 + 10_000);
    assert_eq!(service.get(&job.id).unwrap(), job4);

    // Unknown and read-only keys are refused.
    let err = service
        .update(&job.id, &json!({"colour": "red"}))
        .unwrap_err();
    assert!(
        matches!(&err, CronServiceError::InvalidPatch(m) if m.starts_with("unknown field `colour`")),
        "{err}"
    );
    let err = service
        .update(&job.id, &json!({"id": "other"}))
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "invalid cron job patch: `id` cannot be changed"
    );
    let err = service.update(&job.id, &json!({"state": {}})).unwrap_err();
    assert!(matches!(err, CronServiceError::InvalidPatch(_)), "{err}");
    let err = service.update(&job.id, &json!(["enabled"])).unwrap_err();
    assert!(matches!(err, CronServiceError::InvalidPatch(_)), "{err}");
    // A patch that breaks the job is refused and nothing changes.
    let err = service
        .update(
            &job.id,
            &json!({"payload": {"kind": "agentTurn", "message": "m"}}),
        )
        .unwrap_err();
    assert!(
        matches!(
            err,
            CronServiceError::Invalid(CronJobError::MainNeedsSystemEvent)
        ),
        "{err}"
    );
    assert_eq!(service.get(&job.id).unwrap(), job4);
    let err = service.update("nope", &json!({"name": "x"})).unwrap_err();
    assert!(matches!(err, CronServiceError::NotFound { .. }), "{err}");

    assert_eq!(actions(&events), ["added", "updated", "updated", "updated"]);
}

#[tokio::test]
async fn enabling_a_one_shot_job_whose_time_passed_is_refused() {
    let (_dir, clock, service, _fake) = fresh();
    let mut input = at_job("later", None);
    input.enabled = Some(false);
    let job = service.add(input).unwrap();
    assert_eq!(job.state.next_run_at_ms, None);
    advance_ms(&clock, 20 * MIN);
    let err = service
        .update(&job.id, &json!({"enabled": true}))
        .unwrap_err();
    assert!(
        matches!(
            err,
            CronServiceError::Invalid(CronJobError::NeverRuns { kind: "at" })
        ),
        "{err}"
    );
    // With a new time it can be enabled again; a relative time counts from now.
    let job = service
        .update(
            &job.id,
            &json!({"enabled": true, "schedule": {"kind": "at", "at": "5m"}}),
        )
        .unwrap();
    assert!(job.enabled);
    assert_eq!(job.state.next_run_at_ms, Some(T0 + 25 * MIN));
}

#[tokio::test]
async fn remove_deletes_the_job_but_keeps_its_history() {
    let (_dir, clock, service, _fake) = fresh();
    let events = record_events(&service);
    let job = service.add(reminder("r", MIN, "x")).unwrap();
    assert!(service.run_now(&job.id, true).await.unwrap().ran);
    assert!(service.remove(&job.id).unwrap());
    assert_eq!(service.get(&job.id), None);
    assert!(!service.remove(&job.id).unwrap());
    assert_eq!(service.runs(&job.id, 10).unwrap().len(), 1);
    assert_eq!(
        actions(&events),
        ["added", "started", "finished", "removed"]
    );
    advance_ms(&clock, MIN);
    assert_eq!(service.tick().await, 0);
}

#[tokio::test(start_paused = true)]
async fn run_now_forces_checks_due_and_refuses_what_it_cannot_run() {
    let (dir, clock, service, fake) = fresh();
    let job = service.add(task("t", MIN, "go")).unwrap();

    let not_due = service.run_now(&job.id, false).await.unwrap();
    assert_eq!(
        not_due,
        RunNow {
            ran: false,
            reason: Some("not-due")
        }
    );
    assert!(fake.calls().is_empty());

    let forced = service.run_now(&job.id, true).await.unwrap();
    assert_eq!(
        forced,
        RunNow {
            ran: true,
            reason: None
        }
    );
    assert_eq!(fake.calls().len(), 1);
    assert_eq!(service.get(&job.id).unwrap().state.last_run_at_ms, Some(T0));

    advance_ms(&clock, MIN);
    assert!(service.run_now(&job.id, false).await.unwrap().ran);

    // A run in flight is not started twice.
    fake.run_for(10_000);
    let background = {
        let service = Arc::clone(&service);
        let id = job.id.clone();
        tokio::spawn(async move { service.run_now(&id, true).await.unwrap() })
    };
    until(|| fake.calls().len() == 3).await;
    let again = service.run_now(&job.id, true).await.unwrap();
    assert_eq!(
        again,
        RunNow {
            ran: false,
            reason: Some("already-running")
        }
    );
    assert_eq!(service.tick().await, 0);
    assert!(background.await.unwrap().ran);
    assert_eq!(fake.calls().len(), 3);

    let err = service.run_now("missing", true).await.unwrap_err();
    assert!(
        matches!(err, CronServiceError::NotFound { ref id } if id == "missing"),
        "{err}"
    );

    // No executor yet.
    let unattached = CronService::open(
        dir.path().join("other"),
        CronSettings::default(),
        Arc::new(clock.clone()),
        jiff::tz::TimeZone::UTC,
    );
    let other = unattached.add(reminder("r", MIN, "x")).unwrap();
    let err = unattached.run_now(&other.id, true).await.unwrap_err();
    assert!(matches!(err, CronServiceError::NotRunning), "{err}");
}

#[tokio::test]
async fn nothing_runs_when_cron_is_disabled() {
    let dir = tempfile::tempdir().unwrap();
    let clock = ManualClock::at(T0);
    let settings = CronSettings {
        enabled: false,
        ..CronSettings::default()
    };
    let (service, fake) = service_with(&dir, &clock, settings);
    let job = service.add(reminder("r", MIN, "x")).unwrap();
    advance_ms(&clock, MIN);
    assert_eq!(service.tick().await, 0);
    let err = service.run_now(&job.id, true).await.unwrap_err();
    assert!(matches!(err, CronServiceError::Disabled), "{err}");
    assert_eq!(
        err.to_string(),
        "cron is disabled: set cron.enabled to true in the config to run jobs"
    );
    assert!(fake.calls().is_empty());
    assert_eq!(service.status().next_wake_at_ms, None);
    assert!(!service.status().enabled);
}

#[tokio::test]
async fn events_follow_a_one_shot_job_from_add_to_removal() {
    let (_dir, clock, service, _fake) = fresh();
    let events = record_events(&service);
    let job = service.add(at_job("once", None)).unwrap();
    advance_ms(&clock, 10 * MIN);
    assert_eq!(service.tick().await, 1);
    assert_eq!(
        actions(&events),
        ["added", "started", "finished", "removed"]
    );
    let events = events.lock().unwrap();
    assert_eq!(events[0]["jobId"], job.id.as_str());
    assert_eq!(events[0]["nextRunAtMs"], T0 + 10 * MIN);
    assert_eq!(events[1]["runAtMs"], T0 + 10 * MIN);
    let finished = &events[2];
    assert_eq!(finished["status"], "ok");
    assert_eq!(finished["runAtMs"], T0 + 10 * MIN);
    assert_eq!(finished["durationMs"], 0);
    assert!(finished.get("nextRunAtMs").is_none(), "{finished}");
    assert!(finished.get("error").is_none(), "{finished}");
    assert_eq!(events[3], json!({"jobId": job.id, "action": "removed"}));
}

#[tokio::test(start_paused = true)]
async fn the_loop_fires_jobs_as_time_passes() {
    let (_dir, clock, service, fake) = fresh();
    let hourly = service.add(reminder("hourly", 60 * MIN, "h")).unwrap();
    let stop = CancellationToken::new();
    let executor: Arc<dyn CronExecutor> = Arc::new(fake.clone());
    let handle = tokio::spawn(Arc::clone(&service).run(executor, stop.clone()));
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert!(fake.calls().is_empty());

    // A job added while the loop sleeps wakes it: it is due before the hourly one.
    let soon = service.add(reminder("soon", 10_000, "s")).unwrap();
    advance_ms(&clock, 10_000);
    tokio::time::sleep(Duration::from_secs(11)).await;
    let calls = fake.calls();
    assert_eq!(calls.len(), 1, "{calls:?}");
    assert_eq!(calls[0].job_id, soon.id);
    assert_eq!(calls[0].at_ms, T0 + 10_000);

    // The wall clock jumps an hour, then tokio time follows: the hourly job fires, and the
    // 10 s one runs once for the jump, not 360 times.
    advance_ms(&clock, 60 * MIN - 10_000);
    tokio::time::sleep(Duration::from_secs(3_600)).await;
    let count = |id: &str| fake.calls().iter().filter(|c| c.job_id == id).count();
    assert_eq!(count(&hourly.id), 1);
    assert_eq!(count(&soon.id), 2);
    let job = service.get(&hourly.id).unwrap();
    assert_eq!(job.state.last_status, Some(RunStatus::Ok));
    assert_eq!(job.state.next_run_at_ms, Some(T0 + 120 * MIN));

    stop.cancel();
    handle.await.unwrap();
}

//! Cron schedules through the public API: the default zone, the `every` grid, one-shot
//! `at`, invalid input, job creation rules, and the JSON shape against a literal OpenClaw
//! job.
//!
//! The next runs of cron expressions, as OpenClaw's own cron library (npm `croner` 10.0.1)
//! computes them, are in `cron/croner.rs`; the store and run log (`cron/jobs.json`,
//! `cron/runs/<jobId>.jsonl`) in `cron/store.rs`.

#[path = "cron/croner.rs"]
mod croner;
#[path = "cron/store.rs"]
mod store;

use jiff::Timestamp;
use jiff::tz::TimeZone;
use pincer_automation::cron::{
    CronJob, CronJobError, CronPayload, CronSchedule, DeliveryMode, NewCronJob, RunStatus,
    ScheduleError, SessionTarget, WakeMode, create_job, job_next_run_ms, next_run_ms_in,
    stable_offset_ms,
};
use proptest::prelude::*;
use serde_json::{Value, json};

/// Epoch ms of an RFC 3339 time.
fn ms(iso: &str) -> i64 {
    iso.parse::<Timestamp>().unwrap().as_millisecond()
}

fn utc() -> TimeZone {
    TimeZone::UTC
}

fn cron(expr: &str, tz: &str) -> CronSchedule {
    CronSchedule::cron(expr, Some(tz.to_string()))
}

#[test]
fn a_cron_schedule_without_a_zone_uses_the_default_zone() {
    let schedule = CronSchedule::cron("0 9 * * *", None);
    let tokyo = TimeZone::get("Asia/Tokyo").unwrap();
    let next = next_run_ms_in(&schedule, ms("2026-01-01T00:00:00Z"), &tokyo).unwrap();
    assert_eq!(next, Some(ms("2026-01-02T00:00:00Z")));
    // A blank zone is no zone, as OpenClaw trims it.
    let blank = cron("0 9 * * *", "  ");
    assert_eq!(
        next_run_ms_in(&blank, ms("2026-01-01T00:00:00Z"), &tokyo).unwrap(),
        next
    );
}

fn schedule_error(expr: &str) -> ScheduleError {
    next_run_ms_in(&cron(expr, "UTC"), 0, &utc()).unwrap_err()
}

#[test]
fn invalid_expressions_name_the_bad_part() {
    let cases: &[(&str, &str, &str)] = &[
        ("61 * * * *", "minute", "61"),
        ("* 25 * * *", "hour", "25"),
        ("0 0 0 * *", "day-of-month", "0"),
        ("0 0 32 * *", "day-of-month", "32"),
        ("0 0 * 13 *", "month", "13"),
        ("0 0 * * 8", "day-of-week", "8"),
        ("0 0 * * 5-1", "day-of-week", "5-1"),
        ("*/0 * * * *", "minute", "*/0"),
        ("0/10 * * * *", "minute", "0/10"),
        ("a b c d e", "minute", "a"),
        ("60 * * * * *", "second", "60"),
        ("0 0 0 1 1 * 0", "year", "0"),
        ("0 0 * * 1,2,", "day-of-week", "1,2,"),
        (",0 0 * * *", "minute", ",0"),
    ];
    for (expr, field, value) in cases {
        match schedule_error(expr) {
            ScheduleError::InvalidField {
                field: f, value: v, ..
            } => {
                assert_eq!((f, v.as_str()), (*field, *value), "{expr}");
            }
            other => panic!("{expr}: {other:?}"),
        }
        let msg = schedule_error(expr).to_string();
        assert!(msg.contains(&format!("{field} field {value:?}")), "{msg}");
    }
    assert_eq!(schedule_error(""), ScheduleError::EmptyExpression);
    assert_eq!(schedule_error("   "), ScheduleError::EmptyExpression);
    for (expr, count) in [("* * * *", 4), ("0 0 * * * * * *", 8), ("daily", 1)] {
        match schedule_error(expr) {
            ScheduleError::FieldCount { count: c, .. } => assert_eq!(c, count, "{expr}"),
            other => panic!("{expr}: {other:?}"),
        }
    }
    assert!(
        schedule_error("0 9 * * *\u{fc}")
            .to_string()
            .contains("character 'ü'")
    );
    let err = schedule_error("@sometimes");
    assert!(
        matches!(err, ScheduleError::InvalidExpression { .. }),
        "{err:?}"
    );
    assert!(err.to_string().contains("unknown nickname"), "{err}");
}

#[test]
fn unknown_time_zones_are_clear_errors() {
    let err = next_run_ms_in(&cron("0 9 * * *", "Mars/Olympus"), 0, &utc()).unwrap_err();
    assert_eq!(
        err,
        ScheduleError::UnknownTimeZone {
            tz: "Mars/Olympus".into()
        }
    );
    assert!(err.to_string().contains("\"Mars/Olympus\""), "{err}");
    // Case does not matter to IANA lookups (as to Intl in Node).
    assert!(next_run_ms_in(&cron("0 9 * * *", "europe/berlin"), 0, &utc()).is_ok());
}

#[test]
fn every_runs_on_its_anchored_grid() {
    let anchor = ms("2026-01-01T00:00:00Z");
    let hour = 3_600_000;
    let every = CronSchedule::every(hour, Some(anchor));
    let next = |after: i64| next_run_ms_in(&every, after, &utc()).unwrap();
    // Before the anchor: the anchor itself.
    assert_eq!(next(anchor - 1), Some(anchor));
    // On a grid point: the next one, strictly after.
    assert_eq!(next(anchor), Some(anchor + hour));
    assert_eq!(next(anchor + 3 * hour), Some(anchor + 4 * hour));
    // Between grid points, however late: the grid does not drift with the caller.
    assert_eq!(next(anchor + 1), Some(anchor + hour));
    assert_eq!(
        next(anchor + 10 * hour + 59 * 60_000),
        Some(anchor + 11 * hour)
    );
    // No anchor: the grid starts at the reference.
    let free = CronSchedule::every(90_000, None);
    assert_eq!(next_run_ms_in(&free, 1_000, &utc()).unwrap(), Some(91_000));
    // A grid that leaves the i64 range ends.
    let far = CronSchedule::every(i64::MAX / 2 + 1, Some(0));
    assert_eq!(next_run_ms_in(&far, i64::MAX - 10, &utc()).unwrap(), None);
    for bad in [0, -5] {
        let err = next_run_ms_in(&CronSchedule::every(bad, None), 0, &utc()).unwrap_err();
        assert_eq!(err, ScheduleError::InvalidEvery { every_ms: bad });
    }
}

#[test]
fn at_fires_once_in_the_future() {
    let at = CronSchedule::at("2026-05-01T09:00:00+02:00");
    let when = ms("2026-05-01T07:00:00Z");
    assert_eq!(next_run_ms_in(&at, when - 1, &utc()).unwrap(), Some(when));
    assert_eq!(next_run_ms_in(&at, when, &utc()).unwrap(), None);
    let err = next_run_ms_in(&CronSchedule::at("next tuesday"), 0, &utc()).unwrap_err();
    assert!(err.to_string().contains("\"next tuesday\""), "{err}");
}

fn new_job(value: Value) -> NewCronJob {
    serde_json::from_value(value).unwrap()
}

const NOW: &str = "2026-01-01T00:00:00Z";

#[test]
fn a_relative_at_is_resolved_at_creation_and_a_past_one_refused() {
    let input = new_job(json!({
        "name": "Oven",
        "schedule": {"kind": "at", "at": "20m"},
        "payload": {"kind": "systemEvent", "text": "Check the oven"}
    }));
    let job = create_job(input, "job-1".into(), ms(NOW), &utc()).unwrap();
    assert_eq!(job.schedule, CronSchedule::at("2026-01-01T00:20:00.000Z"));
    assert_eq!(job.state.next_run_at_ms, Some(ms("2026-01-01T00:20:00Z")));
    assert_eq!(job.delete_after_run, Some(true));
    assert_eq!(job.session_target, SessionTarget::Main);
    assert_eq!(job.wake_mode, WakeMode::Now);
    assert_eq!(job.delivery, None);

    let past = new_job(json!({
        "name": "Late",
        "schedule": {"kind": "at", "at": "2025-12-31T23:00:00Z"},
        "payload": {"kind": "systemEvent", "text": "too late"}
    }));
    let err = create_job(past, "job-2".into(), ms(NOW), &utc()).unwrap_err();
    assert!(
        matches!(err, CronJobError::Schedule(ScheduleError::AtInPast { .. })),
        "{err}"
    );
}

#[test]
fn creation_applies_openclaw_defaults() {
    let every = new_job(json!({
        "name": "Hourly check",
        "schedule": {"kind": "every", "everyMs": 3_600_000},
        "payload": {"kind": "agentTurn", "message": "Check the build"}
    }));
    let job = create_job(every, "job-3".into(), ms(NOW), &utc()).unwrap();
    assert_eq!(job.schedule, CronSchedule::every(3_600_000, Some(ms(NOW))));
    assert_eq!(job.session_target, SessionTarget::Isolated);
    assert_eq!(
        job.delivery.as_ref().map(|d| d.mode),
        Some(DeliveryMode::Announce)
    );
    assert_eq!(job.delete_after_run, None);
    assert_eq!(job.state.next_run_at_ms, Some(ms("2026-01-01T01:00:00Z")));
    assert_eq!((job.created_at_ms, job.updated_at_ms), (ms(NOW), ms(NOW)));

    // A recurring top-of-hour expression gets the 5 minute stagger window; an exact one none.
    let hourly = new_job(json!({
        "name": "Top of the hour",
        "schedule": {"kind": "cron", "expr": "0 * * * *", "tz": "UTC"},
        "payload": {"kind": "systemEvent", "text": "tick"}
    }));
    let job = create_job(hourly, "job-1".into(), ms(NOW), &utc()).unwrap();
    let CronSchedule::Cron(c) = &job.schedule else {
        panic!()
    };
    assert_eq!(c.stagger_ms, Some(300_000));
    // stable_offset_ms("job-1", 300000) = 47897 (sha256 prefix, checked with Node).
    assert_eq!(stable_offset_ms("job-1", 300_000), 47_897);
    // Created at 00:00:00, this hour's slot (00:00:47.897) is still ahead.
    assert_eq!(job.state.next_run_at_ms, Some(ms(NOW) + 47_897));
}

#[test]
fn creation_refuses_what_openclaw_refuses() {
    let make = |value: Value| create_job(new_job(value), "job-x".into(), ms(NOW), &utc());
    let base = |target: &str, payload: Value| json!({"name": "n", "schedule": {"kind": "every", "everyMs": 60000}, "sessionTarget": target, "payload": payload});
    let err = make(base("main", json!({"kind": "agentTurn", "message": "hi"}))).unwrap_err();
    assert_eq!(err, CronJobError::MainNeedsSystemEvent);
    assert_eq!(
        err.to_string(),
        "main cron jobs require payload.kind=\"systemEvent\""
    );
    let err = make(base(
        "isolated",
        json!({"kind": "systemEvent", "text": "hi"}),
    ))
    .unwrap_err();
    assert_eq!(err, CronJobError::IsolatedNeedsAgentTurn);

    let mut with_delivery = base("main", json!({"kind": "systemEvent", "text": "hi"}));
    with_delivery["delivery"] = json!({"mode": "announce", "channel": "telegram", "to": "42"});
    assert_eq!(
        make(with_delivery.clone()).unwrap_err(),
        CronJobError::DeliveryNeedsIsolated
    );
    // A webhook is allowed on a main job, with an http(s) URL.
    with_delivery["delivery"] = json!({"mode": "webhook", "to": "https://example.invalid/hook"});
    assert!(make(with_delivery.clone()).is_ok());
    with_delivery["delivery"] = json!({"mode": "webhook", "to": "ftp://example.invalid"});
    assert_eq!(
        make(with_delivery).unwrap_err(),
        CronJobError::WebhookNeedsUrl
    );

    let mut blank = base("main", json!({"kind": "systemEvent", "text": "hi"}));
    blank["name"] = json!("   ");
    assert_eq!(make(blank).unwrap_err(), CronJobError::EmptyName);
    let empty_text = base("main", json!({"kind": "systemEvent", "text": " "}));
    assert_eq!(
        make(empty_text).unwrap_err(),
        CronJobError::EmptyPayload { field: "text" }
    );

    let mut never = base("main", json!({"kind": "systemEvent", "text": "hi"}));
    never["schedule"] = json!({"kind": "cron", "expr": "0 0 30 2 *", "tz": "UTC"});
    assert_eq!(
        make(never).unwrap_err(),
        CronJobError::NeverRuns { kind: "cron" }
    );
    let mut bad_tz = base("main", json!({"kind": "systemEvent", "text": "hi"}));
    bad_tz["schedule"] = json!({"kind": "cron", "expr": "0 9 * * *", "tz": "Nowhere/Land"});
    assert!(
        make(bad_tz)
            .unwrap_err()
            .to_string()
            .contains("unknown time zone \"Nowhere/Land\"")
    );
    let bad_id = create_job(
        new_job(base("main", json!({"kind": "systemEvent", "text": "hi"}))),
        "../etc".into(),
        ms(NOW),
        &utc(),
    );
    assert!(matches!(bad_id, Err(CronJobError::InvalidId { .. })));
}

/// A job as OpenClaw writes it in `jobs.json`, with fields Pincer does not model.
fn openclaw_job() -> Value {
    json!({
        "id": "3f1c2b9e-8d4a-4c7e-9b1a-2e5f6a7b8c9d",
        "agentId": "main",
        "name": "Morning briefing",
        "enabled": true,
        "createdAtMs": 1767225600000_i64,
        "updatedAtMs": 1767225600000_i64,
        "schedule": {"kind": "cron", "expr": "0 8 * * *", "tz": "Africa/Cairo", "staggerMs": 0},
        "sessionTarget": "isolated",
        "wakeMode": "now",
        "payload": {
            "kind": "agentTurn",
            "message": "Summarize my unread email.",
            "model": "anthropic/claude-sonnet-4-5",
            "thinking": "low",
            "timeoutSeconds": 300,
            "criticSpec": "covers every thread"
        },
        "delivery": {"mode": "announce", "channel": "telegram", "to": "1027899060", "bestEffort": true},
        "state": {
            "nextRunAtMs": 1767247200000_i64,
            "lastRunAtMs": 1767160800000_i64,
            "lastRunStatus": "ok",
            "lastStatus": "ok",
            "lastDurationMs": 5123,
            "consecutiveErrors": 0,
            "lastDeliveryStatus": "delivered",
            "scheduleErrorCount": 1
        },
        "failureAlert": {"after": 3}
    })
}

#[test]
fn an_openclaw_job_round_trips_exactly() {
    let raw = openclaw_job();
    let job: CronJob = serde_json::from_value(raw.clone()).unwrap();
    assert_eq!(job.id, "3f1c2b9e-8d4a-4c7e-9b1a-2e5f6a7b8c9d");
    assert_eq!(job.session_target, SessionTarget::Isolated);
    let CronPayload::AgentTurn(turn) = &job.payload else {
        panic!()
    };
    assert_eq!(turn.timeout_seconds, Some(300));
    assert_eq!(turn.extra["criticSpec"], json!("covers every thread"));
    assert_eq!(job.state.last_status, Some(RunStatus::Ok));
    assert_eq!(job.state.extra["scheduleErrorCount"], json!(1));
    assert_eq!(job.extra["failureAlert"], json!({"after": 3}));
    assert_eq!(serde_json::to_value(&job).unwrap(), raw);
}

#[test]
fn the_minimal_openclaw_shapes_round_trip() {
    let main = json!({
        "id": "a", "name": "Sweep", "enabled": true, "createdAtMs": 1, "updatedAtMs": 2,
        "schedule": {"kind": "every", "everyMs": 86400000, "anchorMs": 0},
        "sessionTarget": "main", "wakeMode": "next-heartbeat",
        "payload": {"kind": "systemEvent", "text": "Time for the sweep."},
        "state": {}
    });
    let job: CronJob = serde_json::from_value(main.clone()).unwrap();
    assert_eq!(job.wake_mode, WakeMode::NextHeartbeat);
    assert_eq!(serde_json::to_value(&job).unwrap(), main);
    let at = json!({
        "id": "b", "name": "Oven", "enabled": false, "deleteAfterRun": true,
        "createdAtMs": 1, "updatedAtMs": 2,
        "schedule": {"kind": "at", "at": "2026-02-16T21:15:00+02:00"},
        "sessionTarget": "isolated", "wakeMode": "now",
        "payload": {"kind": "agentTurn", "message": "Oven!"},
        "delivery": {"mode": "webhook", "to": "https://example.invalid/h"},
        "state": {"runningAtMs": 5, "lastError": "boom", "lastStatus": "error", "consecutiveErrors": 2}
    });
    let job: CronJob = serde_json::from_value(at.clone()).unwrap();
    assert_eq!(serde_json::to_value(&job).unwrap(), at);
}

#[test]
fn job_level_next_runs_follow_openclaw() {
    let mut job: CronJob = serde_json::from_value(json!({
        "id": "e", "name": "Every", "enabled": true, "createdAtMs": ms(NOW), "updatedAtMs": ms(NOW),
        "schedule": {"kind": "every", "everyMs": 600000},
        "sessionTarget": "main", "wakeMode": "now",
        "payload": {"kind": "systemEvent", "text": "x"}, "state": {}
    }))
    .unwrap();
    // No anchor: the creation time anchors the grid.
    let now = ms(NOW) + 25 * 60_000;
    assert_eq!(
        job_next_run_ms(&job, now, &utc()).unwrap(),
        Some(ms(NOW) + 30 * 60_000)
    );
    // A last run ahead of the grid counts from itself.
    job.state.last_run_at_ms = Some(now - 60_000);
    assert_eq!(
        job_next_run_ms(&job, now, &utc()).unwrap(),
        Some(now + 9 * 60_000)
    );
    job.enabled = false;
    assert_eq!(job_next_run_ms(&job, now, &utc()).unwrap(), None);

    // A one-shot job stays due after its time until a run succeeds.
    let mut once: CronJob = serde_json::from_value(json!({
        "id": "o", "name": "Once", "enabled": true, "createdAtMs": 0, "updatedAtMs": 0,
        "schedule": {"kind": "at", "at": NOW},
        "sessionTarget": "main", "wakeMode": "now",
        "payload": {"kind": "systemEvent", "text": "x"}, "state": {}
    }))
    .unwrap();
    let later = ms(NOW) + 3_600_000;
    assert_eq!(
        job_next_run_ms(&once, later, &utc()).unwrap(),
        Some(ms(NOW))
    );
    once.state.last_run_at_ms = Some(later);
    once.state.last_status = Some(RunStatus::Error);
    assert_eq!(
        job_next_run_ms(&once, later, &utc()).unwrap(),
        Some(ms(NOW))
    );
    once.state.last_status = Some(RunStatus::Ok);
    assert_eq!(job_next_run_ms(&once, later, &utc()).unwrap(), None);
}

#[test]
fn staggered_cron_jobs_keep_their_slot_in_the_window() {
    let job = |stagger: Option<i64>| -> CronJob {
        let mut schedule = json!({"kind": "cron", "expr": "0 * * * *", "tz": "UTC"});
        if let Some(s) = stagger {
            schedule["staggerMs"] = json!(s);
        }
        serde_json::from_value(json!({
            "id": "job-1", "name": "Hourly", "enabled": true, "createdAtMs": 0, "updatedAtMs": 0,
            "schedule": schedule, "sessionTarget": "main", "wakeMode": "now",
            "payload": {"kind": "systemEvent", "text": "x"}, "state": {}
        }))
        .unwrap()
    };
    let offset = 47_897;
    let hour = ms("2026-01-01T10:00:00Z");
    // Just after the hour, this window's slot is still ahead.
    assert_eq!(
        job_next_run_ms(&job(None), hour + 1_000, &utc()).unwrap(),
        Some(hour + offset)
    );
    // Past the slot: the next hour's.
    assert_eq!(
        job_next_run_ms(&job(None), hour + offset, &utc()).unwrap(),
        Some(hour + 3_600_000 + offset)
    );
    // `staggerMs: 0` is exact.
    assert_eq!(
        job_next_run_ms(&job(Some(0)), hour, &utc()).unwrap(),
        Some(hour + 3_600_000)
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Cron-like text in any zone never panics, and a next run is always ahead.
    #[test]
    fn any_expression_is_an_error_or_a_run_ahead(
        expr in "[0-9*/,LW#?+@ a-zA-Z-]{0,24}",
        tz in prop::sample::select(vec!["UTC", "America/New_York", "Europe/Berlin", "Australia/Lord_Howe", "Bad/Zone", ""]),
        after in -10_000_000_000_000i64..10_000_000_000_000i64,
    ) {
        if let Ok(Some(next)) = next_run_ms_in(&cron(&expr, tz), after, &utc()) {
            prop_assert!(next > after, "{expr:?} in {tz}: {next} <= {after}");
        }
    }
}

#[test]
fn the_new_job_schema_describes_the_openclaw_input() {
    let schema = serde_json::to_value(schemars::schema_for!(NewCronJob)).unwrap();
    let props = &schema["properties"];
    for field in [
        "name",
        "schedule",
        "sessionTarget",
        "wakeMode",
        "payload",
        "delivery",
        "deleteAfterRun",
    ] {
        assert!(props.get(field).is_some(), "{field} missing from {schema}");
    }
    let required: Vec<&str> = schema["required"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert_eq!(required, ["name", "schedule", "payload"]);
    let text = schema.to_string();
    for kind in [
        "\"at\"",
        "\"every\"",
        "\"cron\"",
        "\"systemEvent\"",
        "\"agentTurn\"",
        "\"next-heartbeat\"",
    ] {
        assert!(text.contains(kind), "{kind} missing from {text}");
    }
}

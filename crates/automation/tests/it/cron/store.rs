//! `CronStore` over a temp `cron/` directory and the run log beside it: persistence and
//! reload, 0600 files, a corrupt `jobs.json` kept aside, jobs Pincer cannot use kept
//! verbatim, JSON5 input, and run history with a torn last line.

use std::fs;
use std::sync::Arc;

use pincer_automation::cron::{
    CronJob, CronStore, CronStoreError, RunLog, RunLogEntry, RunStatus, SessionTarget,
};
use pincer_automation::system_events::ManualClock;
#[cfg(unix)]
use pincer_testkit::files::mode;
use pincer_testkit::files::read_json;
use serde_json::{Value, json};

const T0: i64 = 1_767_225_600_000; // 2026-01-01T00:00:00Z

fn clock() -> Arc<ManualClock> {
    Arc::new(ManualClock::at(T0))
}

fn job(id: &str, name: &str) -> CronJob {
    serde_json::from_value(json!({
        "id": id, "name": name, "enabled": true, "createdAtMs": T0, "updatedAtMs": T0,
        "schedule": {"kind": "every", "everyMs": 3600000, "anchorMs": T0},
        "sessionTarget": "main", "wakeMode": "now",
        "payload": {"kind": "systemEvent", "text": format!("{name} text")},
        "state": {"nextRunAtMs": T0 + 3_600_000}
    }))
    .unwrap()
}

#[test]
fn jobs_persist_across_reopen_in_openclaw_file_shape() {
    let home = tempfile::tempdir().unwrap();
    let dir = home.path().join("cron");
    let clock = clock();
    let mut store = CronStore::open(&dir, clock.clone()).unwrap();
    assert_eq!(store.list().count(), 0);
    assert!(!dir.join("jobs.json").exists(), "opening writes nothing");

    store.add(job("a", "Alpha")).unwrap();
    store.add(job("b", "Beta")).unwrap();
    let err = store.add(job("a", "Again")).unwrap_err();
    assert!(matches!(err, CronStoreError::DuplicateId { .. }), "{err}");

    clock.set(T0 + 5_000);
    let updated = store.update("b", |j| j.name = "Beta 2".into()).unwrap();
    assert_eq!(
        (updated.name.as_str(), updated.updated_at_ms),
        ("Beta 2", T0 + 5_000)
    );
    clock.set(T0 + 9_000);
    let ran = store
        .update_state("a", |s| {
            s.last_run_at_ms = Some(T0 + 9_000);
            s.last_status = Some(RunStatus::Ok);
        })
        .unwrap();
    assert_eq!(ran.updated_at_ms, T0, "a state change is not an edit");
    assert!(matches!(
        store.update("zzz", |_| {}).unwrap_err(),
        CronStoreError::UnknownJob { .. }
    ));
    // A change that breaks a rule is refused and not applied.
    let err = store
        .update("a", |j| j.session_target = SessionTarget::Isolated)
        .unwrap_err();
    assert!(
        err.to_string().contains("isolated cron jobs require"),
        "{err}"
    );
    assert_eq!(store.get("a").unwrap().session_target, SessionTarget::Main);

    let file = read_json(&dir.join("jobs.json"));
    assert_eq!(file["version"], json!(1));
    assert_eq!(file["jobs"].as_array().unwrap().len(), 2);
    assert_eq!(file["jobs"][1]["name"], json!("Beta 2"));
    assert_eq!(file["jobs"][0]["state"]["lastStatus"], json!("ok"));
    #[cfg(unix)]
    {
        assert_eq!(mode(&dir.join("jobs.json")), 0o600);
        assert_eq!(mode(&dir), 0o700);
    }

    let mut reopened = CronStore::open(&dir, clock.clone()).unwrap();
    let names: Vec<&str> = reopened.list().map(|j| j.name.as_str()).collect();
    assert_eq!(names, ["Alpha", "Beta 2"]);
    assert_eq!(reopened.get("a"), store.get("a"));
    assert!(reopened.remove("a").unwrap());
    assert!(!reopened.remove("a").unwrap());
    let again = CronStore::open(&dir, clock).unwrap();
    assert_eq!(
        again.list().map(|j| j.id.as_str()).collect::<Vec<_>>(),
        ["b"]
    );
    let leftovers: Vec<_> = fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(leftovers, ["jobs.json"], "no temp files left behind");
}

#[test]
fn a_corrupt_jobs_file_is_kept_aside_and_reported() {
    let home = tempfile::tempdir().unwrap();
    let dir = home.path().join("cron");
    fs::create_dir_all(&dir).unwrap();
    fs::write(dir.join("jobs.json"), b"{\"version\":1,\"jobs\":[{\"id\":").unwrap();
    let err = CronStore::open(&dir, clock()).unwrap_err();
    let CronStoreError::Corrupt {
        path,
        kept_at,
        reason,
    } = &err
    else {
        panic!("{err:?}")
    };
    assert_eq!(path, &dir.join("jobs.json"));
    assert_eq!(kept_at, &dir.join(format!("jobs.json.corrupt.{T0}")));
    assert!(reason.starts_with("invalid JSON"), "{reason}");
    assert!(
        err.to_string().contains("jobs.json.corrupt.1767225600000"),
        "{err}"
    );
    assert_eq!(
        fs::read(kept_at).unwrap(),
        b"{\"version\":1,\"jobs\":[{\"id\":"
    );
    assert!(!dir.join("jobs.json").exists());

    // The caller goes on with no jobs; a new file does not touch the kept one.
    let mut store = CronStore::empty(&dir, clock());
    store.add(job("n", "New")).unwrap();
    assert!(kept_at.exists());

    // Valid JSON of the wrong shape is corrupt too; a second one at the same ms gets its
    // own name.
    fs::write(dir.join("jobs.json"), b"[1, 2]").unwrap();
    match CronStore::open(&dir, clock()).unwrap_err() {
        CronStoreError::Corrupt {
            kept_at, reason, ..
        } => {
            assert_eq!(kept_at, dir.join(format!("jobs.json.corrupt.{T0}-1")));
            assert_eq!(reason, "the top level is not an object");
        }
        other => panic!("{other:?}"),
    }
    fs::write(dir.join("jobs.json"), b"{\"jobs\": {}}").unwrap();
    assert!(matches!(
        CronStore::open(&dir, clock()),
        Err(CronStoreError::Corrupt { .. })
    ));
    // An empty file is no jobs, not a corrupt file.
    fs::write(dir.join("jobs.json"), b"\n").unwrap();
    assert_eq!(CronStore::open(&dir, clock()).unwrap().list().count(), 0);
    assert!(dir.join("jobs.json").exists());
}

#[test]
fn jobs_pincer_cannot_use_are_reported_and_kept_verbatim() {
    let home = tempfile::tempdir().unwrap();
    let dir = home.path().join("cron");
    fs::create_dir_all(&dir).unwrap();
    let future_kind = json!({"id": "f", "name": "On exit", "enabled": true, "createdAtMs": 1,
        "updatedAtMs": 1, "schedule": {"kind": "on-exit", "command": "make"},
        "sessionTarget": "main", "wakeMode": "now", "payload": {"kind": "systemEvent", "text": "x"},
        "state": {}});
    let bad_target = json!({"id": "g", "name": "Bad", "enabled": true, "createdAtMs": 1,
        "updatedAtMs": 1, "schedule": {"kind": "every", "everyMs": 1000},
        "sessionTarget": "main", "wakeMode": "now", "payload": {"kind": "agentTurn", "message": "x"},
        "state": {}});
    let file = json!({
        "version": 1,
        "futureTopLevel": {"keep": true},
        "jobs": [serde_json::to_value(job("a", "Alpha")).unwrap(), future_kind, null, bad_target,
                 serde_json::to_value(job("a", "Twin")).unwrap()]
    });
    fs::write(dir.join("jobs.json"), serde_json::to_vec(&file).unwrap()).unwrap();

    let mut store = CronStore::open(&dir, clock()).unwrap();
    assert_eq!(
        store.list().map(|j| j.id.as_str()).collect::<Vec<_>>(),
        ["a"]
    );
    let problems: Vec<(usize, Option<&str>, &str)> = store
        .unreadable()
        .map(|u| (u.index, u.id.as_deref(), u.error.as_str()))
        .collect();
    assert_eq!(problems.len(), 3);
    assert_eq!((problems[0].0, problems[0].1), (1, Some("f")));
    assert!(problems[0].2.contains("on-exit"), "{}", problems[0].2);
    assert_eq!((problems[1].0, problems[1].1), (3, Some("g")));
    assert_eq!(
        problems[1].2,
        "main cron jobs require payload.kind=\"systemEvent\""
    );
    assert_eq!(problems[2], (4, Some("a"), "another job has the same id"));

    // Saving keeps them as they were (the null is dropped, as OpenClaw drops it).
    store.add(job("c", "Gamma")).unwrap();
    let saved = read_json(&dir.join("jobs.json"));
    assert_eq!(saved["futureTopLevel"], json!({"keep": true}));
    assert_eq!(saved["jobs"][1], file["jobs"][1]);
    assert_eq!(saved["jobs"][2], file["jobs"][3]);
    assert_eq!(saved["jobs"].as_array().unwrap().len(), 5);
    // And they can be removed by id.
    assert!(store.remove("f").unwrap());
    assert_eq!(store.unreadable().count(), 2);
}

#[test]
fn json5_written_by_hand_loads() {
    let home = tempfile::tempdir().unwrap();
    let dir = home.path().join("cron");
    fs::create_dir_all(&dir).unwrap();
    let text = r#"{
      // edited by hand
      version: 1,
      jobs: [{
        id: 'h', name: 'Hand', enabled: true, createdAtMs: 1, updatedAtMs: 1,
        schedule: {kind: 'cron', expr: '0 9 * * MON-FRI', tz: 'Europe/Berlin'},
        sessionTarget: 'main', wakeMode: 'next-heartbeat',
        payload: {kind: 'systemEvent', text: 'Standup'},
        state: {},
      }],
    }"#;
    fs::write(dir.join("jobs.json"), text).unwrap();
    let store = CronStore::open(&dir, clock()).unwrap();
    assert_eq!(store.get("h").unwrap().name, "Hand");
}

fn entry(job_id: &str, ts: i64, status: RunStatus) -> RunLogEntry {
    let mut e = RunLogEntry::finished(job_id, ts, status);
    e.run_at_ms = Some(ts - 1_500);
    e.duration_ms = Some(1_500);
    e.next_run_at_ms = Some(ts + 3_600_000);
    e
}

#[test]
fn run_history_appends_lines_in_openclaw_shape_and_reads_the_last_n() {
    let home = tempfile::tempdir().unwrap();
    let store = CronStore::empty(home.path().join("cron"), clock());
    let log = store.run_log();
    assert!(log.read_last("a", 10).unwrap().is_empty(), "no history yet");

    let mut failed = entry("a", T0 + 2_000, RunStatus::Error);
    failed.error = Some("model timed out".into());
    log.append(&entry("a", T0 + 1_000, RunStatus::Ok)).unwrap();
    log.append(&failed).unwrap();
    let mut ok = entry("a", T0 + 3_000, RunStatus::Ok);
    ok.summary = Some("3 unread threads".into());
    log.append(&ok).unwrap();
    log.append(&entry("b", T0 + 4_000, RunStatus::Skipped))
        .unwrap();

    let path = home.path().join("cron/runs/a.jsonl");
    let text = fs::read_to_string(&path).unwrap();
    let first: Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
    assert_eq!(
        first,
        json!({"ts": T0 + 1_000, "jobId": "a", "action": "finished", "status": "ok",
               "runAtMs": T0 - 500, "durationMs": 1500, "nextRunAtMs": T0 + 3_601_000})
    );
    #[cfg(unix)]
    assert_eq!(mode(&path), 0o600);

    let last_two = log.read_last("a", 2).unwrap();
    assert_eq!(last_two, vec![failed.clone(), ok.clone()]);
    assert_eq!(log.read_last("a", 100).unwrap().len(), 3);
    assert_eq!(
        log.read_last("b", 100).unwrap()[0].status,
        Some(RunStatus::Skipped)
    );
    assert!(
        log.read_last("../x", 1).is_err(),
        "an id cannot leave runs/"
    );
    assert!(log.remove("b").unwrap());
    assert!(log.read_last("b", 10).unwrap().is_empty());
}

#[test]
fn a_torn_last_line_is_skipped_and_the_next_entry_stays_readable() {
    let home = tempfile::tempdir().unwrap();
    let log = RunLog::new(home.path().join("runs"));
    log.append(&entry("a", T0 + 1_000, RunStatus::Ok)).unwrap();
    let path = log.path("a").unwrap();
    // A crash in the middle of a write; lines from a newer writer and garbage too.
    let mut file = fs::OpenOptions::new().append(true).open(&path).unwrap();
    use std::io::Write;
    file.write_all(b"{\"ts\":1767225602000,\"jobId\":\"a\",\"action\":\"started\"}\n")
        .unwrap();
    file.write_all(b"{\"ts\":1767225603000,\"jobId\":\"a\",\"act")
        .unwrap();
    drop(file);
    let read = log.read_last("a", 10).unwrap();
    assert_eq!(read.iter().map(|e| e.ts).collect::<Vec<_>>(), [T0 + 1_000]);

    log.append(&entry("a", T0 + 4_000, RunStatus::Error))
        .unwrap();
    let read = log.read_last("a", 10).unwrap();
    assert_eq!(
        read.iter().map(|e| e.ts).collect::<Vec<_>>(),
        [T0 + 1_000, T0 + 4_000]
    );
    let text = fs::read_to_string(&path).unwrap();
    assert!(text.ends_with("\"nextRunAtMs\":1767229204000}\n"), "{text}");
    assert_eq!(
        text.lines().count(),
        4,
        "the torn line was closed, not merged: {text}"
    );
}

#[test]
fn unknown_fields_of_a_run_line_survive_and_big_logs_are_pruned() {
    let home = tempfile::tempdir().unwrap();
    let log = RunLog::new(home.path().join("runs")).with_limits(600, 3);
    let line = json!({"ts": T0, "jobId": "a", "action": "finished", "status": "ok",
        "usage": {"input_tokens": 10}, "errorReason": "timeout"});
    let parsed: RunLogEntry = serde_json::from_value(line.clone()).unwrap();
    assert_eq!(serde_json::to_value(&parsed).unwrap(), line);

    for i in 0..10 {
        log.append(&entry("a", T0 + i * 1_000, RunStatus::Ok))
            .unwrap();
    }
    let kept = log.read_last("a", 100).unwrap();
    assert!(kept.len() <= 6, "pruned to the last lines: {}", kept.len());
    assert_eq!(kept.last().unwrap().ts, T0 + 9_000);
    assert!(fs::metadata(log.path("a").unwrap()).unwrap().len() <= 600 + 200);
}

/// Finding 8 of the security review: the scheduler's lock file is 0600 like the rest of
/// `cron/`.
#[test]
fn the_scheduler_lock_file_is_private() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("cron");
    let lock = pincer_automation::cron::try_lock_scheduler(&dir).unwrap();
    assert!(lock.is_some());
    assert_eq!(mode(&dir.join("scheduler.lock")), 0o600);
}

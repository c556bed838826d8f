//! Retention (durations are tested in pincer-base): which sessions are picked, warn vs enforce, and old archives.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::fs;
use std::path::{Path, PathBuf};
use std::time::Duration;

use pincer_store::{
    OrphanTranscript, PruneReason, PrunedSession, RetentionMode, RetentionPolicy, SessionStore,
};
use serde_json::json;

use crate::common::store;
use pincer_testkit::files::sorted_names;

const DAY: i64 = 86_400_000;

#[test]
fn default_policy_is_openclaws() {
    assert_eq!(
        RetentionPolicy::default(),
        RetentionPolicy {
            mode: RetentionMode::Warn,
            prune_after: Some(Duration::from_secs(30 * 86_400)),
            max_entries: Some(500),
        }
    );
    let mode: RetentionMode = serde_json::from_str("\"enforce\"").unwrap();
    assert_eq!(mode, RetentionMode::Enforce);
}

/// A store in `dir` with sessions k0..k5 updated 1..=6 days before now (k0 most recent),
/// plus "old" 40 days: the store, now, and each key with its session id.
fn populated(dir: &Path) -> (SessionStore, i64, Vec<(String, String)>) {
    let s = store(dir);
    let now = pincer_store::ids::now_ms();
    let mut ids = Vec::new();
    for (i, key) in ["k0", "k1", "k2", "k3", "k4", "k5", "old"]
        .iter()
        .enumerate()
    {
        let id = s.get_or_create(key).unwrap().entry.session_id;
        let age = if *key == "old" { 40 } else { i as i64 + 1 };
        s.patch(key, &json!({ "updatedAt": now - age * DAY }))
            .unwrap();
        ids.push((key.to_string(), id));
    }
    (s, now, ids)
}

fn policy(mode: RetentionMode, max: Option<usize>) -> RetentionPolicy {
    RetentionPolicy {
        mode,
        prune_after: Some(Duration::from_secs(30 * 86_400)),
        max_entries: max,
    }
}

fn picked(report: &pincer_store::PruneReport) -> Vec<(String, PruneReason)> {
    report
        .sessions
        .iter()
        .map(|p| (p.key.clone(), p.reason))
        .collect()
}

#[test]
fn warn_mode_reports_and_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let (s, now, _) = populated(dir.path());
    let before_index = fs::read(s.index_path()).unwrap();
    let before_files = sorted_names(s.root());
    let report = s
        .prune(&policy(RetentionMode::Warn, Some(3)), &[], now)
        .unwrap();
    assert_eq!(report.mode, RetentionMode::Warn);
    assert_eq!(
        picked(&report),
        [
            ("k3".into(), PruneReason::OverLimit),
            ("k4".into(), PruneReason::OverLimit),
            ("k5".into(), PruneReason::OverLimit),
            ("old".into(), PruneReason::Stale),
        ]
    );
    assert!(report.sessions.iter().all(|p| p.archived_to.is_none()));
    assert_eq!(fs::read(s.index_path()).unwrap(), before_index);
    assert_eq!(sorted_names(s.root()), before_files);
}

#[test]
fn enforce_mode_prunes_stale_and_excess_but_never_active_keys() {
    let dir = tempfile::tempdir().unwrap();
    let (s, now, ids) = populated(dir.path());
    let id_of = |k: &str| ids.iter().find(|(key, _)| key == k).unwrap().1.clone();
    let old_bytes = fs::read(s.transcript_path(&id_of("old"))).unwrap();
    // "old" is stale and "k5" over the limit, but both are running right now.
    let report = s
        .prune(
            &policy(RetentionMode::Enforce, Some(3)),
            &["old", "k5"],
            now,
        )
        .unwrap();
    assert_eq!(
        picked(&report),
        [
            ("k3".into(), PruneReason::OverLimit),
            ("k4".into(), PruneReason::OverLimit),
        ]
    );
    let k3 = &report.sessions[0];
    assert_eq!(
        (k3.session_id.clone(), k3.updated_at),
        (id_of("k3"), now - 4 * DAY)
    );
    let mut keys: Vec<String> = s.list().unwrap().into_iter().map(|(k, _)| k).collect();
    keys.sort();
    assert_eq!(keys, ["k0", "k1", "k2", "k5", "old"]);
    assert_eq!(
        fs::read(s.transcript_path(&id_of("old"))).unwrap(),
        old_bytes
    );
    // Pruned transcripts are moved aside, not deleted.
    for PrunedSession {
        session_id,
        archived_to,
        ..
    } in &report.sessions
    {
        let to = archived_to.as_ref().unwrap();
        let name = to.file_name().unwrap().to_string_lossy().into_owned();
        assert!(
            name.starts_with(&format!("{session_id}.jsonl.deleted.")),
            "{name}"
        );
        assert!(to.exists());
        assert!(!s.transcript_path(session_id).exists());
    }
    // Without the active list, "old" goes as stale and the rest fits in the limit.
    let report = s
        .prune(&policy(RetentionMode::Enforce, Some(3)), &[], now)
        .unwrap();
    assert_eq!(
        picked(&report),
        [
            ("k5".into(), PruneReason::OverLimit),
            ("old".into(), PruneReason::Stale)
        ]
    );
    assert_eq!(s.list().unwrap().len(), 3);
    // A second run finds nothing more to do.
    let report = s
        .prune(&policy(RetentionMode::Enforce, Some(3)), &[], now)
        .unwrap();
    assert!(report.is_empty(), "{report:?}");
}

#[test]
fn limits_can_be_turned_off() {
    let dir = tempfile::tempdir().unwrap();
    let (s, now, _) = populated(dir.path());
    let none = RetentionPolicy {
        mode: RetentionMode::Enforce,
        prune_after: None,
        max_entries: None,
    };
    assert!(s.prune(&none, &[], now).unwrap().is_empty());
    let zero = RetentionPolicy {
        max_entries: Some(0),
        ..none
    };
    let report = s.prune(&zero, &["k2"], now).unwrap();
    assert_eq!(report.sessions.len(), 6);
    let keys: Vec<String> = s.list().unwrap().into_iter().map(|(k, _)| k).collect();
    assert_eq!(keys, ["k2"]);
}

fn touch(path: &Path) -> PathBuf {
    fs::write(path, b"x").unwrap();
    path.to_path_buf()
}

#[test]
fn old_archives_are_deleted_and_orphans_moved_aside_only_in_enforce_mode() {
    let dir = tempfile::tempdir().unwrap();
    let s = store(dir.path());
    let live = s.get_or_create("live").unwrap();
    let root = s.root().to_path_buf();
    let old_reset = touch(&root.join("aaaa.jsonl.reset.2024-01-01T00-00-00.000Z"));
    let old_deleted = touch(&root.join("bbbb.jsonl.deleted.2024-01-01T00-00-00.000Z"));
    let old_torn = touch(&root.join("cccc.jsonl.torn.1704067200000"));
    let old_compacted = touch(&root.join("iiii.jsonl.bak.2024-01-01T00-00-00.000Z"));
    let fresh_reset = touch(&root.join("dddd.jsonl.reset.2024-03-01T00-00-00.000Z"));
    let fresh_torn = touch(&root.join("eeee.jsonl.torn.1709251200000"));
    let backup = touch(&root.join("ffff.jsonl.v1.bak"));
    let corrupt = touch(&root.join("sessions.json.corrupt.2024-01-01T00-00-00.000Z"));
    // No time in these names: their modification time counts (now, in real time).
    let temp = touch(&root.join(".sessions.json.tmp.0a1b2c3d"));
    let undated = touch(&root.join("gggg.jsonl.reset.sometime"));
    let orphan = touch(&root.join("hhhh.jsonl"));

    // 2024-03-15: the January files are older than 30 days, the March ones are not; the
    // files dated by their modification time are new.
    let march = pincer_store::ids::ms_from_iso("2024-03-15T00:00:00.000Z").unwrap();
    let policy = policy(RetentionMode::Warn, None);
    let report = s.prune(&policy, &[], march).unwrap();
    assert_eq!(
        report.deleted_archives,
        [
            old_reset.clone(),
            old_deleted.clone(),
            old_torn.clone(),
            old_compacted.clone()
        ]
    );
    assert_eq!(report.orphans, []);
    assert!(old_reset.exists() && old_deleted.exists() && old_torn.exists());
    assert!(old_compacted.exists());

    let enforce = RetentionPolicy {
        mode: RetentionMode::Enforce,
        ..policy
    };
    let report = s.prune(&enforce, &[], march).unwrap();
    assert_eq!(report.deleted_archives.len(), 4);
    for gone in [&old_reset, &old_deleted, &old_torn, &old_compacted] {
        assert!(!gone.exists(), "{gone:?}");
    }
    for kept in [
        &fresh_reset,
        &fresh_torn,
        &backup,
        &corrupt,
        &temp,
        &undated,
        &orphan,
    ] {
        assert!(kept.exists(), "{kept:?}");
    }

    // Forty days from now, every leftover is old; the live session is in the index, so it
    // is neither an orphan nor stale while it is active.
    let later = pincer_store::ids::now_ms() + 40 * DAY;
    let report = s.prune(&enforce, &["live"], later).unwrap();
    assert_eq!(
        report.deleted_archives,
        [
            temp.clone(),
            fresh_reset.clone(),
            fresh_torn.clone(),
            undated.clone()
        ]
    );
    assert_eq!(report.orphans.len(), 1);
    let OrphanTranscript { path, archived_to } = &report.orphans[0];
    assert_eq!(path, &orphan);
    let moved = archived_to.as_ref().unwrap();
    assert!(
        moved
            .file_name()
            .unwrap()
            .to_string_lossy()
            .starts_with("hhhh.jsonl.deleted."),
        "{moved:?}"
    );
    assert_eq!(fs::read(moved).unwrap(), b"x");
    assert!(report.sessions.is_empty());
    let mut left = sorted_names(&root);
    left.retain(|n| !n.starts_with("hhhh.jsonl.deleted."));
    assert_eq!(
        left,
        [
            format!("{}.jsonl", live.entry.session_id),
            "ffff.jsonl.v1.bak".into(),
            "sessions.json".into(),
            "sessions.json.corrupt.2024-01-01T00-00-00.000Z".into(),
            "sessions.json.lock".into(),
        ]
    );
}

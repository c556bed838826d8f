//! The in-memory copy of `sessions.json` never hides a change: not one made by another
//! store (another process) however fast, nor a hand edit that knows nothing of the cache.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use pincer_store::{SessionStore, TurnStats};
use serde_json::json;

use crate::common::store;

#[test]
fn another_stores_writes_are_seen_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (store(dir.path()), store(dir.path()));
    for i in 0..200 {
        let key = format!("agent:main:s{i}");
        b.get_or_create(&key).unwrap();
        // Back-to-back writes land within one tick of the file clock, often with the
        // same size and a reused inode: only the generation tells them apart.
        b.patch(&key, &json!({ "label": format!("l{i}") })).unwrap();
        let index = a.index().unwrap();
        assert_eq!(index.sessions.len(), i + 1, "round {i}");
        assert_eq!(
            index.get(&key).unwrap().label.as_deref(),
            Some(&*format!("l{i}"))
        );
        // And a's own write must keep b's.
        a.record_turn(&key, &TurnStats::default()).unwrap();
        assert_eq!(b.index().unwrap().sessions.len(), i + 1);
    }
}

#[test]
fn same_size_rewrites_in_the_same_clock_tick_are_seen() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (store(dir.path()), store(dir.path()));
    b.get_or_create("agent:main:main").unwrap();
    let label = |a: &SessionStore| {
        a.index()
            .unwrap()
            .get("agent:main:main")
            .unwrap()
            .label
            .clone()
    };
    for i in 0..300 {
        assert!(label(&a).is_none() || i > 0);
        // Two writes of equal size: the second often reuses the first file's inode.
        let (first, second) = (format!("a{:03}", i), format!("b{:03}", i));
        b.patch(
            "agent:main:main",
            &json!({ "label": first, "updatedAt": 1 }),
        )
        .unwrap();
        b.patch(
            "agent:main:main",
            &json!({ "label": second, "updatedAt": 1 }),
        )
        .unwrap();
        assert_eq!(label(&a).as_deref(), Some(second.as_str()), "round {i}");
    }
}

#[test]
fn a_hand_edit_of_the_index_is_seen() {
    let dir = tempfile::tempdir().unwrap();
    let a = store(dir.path());
    a.get_or_create("agent:main:main").unwrap();
    assert_eq!(a.list().unwrap().len(), 1);
    let path = a.index_path();
    let mut raw: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    raw["agent:main:main"]["label"] = json!("edited by hand");
    std::fs::write(&path, serde_json::to_string_pretty(&raw).unwrap()).unwrap();
    let entry = a.index().unwrap().get("agent:main:main").cloned().unwrap();
    assert_eq!(entry.label.as_deref(), Some("edited by hand"));
    // A write through the store keeps the edit.
    a.record_turn("agent:main:main", &TurnStats::default())
        .unwrap();
    let entry = store(dir.path())
        .index()
        .unwrap()
        .get("agent:main:main")
        .cloned()
        .unwrap();
    assert_eq!(entry.label.as_deref(), Some("edited by hand"));
}

#[test]
fn a_corrupted_index_is_rebuilt_not_served_from_memory() {
    let dir = tempfile::tempdir().unwrap();
    let a = store(dir.path());
    let session = a.get_or_create("agent:main:main").unwrap();
    assert!(a.index().is_ok());
    std::fs::write(a.index_path(), "{ not json").unwrap();
    assert!(a.index().is_err(), "the strict read sees the corruption");
    let (index, rebuilt) = a.index_or_rebuild().unwrap();
    assert!(rebuilt.is_some());
    assert_eq!(
        index.get("agent:main:main").unwrap().session_id,
        session.entry.session_id
    );
}

#[test]
fn entry_reads_one_session_and_sees_other_writers() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (store(dir.path()), store(dir.path()));
    assert_eq!(a.entry("agent:main:main").unwrap(), None);
    let created = b.get_or_create("agent:main:main").unwrap();
    assert_eq!(
        a.entry("agent:main:main").unwrap().map(|e| e.session_id),
        Some(created.entry.session_id)
    );
    b.patch("agent:main:main", &json!({ "label": "x" }))
        .unwrap();
    assert_eq!(
        a.entry("agent:main:main").unwrap().and_then(|e| e.label),
        Some("x".to_owned())
    );
    std::fs::write(a.index_path(), "{ not json").unwrap();
    assert!(
        a.entry("agent:main:main").unwrap().is_some(),
        "rebuilt from the transcripts"
    );
}

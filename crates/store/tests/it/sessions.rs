//! The session index and the store lifecycle: create, resume, patch, reset.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::fs;

use pincer_ai::Message;
use pincer_store::{OpenSession, SessionIndex, SessionStore, StoreError};
use serde_json::json;

fn store(dir: &std::path::Path) -> SessionStore {
    SessionStore::new(dir.join("agents/main/sessions")).with_cwd("/work")
}

/// Session `key` of `s`, opened (created if new) and given a user message saying `text`.
fn said(s: &SessionStore, key: &str, text: &str) -> OpenSession {
    let mut session = s.get_or_create(key).unwrap();
    session
        .transcript
        .append_message(Message::user(text))
        .unwrap();
    session
}

#[test]
fn get_or_create_then_resume() {
    let dir = tempfile::tempdir().unwrap();
    let s = store(dir.path());
    assert!(matches!(
        s.resume("main"),
        Err(StoreError::UnknownSession { .. })
    ));
    let mut a = s.get_or_create("main").unwrap();
    assert!(a.created);
    assert_eq!(a.transcript.header().id, a.entry.session_id);
    assert_eq!(a.transcript.header().cwd, "/work");
    a.transcript.append_message(Message::user("hi")).unwrap();
    let b = s.get_or_create("main").unwrap();
    assert!(!b.created);
    assert_eq!(b.entry.session_id, a.entry.session_id);
    assert_eq!(b.transcript.entries().len(), 1);
    let c = s.resume("main").unwrap();
    assert_eq!(c.transcript.entries(), a.transcript.entries());
    assert_eq!(c.transcript.header().session_key.as_deref(), Some("main"));
    assert!(c.rebuilt.is_none());
    assert!(s.transcript_path(&a.entry.session_id).exists());
    let index = s.index().unwrap();
    assert_eq!(index.sessions.len(), 1);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = fs::metadata(s.index_path()).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
    }
}

#[test]
fn patch_sets_and_null_clears() {
    let dir = tempfile::tempdir().unwrap();
    let s = store(dir.path());
    let created = s.get_or_create("k").unwrap().entry;
    let e = s
        .patch(
            "k",
            &json!({"thinkingLevel": "high", "label": "L", "model": "openai/gpt-5"}),
        )
        .unwrap();
    assert_eq!(e.thinking_level.as_deref(), Some("high"));
    assert_eq!(e.label.as_deref(), Some("L"));
    assert!(e.updated_at >= created.updated_at);
    let e = s
        .patch("k", &json!({"label": null, "model": null}))
        .unwrap();
    assert_eq!(e.label, None);
    assert_eq!(e.model, None);
    assert_eq!(e.thinking_level.as_deref(), Some("high"));
    let on_disk: serde_json::Value =
        serde_json::from_slice(&fs::read(s.index_path()).unwrap()).unwrap();
    assert_eq!(on_disk["k"]["thinkingLevel"], "high");
    assert!(on_disk["k"].get("label").is_none());
    assert_eq!(on_disk["k"]["sessionId"], created.session_id.as_str());
    assert_eq!(on_disk["k"]["compactionCount"], 0);
    // Invalid patches change nothing.
    assert!(matches!(
        s.patch("k", &json!({"sessionId": null})),
        Err(StoreError::Patch { .. })
    ));
    assert!(matches!(
        s.patch("k", &json!({"inputTokens": "x"})),
        Err(StoreError::Patch { .. })
    ));
    assert!(matches!(
        s.patch("k", &json!([1])),
        Err(StoreError::Patch { .. })
    ));
    assert!(matches!(
        s.patch("nope", &json!({})),
        Err(StoreError::UnknownSession { .. })
    ));
    assert_eq!(
        s.index().unwrap().get("k").unwrap().session_id,
        created.session_id
    );
}

#[test]
fn index_keeps_unknown_fields() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("sessions.json");
    fs::write(
        &path,
        r#"{"k":{"sessionId":"s","createdAt":1,"updatedAt":2,"futureField":{"a":1}}}"#,
    )
    .unwrap();
    let index = SessionIndex::load(&path).unwrap();
    assert_eq!(
        index.get("k").unwrap().extra["futureField"],
        json!({"a": 1})
    );
    index.save().unwrap();
    let v: serde_json::Value = serde_json::from_slice(&fs::read(&path).unwrap()).unwrap();
    assert_eq!(
        v,
        json!({"k":{"sessionId":"s","createdAt":1,"updatedAt":2,"compactionCount":0,"futureField":{"a":1}}})
    );
}

#[test]
fn missing_index_is_empty_and_corrupt_index_is_strict_in_index() {
    let dir = tempfile::tempdir().unwrap();
    let s = store(dir.path());
    assert!(s.index().unwrap().sessions.is_empty());
    assert_eq!(s.index_or_rebuild().unwrap().1, None);
    fs::create_dir_all(s.root()).unwrap();
    fs::write(s.index_path(), "{\"k\": {\"sessionId\": ").unwrap();
    let err = s.index().unwrap_err();
    assert!(matches!(err, StoreError::Json { .. }), "{err}");
    assert!(err.to_string().contains("sessions.json"), "{err}");
    assert_eq!(
        fs::read_to_string(s.index_path()).unwrap(),
        "{\"k\": {\"sessionId\": ",
        "index() only reads"
    );
}

#[test]
fn reset_keeps_the_old_transcript() {
    let dir = tempfile::tempdir().unwrap();
    let s = store(dir.path());
    let old = said(&s, "main", "before");
    s.patch("main", &json!({"thinkingLevel": "low", "inputTokens": 5}))
        .unwrap();
    let old_bytes = fs::read(old.transcript.path()).unwrap();
    let old_id = old.entry.session_id.clone();

    let new = s.reset("main").unwrap();
    assert!(new.created);
    assert_ne!(new.entry.session_id, old_id);
    assert!(new.transcript.entries().is_empty());
    assert_eq!(new.entry.thinking_level.as_deref(), Some("low"));
    assert_eq!(new.entry.input_tokens, None);
    assert!(!old.transcript.path().exists());
    let kept: Vec<_> = fs::read_dir(s.root())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(&format!("{old_id}.jsonl.reset.")))
        .collect();
    assert_eq!(kept.len(), 1, "{kept:?}");
    assert_eq!(fs::read(s.root().join(&kept[0])).unwrap(), old_bytes);
    assert_eq!(
        s.resume("main").unwrap().entry.session_id,
        new.entry.session_id
    );
}

#[test]
fn missing_transcript_is_recreated_under_the_same_id() {
    let dir = tempfile::tempdir().unwrap();
    let s = store(dir.path());
    let a = s.get_or_create("main").unwrap();
    fs::remove_file(a.transcript.path()).unwrap();
    let b = s.resume("main").unwrap();
    assert_eq!(b.entry.session_id, a.entry.session_id);
    assert_eq!(b.transcript.header().id, a.entry.session_id);
    assert_eq!(b.transcript.header().session_key.as_deref(), Some("main"));
}

#[test]
fn list_is_sorted_by_update_newest_first() {
    let dir = tempfile::tempdir().unwrap();
    let s = store(dir.path());
    for key in ["a", "b", "c", "d"] {
        s.get_or_create(key).unwrap();
    }
    for (key, at) in [("a", 10), ("b", 30), ("c", 20), ("d", 30)] {
        s.patch(key, &json!({ "updatedAt": at })).unwrap();
    }
    let keys: Vec<(String, i64)> = s
        .list()
        .unwrap()
        .into_iter()
        .map(|(k, e)| (k, e.updated_at))
        .collect();
    assert_eq!(
        keys,
        [
            ("b".to_owned(), 30),
            ("d".to_owned(), 30),
            ("c".to_owned(), 20),
            ("a".to_owned(), 10)
        ]
    );
}

#[test]
fn archive_removes_the_entry_and_keeps_the_transcript_aside() {
    let dir = tempfile::tempdir().unwrap();
    let s = store(dir.path());
    let mut a = said(&s, "gone", "keep me");
    let bytes = fs::read(a.transcript.path()).unwrap();
    s.get_or_create("stays").unwrap();
    let moved = s.archive("gone").unwrap().unwrap();
    let name = moved.file_name().unwrap().to_string_lossy().into_owned();
    assert!(
        name.starts_with(&format!("{}.jsonl.deleted.", a.entry.session_id)),
        "{name}"
    );
    assert_eq!(fs::read(&moved).unwrap(), bytes);
    assert!(!a.transcript.path().exists());
    let keys: Vec<String> = s.list().unwrap().into_iter().map(|(k, _)| k).collect();
    assert_eq!(keys, ["stays"]);
    assert!(matches!(
        s.archive("gone"),
        Err(StoreError::UnknownSession { .. })
    ));
    // The open handle of the archived session cannot write into the archive.
    let err = a
        .transcript
        .append_message(Message::user("late"))
        .unwrap_err();
    assert!(matches!(err, StoreError::Io { .. }), "{err}");
    assert_eq!(fs::read(&moved).unwrap(), bytes);
}

#[test]
fn session_ids_that_are_not_plain_file_names_never_reach_outside_the_store() {
    let dir = tempfile::tempdir().unwrap();
    let s = store(dir.path());
    fs::create_dir_all(s.root()).unwrap();
    let outside = dir.path().join("outside.jsonl");
    fs::write(&outside, "precious").unwrap();
    let bad_ids = [
        "../../outside".to_owned(),
        outside.with_extension("").to_string_lossy().into_owned(),
        "..".into(),
        "".into(),
        "a\\b".into(),
    ];
    for id in &bad_ids {
        fs::write(
            s.index_path(),
            serde_json::to_vec(&json!({"k": {"sessionId": id, "createdAt": 1, "updatedAt": 1}}))
                .unwrap(),
        )
        .unwrap();
        for result in [s.get_or_create("k"), s.resume("k")] {
            match result {
                Err(StoreError::InvalidSessionId { key, session_id }) => {
                    assert_eq!((key.as_str(), session_id.as_str()), ("k", id.as_str()));
                }
                other => panic!("{id:?}: unexpected {other:?}"),
            }
        }
        // Archiving drops the entry but touches no file.
        assert_eq!(s.archive("k").unwrap(), None);
        assert!(s.index().unwrap().sessions.is_empty());
    }
    assert_eq!(fs::read_to_string(&outside).unwrap(), "precious");
    let mut left: Vec<String> = fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    left.sort();
    assert_eq!(left, ["agents", "outside.jsonl"]);
}

/// Finding 8 of the security review: every file and directory the store creates is the
/// owner's alone (files 0600 — the index, its lock, transcripts — directories 0700).
#[cfg(unix)]
#[test]
fn everything_the_store_creates_is_private() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let s = store(dir.path());
    // Kept open while the files are checked.
    let _open = said(&s, "main", "hi");
    let mut wrong = Vec::new();
    let mut stack = vec![dir.path().join("agents")];
    while let Some(path) = stack.pop() {
        let meta = fs::metadata(&path).unwrap();
        let want = if meta.is_dir() { 0o700 } else { 0o600 };
        if meta.permissions().mode() & 0o777 != want {
            wrong.push(format!(
                "{:o} {}",
                meta.permissions().mode() & 0o777,
                path.display()
            ));
        }
        if meta.is_dir() {
            stack.extend(fs::read_dir(&path).unwrap().map(|e| e.unwrap().path()));
        }
    }
    wrong.sort();
    assert_eq!(wrong, Vec::<String>::new());
}

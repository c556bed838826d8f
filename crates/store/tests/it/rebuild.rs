//! A corrupt `sessions.json` is rebuilt from the transcripts, visibly, with the old file
//! kept; never treated as empty.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::fs;
use std::path::Path;

use pincer_ai::Message;
use pincer_store::{
    Entry, RebuiltSession, SessionHeader, SessionStore, StoreError, Transcript, TurnStats,
    UnreadableTranscript, ids::ms_from_iso,
};
use serde_json::json;

use crate::common::{msg, store};
use pincer_testkit::files::sorted_names;

const GARBAGE: &str = "{\"main\": {\"sessionId\": ";

/// A transcript `<id>.jsonl` created at `created` (ISO) claiming `key`, with one message
/// entry per time in `times`.
fn transcript(s: &SessionStore, id: &str, key: Option<&str>, created: &str, times: &[&str]) {
    fs::create_dir_all(s.root()).unwrap();
    let mut header = SessionHeader::new(id, "/work");
    header.timestamp = created.into();
    header.session_key = key.map(str::to_owned);
    let mut t = Transcript::create(s.transcript_path(id), header).unwrap();
    for (i, at) in times.iter().enumerate() {
        let mut e = Entry::new(
            t.leaf_id().map(str::to_owned),
            msg(Message::user(format!("{id}-{i}"))),
        );
        e.timestamp = (*at).into();
        t.append(e).unwrap();
    }
}

/// A store in `dir` holding one transcript, `aaaa`, claiming `key`: created on 2024-01-01,
/// one message on 2024-01-02.
fn one_transcript(dir: &Path, key: &str) -> SessionStore {
    let s = store(dir);
    transcript(
        &s,
        "aaaa",
        Some(key),
        "2024-01-01T00:00:00.000Z",
        &["2024-01-02T00:00:00.000Z"],
    );
    s
}

fn corrupt_index(s: &SessionStore) {
    fs::write(s.index_path(), GARBAGE).unwrap();
}

fn ms(iso: &str) -> i64 {
    ms_from_iso(iso).unwrap()
}

#[test]
fn corrupt_index_is_rebuilt_from_transcripts_with_the_old_file_kept() {
    let dir = tempfile::tempdir().unwrap();
    let s = one_transcript(dir.path(), "main");
    // Claims "main" too, with a newer last entry: it keeps the key.
    transcript(
        &s,
        "cccc",
        Some("main"),
        "2024-01-01T00:00:00.000Z",
        &["2024-01-03T00:00:00.000Z", "2024-01-05T00:00:00.000Z"],
    );
    transcript(
        &s,
        "bbbb",
        Some("agent:main:telegram:direct:42"),
        "2024-02-01T00:00:00.000Z",
        &[],
    );
    // A pi transcript without a key.
    transcript(
        &s,
        "dddd",
        None,
        "2024-03-01T10:00:00.000Z",
        &["2024-03-01T11:00:00.000Z"],
    );
    fs::write(s.root().join("eeee.jsonl"), "not a transcript\n").unwrap();
    // Archives and hidden files are not sessions.
    fs::write(
        s.root().join("ffff.jsonl.reset.2024-01-01T00-00-00.000Z"),
        "{}\n",
    )
    .unwrap();
    fs::write(s.root().join(".gggg.jsonl"), "{}\n").unwrap();
    corrupt_index(&s);

    let opened = s.get_or_create("main").unwrap();
    assert!(
        !opened.created,
        "the surviving session is resumed, not created"
    );
    assert_eq!(opened.entry.session_id, "cccc");
    assert_eq!(opened.transcript.entries().len(), 2);
    let report = opened.rebuilt.expect("the rebuild is reported");
    assert_eq!(fs::read_to_string(&report.corrupt_copy).unwrap(), GARBAGE);
    let copy_name = report.corrupt_copy.file_name().unwrap().to_string_lossy();
    assert!(
        copy_name.starts_with("sessions.json.corrupt."),
        "{copy_name}"
    );
    assert!(report.error.contains("EOF"), "{}", report.error);
    assert_eq!(
        report.sessions,
        [
            RebuiltSession {
                key: "agent:main:telegram:direct:42".into(),
                session_id: "bbbb".into(),
                claimed_key: Some("agent:main:telegram:direct:42".into()),
            },
            RebuiltSession {
                key: "main".into(),
                session_id: "cccc".into(),
                claimed_key: Some("main".into()),
            },
            RebuiltSession {
                key: "recovered:aaaa".into(),
                session_id: "aaaa".into(),
                claimed_key: Some("main".into()),
            },
            RebuiltSession {
                key: "recovered:dddd".into(),
                session_id: "dddd".into(),
                claimed_key: None,
            },
        ]
    );
    assert_eq!(report.unreadable.len(), 1);
    let UnreadableTranscript { path, error } = &report.unreadable[0];
    assert_eq!(path, &s.root().join("eeee.jsonl"));
    assert!(error.contains("not a session transcript"), "{error}");

    let index = s.index().expect("the new index reads strictly");
    let times = |key: &str| {
        let e = index.get(key).unwrap();
        (e.session_id.clone(), e.created_at, e.updated_at)
    };
    let expected = [
        (
            "main",
            "cccc",
            "2024-01-01T00:00:00.000Z",
            "2024-01-05T00:00:00.000Z",
        ),
        (
            "recovered:aaaa",
            "aaaa",
            "2024-01-01T00:00:00.000Z",
            "2024-01-02T00:00:00.000Z",
        ),
        (
            "agent:main:telegram:direct:42",
            "bbbb",
            "2024-02-01T00:00:00.000Z",
            "2024-02-01T00:00:00.000Z",
        ),
        (
            "recovered:dddd",
            "dddd",
            "2024-03-01T10:00:00.000Z",
            "2024-03-01T11:00:00.000Z",
        ),
    ];
    for (key, id, created, updated) in expected {
        assert_eq!(times(key), (id.into(), ms(created), ms(updated)), "{key}");
    }
    assert_eq!(index.sessions.len(), 4);
    // Nothing was moved or deleted; the unreadable file is still there.
    assert!(sorted_names(s.root()).contains(&"eeee.jsonl".to_owned()));
    // Once rebuilt, the index reads normally again.
    assert!(s.get_or_create("main").unwrap().rebuilt.is_none());
}

#[test]
fn a_torn_last_line_does_not_decide_the_update_time() {
    let dir = tempfile::tempdir().unwrap();
    let s = one_transcript(dir.path(), "k");
    let mut f = fs::OpenOptions::new()
        .append(true)
        .open(s.transcript_path("aaaa"))
        .unwrap();
    std::io::Write::write_all(&mut f, br#"{"type":"message","id":"x","timestamp":"2030"#).unwrap();
    corrupt_index(&s);
    let (index, report) = s.index_or_rebuild().unwrap();
    assert!(report.is_some());
    assert_eq!(
        index.get("k").unwrap().updated_at,
        ms("2024-01-02T00:00:00.000Z")
    );
    // Rebuilding only reads: the torn tail is still there for the next open to repair.
    assert!(
        fs::read_to_string(s.transcript_path("aaaa"))
            .unwrap()
            .ends_with("2030")
    );
}

#[test]
fn every_index_writer_and_reader_goes_through_the_rebuild() {
    type Op = fn(&SessionStore) -> Result<(), StoreError>;
    let ops: [(&str, Op); 7] = [
        ("resume", |s| {
            s.resume("k").map(|o| assert!(o.rebuilt.is_some()))
        }),
        ("reset", |s| {
            let o = s.reset("k")?;
            assert!(o.rebuilt.is_some());
            assert_ne!(o.entry.session_id, "aaaa");
            Ok(())
        }),
        ("patch", |s| {
            let e = s.patch("k", &json!({"label": "L"}))?;
            assert_eq!(e.label.as_deref(), Some("L"));
            Ok(())
        }),
        ("list", |s| {
            assert_eq!(s.list()?.len(), 1);
            Ok(())
        }),
        ("record_turn", |s| {
            let e = s.record_turn(
                "k",
                &TurnStats {
                    input_tokens: 3,
                    ..TurnStats::default()
                },
            )?;
            assert_eq!(e.input_tokens, Some(3));
            Ok(())
        }),
        ("prune", |s| {
            let r = s.prune(&Default::default(), &[], ms("2024-01-03T00:00:00.000Z"))?;
            assert!(r.rebuilt.is_some() && r.is_empty());
            Ok(())
        }),
        ("archive", |s| {
            s.archive("k").map(|moved| assert!(moved.is_some()))
        }),
    ];
    for (name, op) in ops {
        let dir = tempfile::tempdir().unwrap();
        let s = one_transcript(dir.path(), "k");
        corrupt_index(&s);
        op(&s).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(s.index().is_ok(), "{name} left a readable index");
        let copies = sorted_names(s.root())
            .into_iter()
            .filter(|n| n.starts_with("sessions.json.corrupt."))
            .count();
        assert_eq!(copies, 1, "{name}");
    }
}

#[test]
fn wrong_shapes_and_empty_files_are_rebuilt_but_io_errors_are_errors() {
    for bad in [
        "",
        "[]",
        "{\"k\": 5}",
        "{\"k\": {\"createdAt\": 1}}",
        "\u{0}\u{0}\u{0}",
        "null",
    ] {
        let dir = tempfile::tempdir().unwrap();
        let s = store(dir.path());
        transcript(&s, "aaaa", Some("k"), "2024-01-01T00:00:00.000Z", &[]);
        fs::write(s.index_path(), bad).unwrap();
        let (index, report) = s.index_or_rebuild().unwrap();
        assert!(report.is_some(), "{bad:?}");
        assert_eq!(index.get("k").unwrap().session_id, "aaaa", "{bad:?}");
        assert_eq!(
            fs::read_to_string(report.unwrap().corrupt_copy).unwrap(),
            bad
        );
    }
    let dir = tempfile::tempdir().unwrap();
    let s = store(dir.path());
    fs::create_dir_all(s.index_path()).unwrap();
    let err = s.get_or_create("k").unwrap_err();
    assert!(matches!(err, StoreError::Io { .. }), "{err}");
    assert!(s.index_path().is_dir(), "an unreadable index is left alone");
}

#[test]
fn a_rebuilt_empty_directory_gives_an_empty_index_and_new_sessions_work() {
    let dir = tempfile::tempdir().unwrap();
    let s = store(dir.path());
    fs::create_dir_all(s.root()).unwrap();
    corrupt_index(&s);
    let o = s.get_or_create("k").unwrap();
    assert!(o.created);
    assert_eq!(o.rebuilt.unwrap().sessions, []);
    assert_eq!(s.index().unwrap().sessions.len(), 1);
}

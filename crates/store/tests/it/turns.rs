//! The turn runner's view: append as messages complete, flush at the end of the turn,
//! record usage, routing and compactions in the index.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::fs;
use std::path::Path;

use pincer_ai::{AssistantMessage, ContentBlock, Message, Usage};
use pincer_store::{
    CompactionEntry, EntryBody, OpenSession, SessionStore, StoreError, Transcript, TurnStats,
};

use crate::common::store;

/// A store in `dir` and its session "main", open without an fsync per append (the turn
/// runner's mode: the turn's end flushes).
fn unsynced_main(dir: &Path) -> (SessionStore, OpenSession) {
    let s = store(dir);
    let mut session = s.get_or_create("main").unwrap();
    session.transcript.set_sync_each_append(false);
    (s, session)
}

fn reply(text: &str, input: u64, output: u64) -> AssistantMessage {
    AssistantMessage {
        content: vec![ContentBlock::text(text)],
        provider: "stub".into(),
        model: "stub".into(),
        usage: Usage {
            input,
            output,
            total_tokens: input + output,
            ..Usage::default()
        },
        ..Default::default()
    }
}

#[test]
fn a_turn_appends_flushes_and_adds_up_in_the_index() {
    let dir = tempfile::tempdir().unwrap();
    let (s, mut session) = unsynced_main(dir.path());
    assert!(!session.transcript.sync_each_append());

    for (i, (input, output)) in [(100, 20), (150, 30)].into_iter().enumerate() {
        session
            .transcript
            .append_message(Message::user(format!("q{i}")))
            .unwrap();
        let mut stats = TurnStats::default();
        // A turn with a tool call: two replies, both counted.
        for part in 0..2 {
            let r = reply(&format!("a{i}.{part}"), input, output);
            stats.add_usage(&r.usage);
            session
                .transcript
                .append_message(Message::Assistant(r))
                .unwrap();
        }
        assert!(session.transcript.has_unsynced_appends());
        let before = session.entry.updated_at;
        s.finish_turn(&mut session, &stats.routed("telegram", "chat-9", "default"))
            .unwrap();
        assert!(!session.transcript.has_unsynced_appends());
        assert!(session.entry.updated_at >= before);
    }
    let e = &session.entry;
    assert_eq!(
        (e.input_tokens, e.output_tokens, e.total_tokens),
        (Some(500), Some(100), Some(600))
    );
    assert_eq!(
        (
            e.last_channel.as_deref(),
            e.last_to.as_deref(),
            e.last_account_id.as_deref()
        ),
        (Some("telegram"), Some("chat-9"), Some("default"))
    );
    assert_eq!(s.index().unwrap().get("main").unwrap(), e);
    let (reopened, report) = Transcript::open(session.transcript.path()).unwrap();
    assert!(report.is_clean());
    assert_eq!(reopened.entries().len(), 6);
    assert_eq!(reopened.context().len(), 6);
}

#[test]
fn record_turn_keeps_routing_it_is_not_given() {
    let dir = tempfile::tempdir().unwrap();
    let s = store(dir.path());
    s.get_or_create("k").unwrap();
    s.record_turn("k", &TurnStats::default().routed("slack", "C1", "work"))
        .unwrap();
    let e = s
        .record_turn(
            "k",
            &TurnStats {
                input_tokens: 1,
                output_tokens: 2,
                total_tokens: 3,
                ..TurnStats::default()
            },
        )
        .unwrap();
    assert_eq!(
        (e.input_tokens, e.output_tokens, e.total_tokens),
        (Some(1), Some(2), Some(3))
    );
    assert_eq!(e.last_channel.as_deref(), Some("slack"));
    assert_eq!(e.last_to.as_deref(), Some("C1"));
    assert_eq!(e.last_account_id.as_deref(), Some("work"));
    assert!(matches!(
        s.record_turn("nope", &TurnStats::default()),
        Err(StoreError::UnknownSession { .. })
    ));
}

#[test]
fn a_turn_of_a_session_reset_meanwhile_is_not_charged_to_the_new_one() {
    let dir = tempfile::tempdir().unwrap();
    let (s, mut old) = unsynced_main(dir.path());
    old.transcript
        .append_message(Message::user("before the reset"))
        .unwrap();
    let new = s.reset("main").unwrap();
    let err = s
        .finish_turn(
            &mut old,
            &TurnStats {
                input_tokens: 9,
                ..TurnStats::default()
            },
        )
        .unwrap_err();
    match err {
        StoreError::SessionChanged {
            key,
            expected,
            found,
        } => {
            assert_eq!(key, "main");
            assert_eq!(expected, old.entry.session_id);
            assert_eq!(found, new.entry.session_id);
        }
        other => panic!("unexpected {other}"),
    }
    assert_eq!(s.index().unwrap().get("main").unwrap().input_tokens, None);
}

#[test]
fn compaction_is_appended_and_counted() {
    let dir = tempfile::tempdir().unwrap();
    let (s, mut session) = unsynced_main(dir.path());
    session
        .transcript
        .append_message(Message::user("q1"))
        .unwrap();
    let kept = session
        .transcript
        .append_message(Message::user("q2"))
        .unwrap()
        .id
        .clone();
    for n in 1..=2u64 {
        let entry = s
            .record_compaction(
                &mut session,
                CompactionEntry {
                    summary: format!("summary {n}"),
                    first_kept_entry_id: kept.clone(),
                    tokens_before: 1000 * n,
                    details: None,
                    from_hook: None,
                },
            )
            .unwrap();
        assert_eq!(entry.kind(), "compaction");
        assert_eq!(session.transcript.leaf_id(), Some(entry.id.as_str()));
        assert_eq!(session.entry.compaction_count, n);
    }
    assert!(!session.transcript.has_unsynced_appends());
    assert_eq!(s.index().unwrap().get("main").unwrap().compaction_count, 2);
    let line = fs::read_to_string(session.transcript.path())
        .unwrap()
        .lines()
        .last()
        .unwrap()
        .to_owned();
    let v: serde_json::Value = serde_json::from_str(&line).unwrap();
    assert_eq!(v["type"], "compaction");
    assert_eq!(v["summary"], "summary 2");
    assert_eq!(v["firstKeptEntryId"], kept.as_str());
    assert_eq!(v["tokensBefore"], 2000);
    let (t, _) = Transcript::open(session.transcript.path()).unwrap();
    let ctx = t.context();
    match &ctx[0] {
        Message::User(u) => assert!(u.text().contains("summary 2"), "{}", u.text()),
        other => panic!("unexpected {other:?}"),
    }
    assert_eq!(ctx.len(), 2, "the summary, then the kept q2");
    assert!(matches!(
        t.entries().last().unwrap().body,
        EntryBody::Compaction(_)
    ));
}

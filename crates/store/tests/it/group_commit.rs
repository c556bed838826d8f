//! Group commit: concurrent turns of one store share fsyncs and index writes, each turn's
//! result stays its own, and nothing is reported done before its batch is on disk.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::{Arc, Barrier};

use pincer_ai::{AssistantMessage, ContentBlock, Message, Usage};
use pincer_store::{CommitStats, OpenSession, SessionStore, StoreError, Transcript, TurnStats};

use crate::common::{store, texts};

const SESSIONS: usize = 40;
const TURNS: usize = 3;

fn reply(text: String, input: u64) -> AssistantMessage {
    AssistantMessage {
        content: vec![ContentBlock::text(text)],
        provider: "stub".into(),
        model: "stub".into(),
        usage: Usage {
            input,
            output: 1,
            total_tokens: input + 1,
            ..Usage::default()
        },
        ..Default::default()
    }
}

/// Appends turn `t` of session `i` (not fsynced) and returns its stats.
fn append_turn(session: &mut OpenSession, i: usize, t: usize) -> TurnStats {
    session
        .transcript
        .append_message(Message::user(format!("q{i}.{t}")))
        .unwrap();
    let r = reply(format!("a{i}.{t}"), i as u64);
    let mut stats = TurnStats::default();
    stats.add_usage(&r.usage);
    session
        .transcript
        .append_message(Message::Assistant(r))
        .unwrap();
    stats.routed("ws", format!("to{i}"), "default")
}

fn open_all(s: &SessionStore) -> Vec<OpenSession> {
    (0..SESSIONS)
        .map(|i| {
            let mut session = s.get_or_create(&format!("k{i}")).unwrap();
            session.transcript.set_sync_each_append(false);
            session
        })
        .collect()
}

/// Every session finishes each of its turns at the same moment as all the others.
fn run_concurrently(s: &SessionStore, sessions: Vec<OpenSession>) -> Vec<OpenSession> {
    let barrier = Arc::new(Barrier::new(SESSIONS));
    let threads: Vec<_> = sessions
        .into_iter()
        .enumerate()
        .map(|(i, mut session)| {
            let (s, barrier) = (s.clone(), Arc::clone(&barrier));
            std::thread::spawn(move || {
                for t in 0..TURNS {
                    let stats = append_turn(&mut session, i, t);
                    barrier.wait();
                    s.finish_turn(&mut session, &stats).unwrap();
                    assert!(!session.transcript.has_unsynced_appends());
                }
                session
            })
        })
        .collect();
    threads.into_iter().map(|t| t.join().unwrap()).collect()
}

#[test]
fn concurrent_turns_leave_complete_transcripts_and_index_with_shared_fsyncs() {
    let dir = tempfile::tempdir().unwrap();
    let s = store(dir.path());
    let sessions = open_all(&s);
    let before = s.commit_stats();
    let sessions = run_concurrently(&s, sessions);
    let stats = s.commit_stats();
    let n = (SESSIONS * TURNS) as u64;
    assert_eq!(stats.syncs_requested - before.syncs_requested, n);
    assert_eq!(stats.index_updates - before.index_updates, n);
    // Forty turns end at once, three times: they share fsyncs and index writes.
    assert!(
        stats.fsyncs - before.fsyncs < n,
        "no fsync was shared: {stats:?}"
    );
    assert!(
        stats.index_writes - before.index_writes < n,
        "no index write was shared: {stats:?}"
    );

    // A fresh store (no cache) reads back exactly what every turn wrote.
    let fresh = store(dir.path());
    for (i, session) in sessions.iter().enumerate() {
        let key = format!("k{i}");
        let entry = fresh.index().unwrap().get(&key).cloned().unwrap();
        assert_eq!(entry.session_id, session.entry.session_id);
        assert_eq!(
            (entry.input_tokens, entry.output_tokens, entry.total_tokens),
            (
                Some(TURNS as u64 * i as u64),
                Some(TURNS as u64),
                Some(TURNS as u64 * (i as u64 + 1))
            ),
            "{key}"
        );
        assert_eq!(entry.last_to.as_deref(), Some(format!("to{i}").as_str()));
        assert_eq!(entry, session.entry, "each turn got its own entry back");
        let (t, report) = Transcript::open(fresh.transcript_path(&entry.session_id)).unwrap();
        assert!(report.is_clean());
        let expected: Vec<String> = (0..TURNS)
            .flat_map(|t| [format!("u:q{i}.{t}"), format!("a:a{i}.{t}")])
            .collect();
        assert_eq!(texts(&t.context()), expected, "{key}");
    }
    assert_eq!(fresh.list().unwrap().len(), SESSIONS);
}

#[test]
fn a_finished_turn_is_in_the_file_and_a_lone_turn_costs_one_fsync() {
    let dir = tempfile::tempdir().unwrap();
    let s = store(dir.path());
    let mut session = s.get_or_create("main").unwrap();
    session.transcript.set_sync_each_append(false);
    let path = s.transcript_path(&session.entry.session_id);
    let before = s.commit_stats();
    let stats = append_turn(&mut session, 7, 0);
    s.finish_turn(&mut session, &stats).unwrap();
    assert_eq!(
        s.commit_stats(),
        CommitStats {
            syncs_requested: before.syncs_requested + 1,
            fsyncs: before.fsyncs + 1,
            index_updates: before.index_updates + 1,
            index_writes: before.index_writes + 1,
        }
    );
    // Another handle sees the turn's bytes once finish_turn has returned.
    let text = std::fs::read_to_string(&path).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 3, "header, question, answer: {text}");
    assert!(lines[1].contains(r#""content":"q7.0""#), "{}", lines[1]);
    assert!(lines[2].contains(r#""text":"a7.0""#), "{}", lines[2]);

    // Nothing appended since: no fsync at all.
    s.finish_turn(&mut session, &TurnStats::default()).unwrap();
    assert_eq!(s.commit_stats().fsyncs, before.fsyncs + 1);
    assert_eq!(s.commit_stats().syncs_requested, before.syncs_requested + 1);
}

#[test]
fn one_turns_error_in_a_batch_is_its_own() {
    let dir = tempfile::tempdir().unwrap();
    let s = store(dir.path());
    let prepared: Vec<_> = open_all(&s)
        .into_iter()
        .enumerate()
        .map(|(i, mut session)| {
            let stats = append_turn(&mut session, i, 0);
            (i, session, stats)
        })
        .collect();
    // Session 0 is reset behind its turn's back: only that turn fails, after its fsync.
    s.reset("k0").unwrap();
    let barrier = Arc::new(Barrier::new(SESSIONS));
    let threads: Vec<_> = prepared
        .into_iter()
        .map(|(i, mut session, stats)| {
            let (s, barrier) = (s.clone(), Arc::clone(&barrier));
            std::thread::spawn(move || {
                barrier.wait();
                let result = s.finish_turn(&mut session, &stats);
                (i, result, session.transcript.has_unsynced_appends())
            })
        })
        .collect();
    for t in threads {
        let (i, result, unsynced) = t.join().unwrap();
        assert!(!unsynced, "k{i} was synced");
        match (i, result) {
            (0, Err(StoreError::SessionChanged { key, .. })) => assert_eq!(key, "k0"),
            (0, other) => panic!("k0: {other:?}"),
            (_, Ok(())) => {}
            (i, Err(e)) => panic!("k{i}: {e}"),
        }
    }
    let index = s.index().unwrap();
    assert_eq!(index.get("k0").unwrap().input_tokens, None, "not charged");
    assert_eq!(index.get("k5").unwrap().input_tokens, Some(5));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn turns_through_the_async_face_share_fsyncs() {
    let dir = tempfile::tempdir().unwrap();
    let s = store(dir.path());
    let sessions = open_all(&s);
    let before = s.commit_stats();
    let mut tasks = tokio::task::JoinSet::new();
    for (i, mut session) in sessions.into_iter().enumerate() {
        let s = s.clone();
        tasks.spawn(async move {
            s.run(move |s| {
                let stats = append_turn(&mut session, i, 0);
                s.finish_turn(&mut session, &stats)
            })
            .await
        });
    }
    while let Some(done) = tasks.join_next().await {
        done.unwrap().unwrap();
    }
    let stats = s.commit_stats();
    assert_eq!(
        stats.syncs_requested - before.syncs_requested,
        SESSIONS as u64
    );
    assert!(stats.fsyncs - before.fsyncs <= SESSIONS as u64);
    let index = s.index().unwrap();
    for i in 0..SESSIONS {
        let e = index.get(&format!("k{i}")).unwrap();
        assert_eq!(e.input_tokens, Some(i as u64));
    }
}

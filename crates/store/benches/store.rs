//! Session store costs a turn pays: resuming a long session (index + 10,000-entry
//! transcript parsed), appending one turn with one fsync (and with an fsync per append, the
//! default), rebuilding the context of 10,000 entries, and 100 sessions finishing a turn at
//! once (group commit: shared fsyncs and index writes). Reports; asserts nothing.
//! Run: `cargo bench -p pincer-store --bench store`.

use criterion::{Criterion, criterion_group, criterion_main};
use pincer_ai::{AssistantMessage, ContentBlock, Message, Usage};
use pincer_store::{SessionStore, Transcript};

const ENTRIES: usize = 10_000;

fn reply(text: String) -> Message {
    Message::Assistant(AssistantMessage {
        content: vec![ContentBlock::text(text)],
        api: "anthropic-messages".into(),
        provider: "anthropic".into(),
        model: "claude-sonnet-4-5".into(),
        usage: Usage {
            input: 1200,
            output: 80,
            total_tokens: 1280,
            ..Usage::default()
        },
        ..Default::default()
    })
}

/// A question and a reply of ordinary chat length.
fn turn(n: usize) -> (Message, Message) {
    (
        Message::user(format!(
            "question {n}: what did we decide about the deploy window?"
        )),
        reply(format!(
            "answer {n}: we agreed to deploy on Tuesdays after 14:00 UTC, with a rollback plan \
             and the on-call engineer watching the dashboards for an hour afterwards."
        )),
    )
}

/// Appends turn `n` (two entries); with `sync`, fsyncs after it.
fn append_turn(t: &mut Transcript, n: usize, sync: bool) {
    let (q, a) = turn(n);
    let result = t
        .append_message(q)
        .map(|_| ())
        .and_then(|()| t.append_message(a).map(|_| ()))
        .and_then(|()| if sync { t.sync() } else { Ok(()) });
    result.unwrap_or_else(|e| panic!("append: {e}"));
}

fn bench_store(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("tempdir: {e}"));
    let store = SessionStore::new(dir.path().join("sessions")).with_cwd("/work");
    let mut long = store
        .get_or_create("long")
        .unwrap_or_else(|e| panic!("create: {e}"));
    long.transcript.set_sync_each_append(false);
    for n in 0..ENTRIES / 2 {
        append_turn(&mut long.transcript, n, false);
    }
    long.transcript
        .sync()
        .unwrap_or_else(|e| panic!("sync: {e}"));

    c.bench_function("store/resume_10k_entries", |b| {
        b.iter(|| {
            store
                .resume("long")
                .unwrap_or_else(|e| panic!("resume: {e}"))
        })
    });
    c.bench_function("store/context_10k_entries", |b| {
        b.iter(|| long.transcript.context())
    });

    let mut group = c.benchmark_group("store");
    group.sample_size(30);
    let mut short = store
        .get_or_create("short")
        .unwrap_or_else(|e| panic!("create: {e}"));
    short.transcript.set_sync_each_append(false);
    let mut n = 0;
    group.bench_function("append_turn_one_fsync", |b| {
        b.iter(|| {
            n += 1;
            append_turn(&mut short.transcript, n, true);
        })
    });
    short.transcript.set_sync_each_append(true);
    group.bench_function("append_turn_fsync_each_append", |b| {
        b.iter(|| {
            n += 1;
            // Each append fsyncs by itself; sync() finds nothing left to do.
            append_turn(&mut short.transcript, n, true);
        })
    });
    group.finish();
}

/// Sessions finishing a turn at the same moment (the gateway with 100 clients).
const CONCURRENT: usize = 100;

/// 100 sessions each append a turn and finish it (`finish_turn`: the fsync and the index
/// update) at the same time, each on its own thread, as the blocking pool runs them.
fn bench_concurrent(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("tempdir: {e}"));
    let store = SessionStore::new(dir.path().join("sessions")).with_cwd("/work");
    let mut sessions: Vec<_> = (0..CONCURRENT)
        .map(|i| {
            let mut s = store
                .get_or_create(&format!("agent:main:client-{i}"))
                .unwrap_or_else(|e| panic!("create: {e}"));
            s.transcript.set_sync_each_append(false);
            s
        })
        .collect();
    let mut group = c.benchmark_group("store");
    group.sample_size(20);
    let mut n = 0;
    for (name, own_fsync) in [
        ("finish_turn_100_sessions_at_once", false),
        // Each turn fsyncs its transcript by itself first (the cost before group commit;
        // the index write is still shared).
        ("finish_turn_100_sessions_at_once_own_fsync", true),
    ] {
        let before = store.commit_stats();
        group.bench_function(name, |b| {
            b.iter(|| {
                n += 1;
                finish_all(&store, &mut sessions, n, own_fsync);
            })
        });
        let after = store.commit_stats();
        eprintln!(
            "{name}: {} turn syncs in {} fsyncs, {} index updates in {} writes",
            after.syncs_requested - before.syncs_requested,
            after.fsyncs - before.fsyncs,
            after.index_updates - before.index_updates,
            after.index_writes - before.index_writes
        );
    }
    group.finish();
}

/// Every session appends turn `n` and finishes it, each on a thread of its own.
fn finish_all(
    store: &SessionStore,
    sessions: &mut [pincer_store::OpenSession],
    n: usize,
    own_fsync: bool,
) {
    std::thread::scope(|scope| {
        for session in sessions.iter_mut() {
            scope.spawn(move || {
                append_turn(&mut session.transcript, n, own_fsync);
                let mut stats = pincer_store::TurnStats::default();
                stats.add_usage(&Usage {
                    input: 1200,
                    output: 80,
                    total_tokens: 1280,
                    ..Usage::default()
                });
                store
                    .finish_turn(session, &stats)
                    .unwrap_or_else(|e| panic!("finish: {e}"));
            });
        }
    });
}

criterion_group!(benches, bench_store, bench_concurrent);
criterion_main!(benches);

//! Transcript files: repair of torn tails, tolerance of bad lines, context rebuilding and
//! concurrent appends.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use pincer_ai::{ContentBlock, Message, UserContent, UserMessage};
use pincer_store::{
    BranchSummaryEntry, CompactionEntry, CustomEntry, CustomMessageEntry, Entry, EntryBody,
    LineIssue, ModelChangeEntry, SessionHeader, StoreError, TailRepair, Transcript,
};

use crate::common::{assistant, msg, texts};

fn new_transcript(dir: &Path) -> (PathBuf, Transcript) {
    let path = dir.join("s.jsonl");
    let t = Transcript::create(&path, SessionHeader::new("sess-1", "/work")).unwrap();
    (path, t)
}

fn user(text: &str) -> Message {
    Message::User(UserMessage {
        content: UserContent::Text(text.into()),
        timestamp: 1,
    })
}

fn append(t: &mut Transcript, body: EntryBody) -> String {
    t.append_body(body).unwrap().id.clone()
}

/// Appends the user's `question` and the assistant's `answer` to it; their ids.
fn exchange(t: &mut Transcript, question: &str, answer: &str) -> (String, String) {
    let asked = append(t, msg(user(question)));
    (asked, append(t, msg(assistant(answer))))
}

fn append_raw(path: &Path, bytes: &[u8]) {
    fs::OpenOptions::new()
        .append(true)
        .open(path)
        .unwrap()
        .write_all(bytes)
        .unwrap();
}

#[test]
fn create_append_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let (path, mut t) = new_transcript(dir.path());
    let (a, b) = exchange(&mut t, "hi", "hello");
    assert_eq!(t.get(&b).unwrap().parent_id.as_deref(), Some(a.as_str()));
    assert!(t.get(&a).unwrap().parent_id.is_none());
    let text = fs::read_to_string(&path).unwrap();
    assert_eq!(text.lines().count(), 3);
    assert!(text.starts_with(r#"{"type":"session","version":3,"id":"sess-1","timestamp":""#));
    let (r, report) = Transcript::open(&path).unwrap();
    assert!(report.is_clean());
    assert_eq!(r.entries(), t.entries());
    assert_eq!(r.leaf_id(), Some(b.as_str()));
    assert!(matches!(
        Transcript::create(&path, SessionHeader::new("x", "/")),
        Err(StoreError::Exists { .. })
    ));
}

#[test]
fn torn_last_line_is_truncated_and_reported() {
    let dir = tempfile::tempdir().unwrap();
    let (path, mut t) = new_transcript(dir.path());
    append(&mut t, msg(user("one")));
    let good = fs::read(&path).unwrap();
    let torn = br#"{"type":"message","id":"dead"#;
    append_raw(&path, torn);
    let (mut r, report) = Transcript::open(&path).unwrap();
    assert!(report.invalid_lines.is_empty());
    match report.repaired_tail {
        Some(TailRepair::Truncated {
            line,
            removed_bytes,
            new_len,
            saved_to,
            ..
        }) => {
            assert_eq!(line, 3);
            assert_eq!(removed_bytes, torn.len() as u64);
            assert_eq!(new_len, good.len() as u64);
            assert_eq!(fs::read(&saved_to).unwrap(), torn, "the cut bytes are kept");
            assert!(
                saved_to
                    .file_name()
                    .unwrap()
                    .to_string_lossy()
                    .contains(".jsonl.torn."),
                "{saved_to:?}"
            );
        }
        other => panic!("unexpected repair {other:?}"),
    }
    assert_eq!(fs::read(&path).unwrap(), good);
    assert_eq!(r.entries().len(), 1);
    append(&mut r, msg(assistant("two")));
    let (r2, report) = Transcript::open(&path).unwrap();
    assert!(report.is_clean());
    assert_eq!(texts(&r2.context()), ["u:one", "a:two"]);
}

#[test]
fn invalid_last_line_with_newline_and_nul_blocks_are_truncated() {
    for junk in [&b"garbage\n"[..], &[0u8; 64][..]] {
        let dir = tempfile::tempdir().unwrap();
        let (path, mut t) = new_transcript(dir.path());
        append(&mut t, msg(user("one")));
        let good = fs::read(&path).unwrap();
        append_raw(&path, junk);
        let (_, report) = Transcript::open(&path).unwrap();
        assert!(matches!(
            report.repaired_tail,
            Some(TailRepair::Truncated { line: 3, .. })
        ));
        assert_eq!(fs::read(&path).unwrap(), good);
    }
}

#[test]
fn valid_last_line_without_newline_gets_one() {
    let dir = tempfile::tempdir().unwrap();
    let (path, mut t) = new_transcript(dir.path());
    append(&mut t, msg(user("one")));
    let line = serde_json::to_string(&Entry::new(None, msg(user("two")))).unwrap();
    append_raw(&path, line.as_bytes());
    let (r, report) = Transcript::open(&path).unwrap();
    assert_eq!(
        report.repaired_tail,
        Some(TailRepair::NewlineAdded { line: 3 })
    );
    assert_eq!(r.entries().len(), 2);
    assert!(fs::read(&path).unwrap().ends_with(b"}\n"));
}

#[test]
fn garbage_in_the_middle_is_reported_and_kept() {
    let dir = tempfile::tempdir().unwrap();
    let (path, mut t) = new_transcript(dir.path());
    append(&mut t, msg(user("one")));
    let offset = fs::metadata(&path).unwrap().len();
    append_raw(&path, b"not json\n\n");
    let mut t = Transcript::open(&path).unwrap().0;
    let two = append(&mut t, msg(assistant("two")));
    let before = fs::read(&path).unwrap();
    let (r, report) = Transcript::open(&path).unwrap();
    assert_eq!(report.invalid_lines.len(), 1);
    let LineIssue {
        line, offset: at, ..
    } = &report.invalid_lines[0];
    assert_eq!((*line, *at), (3, offset));
    assert!(report.repaired_tail.is_none());
    assert_eq!(
        fs::read(&path).unwrap(),
        before,
        "the file is not rewritten"
    );
    assert_eq!(r.leaf_id(), Some(two.as_str()));
    assert_eq!(texts(&r.context()), ["u:one", "a:two"]);
}

#[test]
fn bad_headers_are_errors() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("x.jsonl");
    for content in [&b""[..], b"\n", b"{\"type\":\"message\"}\n", b"{not json\n"] {
        fs::write(&path, content).unwrap();
        let err = Transcript::open(&path).unwrap_err();
        assert!(matches!(err, StoreError::BadHeader { .. }), "{err}");
        assert!(err.to_string().contains("x.jsonl"));
    }
}

#[test]
fn context_without_compaction_keeps_only_context_entries() {
    let dir = tempfile::tempdir().unwrap();
    let (_, mut t) = new_transcript(dir.path());
    append(&mut t, msg(user("q1")));
    append(
        &mut t,
        EntryBody::ModelChange(ModelChangeEntry {
            provider: "p".into(),
            model_id: "m".into(),
        }),
    );
    append(&mut t, msg(assistant("r1")));
    append(
        &mut t,
        EntryBody::Custom(CustomEntry {
            custom_type: "ext".into(),
            data: None,
        }),
    );
    let cm = append(
        &mut t,
        EntryBody::CustomMessage(CustomMessageEntry {
            custom_type: "note".into(),
            content: UserContent::Text("injected".into()),
            details: None,
            display: false,
        }),
    );
    let ctx = t.context();
    assert_eq!(texts(&ctx), ["u:q1", "a:r1", "u:injected"]);
    let ts = pincer_store::ids::ms_from_iso(&t.get(&cm).unwrap().timestamp).unwrap();
    assert_eq!(
        ctx[2],
        Message::User(UserMessage {
            content: UserContent::Blocks(vec![ContentBlock::text("injected")]),
            timestamp: ts,
        })
    );
}

#[test]
fn context_with_compaction_starts_with_the_summary() {
    let dir = tempfile::tempdir().unwrap();
    let (_, mut t) = new_transcript(dir.path());
    exchange(&mut t, "q1", "r1");
    let (kept, _) = exchange(&mut t, "q2", "r2");
    let c = append(
        &mut t,
        EntryBody::Compaction(CompactionEntry {
            summary: "S".into(),
            first_kept_entry_id: kept,
            tokens_before: 100,
            details: None,
            from_hook: None,
        }),
    );
    append(&mut t, msg(user("q3")));
    let ctx = t.context();
    let ts = pincer_store::ids::ms_from_iso(&t.get(&c).unwrap().timestamp).unwrap();
    assert_eq!(
        ctx[0],
        Message::User(UserMessage {
            content: UserContent::Blocks(vec![ContentBlock::text(
                "The conversation history before this point was compacted into the following summary:\n\n<summary>\nS\n</summary>"
            )]),
            timestamp: ts,
        })
    );
    assert_eq!(texts(&ctx[1..]), ["u:q2", "a:r2", "u:q3"]);
}

#[test]
fn context_follows_the_leaf_branch_only() {
    let dir = tempfile::tempdir().unwrap();
    let (_, mut t) = new_transcript(dir.path());
    let (_, r1) = exchange(&mut t, "q1", "r1");
    let (left, _) = exchange(&mut t, "left", "left-reply");
    // Branch back to r1: a summary of the abandoned branch, then a new question.
    let mut e = Entry::new(
        Some(r1.clone()),
        EntryBody::BranchSummary(BranchSummaryEntry {
            from_id: left.clone(),
            summary: "went left".into(),
            details: None,
            from_hook: None,
        }),
    );
    e.id = "bbbbbbbb".into();
    t.append(e).unwrap();
    append(&mut t, msg(user("right")));
    assert_eq!(
        texts(&t.context()),
        [
            "u:q1",
            "a:r1",
            "u:The following is a summary of a branch that this conversation came back from:\n\n<summary>\nwent left</summary>",
            "u:right"
        ]
    );
    assert_eq!(texts(&t.context_at(&left)), ["u:q1", "a:r1", "u:left"]);
    assert_eq!(t.branch("bbbbbbbb").len(), 3);
}

#[test]
fn parent_cycles_do_not_hang() {
    let dir = tempfile::tempdir().unwrap();
    let (_, mut t) = new_transcript(dir.path());
    for (id, parent) in [("aaaaaaaa", "bbbbbbbb"), ("bbbbbbbb", "aaaaaaaa")] {
        let mut e = Entry::new(Some(parent.into()), msg(user(id)));
        e.id = id.into();
        t.append(e).unwrap();
    }
    assert_eq!(texts(&t.context()), ["u:aaaaaaaa", "u:bbbbbbbb"]);
}

#[test]
fn concurrent_appenders_write_whole_lines_in_one_chain() {
    const THREADS: usize = 4;
    const PER: usize = 50;
    let dir = tempfile::tempdir().unwrap();
    let (path, _) = new_transcript(dir.path());
    std::thread::scope(|s| {
        for n in 0..THREADS {
            let path = &path;
            s.spawn(move || {
                let (mut t, _) = Transcript::open(path).unwrap();
                for i in 0..PER {
                    append(&mut t, msg(user(&format!("{n}-{i}"))));
                }
            });
        }
    });
    let text = fs::read_to_string(&path).unwrap();
    assert_eq!(text.lines().count(), 1 + THREADS * PER);
    let (t, report) = Transcript::open(&path).unwrap();
    assert!(report.is_clean(), "{report:?}");
    let entries = t.entries();
    assert_eq!(entries.len(), THREADS * PER);
    // Each appender catches up before writing, so the entries form one linear chain.
    assert!(entries[0].parent_id.is_none());
    for w in entries.windows(2) {
        assert_eq!(w[1].parent_id.as_deref(), Some(w[0].id.as_str()));
    }
    assert_eq!(t.context().len(), THREADS * PER);
}

#[test]
fn appends_reach_the_file_at_once_and_fsync_when_asked() {
    let dir = tempfile::tempdir().unwrap();
    let (path, mut t) = new_transcript(dir.path());
    assert!(t.sync_each_append());
    t.append_message(user("synced")).unwrap();
    assert!(!t.has_unsynced_appends());
    t.set_sync_each_append(false);
    let id = t.append_message(assistant("buffered")).unwrap().id.clone();
    assert!(t.has_unsynced_appends());
    // The whole line is in the file before any fsync: another reader sees it.
    let (other, report) = Transcript::open(&path).unwrap();
    assert!(report.is_clean());
    assert_eq!(other.leaf_id(), Some(id.as_str()));
    assert_eq!(texts(&other.context()), ["u:synced", "a:buffered"]);
    t.sync().unwrap();
    assert!(!t.has_unsynced_appends());
    t.sync().unwrap();
}

#[test]
fn truncate_cuts_back_to_a_line_boundary_and_appends_continue_from_the_old_leaf() {
    let dir = tempfile::tempdir().unwrap();
    let (path, mut t) = new_transcript(dir.path());
    let (_, kept) = exchange(&mut t, "hello", "hi");
    let before = fs::metadata(&path).unwrap().len();
    exchange(&mut t, "heartbeat poll", "HEARTBEAT_OK");
    drop(t);

    // Not a line boundary, or longer than the file: refused, nothing changed.
    let after = fs::metadata(&path).unwrap().len();
    assert!(!pincer_store::truncate_transcript(&path, before - 1).unwrap());
    assert!(!pincer_store::truncate_transcript(&path, after + 10).unwrap());
    assert_eq!(fs::metadata(&path).unwrap().len(), after);

    assert!(pincer_store::truncate_transcript(&path, before).unwrap());
    assert_eq!(fs::metadata(&path).unwrap().len(), before);
    let mut t = Transcript::open(&path).unwrap().0;
    assert_eq!(texts(&t.context()), ["u:hello", "a:hi"]);
    assert_eq!(t.leaf_id(), Some(kept.as_str()));
    let next = t.append_body(msg(user("later"))).unwrap().clone();
    assert_eq!(next.parent_id.as_deref(), Some(kept.as_str()));
    // Cutting at the current length changes nothing.
    let len = fs::metadata(&path).unwrap().len();
    assert!(!pincer_store::truncate_transcript(&path, len).unwrap());
}

/// pi (0.73) opens a file that has no reply yet and, on its first reply, appends the header
/// and every entry it loaded once more: the copies are skipped, so the session reads the
/// same and nothing is reported.
#[test]
fn pis_re_appended_header_and_entries_are_skipped() {
    let dir = tempfile::tempdir().unwrap();
    let (path, mut t) = new_transcript(dir.path());
    append(
        &mut t,
        EntryBody::ModelChange(ModelChangeEntry {
            provider: "mock".into(),
            model_id: "m".into(),
        }),
    );
    let u = append(&mut t, msg(user("hi")));
    let before = fs::read_to_string(&path).unwrap();
    // What pi writes: everything again, then its reply.
    append_raw(&path, before.as_bytes());
    drop(t);
    let (mut t, _) = Transcript::open(&path).unwrap();
    let reply = Entry {
        id: "abcd0123".into(),
        parent_id: Some(u.clone()),
        timestamp: "2026-11-22T00:00:00.000Z".into(),
        body: msg(assistant("hello")),
    };
    t.append(reply).unwrap();
    let (r, report) = Transcript::open(&path).unwrap();
    assert!(report.is_clean(), "{report:?}");
    assert_eq!(report.unknown_entries, 0);
    assert_eq!(r.entries().len(), 3, "{:?}", r.entries());
    assert_eq!(texts(&r.context()), ["u:hi", "a:hello"]);
    assert_eq!(r.leaf_id(), Some("abcd0123"));

    // A different entry under a known id is not a copy: it stays.
    let mut other = r.get(&u).unwrap().clone();
    other.body = msg(user("changed"));
    append_raw(
        &path,
        format!("{}\n", serde_json::to_string(&other).unwrap()).as_bytes(),
    );
    let (r, _) = Transcript::open(&path).unwrap();
    assert_eq!(r.entries().len(), 4);
}

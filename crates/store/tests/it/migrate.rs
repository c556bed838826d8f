//! Transcripts of format version 1 and 2 are migrated to 3 on open, as pi does, with the
//! original kept beside them.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::fs;
use std::path::{Path, PathBuf};

use pincer_ai::Message;
use pincer_store::{EntryBody, LineIssue, MigrationReport, StoreError, TailRepair, Transcript};

use crate::common::texts;

const USAGE: &str = r#"{"input":1,"output":1,"cacheRead":0,"cacheWrite":0,"totalTokens":2,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}}"#;

/// How a compaction summary `text` reads in the context (a user message).
fn summary(text: &str) -> String {
    format!(
        "u:The conversation history before this point was compacted into the following \
         summary:\n\n<summary>\n{text}\n</summary>"
    )
}

/// A v1 session as pi's old docs show it: no ids, no version, model in the header.
fn v1_file() -> String {
    [
        r#"{"type":"session","id":"v1-sess","timestamp":"2024-12-03T14:00:00.000Z","cwd":"/p","provider":"anthropic","modelId":"claude","thinkingLevel":"off"}"#.to_owned(),
        r#"{"type":"message","timestamp":"2024-12-03T14:00:01.000Z","message":{"role":"user","content":"Hello","timestamp":1733234401000}}"#.to_owned(),
        format!(r#"{{"type":"message","timestamp":"2024-12-03T14:00:02.000Z","message":{{"role":"assistant","content":[{{"type":"text","text":"Hi!"}}],"api":"anthropic-messages","provider":"anthropic","model":"claude","usage":{USAGE},"stopReason":"stop","timestamp":1733234402000}}}}"#),
        r#"{"type":"message","timestamp":"2024-12-03T14:00:03.000Z","message":{"role":"user","content":"more","timestamp":1733234403000}}"#.to_owned(),
        r#"{"type":"compaction","timestamp":"2024-12-03T14:00:04.000Z","summary":"S","firstKeptEntryIndex":3,"tokensBefore":500}"#.to_owned(),
        r#"{"type":"model_change","timestamp":"2024-12-03T14:00:05.000Z","provider":"openai","modelId":"gpt-4o"}"#.to_owned(),
    ]
    .join("\n")
        + "\n"
}

fn write(dir: &Path, content: &str) -> PathBuf {
    let path = dir.join("old.jsonl");
    fs::write(&path, content).unwrap();
    path
}

fn assert_one_chain(t: &Transcript) {
    let entries = t.entries();
    assert!(entries[0].parent_id.is_none());
    for w in entries.windows(2) {
        assert_eq!(w[1].parent_id.as_deref(), Some(w[0].id.as_str()));
    }
}

#[test]
fn v1_gets_ids_a_chain_and_compaction_links() {
    let dir = tempfile::tempdir().unwrap();
    let original = v1_file();
    let path = write(dir.path(), &original);
    let (t, report) = Transcript::open(&path).unwrap();
    let backup = dir.path().join("old.jsonl.v1.bak");
    assert_eq!(
        report.migrated,
        Some(MigrationReport {
            from_version: 1,
            to_version: 3,
            backup: backup.clone(),
            ids_assigned: 5,
            compactions_relinked: 1,
            timestamps_filled: 0,
            roles_renamed: 0,
            lines_kept_verbatim: 0,
        })
    );
    assert!(report.is_clean());
    assert_eq!(fs::read_to_string(&backup).unwrap(), original);

    assert_eq!(t.header().version, 3);
    assert_eq!(t.header().extra["provider"], "anthropic");
    let entries = t.entries();
    assert_eq!(entries.len(), 5);
    assert_one_chain(&t);
    for e in entries {
        assert_eq!(e.id.len(), 8);
        assert!(e.id.bytes().all(|b| b.is_ascii_hexdigit()), "{}", e.id);
    }
    match &entries[3].body {
        EntryBody::Compaction(c) => assert_eq!(c.first_kept_entry_id, entries[2].id),
        other => panic!("unexpected {other:?}"),
    }
    assert_eq!(texts(&t.context()), [summary("S"), "u:more".into()]);

    let text = fs::read_to_string(&path).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines[0],
        r#"{"type":"session","version":3,"id":"v1-sess","timestamp":"2024-12-03T14:00:00.000Z","cwd":"/p","modelId":"claude","provider":"anthropic","thinkingLevel":"off"}"#
    );
    assert_eq!(
        lines[1],
        format!(
            r#"{{"type":"message","id":"{}","parentId":null,"timestamp":"2024-12-03T14:00:01.000Z","message":{{"content":"Hello","role":"user","timestamp":1733234401000}}}}"#,
            entries[0].id
        )
    );
    assert_eq!(
        lines[4],
        format!(
            r#"{{"type":"compaction","id":"{}","parentId":"{}","timestamp":"2024-12-03T14:00:04.000Z","firstKeptEntryId":"{}","summary":"S","tokensBefore":500}}"#,
            entries[3].id, entries[2].id, entries[2].id
        )
    );

    // Migrated once: the next open changes nothing.
    let (again, report) = Transcript::open(&path).unwrap();
    assert_eq!(report.migrated, None);
    assert_eq!(again.entries(), t.entries());
    assert_eq!(fs::read_to_string(&path).unwrap(), text);
}

#[test]
fn v2_renames_hook_messages_and_keeps_ids() {
    let dir = tempfile::tempdir().unwrap();
    let original = concat!(
        r#"{"type":"session","version":2,"id":"s2","timestamp":"2024-12-03T14:00:00.000Z","cwd":"/p"}"#,
        "\n",
        r#"{"type":"message","id":"aaaaaaaa","parentId":null,"timestamp":"2024-12-03T14:00:01.000Z","message":{"role":"user","content":"hi","timestamp":1}}"#,
        "\n",
        r#"{"type":"message","id":"bbbbbbbb","parentId":"aaaaaaaa","timestamp":"2024-12-03T14:00:02.000Z","message":{"role":"hookMessage","customType":"x","content":"injected","display":true,"timestamp":2}}"#,
        "\n",
    );
    let path = write(dir.path(), original);
    let (t, report) = Transcript::open(&path).unwrap();
    let m = report.migrated.unwrap();
    assert_eq!((m.from_version, m.ids_assigned, m.roles_renamed), (2, 0, 1));
    assert_eq!(m.backup, dir.path().join("old.jsonl.v2.bak"));
    assert_eq!(fs::read_to_string(&m.backup).unwrap(), original);
    // pi's `custom` role is not one the model layer knows: kept raw, not lost.
    assert_eq!(report.unknown_entries, 1);
    let ids: Vec<&str> = t.entries().iter().map(|e| e.id.as_str()).collect();
    assert_eq!(ids, ["aaaaaaaa", "bbbbbbbb"]);
    let last = fs::read_to_string(&path)
        .unwrap()
        .lines()
        .nth(2)
        .unwrap()
        .to_owned();
    assert_eq!(
        last,
        r#"{"type":"message","id":"bbbbbbbb","parentId":"aaaaaaaa","timestamp":"2024-12-03T14:00:02.000Z","message":{"content":"injected","customType":"x","display":true,"role":"custom","timestamp":2}}"#
    );
}

#[test]
fn malformed_v1_input_is_kept_in_place_and_reported() {
    let dir = tempfile::tempdir().unwrap();
    let lines = [
        r#"{"type":"session","id":"s1","timestamp":"2024-12-03T14:00:00.000Z","cwd":"/p"}"#,
        r#"{"type":"message","timestamp":"2024-12-03T14:00:01.000Z","message":{"role":"user","content":"one","timestamp":1}}"#,
        "",
        "garbage",
        "[1,2]",
        r#"{"type":"message","message":{"role":"user","content":"no time","timestamp":2}}"#,
        "null",
        r#"{"type":"session","id":"again","timestamp":"t","cwd":"/"}"#,
        r#"{"type":"compaction","timestamp":"2024-12-03T14:00:09.000Z","summary":"to header","firstKeptEntryIndex":0,"tokensBefore":1}"#,
        r#"{"type":"compaction","timestamp":"2024-12-03T14:00:10.000Z","summary":"out of range","firstKeptEntryIndex":99,"tokensBefore":1}"#,
        r#"{"type":"compaction","timestamp":"2024-12-03T14:00:11.000Z","summary":"forward","firstKeptEntryIndex":9.0,"tokensBefore":1}"#,
        r#"{"type":"message","timestamp":"2024-12-03T14:00:12.000Z","message":{"role":"user","content":"after","timestamp":3}}"#,
        r#"{"type":"message","id":"keepme","timestamp":"2024-12-03T14:00:13.000Z","message":{"role":"hookMessage","customType":"x","content":"hi","display":true,"timestamp":4}}"#,
    ];
    let torn = r#"{"type":"mess"#;
    let original = lines.join("\n") + "\n" + torn;
    let path = write(dir.path(), &original);
    let (t, report) = Transcript::open(&path).unwrap();
    let m = report.migrated.clone().unwrap();
    assert_eq!(
        (
            m.ids_assigned,
            m.compactions_relinked,
            m.timestamps_filled,
            m.roles_renamed,
            m.lines_kept_verbatim
        ),
        (7, 1, 1, 1, 4)
    );
    assert_eq!(fs::read_to_string(&m.backup).unwrap(), original);
    let issues: Vec<usize> = report
        .invalid_lines
        .iter()
        .map(|i: &LineIssue| i.line)
        .collect();
    assert_eq!(issues, [4, 5, 7, 8]);
    match &report.repaired_tail {
        Some(TailRepair::Truncated { line, saved_to, .. }) => {
            assert_eq!(*line, 14);
            assert_eq!(fs::read_to_string(saved_to).unwrap(), torn);
        }
        other => panic!("unexpected {other:?}"),
    }
    // Two compactions lost their index (as pi drops it), the custom role is not a model
    // message: all three kept raw.
    assert_eq!(report.unknown_entries, 3);
    assert_eq!(t.entries().len(), 7);
    assert_one_chain(&t);
    assert!(t.get("keepme").is_none(), "pi replaces v1 ids");
    assert_eq!(t.entries()[1].timestamp, "2024-12-03T14:00:01.000Z");
    assert_eq!(texts(&t.context()), [summary("forward"), "u:after".into()]);
    let text = fs::read_to_string(&path).unwrap();
    let out: Vec<&str> = text.lines().collect();
    assert_eq!(
        out[0],
        r#"{"type":"session","version":3,"id":"s1","timestamp":"2024-12-03T14:00:00.000Z","cwd":"/p"}"#
    );
    assert_eq!(&out[2..5], ["", "garbage", "[1,2]"]);
    assert_eq!(out[6], "null");
    assert_eq!(
        out[7],
        r#"{"type":"session","id":"again","timestamp":"t","cwd":"/","version":3}"#
    );
    assert_eq!(out.len(), 13, "the torn line was cut after the migration");
}

#[test]
fn unreadable_versions_are_errors_and_untouched() {
    for header in [
        r#"{"type":"session","version":"2","id":"s","timestamp":"t","cwd":"/"}"#,
        r#"{"type":"session","version":-1,"id":"s","timestamp":"t","cwd":"/"}"#,
    ] {
        let dir = tempfile::tempdir().unwrap();
        let content = format!("{header}\n{{\"type\":\"message\"}}\n");
        let path = write(dir.path(), &content);
        let err = Transcript::open(&path).unwrap_err();
        assert!(matches!(err, StoreError::BadHeader { .. }), "{err}");
        assert_eq!(fs::read_to_string(&path).unwrap(), content);
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 1, "no backup");
    }
}

#[test]
fn version_zero_migrates_and_a_newer_version_is_left_alone() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(
        dir.path(),
        "{\"type\":\"session\",\"version\":0,\"id\":\"s\",\"timestamp\":\"t\",\"cwd\":\"/\"}\n",
    );
    let (_, report) = Transcript::open(&path).unwrap();
    assert_eq!(report.migrated.unwrap().from_version, 0);
    let future =
        "{\"type\":\"session\",\"version\":4,\"id\":\"s\",\"timestamp\":\"t\",\"cwd\":\"/\"}\n";
    fs::write(&path, future).unwrap();
    let (t, report) = Transcript::open(&path).unwrap();
    assert_eq!(report.migrated, None);
    assert_eq!(t.header().version, 4);
    assert_eq!(fs::read_to_string(&path).unwrap(), future);
}

#[test]
fn an_existing_backup_is_never_overwritten() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(dir.path(), &v1_file());
    fs::write(dir.path().join("old.jsonl.v1.bak"), "older backup").unwrap();
    let (_, report) = Transcript::open(&path).unwrap();
    let backup = report.migrated.unwrap().backup;
    let name = backup.file_name().unwrap().to_string_lossy().into_owned();
    assert!(name.starts_with("old.jsonl.v1.bak."), "{name}");
    assert_eq!(
        fs::read_to_string(dir.path().join("old.jsonl.v1.bak")).unwrap(),
        "older backup"
    );
}

#[test]
fn concurrent_opens_migrate_once() {
    for _ in 0..10 {
        let dir = tempfile::tempdir().unwrap();
        let path = write(dir.path(), &v1_file());
        let results: Vec<(Vec<String>, bool)> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..4)
                .map(|_| {
                    s.spawn(|| {
                        let (t, report) = Transcript::open(&path).unwrap();
                        let ids = t.entries().iter().map(|e| e.id.clone()).collect();
                        (ids, report.migrated.is_some())
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        assert_eq!(results.iter().filter(|(_, migrated)| *migrated).count(), 1);
        assert!(results.iter().all(|(ids, _)| ids == &results[0].0));
        let backups = fs::read_dir(dir.path())
            .unwrap()
            .filter(|e| {
                e.as_ref()
                    .unwrap()
                    .file_name()
                    .to_string_lossy()
                    .contains(".bak")
            })
            .count();
        assert_eq!(backups, 1);
    }
}

#[test]
fn an_append_after_migration_by_another_handle_lands_in_the_new_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(dir.path(), &v1_file());
    let (mut a, _) = Transcript::open(&path).unwrap();
    let (mut b, report) = Transcript::open(&path).unwrap();
    assert!(report.migrated.is_none());
    a.append_message(Message::user("from a")).unwrap();
    let id = b
        .append_message(Message::user("from b"))
        .unwrap()
        .id
        .clone();
    let (t, report) = Transcript::open(&path).unwrap();
    assert!(report.is_clean());
    assert_eq!(t.leaf_id(), Some(id.as_str()));
    assert_one_chain(&t);
    assert_eq!(t.entries().len(), 7);
}

/// Finding 8 of the security review: a migrated transcript (and its backup) is the
/// owner's alone, 0600, like every transcript.
#[cfg(unix)]
#[test]
fn a_migrated_transcript_and_its_backup_are_private() {
    use std::os::unix::fs::PermissionsExt;
    let mode = |p: &Path| fs::metadata(p).unwrap().permissions().mode() & 0o777;
    let dir = tempfile::tempdir().unwrap();
    let path = write(dir.path(), &v1_file());
    fs::set_permissions(&path, fs::Permissions::from_mode(0o644)).unwrap();
    let (_, report) = Transcript::open(&path).unwrap();
    let backup = report.migrated.unwrap().backup;
    assert_eq!((mode(&path), mode(&backup)), (0o600, 0o600));
}

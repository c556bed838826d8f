//! Crash safety across processes: a writer killed with SIGKILL at a random moment loses no
//! turn it reported done, and two writer processes appending at once keep one chain.
//!
//! The writers are this test binary re-run (`current_exe() crash::child_writer --exact`) with
//! `PINCER_STORE_TEST_CHILD` set; without it `child_writer` returns at once.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::HashSet;
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use pincer_ai::Message;
use pincer_store::{SessionStore, Transcript};

use crate::common::assistant;

/// `child_writer`'s name in the one `it` test binary.
const CHILD_TEST: &str = "crash::child_writer";
const CHILD: &str = "PINCER_STORE_TEST_CHILD";
const DIR: &str = "PINCER_STORE_TEST_DIR";
const TAG: &str = "PINCER_STORE_TEST_TAG";
const SYNC: &str = "PINCER_STORE_TEST_SYNC";
const TURNS: &str = "PINCER_STORE_TEST_TURNS";

fn store(root: &Path) -> SessionStore {
    SessionStore::new(root).with_cwd("/work")
}

/// The writer process: opens session "main" and appends turns (a user and an assistant
/// entry, both texts `<tag>-<n>`), printing `done <n>` after each whole turn.
#[test]
fn child_writer() {
    if std::env::var(CHILD).is_err() {
        return;
    }
    let env = |name: &str| std::env::var(name).unwrap();
    let turns: usize = env(TURNS).parse().unwrap();
    let tag = env(TAG);
    let mut session = store(Path::new(&env(DIR))).get_or_create("main").unwrap();
    session.transcript.set_sync_each_append(env(SYNC) == "1");
    let mut out = std::io::stdout().lock();
    // libtest has printed `test child_writer ... ` without a newline: end that line.
    writeln!(out).unwrap();
    for n in 0..turns {
        let text = format!("{tag}-{n}");
        session
            .transcript
            .append_message(Message::user(text.clone()))
            .unwrap();
        session.transcript.append_message(assistant(&text)).unwrap();
        writeln!(out, "done {n}").unwrap();
        out.flush().unwrap();
    }
}

fn spawn_writer(root: &Path, tag: &str, sync: bool, turns: usize) -> Child {
    Command::new(std::env::current_exe().unwrap())
        .args([CHILD_TEST, "--exact", "--nocapture", "--test-threads=1"])
        .env(CHILD, "1")
        .env(DIR, root)
        .env(TAG, tag)
        .env(SYNC, if sync { "1" } else { "0" })
        .env(TURNS, turns.to_string())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap()
}

/// The user and assistant texts of a transcript, after checking its entries form one chain.
fn chain_texts(t: &Transcript) -> (HashSet<String>, HashSet<String>) {
    let entries = t.entries();
    assert!(entries[0].parent_id.is_none());
    for w in entries.windows(2) {
        assert_eq!(
            w[1].parent_id.as_deref(),
            Some(w[0].id.as_str()),
            "entries form one chain"
        );
    }
    let mut users = HashSet::new();
    let mut assistants = HashSet::new();
    for m in t.context() {
        match m {
            Message::User(u) => users.insert(u.text()),
            Message::Assistant(a) => assistants.insert(a.text()),
            Message::ToolResult(_) => false,
        };
    }
    (users, assistants)
}

#[test]
fn killed_writers_lose_no_completed_turn() {
    const ROUNDS: usize = 20;
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("sessions");
    let mut completed: Vec<String> = Vec::new();
    let mut repaired = 0;
    for round in 0..ROUNDS {
        let tag = format!("r{round}");
        // Half the rounds fsync every append, half rely on the page cache alone: a killed
        // process must lose nothing an append returned for either way.
        let mut child = spawn_writer(&root, &tag, round % 2 == 0, 1_000_000);
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = mpsc::channel();
        let reader = std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if let Some(n) = line.strip_prefix("done ").and_then(|n| n.parse().ok()) {
                    let _ = tx.send(n);
                }
            }
        });
        let first: usize = rx
            .recv_timeout(Duration::from_secs(120))
            .expect("the writer completes a first turn");
        std::thread::sleep(Duration::from_micros(
            pincer_store::ids::next_u64() % 20_000,
        ));
        child.kill().unwrap(); // SIGKILL on Unix
        child.wait().unwrap();
        reader.join().unwrap();
        let last = rx.iter().fold(first, usize::max);
        completed.extend((0..=last).map(|n| format!("{tag}-{n}")));

        let session = store(&root).resume("main").unwrap();
        assert!(
            session.report.invalid_lines.is_empty(),
            "round {round}: {:?}",
            session.report
        );
        repaired += usize::from(session.report.repaired_tail.is_some());
        let (users, assistants) = chain_texts(&session.transcript);
        for text in &completed {
            assert!(users.contains(text), "round {round}: user {text} lost");
            assert!(
                assistants.contains(text),
                "round {round}: reply {text} lost"
            );
        }
    }
    eprintln!(
        "{ROUNDS} kills, {} completed turns kept, {repaired} torn tails repaired",
        completed.len()
    );
}

#[test]
fn two_writer_processes_keep_one_chain() {
    const TURNS_EACH: usize = 150;
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("sessions");
    store(&root).get_or_create("main").unwrap();
    let children: Vec<Child> = ["p0", "p1"]
        .iter()
        .map(|tag| spawn_writer(&root, tag, false, TURNS_EACH))
        .collect();
    for child in children {
        let out = child.wait_with_output().unwrap();
        assert!(out.status.success(), "{:?}", out.status);
        let done = String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter(|l| l.starts_with("done "))
            .count();
        assert_eq!(done, TURNS_EACH);
    }
    let session = store(&root).resume("main").unwrap();
    assert!(session.report.is_clean(), "{:?}", session.report);
    assert_eq!(session.transcript.entries().len(), 2 * 2 * TURNS_EACH);
    let (users, assistants) = chain_texts(&session.transcript);
    for tag in ["p0", "p1"] {
        for n in 0..TURNS_EACH {
            let text = format!("{tag}-{n}");
            assert!(
                users.contains(&text) && assistants.contains(&text),
                "{text}"
            );
        }
    }
}

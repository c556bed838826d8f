//! Finding 8: everything Pincer creates under `$PINCER_HOME` is its owner's alone — files
//! 0600, directories 0700 (the memory index and SQLite's `-wal`/`-shm`, `MEMORY.md` and
//! per-session memory, the session index and its lock, transcripts and a migrated one's
//! backup, the gateway's files) — and a home that others can read is tightened to 0700 at
//! start with one warning.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use pincer_testkit::{Reply, Scenario};
use serde_json::{Value, json};

use crate::common::Script as _;
use crate::common::gateway::{Foreground, gateway_home};
use crate::common::{self, Home, mock, mode};

const WARNING: &str = "was accessible to other users (mode 755); changed it to 700";

/// A pi v1 transcript: no version, no ids.
const V1: &str = concat!(
    r#"{"type":"session","id":"v1","timestamp":"2024-12-03T14:00:00.000Z","cwd":"/p"}"#,
    "\n",
    r#"{"type":"message","timestamp":"2024-12-03T14:00:01.000Z","message":{"role":"user","content":"hello","timestamp":1733234401000}}"#,
    "\n",
);

/// Every path under `root` whose mode is not 0600 (files) / 0700 (directories).
fn not_private(root: &Path) -> Vec<String> {
    let mut wrong = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(path) = stack.pop() {
        let meta = std::fs::symlink_metadata(&path).unwrap();
        let mode = meta.permissions().mode() & 0o777;
        let want = if meta.is_dir() { 0o700 } else { 0o600 };
        if mode != want {
            let rel = path.strip_prefix(root).unwrap();
            wrong.push(format!("{mode:03o} {}", rel.display()));
        }
        if meta.is_dir() {
            stack.extend(std::fs::read_dir(&path).unwrap().map(|e| e.unwrap().path()));
        }
    }
    wrong.sort();
    wrong
}

fn files_named(root: &Path, suffix: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(path) = stack.pop() {
        if path.is_dir() {
            stack.extend(std::fs::read_dir(&path).unwrap().map(|e| e.unwrap().path()));
        } else if path.to_string_lossy().ends_with(suffix) {
            found.push(path.strip_prefix(root).unwrap().display().to_string());
        }
    }
    found.sort();
    found
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn everything_under_the_home_is_private_and_a_loose_home_is_fixed_once() {
    let server =
        mock(common::remember_and_recall("Friday.").default_reply(Reply::text("ok"))).await;
    let (home, _port) = gateway_home(&server, "perm-token-0123456789");
    let root = home.path();
    // The config is the user's file (written by this test); the home is loose, as a
    // `mkdir ~/.pincer` with the usual umask leaves it.
    std::fs::set_permissions(root.join("pincer.json5"), PermissionsExt::from_mode(0o600)).unwrap();
    std::fs::set_permissions(&root, PermissionsExt::from_mode(0o755)).unwrap();

    // The first command fixes the home and says so, once.
    let first = home.run_ok(&["ask", "--json", "remember: Mia visits on Friday"]);
    assert_eq!(
        first
            .stderr()
            .lines()
            .filter(|l| l.contains(WARNING))
            .count(),
        1,
        "{}",
        first.stderr()
    );
    assert_eq!(mode(&root), 0o700);
    let asked = home.ask_json(&["when does my sister visit?"]);
    assert_eq!(asked["result"], "Friday.");

    // Per-session memory: the 13th turn writes memory/<key>.md.
    for i in 0..13 {
        home.ask_json(&["--session", "mem", "--memory", &format!("m{i}")]);
    }

    // A pi v1 transcript in place of a session's: the next turn migrates it.
    home.ask_json(&["--session", "old", "hi"]);
    let index_path = home.sessions_dir().join("sessions.json");
    let index: Value =
        serde_json::from_str(&std::fs::read_to_string(&index_path).unwrap()).unwrap();
    let (_, entry) = index
        .as_object()
        .unwrap()
        .iter()
        .find(|(key, _)| key.ends_with(":old"))
        .unwrap();
    let transcript = home.transcript(entry);
    std::fs::write(&transcript, V1).unwrap();
    std::fs::set_permissions(&transcript, PermissionsExt::from_mode(0o644)).unwrap();
    let again = home.run_ok(&["ask", "--json", "--session", "old", "again"]);
    assert!(!again.stderr().contains(WARNING), "{}", again.stderr());

    // The gateway's own files (token, logs, service state) too.
    let mut gateway = Foreground::start(&home, &["gateway", "run"]);
    gateway.signal(nix::sys::signal::Signal::SIGTERM);
    assert!(gateway.wait().success(), "{}", gateway.stderr());
    assert!(!gateway.stderr().contains(WARNING), "{}", gateway.stderr());

    // What this test means to have covered is there…
    let workspace = root.join("agents/main/workspace");
    assert!(workspace.join("MEMORY.md").is_file());
    assert_eq!(files_named(&workspace.join("memory"), ".md").len(), 2);
    assert_eq!(files_named(&root, ".v1.bak").len(), 1);
    assert_eq!(files_named(&root, "sessions.json.lock").len(), 1);
    assert_eq!(files_named(&root, ".sqlite").len(), 1);
    // …and all of it is private.
    assert_eq!(not_private(&root), Vec::<String>::new());
}

/// The test process's umask, which `pincer` inherits as the user's.
fn own_umask() -> u32 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = status.lines().find(|l| l.starts_with("Umask:")).unwrap();
    u32::from_str_radix(line["Umask:".len()..].trim(), 8).unwrap()
}

/// Pincer's own files are private, but what the agent's commands make outside the home is
/// made with the user's umask, as if the user had run them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_agents_commands_run_with_the_users_umask() {
    let outside = tempfile::tempdir().unwrap();
    let made = outside.path().join("made-by-agent.txt");
    let (_server, home) = Home::on_script(
        Scenario::new()
            .tool_turn(
                "make a file",
                "exec",
                json!({"command": format!("touch '{}'", made.display())}),
                "Made.",
            )
            .default_reply(Reply::text("ok")),
    )
    .await;
    let asked = home.ask_json(&["make a file"]);
    assert_eq!(asked["result"], "Made.", "{asked}");
    let user_umask = own_umask();
    assert_ne!(
        user_umask, 0o077,
        "the test needs a umask other than Pincer's own"
    );
    assert_eq!(mode(&made), 0o666 & !user_umask);
}

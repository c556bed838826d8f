//! Issue 17, finding 7: exec's process groups die with their owner, even when it is
//! killed with SIGKILL, and `reap_orphans` kills the recorded groups of a dead owner —
//! but never a process whose pid was reused. The owner here is this test binary run
//! again as a child (`owner_process`), so that it can be killed.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::os::unix::process::CommandExt as _;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use pincer_agent::{AgentTool, ToolContext};
use pincer_tools::PathPolicy;
use pincer_tools::exec::{ExecSecurity, ProcessRegistry, exec_tools, reap_orphans};
use serde_json::json;
use tokio_util::sync::CancellationToken;

const OWNER_DIR: &str = "PINCER_TEST_EXEC_OWNER_DIR";

use pincer_testkit::procfs::live_group_members as group_members;

fn start_time(pid: u32) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    let (_, rest) = stat.rsplit_once(')').unwrap();
    rest.split_whitespace().nth(19).unwrap().parse().unwrap()
}

fn kill_group(pgid: u32) {
    let _ = nix::sys::signal::killpg(
        nix::unistd::Pid::from_raw(pgid as i32),
        nix::sys::signal::Signal::SIGKILL,
    );
}

/// The owner: starts a piped and a pty command, reports their groups, then waits to be
/// killed. Does nothing unless run by `groups_die_with_an_owner_killed_by_sigkill`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn owner_process() {
    let Some(dir) = std::env::var_os(OWNER_DIR) else {
        return;
    };
    let dir = Path::new(&dir).to_owned();
    let registry = ProcessRegistry::new();
    registry.set_record_dir(dir.join("records"));
    let policy = PathPolicy::workspace(&dir).unwrap();
    let tools = exec_tools(policy, registry.clone(), ExecSecurity::Full, "agent");
    let exec: &Arc<dyn AgentTool> = &tools[0];
    let mut pgids = Vec::new();
    for pty in [false, true] {
        let out = exec
            .execute(
                json!({"command": "sleep 300; echo done", "background": true, "pty": pty}),
                ToolContext::new("call", CancellationToken::new()),
            )
            .await
            .unwrap();
        pgids.push(out.details.unwrap()["pid"].as_u64().unwrap().to_string());
    }
    std::fs::write(dir.join("pgids.tmp"), pgids.join(" ")).unwrap();
    std::fs::rename(dir.join("pgids.tmp"), dir.join("pgids")).unwrap();
    tokio::time::sleep(Duration::from_secs(600)).await;
}

#[test]
fn groups_die_with_an_owner_killed_by_sigkill() {
    let dir = tempfile::tempdir().unwrap();
    let mut owner = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            // Its name in the one `it` test binary.
            "exec_orphans::owner_process",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(OWNER_DIR, dir.path())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .process_group(0)
        .spawn()
        .unwrap();
    let pgids_file = dir.path().join("pgids");
    let deadline = Instant::now() + Duration::from_secs(30);
    while !pgids_file.exists() {
        assert!(
            Instant::now() < deadline,
            "the owner never started its commands"
        );
        assert!(
            owner.try_wait().unwrap().is_none(),
            "the owner exited early"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let pgids: Vec<u32> = std::fs::read_to_string(&pgids_file)
        .unwrap()
        .split_whitespace()
        .map(|p| p.parse().unwrap())
        .collect();
    assert_eq!(pgids.len(), 2);
    for pgid in &pgids {
        assert!(
            !group_members(*pgid).is_empty(),
            "group {pgid} is not running"
        );
    }
    // Both groups are recorded while they live.
    let records = std::fs::read_dir(dir.path().join("records"))
        .unwrap()
        .count();
    assert_eq!(records, 2);

    owner.kill().unwrap();
    owner.wait().unwrap();
    let left = pincer_testkit::procfs::groups_outliving(&pgids);
    for pgid in &pgids {
        kill_group(*pgid);
    }
    assert!(left.is_empty(), "orphans outlived their owner: {left:?}");
}

fn sleeper() -> std::process::Child {
    pincer_testkit::procfs::group_sleeper().unwrap()
}

#[test]
fn reap_kills_recorded_groups_of_dead_owners_only_when_the_leader_still_matches() {
    let dir = tempfile::tempdir().unwrap();
    // A dead owner: a process that has exited and been reaped.
    let mut gone = Command::new("true").spawn().unwrap();
    let dead_owner = gone.id();
    gone.wait().unwrap();

    let mut orphan = sleeper();
    let mut reused = sleeper();
    let mut alive_owners = sleeper();
    let record = |name: &str, owner: u32, owner_start: u64, pgid: u32, leader_start: u64| {
        std::fs::write(
            dir.path().join(name),
            json!({"ownerPid": owner, "ownerStart": owner_start, "pgid": pgid,
                   "leaderStart": leader_start})
            .to_string(),
        )
        .unwrap();
    };
    record(
        "a.json",
        dead_owner,
        1,
        orphan.id(),
        start_time(orphan.id()),
    );
    // The recorded leader's pid now belongs to another process (another start time).
    record(
        "b.json",
        dead_owner,
        1,
        reused.id(),
        start_time(reused.id()) + 1,
    );
    // A live owner's group is left alone, record and all.
    let me = std::process::id();
    record(
        "c.json",
        me,
        start_time(me),
        alive_owners.id(),
        start_time(alive_owners.id()),
    );
    std::fs::write(dir.path().join("d.json"), "not json").unwrap();

    let report = reap_orphans(dir.path());
    assert_eq!(report.killed, vec![orphan.id()]);
    assert_eq!(report.stale, 2);
    let status = orphan.wait().unwrap();
    assert_eq!(
        std::os::unix::process::ExitStatusExt::signal(&status),
        Some(9)
    );
    assert_eq!(
        reused.try_wait().unwrap(),
        None,
        "an unrelated process was killed"
    );
    assert_eq!(alive_owners.try_wait().unwrap(), None);
    let mut left: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    left.sort();
    assert_eq!(left, ["c.json"]);
    for child in [&mut reused, &mut alive_owners] {
        child.kill().unwrap();
        child.wait().unwrap();
    }
}

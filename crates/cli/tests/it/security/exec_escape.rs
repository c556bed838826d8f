//! `exec` escapes (issue 17, findings 1 and 7) against a real gateway: the `${...}`
//! allowlist bypasses a model can send are refused and run nothing; a gateway killed with
//! SIGKILL leaves no exec process behind (piped or on a pty); and a new gateway kills the
//! recorded process groups of a dead one, never a process whose pid was reused.

use std::os::unix::process::ExitStatusExt as _;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use pincer_testkit::{Match, Reply, Rule, Scenario};
use serde_json::json;

use crate::common::Script as _;
use crate::common::gateway::*;
use crate::common::{Home, last_tool_result, mock};

const TOKEN: &str = "exec-escape-token";
const KEY: &str = "agent:main:main";

use pincer_testkit::procfs::live_group_members as group_members;

/// Waits (bounded) until group `pgid` is empty; its members if it never is.
fn start_time(pid: u32) -> u64 {
    pincer_testkit::procfs::start_time(pid).unwrap()
}

/// Kills the groups when the test ends, however it ends.
struct Groups(Vec<u32>);

impl Drop for Groups {
    fn drop(&mut self) {
        for pgid in &self.0 {
            let _ = killpg(Pid::from_raw(*pgid as i32), Signal::SIGKILL);
        }
    }
}

async fn send(client: &mut WsClient, message: &str, id: &str) {
    client.chat_until(KEY, message, id, "final").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn allowlist_bypasses_through_parameter_expansion_are_refused() {
    let brace = "echo ${x:-{} ; touch ~/PWNED ; id #}";
    let quote = "echo ${x:-'}'}\ntouch ~/PWNED\necho '";
    let llm = mock(
        Scenario::new()
            .rule(
                Rule::when(Match::last_user("brace"))
                    .reply(Reply::tool_call("exec", json!({ "command": brace }))),
            )
            .rule(
                Rule::when(Match::last_user("quote"))
                    .reply(Reply::tool_call("exec", json!({ "command": quote }))),
            )
            .tool_turn(
                "plain",
                "exec",
                json!({ "command": "echo ${x:-ok}" }),
                "done",
            ),
    )
    .await;
    let (home, port) = gateway_home_in(
        Home::new(),
        &llm,
        TOKEN,
        "",
        "tools: { exec: { security: \"allowlist\", allow: [\"echo\"] } },",
    );
    let (_gateway, mut client) = run_and_connect(&home, port, TOKEN).await;
    let pwned = home.dir.path().join("user").join("PWNED");

    for (message, command) in [("brace", brace), ("quote", quote)] {
        send(&mut client, message, message).await;
        let result = last_tool_result(&llm);
        assert!(
            result.contains("exec refused: `${x:-"),
            "{command:?} was not refused: {result}"
        );
        assert!(!pwned.exists(), "{command:?} ran touch");
    }
    // The checker still admits the plain form.
    send(&mut client, "plain", "plain").await;
    assert_eq!(last_tool_result(&llm), "ok");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_gateway_killed_with_sigkill_leaves_no_exec_process_behind() {
    let files = tempfile::tempdir().unwrap();
    let piped = files.path().join("piped");
    let pty = files.path().join("pty");
    let command = |file: &Path| format!("echo $$ > {}; sleep 300; echo done", file.display());
    let llm = mock(
        Scenario::new()
            .rule(
                Rule::when(Match::last_user("piped")).reply(Reply::tool_call(
                    "exec",
                    json!({"command": command(&piped), "background": true}),
                )),
            )
            .tool_turn(
                "pty",
                "exec",
                json!({"command": command(&pty), "background": true, "pty": true}),
                "started",
            ),
    )
    .await;
    let (home, port) = gateway_home(&llm, TOKEN);
    let (mut gateway, mut client) = run_and_connect(&home, port, TOKEN).await;
    send(&mut client, "piped", "piped").await;
    send(&mut client, "pty", "pty").await;

    let mut groups = Groups(Vec::new());
    for file in [&piped, &pty] {
        let deadline = Instant::now() + Duration::from_secs(10);
        let pgid = loop {
            if let Some(pgid) = std::fs::read_to_string(file)
                .ok()
                .and_then(|t| t.trim().parse::<u32>().ok())
            {
                break pgid;
            }
            assert!(
                Instant::now() < deadline,
                "{} never started",
                file.display()
            );
            std::thread::sleep(Duration::from_millis(20));
        };
        groups.0.push(pgid);
        assert!(group_members(pgid).len() >= 2, "sh and sleep of {pgid}");
    }

    gateway.signal(Signal::SIGKILL);
    gateway.wait();
    let left = pincer_testkit::procfs::groups_outliving(&groups.0);
    assert!(left.is_empty(), "orphans outlived the gateway: {left:?}");
}

fn sleeper() -> std::process::Child {
    pincer_testkit::procfs::group_sleeper().unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_new_gateway_kills_the_groups_a_dead_one_recorded_and_nothing_else() {
    let llm = mock(Scenario::new()).await;
    let (home, _port) = gateway_home(&llm, TOKEN);
    let records = home.path().join("run").join("exec");
    std::fs::create_dir_all(&records).unwrap();
    let mut dead = Command::new("true").spawn().unwrap();
    let dead_owner = dead.id();
    dead.wait().unwrap();

    let mut orphan = sleeper();
    let mut unrelated = sleeper();
    let _groups = Groups(vec![orphan.id(), unrelated.id()]);
    let record = |pgid: u32, leader_start: u64| {
        std::fs::write(
            records.join(format!("{dead_owner}-{pgid}.json")),
            json!({"ownerPid": dead_owner, "ownerStart": 1, "pgid": pgid,
                   "leaderStart": leader_start})
            .to_string(),
        )
        .unwrap();
    };
    record(orphan.id(), start_time(orphan.id()));
    // The recorded leader's pid now belongs to another process: it started later.
    record(unrelated.id(), start_time(unrelated.id()) + 1);

    let _gateway = Foreground::start(&home, &["gateway", "run"]);
    // The reap happens before the gateway listens, so it is done by now; the wait for
    // the exit to be visible is bounded all the same.
    let deadline = Instant::now() + Duration::from_secs(10);
    let status = loop {
        if let Some(status) = orphan.try_wait().unwrap() {
            break status;
        }
        assert!(Instant::now() < deadline, "the orphan was not killed");
        std::thread::sleep(Duration::from_millis(20));
    };
    assert_eq!(status.signal(), Some(9));
    assert_eq!(
        unrelated.try_wait().unwrap(),
        None,
        "a process whose pid was reused was killed"
    );
    assert_eq!(std::fs::read_dir(&records).unwrap().count(), 0);
    unrelated.kill().unwrap();
    unrelated.wait().unwrap();
}

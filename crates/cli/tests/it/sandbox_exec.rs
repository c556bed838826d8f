//! `tools.exec.sandbox` end to end: `pincer ask` turns whose `exec` calls (scripted by the
//! mock LLM) try to escape under bwrap and under Landlock: write to /etc and /var/tmp,
//! read `$PINCER_HOME`'s secrets, connect to a listener of the test, write outside the
//! workspace, leave a process behind after the command is killed. Work inside the
//! workspace succeeds. Skipped with a printed reason where the kernel lacks Landlock or
//! bwrap is missing (a missing bwrap fails under `CI=true`: CI installs it).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::net::TcpListener;
use std::path::Path;
use std::time::{Duration, Instant};

use pincer_testkit::{MockLlm, Scenario};
use serde_json::json;

use crate::common::Script as _;
use crate::common::{Home, last_tool_result, mock};

fn bwrap_installed() -> bool {
    if Path::new("/usr/bin/bwrap").exists() || which("bwrap") {
        return true;
    }
    assert!(
        std::env::var("CI").as_deref() != Ok("true"),
        "bwrap is not installed, and CI must test it (.ci/run installs bubblewrap)"
    );
    eprintln!("skipped: bwrap is not installed (apt-get install bubblewrap)");
    false
}

fn which(program: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|path| std::env::split_paths(&path).any(|d| d.join(program).is_file()))
}

/// Processes whose command line contains `marker`.
fn pids_with_cmdline(marker: &str) -> Vec<String> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if !name.bytes().all(|b| b.is_ascii_digit()) {
            continue;
        }
        if let Ok(cmdline) = std::fs::read(entry.path().join("cmdline")) {
            let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
            if cmdline.contains(marker) {
                found.push(format!("{name}: {cmdline}"));
            }
        }
    }
    found
}

fn landlock_abi() -> Option<u8> {
    let abi = pincer_sandbox::lock::abi();
    match abi {
        None => eprintln!("skipped: this kernel has no Landlock"),
        Some(abi) if abi < 4 => eprintln!("skipped: Landlock ABI {abi} cannot restrict TCP"),
        Some(_) => {}
    }
    abi.filter(|abi| *abi >= 4)
}

/// The commands of one escape run, each drawn by its user message.
struct Escape {
    _files: tempfile::TempDir,
    outside: std::path::PathBuf,
    var_tmp: std::path::PathBuf,
    listener: TcpListener,
    marker: String,
}

impl Escape {
    fn new(backend: &str) -> Self {
        let files = tempfile::tempdir().unwrap();
        let outside = files.path().join("outside");
        std::fs::create_dir_all(&outside).unwrap();
        let tag = format!("{backend}-{}", std::process::id());
        Self {
            _files: files,
            outside,
            var_tmp: Path::new("/var/tmp").join(format!("pincer-sandbox-{tag}")),
            listener: TcpListener::bind("127.0.0.1:0").unwrap(),
            // A sleep length no other process uses: found in /proc by it.
            marker: format!("{}.{}", 3000 + std::process::id() % 1000, 7),
        }
    }

    fn script(&self, home: &Home, leave_group: bool) -> Scenario {
        let port = self.listener.local_addr().unwrap().port();
        let secrets = format!(
            "cat {0}/pincer.json5 {0}/auth-profiles.json; echo rc=$?",
            home.path().display()
        );
        let net = format!(
            "if [ -x /bin/bash ]; then /bin/bash -c 'echo > /dev/tcp/127.0.0.1/{port}'; else \
             python3 -c 'import socket; socket.create_connection((\"127.0.0.1\", {port}), 2)'; \
             fi 2>/dev/null && echo connected || echo refused"
        );
        let outside = format!(
            "echo x > {}/escaped; echo x > {}; echo rc=$?",
            self.outside.display(),
            self.var_tmp.display()
        );
        let setsid = if leave_group { "setsid " } else { "" };
        let linger = format!("{setsid}sleep {m} & sleep {m}", m = self.marker);
        Scenario::new()
            .tool_turn(
                "etc",
                "exec",
                json!({"command": "touch /etc/pincer-sandbox-x; echo rc=$?"}),
                "ok",
            )
            .tool_turn("secrets", "exec", json!({"command": secrets}), "ok")
            .tool_turn("net", "exec", json!({"command": net}), "ok")
            .tool_turn("outside", "exec", json!({"command": outside}), "ok")
            .tool_turn(
                "inside",
                "exec",
                json!({"command": "echo hi > made.txt && cat made.txt && pwd"}),
                "ok",
            )
            .tool_turn(
                "linger",
                "exec",
                json!({"command": linger, "timeout": 1}),
                "ok",
            )
    }

    /// Runs every escape under the home's sandbox and checks it failed.
    fn run(&self, home: &Home, llm: &MockLlm) {
        let ask = |message: &str| {
            home.run_ok(&["ask", message]);
            last_tool_result(llm)
        };
        let etc = ask("etc");
        assert!(etc.ends_with("rc=1"), "{etc}");
        assert!(!Path::new("/etc/pincer-sandbox-x").exists());

        let secrets = ask("secrets");
        assert!(
            !secrets.contains("mock-key") && !secrets.contains("sk-"),
            "{secrets}"
        );
        assert!(secrets.ends_with("rc=1"), "{secrets}");

        assert_eq!(ask("net"), "refused");

        let outside = ask("outside");
        // A redirection the shell cannot open: status 2.
        assert!(outside.ends_with("rc=2"), "{outside}");
        assert!(!self.outside.join("escaped").exists());
        assert!(!self.var_tmp.exists());

        let workspace = std::fs::canonicalize(home.path().join("agents/main/workspace")).unwrap();
        assert_eq!(ask("inside"), format!("hi\n{}", workspace.display()));
        assert_eq!(
            std::fs::read_to_string(workspace.join("made.txt")).unwrap(),
            "hi\n"
        );

        let linger = ask("linger");
        assert!(
            linger.starts_with("Command timed out and was killed"),
            "{linger}"
        );
        let deadline = Instant::now() + Duration::from_secs(5);
        loop {
            let left = pids_with_cmdline(&self.marker);
            if left.is_empty() {
                break;
            }
            assert!(Instant::now() < deadline, "left behind: {left:?}");
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

async fn home_with(sandbox: &str, escape: &Escape, leave_group: bool) -> (MockLlm, Home) {
    let home = Home::new();
    let llm = mock(escape.script(&home, leave_group)).await;
    home.use_mock(
        &llm,
        &format!(
            "agents: {{ defaults: {{ model: \"mock/primary\" }} }},
             tools: {{ exec: {{ sandbox: {sandbox} }} }},"
        ),
    );
    std::fs::write(
        home.path().join("auth-profiles.json"),
        r#"{"key":"sk-secret"}"#,
    )
    .unwrap();
    (llm, home)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bwrap_contains_exec() {
    if !bwrap_installed() {
        return;
    }
    let escape = Escape::new("bwrap");
    // setsid: leaving the process group does not leave bwrap's PID namespace.
    let (llm, home) = home_with("\"bwrap\"", &escape, true).await;
    tokio::task::spawn_blocking(move || escape.run(&home, &llm))
        .await
        .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn landlock_contains_exec() {
    if landlock_abi().is_none() {
        return;
    }
    let escape = Escape::new("landlock");
    let (llm, home) = home_with("\"landlock\"", &escape, false).await;
    tokio::task::spawn_blocking(move || escape.run(&home, &llm))
        .await
        .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn non_main_spares_the_main_session_only() {
    if landlock_abi().is_none() {
        return;
    }
    let command = "touch /var/tmp/pincer-sandbox-nonmain-$PPID 2>/dev/null; echo rc=$?; rm -f /var/tmp/pincer-sandbox-nonmain-$PPID";
    let llm =
        mock(Scenario::new().tool_turn("try", "exec", json!({"command": command}), "ok")).await;
    let home = Home::new();
    home.use_mock(
        &llm,
        "agents: { defaults: { model: \"mock/primary\", sandbox: { mode: \"non-main\", backend: \"landlock\" } } },",
    );
    tokio::task::spawn_blocking(move || {
        home.run_ok(&["ask", "--session", "main", "try"]);
        assert_eq!(last_tool_result(&llm), "rc=0");
        home.run_ok(&["ask", "--session", "other", "try"]);
        assert_eq!(last_tool_result(&llm), "rc=1");
    })
    .await
    .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_missing_bwrap_is_refused_not_bypassed() {
    let llm =
        mock(Scenario::new().tool_turn("try", "exec", json!({"command": "echo ran"}), "ok")).await;
    let home = Home::new().with_env("PATH", "/nonexistent");
    home.use_mock(
        &llm,
        "agents: { defaults: { model: \"mock/primary\" } }, tools: { exec: { sandbox: \"bwrap\" } },",
    );
    tokio::task::spawn_blocking(move || {
        home.run_ok(&["ask", "try"]);
        let result = last_tool_result(&llm);
        assert!(
            result.contains(
                "tools.exec.sandbox is \"bwrap\" but bwrap was not found on PATH: install \
                 bubblewrap (apt-get install bubblewrap) or set tools.exec.sandbox to \
                 \"landlock\" or \"off\""
            ),
            "{result}"
        );
        assert!(!result.contains("ran"), "{result}");
    })
    .await
    .unwrap();
}

#[test]
fn doctor_reports_the_sandboxes_and_each_agents_mode() {
    let home = Home::new();
    home.write_config(
        "{ agents: { list: [{ id: \"main\" }, { id: \"ops\", sandbox: { mode: \"non-main\", backend: \"landlock\", network: true } }] }, tools: { exec: { sandbox: \"bwrap\" } } }",
    );
    let out = home.run_ok(&["doctor"]).stdout();
    let lines: Vec<&str> = out.lines().filter(|l| l.starts_with("sandbox ")).collect();
    assert_eq!(lines.len(), 4, "{out}");
    assert!(lines[0].starts_with("sandbox bwrap: "), "{out}");
    assert!(lines[1].starts_with("sandbox landlock: "), "{out}");
    let ready = |ok: bool| {
        if ok {
            ""
        } else {
            " — NOT AVAILABLE here: its commands are refused"
        }
    };
    let bwrap_ok = lines[0].starts_with("sandbox bwrap: working");
    assert_eq!(
        lines[2],
        format!(
            "sandbox agent main: bwrap, all sessions, network off{}",
            ready(bwrap_ok)
        )
    );
    let landlock_ok = pincer_sandbox::lock::abi().is_some();
    assert_eq!(
        lines[3],
        format!(
            "sandbox agent ops: landlock, non-main sessions, network on{}",
            ready(landlock_ok)
        )
    );
}

/// The answer to one `bash` command of a `pincer rpc` worker started in `cwd`.
fn rpc_bash(home: &Home, cwd: &Path, command: &str) -> serde_json::Value {
    use std::io::{BufRead as _, Write as _};
    let sessions = home.dir.path().join("rpc-sessions");
    let mut child = home
        .command(&[
            "rpc",
            "--provider",
            "mock",
            "--model",
            "primary",
            "--session-dir",
        ])
        .arg(&sessions)
        .current_dir(cwd)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let line = json!({"id": "b", "type": "bash", "command": command}).to_string();
    let mut stdin = child.stdin.take().unwrap();
    writeln!(stdin, "{line}").unwrap();
    let stdout = std::io::BufReader::new(child.stdout.take().unwrap());
    let mut answer = serde_json::Value::Null;
    for line in stdout.lines() {
        let value: serde_json::Value = serde_json::from_str(&line.unwrap()).unwrap();
        if value["id"] == "b" {
            answer = value;
            break;
        }
    }
    drop(stdin);
    let _ = child.kill();
    let _ = child.wait();
    answer
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_rpc_workers_bash_runs_in_the_agents_sandbox() {
    if !bwrap_installed() {
        return;
    }
    let llm = mock(Scenario::new()).await;
    let home = Home::new();
    home.use_mock(
        &llm,
        "agents: { defaults: { model: \"mock/primary\" } }, tools: { exec: { sandbox: \"bwrap\" } },",
    );
    let work = home.dir.path().join("work");
    std::fs::create_dir_all(&work).unwrap();
    let secret = home.path().join("pincer.json5");
    tokio::task::spawn_blocking(move || {
        let script = format!(
            "touch /etc/pincer-sandbox-rpc; echo rc=$?; cat {} >/dev/null; echo rc=$?; \
             echo ok > here.txt; cat here.txt",
            secret.display()
        );
        let answer = rpc_bash(&home, &work, &script);
        assert_eq!(answer["success"], true, "{answer}");
        let output = answer["data"]["output"].as_str().unwrap();
        let lines: Vec<&str> = output.lines().filter(|l| !l.contains(": ")).collect();
        assert_eq!(lines, ["rc=1", "rc=1", "ok"], "{output}");
        assert!(!Path::new("/etc/pincer-sandbox-rpc").exists());
        assert_eq!(
            std::fs::read_to_string(work.join("here.txt")).unwrap(),
            "ok\n"
        );
    })
    .await
    .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_gateways_exec_is_sandboxed_and_status_says_so() {
    use crate::common::gateway::{gateway_home_in, run_and_connect};
    if !bwrap_installed() {
        return;
    }
    let llm = mock(Scenario::new().tool_turn(
        "etc",
        "exec",
        json!({"command": "touch /etc/pincer-sandbox-gw; echo rc=$?"}),
        "ok",
    ))
    .await;
    let (home, port) = gateway_home_in(
        Home::new(),
        &llm,
        "sandbox-token",
        "",
        "tools: { exec: { sandbox: { backend: \"bwrap\", mode: \"non-main\" } } },",
    );
    let (_gateway, mut client) = run_and_connect(&home, port, "sandbox-token").await;
    client
        .chat_until("agent:main:work", "etc", "r1", "final")
        .await;
    let result = last_tool_result(&llm);
    assert!(result.ends_with("rc=1"), "{result}");
    assert!(!Path::new("/etc/pincer-sandbox-gw").exists());
    let status = client.call("status", json!({})).await;
    assert_eq!(
        status["payload"]["sandbox"],
        json!({
            "agents": {"main": {"backend": "bwrap", "mode": "non-main", "network": false}},
            "bwrapFound": true,
            "landlockAbi": pincer_sandbox::lock::abi(),
        })
    );
}

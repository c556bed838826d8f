//! Escape attempts against the real backends: bubblewrap (spawned through `wrap`) and
//! Landlock (applied to a thread of this test, which is what `sandbox-exec` does to itself
//! before its exec). Each skips with a printed reason when the machine lacks the backend,
//! except bwrap under `CI=true` (CI installs it).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::ffi::{OsStr, OsString};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use pincer_sandbox::{SandboxError, SandboxMode, SandboxPolicy, bwrap, lock, wrap};

/// A home with a secret, a workspace inside it, a directory outside both.
struct Setup {
    _dir: tempfile::TempDir,
    home: PathBuf,
    secret: PathBuf,
    workspace: PathBuf,
    outside: PathBuf,
}

fn setup() -> Setup {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    let home = root.join("home");
    let workspace = home.join("agents/main/workspace");
    let outside = root.join("outside");
    std::fs::create_dir_all(&workspace).unwrap();
    std::fs::create_dir_all(&outside).unwrap();
    let secret = home.join("credentials.json");
    std::fs::write(&secret, r#"{"key":"sk-secret"}"#).unwrap();
    Setup {
        _dir: dir,
        home,
        secret,
        workspace,
        outside,
    }
}

fn policy(mode: SandboxMode, s: &Setup, network: bool) -> SandboxPolicy {
    let mut policy = SandboxPolicy::new(mode, &s.workspace);
    policy.hide = vec![s.home.clone()];
    policy.network = network;
    policy
}

fn bwrap_or_skip() -> bool {
    if bwrap::locate().is_some() {
        return true;
    }
    assert!(
        std::env::var("CI").as_deref() != Ok("true"),
        "bwrap is not installed, and CI must test it (.ci/run installs bubblewrap)"
    );
    eprintln!("skipped: bwrap is not installed (apt-get install bubblewrap)");
    false
}

fn sh(policy: &SandboxPolicy, script: &str) -> Output {
    let (program, args) =
        wrap(policy, OsStr::new("/bin/sh"), &["-c".into(), script.into()]).unwrap();
    Command::new(program).args(args).output().unwrap()
}

fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// A connect to a listener of ours on 127.0.0.1, from a shell (bash's /dev/tcp, else
/// python3): prints `connected` or `refused`.
fn connect_script(port: u16) -> String {
    format!(
        "if [ -x /bin/bash ]; then /bin/bash -c 'echo > /dev/tcp/127.0.0.1/{port}' 2>/dev/null; \
         else python3 -c 'import socket; socket.create_connection((\"127.0.0.1\", {port}), 2)' \
         2>/dev/null; fi && echo connected || echo refused"
    )
}

#[test]
fn bwrap_denies_system_writes_secrets_network_and_writes_outside() {
    if !bwrap_or_skip() {
        return;
    }
    let s = setup();
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let p = policy(SandboxMode::Bwrap, &s, false);

    let out = sh(
        &p,
        "touch /etc/pincer-sandbox-test && echo wrote || echo denied",
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "denied\n",
        "{}",
        text(&out)
    );
    assert!(!Path::new("/etc/pincer-sandbox-test").exists());

    let out = sh(&p, &format!("cat {} || echo hidden", s.secret.display()));
    assert!(!text(&out).contains("sk-secret"), "{}", text(&out));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "hidden\n",
        "{}",
        text(&out)
    );

    let out = sh(&p, &connect_script(port));
    assert_eq!(String::from_utf8_lossy(&out.stdout), "refused\n");

    // The directory outside exists inside only as the private /tmp's: nothing reaches it.
    let out = sh(
        &p,
        &format!("echo x > {}/escaped; true", s.outside.display()),
    );
    assert!(out.status.success(), "{}", text(&out));
    assert!(!s.outside.join("escaped").exists());

    let out = sh(&p, "echo inside > made && cat made && pwd");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        format!("inside\n{}\n", s.workspace.display())
    );
    assert_eq!(
        std::fs::read_to_string(s.workspace.join("made")).unwrap(),
        "inside\n"
    );
}

#[test]
fn bwrap_with_network_connects() {
    if !bwrap_or_skip() {
        return;
    }
    let s = setup();
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let out = sh(&policy(SandboxMode::Bwrap, &s, true), &connect_script(port));
    assert_eq!(String::from_utf8_lossy(&out.stdout), "connected\n");
}

/// Processes whose command line contains `marker`.
fn processes_with(marker: &str) -> Vec<String> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let name = entry.file_name();
        if !name.to_string_lossy().chars().all(|c| c.is_ascii_digit()) {
            continue;
        }
        if let Ok(cmdline) = std::fs::read(entry.path().join("cmdline")) {
            let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
            if cmdline.contains(marker) {
                found.push(format!("{}: {cmdline}", name.to_string_lossy()));
            }
        }
    }
    found
}

#[test]
fn killing_bwrap_kills_what_the_command_left_in_the_background() {
    use std::os::unix::process::CommandExt as _;
    if !bwrap_or_skip() {
        return;
    }
    let s = setup();
    let marker = format!("{}.{}", 300 + std::process::id() % 100, 4242);
    let p = policy(SandboxMode::Bwrap, &s, false);
    // `setsid` too: leaving the process group does not leave the PID namespace.
    let script = format!("sleep {marker} & setsid sleep {marker} & echo started; wait");
    let (program, args) = wrap(&p, OsStr::new("/bin/sh"), &["-c".into(), script.into()]).unwrap();
    let mut child = Command::new(program)
        .args(args)
        .process_group(0)
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    while processes_with(&marker).len() < 2 {
        assert!(Instant::now() < deadline, "the sleeps never started");
        std::thread::sleep(Duration::from_millis(20));
    }
    // What the exec tool does: SIGKILL to the group (bwrap leads it).
    let status = Command::new("kill")
        .args(["-KILL", "--", &format!("-{}", child.id())])
        .status()
        .unwrap();
    assert!(status.success());
    child.wait().unwrap();
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let left = processes_with(&marker);
        if left.is_empty() {
            break;
        }
        assert!(Instant::now() < deadline, "left behind: {left:?}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn a_missing_bwrap_is_a_clear_refusal() {
    // Only the lookup depends on PATH: check it on a PATH without bwrap.
    let empty = tempfile::tempdir().unwrap();
    assert_eq!(bwrap::locate_in(empty.path().as_os_str()), None);
    assert_eq!(
        SandboxError::BwrapMissing.to_string(),
        "tools.exec.sandbox is \"bwrap\" but bwrap was not found on PATH: install bubblewrap \
         (apt-get install bubblewrap) or set tools.exec.sandbox to \"landlock\" or \"off\""
    );
}

/// Runs `body` on a thread restricted by `policy` (Landlock applies to the calling thread).
fn in_landlock<T: Send + 'static>(
    policy: SandboxPolicy,
    body: impl FnOnce() -> T + Send + 'static,
) -> Option<T> {
    match lock::abi() {
        None => {
            eprintln!("skipped: this kernel has no Landlock");
            return None;
        }
        Some(abi) if abi < 4 && !policy.network => {
            eprintln!("skipped: Landlock ABI {abi} cannot restrict the network");
            return None;
        }
        Some(_) => {}
    }
    std::thread::spawn(move || {
        lock::restrict(&policy).unwrap();
        body()
    })
    .join()
    .ok()
}

#[test]
fn landlock_denies_system_writes_secrets_network_and_writes_outside() {
    let s = setup();
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let (secret, workspace, outside) = (s.secret.clone(), s.workspace.clone(), s.outside.clone());
    let Some(results) = in_landlock(policy(SandboxMode::Landlock, &s, false), move || {
        (
            std::fs::write("/etc/pincer-sandbox-test", "x").map_err(|e| e.kind()),
            std::fs::read_to_string(&secret).map_err(|e| e.kind()),
            std::net::TcpStream::connect_timeout(&addr, Duration::from_secs(2))
                .map(|_| ())
                .map_err(|e| e.kind()),
            std::fs::write(outside.join("escaped"), "x").map_err(|e| e.kind()),
            std::fs::write(workspace.join("made"), "inside").map_err(|e| e.kind()),
            std::fs::read_to_string("/etc/hostname").is_ok()
                || !Path::new("/etc/hostname").exists(),
        )
    }) else {
        return;
    };
    use std::io::ErrorKind::PermissionDenied;
    assert_eq!(results.0, Err(PermissionDenied));
    assert_eq!(results.1, Err(PermissionDenied));
    assert_eq!(results.2, Err(PermissionDenied));
    assert_eq!(results.3, Err(PermissionDenied));
    assert_eq!(results.4, Ok(()));
    assert!(results.5, "the system stays readable");
    assert!(!s.outside.join("escaped").exists());
    assert_eq!(
        std::fs::read_to_string(s.workspace.join("made")).unwrap(),
        "inside"
    );
}

#[test]
fn landlock_with_network_connects() {
    let s = setup();
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let Some(result) = in_landlock(policy(SandboxMode::Landlock, &s, true), move || {
        std::net::TcpStream::connect_timeout(&addr, Duration::from_secs(2))
            .map(|_| ())
            .map_err(|e| e.kind())
    }) else {
        return;
    };
    assert_eq!(result, Ok(()));
}

#[test]
fn landlock_refuses_to_hide_inside_the_workspace() {
    let s = setup();
    let mut p = SandboxPolicy::new(SandboxMode::Landlock, &s.home);
    p.hide = vec![s.secret.clone()];
    let helper: OsString = "/bin/true".into();
    let err = pincer_sandbox::wrap_with(&p, Some(&helper), OsStr::new("sh"), &[]).unwrap_err();
    if lock::abi().is_none() {
        assert_eq!(err, SandboxError::LandlockUnavailable);
        return;
    }
    assert_eq!(
        err,
        SandboxError::CannotHide {
            hidden: s.secret.clone(),
            granted: s.home.clone()
        }
    );
}

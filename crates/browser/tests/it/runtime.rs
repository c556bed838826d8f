//! The browser runtime against a real Chromium (`/usr/bin/chromium`): one browser per
//! profile shared by separate runtimes (as separate processes would share it), one start
//! for concurrent callers, and no process of the profile left behind by `stop`, the idle
//! timeout, a killed supervisor, a killed Chromium or a browser that cannot start.
//!
//! "No process left" is checked in `/proc`: every process of a profile's Chromium carries
//! its `--user-data-dir=` argument. Each test's [`Cleanup`] kills whatever a failing test
//! would otherwise leave running.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::disallowed_methods,
    reason = "test helpers: panics are failures; they read /proc and write fixtures directly, and the cleanup guard blocks in Drop"
)]

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;
use pincer_browser::runtime::{ProfileRuntime, RuntimeOptions, RuntimeRecord, probe};
use pincer_browser::{BrowserRuntime, RuntimeError};

const CHROMIUM: &str = "/usr/bin/chromium";

fn supervisor() -> Vec<std::ffi::OsString> {
    vec![env!("CARGO_BIN_EXE_pincer-browser-supervisor").into()]
}

fn options(home: &Path) -> RuntimeOptions {
    RuntimeOptions {
        executable: Some(CHROMIUM.into()),
        start_timeout: Duration::from_secs(20),
        idle_timeout: Duration::from_secs(120),
        supervisor: Some(supervisor()),
        ..RuntimeOptions::new(home)
    }
}

/// Kills, when dropped, every process that belongs to the profile: its Chromium (by
/// user-data dir) and its supervisor (by state dir), so a failing test leaves nothing.
struct Cleanup {
    home: tempfile::TempDir,
}

impl Cleanup {
    fn new() -> Self {
        Self {
            home: tempfile::tempdir().unwrap(),
        }
    }

    fn home(&self) -> &Path {
        self.home.path()
    }

    fn profile_dir(&self) -> PathBuf {
        self.home().join("browser/default")
    }

    fn user_data_arg(&self) -> String {
        format!(
            "--user-data-dir={}",
            self.profile_dir().join("user-data").display()
        )
    }

    /// The live processes of this profile: its Chromium's and its supervisor's.
    fn processes(&self) -> Vec<u32> {
        let mut found = processes_with(&self.user_data_arg());
        found.extend(processes_with(&self.profile_dir().display().to_string()));
        found.sort_unstable();
        found.dedup();
        found
    }

    /// Chromium's browser processes (not its helpers, which carry `--type=`).
    fn browsers(&self) -> Vec<u32> {
        processes_with(&self.user_data_arg())
            .into_iter()
            .filter(|pid| !cmdline(*pid).contains("--type="))
            .collect()
    }

    /// Waits up to `timeout` until no process of the profile runs.
    async fn wait_none(&self, timeout: Duration) -> Result<(), Vec<u32>> {
        let deadline = Instant::now() + timeout;
        loop {
            let left = self.processes();
            if left.is_empty() {
                return Ok(());
            }
            if Instant::now() > deadline {
                return Err(left);
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

impl Drop for Cleanup {
    fn drop(&mut self) {
        for pid in self.processes() {
            let _ = kill(Pid::from_raw(pid as i32), Signal::SIGKILL);
        }
    }
}

fn cmdline(pid: u32) -> String {
    std::fs::read(format!("/proc/{pid}/cmdline"))
        .map(|bytes| String::from_utf8_lossy(&bytes).replace('\0', " "))
        .unwrap_or_default()
}

fn is_zombie(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|stat| {
            stat.rsplit_once(')')
                .map(|(_, rest)| rest.trim_start().starts_with('Z'))
        })
        .unwrap_or(true)
}

/// Live processes (not this test process) whose command line contains `needle`.
fn processes_with(needle: &str) -> Vec<u32> {
    let own = std::process::id();
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| *pid != own && cmdline(*pid).contains(needle) && !is_zombie(*pid))
        .collect()
}

fn alive(pid: u32) -> bool {
    std::path::Path::new(&format!("/proc/{pid}")).exists() && !is_zombie(pid)
}

fn record(cleanup: &Cleanup) -> Option<RuntimeRecord> {
    let text = std::fs::read_to_string(cleanup.profile_dir().join("runtime.json")).ok()?;
    Some(serde_json::from_str(&text).unwrap())
}

fn mode(path: &Path) -> u32 {
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

async fn ws_url_of(http_base: &str) -> String {
    let port = probe::port_of(http_base).unwrap();
    probe::json_version(port, Duration::from_secs(5))
        .await
        .unwrap()
        .ws_url
}

#[tokio::test]
async fn a_browser_starts_is_shared_and_stops_from_another_runtime() {
    let cleanup = Cleanup::new();
    let first = ProfileRuntime::new(options(cleanup.home())).unwrap();
    let endpoint = first.ensure_running().await.unwrap();
    assert!(
        endpoint.ws_url.starts_with("ws://127.0.0.1:"),
        "{endpoint:?}"
    );
    assert!(
        endpoint.http_base.starts_with("http://127.0.0.1:"),
        "{endpoint:?}"
    );
    assert_eq!(ws_url_of(&endpoint.http_base).await, endpoint.ws_url);

    let rec = record(&cleanup).unwrap();
    assert_eq!(rec.ws_url, endpoint.ws_url);
    assert_eq!(rec.executable, CHROMIUM);
    let supervisor = rec.supervisor_pid.unwrap();
    assert!(alive(rec.pid) && alive(supervisor));
    assert_eq!(cleanup.browsers(), vec![rec.pid]);
    assert_eq!(mode(&cleanup.profile_dir()), 0o700);
    assert_eq!(mode(&cleanup.profile_dir().join("runtime.json")), 0o600);
    assert_eq!(first.state_dir(), cleanup.profile_dir());

    // Another runtime of the same profile (as another process would make) reuses it.
    let second = ProfileRuntime::new(options(cleanup.home())).unwrap();
    assert_eq!(second.running().await.unwrap(), Some(endpoint.clone()));
    assert_eq!(second.ensure_running().await.unwrap(), endpoint);
    assert_eq!(record(&cleanup).unwrap().pid, rec.pid);
    let status = second.status().await.unwrap();
    assert_eq!(
        serde_json::to_value(&status).unwrap(),
        serde_json::json!({
            "profile": "default",
            "running": true,
            "pid": rec.pid,
            "wsUrl": endpoint.ws_url,
            "executable": CHROMIUM,
            "headless": true,
        })
    );

    // Dropping a supervised runtime leaves the shared browser running.
    drop(first);
    assert!(alive(rec.pid));

    assert!(second.stop().await.unwrap());
    assert_eq!(cleanup.processes(), Vec::<u32>::new());
    assert!(!alive(supervisor));
    assert_eq!(record(&cleanup), None);
    assert!(!second.stop().await.unwrap());
    assert_eq!(second.running().await.unwrap(), None);
    let status = second.status().await.unwrap();
    assert!(!status.running && status.pid.is_none() && status.ws_url.is_none());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_starts_make_one_browser() {
    let cleanup = Cleanup::new();
    let a = ProfileRuntime::new(options(cleanup.home())).unwrap();
    let b = ProfileRuntime::new(options(cleanup.home())).unwrap();
    let (ea, eb) = tokio::join!(a.ensure_running(), b.ensure_running());
    assert_eq!(ea.unwrap(), eb.unwrap());
    assert_eq!(cleanup.browsers().len(), 1, "{:?}", cleanup.browsers());
    assert_eq!(
        processes_with(&format!("--state-dir {}", cleanup.profile_dir().display())).len(),
        1
    );
    assert!(a.stop().await.unwrap());
    assert_eq!(cleanup.processes(), Vec::<u32>::new());
}

#[tokio::test]
async fn an_idle_browser_is_ended_by_its_supervisor() {
    let cleanup = Cleanup::new();
    let runtime = ProfileRuntime::new(RuntimeOptions {
        idle_timeout: Duration::from_secs(2),
        ..options(cleanup.home())
    })
    .unwrap();
    let endpoint = runtime.ensure_running().await.unwrap();
    // Used every 300 ms for longer than the timeout: it stays.
    let until = Instant::now() + Duration::from_secs(3);
    while Instant::now() < until {
        runtime.touch();
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
    assert_eq!(runtime.running().await.unwrap(), Some(endpoint));
    // Then left alone: gone within the timeout and a check period or two.
    cleanup.wait_none(Duration::from_secs(6)).await.unwrap();
    assert_eq!(record(&cleanup), None);
    assert_eq!(runtime.running().await.unwrap(), None);
}

#[tokio::test]
async fn a_killed_supervisor_takes_chromium_along_and_a_fresh_one_starts() {
    let cleanup = Cleanup::new();
    let runtime = ProfileRuntime::new(options(cleanup.home())).unwrap();
    let endpoint = runtime.ensure_running().await.unwrap();
    let rec = record(&cleanup).unwrap();
    kill(
        Pid::from_raw(rec.supervisor_pid.unwrap() as i32),
        Signal::SIGKILL,
    )
    .unwrap();
    // Chromium reads end-of-file on its debugging pipe and exits by itself.
    cleanup.wait_none(Duration::from_secs(5)).await.unwrap();
    // The record is stale now; the next start replaces it.
    assert_eq!(record(&cleanup).map(|r| r.pid), Some(rec.pid));
    assert_eq!(runtime.running().await.unwrap(), None);
    let fresh = runtime.ensure_running().await.unwrap();
    assert_ne!(fresh, endpoint);
    assert_ne!(record(&cleanup).unwrap().pid, rec.pid);
    assert_eq!(ws_url_of(&fresh.http_base).await, fresh.ws_url);
    assert!(runtime.stop().await.unwrap());
    assert_eq!(cleanup.processes(), Vec::<u32>::new());
}

#[tokio::test]
async fn sigterm_to_the_supervisor_ends_the_browser_and_its_record() {
    let cleanup = Cleanup::new();
    let runtime = ProfileRuntime::new(options(cleanup.home())).unwrap();
    runtime.ensure_running().await.unwrap();
    let rec = record(&cleanup).unwrap();
    kill(
        Pid::from_raw(rec.supervisor_pid.unwrap() as i32),
        Signal::SIGTERM,
    )
    .unwrap();
    cleanup.wait_none(Duration::from_secs(8)).await.unwrap();
    assert_eq!(record(&cleanup), None);
    assert!(!runtime.stop().await.unwrap());
}

#[tokio::test]
async fn a_killed_chromium_is_cleaned_up_and_replaced() {
    let cleanup = Cleanup::new();
    let runtime = ProfileRuntime::new(options(cleanup.home())).unwrap();
    let endpoint = runtime.ensure_running().await.unwrap();
    let rec = record(&cleanup).unwrap();
    kill(Pid::from_raw(rec.pid as i32), Signal::SIGKILL).unwrap();
    // Its supervisor notices, kills the helpers, removes the record and exits.
    cleanup.wait_none(Duration::from_secs(8)).await.unwrap();
    assert_eq!(record(&cleanup), None);
    let fresh = runtime.ensure_running().await.unwrap();
    assert_ne!(fresh, endpoint);
    assert_eq!(ws_url_of(&fresh.http_base).await, fresh.ws_url);
    assert!(runtime.stop().await.unwrap());
    assert_eq!(cleanup.processes(), Vec::<u32>::new());
}

#[tokio::test]
async fn a_stale_or_malformed_record_is_replaced() {
    let cleanup = Cleanup::new();
    std::fs::create_dir_all(cleanup.profile_dir()).unwrap();
    let mut gone = std::process::Command::new("true").spawn().unwrap();
    let dead_pid = gone.id();
    gone.wait().unwrap();
    let stale = RuntimeRecord {
        pid: dead_pid,
        pid_start: None,
        supervisor_pid: None,
        supervisor_start: None,
        ws_url: "ws://127.0.0.1:9/devtools/browser/gone".into(),
        http_base: "http://127.0.0.1:9".into(),
        executable: CHROMIUM.into(),
        headless: true,
        started_at: "2026-01-01T00:00:00Z".into(),
    };
    let path = cleanup.profile_dir().join("runtime.json");
    std::fs::write(&path, serde_json::to_vec(&stale).unwrap()).unwrap();
    let runtime = ProfileRuntime::new(RuntimeOptions {
        supervisor: None,
        ..options(cleanup.home())
    })
    .unwrap();
    assert_eq!(runtime.running().await.unwrap(), None);
    assert!(!runtime.status().await.unwrap().running);
    let endpoint = runtime.ensure_running().await.unwrap();
    assert_ne!(endpoint.ws_url, stale.ws_url);
    assert_ne!(record(&cleanup).unwrap().pid, dead_pid);
    assert!(runtime.stop().await.unwrap());

    std::fs::write(&path, b"{ not json").unwrap();
    assert_eq!(runtime.running().await.unwrap(), None);
    let endpoint = runtime.ensure_running().await.unwrap();
    assert_eq!(ws_url_of(&endpoint.http_base).await, endpoint.ws_url);
    assert!(runtime.stop().await.unwrap());
    assert_eq!(cleanup.processes(), Vec::<u32>::new());
}

#[tokio::test]
async fn an_in_process_browser_is_shared_and_ends_with_its_runtime() {
    let cleanup = Cleanup::new();
    let owner = ProfileRuntime::new(RuntimeOptions {
        supervisor: None,
        ..options(cleanup.home())
    })
    .unwrap();
    let endpoint = owner.ensure_running().await.unwrap();
    let rec = record(&cleanup).unwrap();
    assert_eq!(rec.supervisor_pid, None);
    // A supervised runtime elsewhere reuses it rather than starting its own.
    let other = ProfileRuntime::new(options(cleanup.home())).unwrap();
    assert_eq!(other.ensure_running().await.unwrap(), endpoint);
    assert_eq!(cleanup.browsers(), vec![rec.pid]);
    drop(owner);
    cleanup.wait_none(Duration::from_secs(8)).await.unwrap();
    assert_eq!(record(&cleanup), None);
    assert_eq!(other.running().await.unwrap(), None);
}

/// A stand-in browser: a script in the test's home.
fn script(cleanup: &Cleanup, name: &str, body: &str) -> PathBuf {
    use std::os::unix::fs::PermissionsExt as _;
    let path = cleanup.home().join(name);
    std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

fn start_error(result: Result<pincer_browser::Endpoint, RuntimeError>) -> String {
    match result {
        Err(RuntimeError::Start(message)) => message,
        other => panic!("expected a start error, got {other:?}"),
    }
}

#[tokio::test]
async fn a_browser_that_cannot_start_is_a_clear_error_and_leaves_nothing() {
    let cleanup = Cleanup::new();
    let with = |executable: PathBuf, supervised: bool| {
        ProfileRuntime::new(RuntimeOptions {
            executable: Some(executable),
            start_timeout: Duration::from_millis(1500),
            supervisor: supervised.then(supervisor),
            ..options(cleanup.home())
        })
        .unwrap()
    };

    let missing = cleanup.home().join("no-such-chromium");
    let message = start_error(with(missing.clone(), true).ensure_running().await);
    assert_eq!(
        message,
        format!(
            "browser.executablePath {}: no such executable file",
            missing.display()
        )
    );

    // Exits at once, saying why on stderr: the error quotes it.
    let crashes = script(
        &cleanup,
        "crashes",
        "echo 'cannot open display: :0' >&2\nexit 3",
    );
    for supervised in [true, false] {
        let message = start_error(with(crashes.clone(), supervised).ensure_running().await);
        assert_eq!(
            message,
            format!(
                "{}: it exited at once (exit status: 3); its last words:\ncannot open display: :0",
                crashes.display()
            ),
            "supervised: {supervised}"
        );
    }

    // Never writes DevToolsActivePort: timed out, and killed.
    let pid_file = cleanup.home().join("hangs.pid");
    let hangs = script(
        &cleanup,
        "hangs",
        &format!("echo $$ > {}\nexec sleep 30", pid_file.display()),
    );
    let message = start_error(with(hangs.clone(), true).ensure_running().await);
    assert!(
        message.starts_with(&format!(
            "{}: not ready within 1.5s (it wrote no DevToolsActivePort)",
            hangs.display()
        )),
        "{message}"
    );
    let hung: u32 = std::fs::read_to_string(&pid_file)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert!(!alive(hung), "the hung stand-in {hung} is still running");
    assert_eq!(record(&cleanup), None);
    assert_eq!(cleanup.processes(), Vec::<u32>::new());
}

#[tokio::test]
async fn a_broken_supervisor_command_is_a_clear_error() {
    let cleanup = Cleanup::new();
    let with = |command: &[&str]| {
        ProfileRuntime::new(RuntimeOptions {
            supervisor: Some(command.iter().map(Into::into).collect()),
            ..options(cleanup.home())
        })
        .unwrap()
    };
    let err = with(&["/bin/true"]).ensure_running().await.unwrap_err();
    assert_eq!(
        err.to_string(),
        "the browser's supervisor failed: it ended its output without a ready line (exit status: 0; it printed nothing)"
    );
    let err = with(&["/no/such/pincer"])
        .ensure_running()
        .await
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "the browser's supervisor failed: /no/such/pincer: No such file or directory (os error 2)"
    );
    assert_eq!(record(&cleanup), None);
    assert_eq!(cleanup.processes(), Vec::<u32>::new());
}

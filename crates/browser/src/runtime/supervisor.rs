//! The supervisor: a small process that outlives the short command that started the
//! browser (`pincer tools invoke browser open …`), runs Chromium as its child and ends it —
//! on the idle timeout, on SIGTERM/SIGINT (what `stop` from any process sends), or when
//! Chromium dies — then exits. It leaves its caller's session (`setsid`) so a terminal's
//! hang-up or Ctrl-C does not reach it. If it is SIGKILLed, Chromium follows at once: it
//! holds Chromium's `--remote-debugging-pipe` (see `launch`).
//!
//! The `pincer` binary runs [`supervise`] as `pincer browser supervise <args>`; this crate's
//! tests use the `pincer-browser-supervisor` binary. The starter reads one JSON line from
//! the supervisor's stdout: the record once the browser answers, or why it could not start.

use std::ffi::{OsStr, OsString};
use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use nix::sys::signal::Signal;
use pincer_web::ssrf::NetworkPolicy;
use tokio::io::{AsyncBufReadExt as _, AsyncReadExt as _};
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

use super::launch::{self, Ended};
use super::paths::Paths;
use super::procs;
use super::record::RuntimeRecord;
use crate::RuntimeError;

/// The most of the supervisor's stdout read while waiting for its ready line.
const READY_READ_CAP: u64 = 256 * 1024;
/// Where `supervisor.log` starts over.
const SUPERVISOR_LOG_CAP: u64 = 256 * 1024;

/// What a supervisor (or an in-process runtime) needs to run one browser.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SupervisorArgs {
    /// The profile directory (`<home>/browser/<profile>/`).
    pub state_dir: PathBuf,
    pub executable: PathBuf,
    /// Chromium's arguments besides the user-data dir, the debugging port and pipe and
    /// the first page, which the runtime adds itself.
    pub browser_args: Vec<OsString>,
    pub idle_timeout: Duration,
    pub start_timeout: Duration,
    pub headless: bool,
    /// The navigation guard the runtime keeps connected while the browser lives (see
    /// `runtime::guard`); `None`: none (only the tool's connections check navigations).
    /// On the command line: `--guard`, with `--allow-private-network` and `--allow-host H`
    /// (repeatable) for the policy.
    pub navigation_guard: Option<NetworkPolicy>,
}

/// The one line the supervisor prints on stdout.
#[derive(Debug, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
enum ReadyLine {
    Ok(RuntimeRecord),
    Error(String),
}

fn usage(reason: impl std::fmt::Display) -> RuntimeError {
    RuntimeError::Supervisor(format!(
        "{reason} (usage: --state-dir DIR --executable PATH --idle-timeout-ms N --start-timeout-ms N [--headless] [--guard [--allow-private-network] [--allow-host H]…] -- BROWSER-ARGS…)"
    ))
}

impl SupervisorArgs {
    /// The command-line form [`SupervisorArgs::parse`] reads back.
    pub fn to_args(&self) -> Vec<OsString> {
        let mut args: Vec<OsString> = vec![
            "--state-dir".into(),
            self.state_dir.clone().into_os_string(),
            "--executable".into(),
            self.executable.clone().into_os_string(),
            "--idle-timeout-ms".into(),
            self.idle_timeout.as_millis().to_string().into(),
            "--start-timeout-ms".into(),
            self.start_timeout.as_millis().to_string().into(),
        ];
        if self.headless {
            args.push("--headless".into());
        }
        if let Some(policy) = &self.navigation_guard {
            args.push("--guard".into());
            if policy.allow_private_network {
                args.push("--allow-private-network".into());
            }
            for host in &policy.allow_hosts {
                args.push("--allow-host".into());
                args.push(host.into());
            }
        }
        args.push("--".into());
        args.extend(self.browser_args.iter().cloned());
        args
    }

    /// Reads the arguments [`SupervisorArgs::to_args`] wrote (what follows `pincer browser
    /// supervise`).
    pub fn parse(args: impl IntoIterator<Item = OsString>) -> Result<Self, RuntimeError> {
        let mut args = args.into_iter();
        let mut state_dir = None;
        let mut executable = None;
        let mut idle = None;
        let mut start = None;
        let mut headless = false;
        let mut guard = false;
        let mut policy = NetworkPolicy::default();
        let mut browser_args = Vec::new();
        while let Some(arg) = args.next() {
            let mut value = |name: &str| {
                args.next()
                    .ok_or_else(|| usage(format!("{name} needs a value")))
            };
            let millis = |value: OsString, name: &str| {
                value
                    .to_str()
                    .and_then(|v| v.parse::<u64>().ok())
                    .map(Duration::from_millis)
                    .ok_or_else(|| usage(format!("{name} takes milliseconds")))
            };
            match arg.to_str() {
                Some("--state-dir") => state_dir = Some(PathBuf::from(value("--state-dir")?)),
                Some("--executable") => executable = Some(PathBuf::from(value("--executable")?)),
                Some("--idle-timeout-ms") => {
                    idle = Some(millis(value("--idle-timeout-ms")?, "--idle-timeout-ms")?);
                }
                Some("--start-timeout-ms") => {
                    start = Some(millis(value("--start-timeout-ms")?, "--start-timeout-ms")?);
                }
                Some("--headless") => headless = true,
                Some("--guard") => guard = true,
                Some("--allow-private-network") => policy.allow_private_network = true,
                Some("--allow-host") => {
                    let host = value("--allow-host")?
                        .into_string()
                        .map_err(|_| usage("--allow-host takes a host name"))?;
                    policy.allow_hosts.push(host);
                }
                Some("--") => {
                    browser_args.extend(args.by_ref());
                }
                _ => return Err(usage(format!("unknown argument {arg:?}"))),
            }
        }
        // A policy without `--guard` would be silently unused: say so instead.
        if !guard && policy != NetworkPolicy::default() {
            return Err(usage(
                "--allow-private-network and --allow-host need --guard",
            ));
        }
        Ok(Self {
            state_dir: state_dir.ok_or_else(|| usage("--state-dir is required"))?,
            executable: executable.ok_or_else(|| usage("--executable is required"))?,
            browser_args,
            idle_timeout: idle.ok_or_else(|| usage("--idle-timeout-ms is required"))?,
            start_timeout: start.ok_or_else(|| usage("--start-timeout-ms is required"))?,
            headless,
            navigation_guard: guard.then_some(policy),
        })
    }
}

/// The supervisor's whole life: runs the browser, prints the ready line, returns when the
/// browser has ended (for whatever reason) with nothing of it left running. An error only
/// when it could not start (already reported on stdout).
pub async fn supervise(args: SupervisorArgs) -> Result<Ended, RuntimeError> {
    // Leave the starter's session and process group: its terminal's SIGINT/SIGHUP are not
    // for us. (Fails only if this process already leads a group; then it is detached anyway.)
    let _ = nix::unistd::setsid();
    let stop = CancellationToken::new();
    for kind in [
        tokio::signal::unix::SignalKind::terminate(),
        tokio::signal::unix::SignalKind::interrupt(),
    ] {
        let mut signal = tokio::signal::unix::signal(kind)
            .map_err(|e| RuntimeError::Supervisor(format!("signal handler: {e}")))?;
        let stop = stop.clone();
        tokio::spawn(async move {
            signal.recv().await;
            stop.cancel();
        });
    }
    let (ready_tx, mut ready_rx) = oneshot::channel();
    let run = launch::run_browser(&args, Some(std::process::id()), ready_tx, stop);
    tokio::pin!(run);
    // The run may send its answer and end in the same poll: then the answer is read after.
    let mut ended = None;
    let ready = tokio::select! {
        biased;
        ready = &mut ready_rx => ready,
        end = &mut run => {
            ended = Some(end);
            ready_rx.await
        }
    };
    let (line, failure) = match ready {
        Ok(Ok(record)) => (ReadyLine::Ok(record), None),
        Ok(Err(e)) => {
            // The starter says it as a start error: send a start error's own words.
            let message = match &e {
                RuntimeError::Start(message) => message.clone(),
                other => other.to_string(),
            };
            (ReadyLine::Error(message), Some(e))
        }
        Err(_) => {
            let message = "the browser's run ended before it was ready".to_owned();
            (
                ReadyLine::Error(message.clone()),
                Some(RuntimeError::Start(message)),
            )
        }
    };
    report(&line);
    let ended = match ended {
        Some(ended) => ended,
        None => run.await,
    };
    match failure {
        Some(e) => Err(e),
        None => Ok(ended),
    }
}

/// Prints the ready line. A plain std write: one short line into a pipe the starter is
/// reading, which cannot block for long (and if the starter is gone, it fails at once).
fn report(line: &ReadyLine) {
    use std::io::Write as _;
    let Ok(mut json) = serde_json::to_vec(line) else {
        return;
    };
    json.push(b'\n');
    let mut stdout = std::io::stdout().lock();
    let _ = stdout.write_all(&json);
    let _ = stdout.flush();
}

/// Starts `<prefix> <args>` as the supervisor and waits (bounded) for its ready line; on
/// failure the supervisor and any Chromium it started are gone before this returns.
pub(crate) async fn start_supervised(
    prefix: &[OsString],
    args: &SupervisorArgs,
) -> Result<RuntimeRecord, RuntimeError> {
    let paths = Paths::new(args.state_dir.clone());
    let (program, rest) = prefix
        .split_first()
        .ok_or_else(|| RuntimeError::Supervisor("the supervisor command is empty".into()))?;
    let log = open_append(&paths.supervisor_log()).await?;
    let mut child = tokio::process::Command::new(program)
        .args(rest)
        .args(args.to_args())
        .current_dir(paths.dir())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(log)
        .spawn()
        .map_err(|e| RuntimeError::Supervisor(format!("{}: {e}", OsStr::new(program).display())))?;
    let pid = child.id().unwrap_or(0);
    let Some(stdout) = child.stdout.take() else {
        return Err(RuntimeError::Supervisor("no stdout".into()));
    };
    // The supervisor's own timeout ends its wait first; this one covers a hung supervisor.
    let wait = args.start_timeout + Duration::from_secs(10);
    let mut reader = tokio::io::BufReader::new(stdout.take(READY_READ_CAP));
    let outcome = match tokio::time::timeout(wait, ready_line(&mut reader)).await {
        Ok(Ok(ReadyLine::Ok(record))) => return Ok(record),
        Ok(Ok(ReadyLine::Error(message))) => RuntimeError::Start(message),
        Ok(Err(unread)) => {
            let status = tokio::time::timeout(Duration::from_secs(2), child.wait()).await;
            let tail = tail_of(&paths.supervisor_log()).await;
            RuntimeError::Supervisor(format!(
                "it ended its output without a ready line ({}; {}){}",
                match status {
                    Ok(Ok(status)) => status.to_string(),
                    _ => "still running".into(),
                },
                unread,
                if tail.is_empty() {
                    String::new()
                } else {
                    format!(": {tail}")
                }
            ))
        }
        Err(_) => RuntimeError::Start(format!("no answer from the supervisor within {wait:?}")),
    };
    // It failed: make sure neither it nor a browser of this profile lives on.
    procs::signal_pid(pid, Signal::SIGTERM);
    if tokio::time::timeout(Duration::from_secs(5), child.wait())
        .await
        .is_err()
    {
        procs::signal_pid(pid, Signal::SIGKILL);
        let _ = tokio::time::timeout(Duration::from_secs(2), child.wait()).await;
    }
    procs::reap_profile(&paths.user_data_arg(), Duration::from_secs(3)).await;
    Err(outcome)
}

/// The first line of the supervisor's stdout that is a [`ReadyLine`]: lines before it
/// (whatever else the binary running [`supervise`] may print) are skipped. When the output
/// ends first, what was read instead.
async fn ready_line<R: tokio::io::AsyncBufRead + Unpin>(
    reader: &mut R,
) -> Result<ReadyLine, String> {
    let mut skipped = None;
    loop {
        let mut line = String::new();
        match reader.read_line(&mut line).await {
            Ok(0) => {
                return Err(match skipped {
                    Some(line) => format!("it printed {line:?}"),
                    None => "it printed nothing".into(),
                });
            }
            Ok(_) => match serde_json::from_str::<ReadyLine>(&line) {
                Ok(ready) => return Ok(ready),
                Err(_) => skipped = Some(line.trim_end().chars().take(200).collect::<String>()),
            },
            Err(e) => return Err(format!("reading its output: {e}")),
        }
    }
}

/// Opens the supervisor's log for appending; one grown past [`SUPERVISOR_LOG_CAP`] (it only
/// ever holds a few lines per run) starts over.
async fn open_append(path: &std::path::Path) -> Result<std::fs::File, RuntimeError> {
    let full = tokio::fs::metadata(path)
        .await
        .is_ok_and(|m| m.len() > SUPERVISOR_LOG_CAP);
    let mut options = tokio::fs::OpenOptions::new();
    options.create(true).mode(0o600);
    if full {
        options.write(true).truncate(true);
    } else {
        options.append(true);
    }
    match options.open(path).await {
        Ok(file) => Ok(file.into_std().await),
        Err(e) => Err(RuntimeError::State {
            path: path.display().to_string(),
            reason: e.to_string(),
        }),
    }
}

/// The last few lines of a log, for an error message.
async fn tail_of(path: &std::path::Path) -> String {
    let Ok(bytes) = tokio::fs::read(path).await else {
        return String::new();
    };
    let from = bytes.len().saturating_sub(2048);
    let text = String::from_utf8_lossy(&bytes[from..]);
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    lines[lines.len().saturating_sub(5)..].join(" | ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn os(args: &[&str]) -> Vec<OsString> {
        args.iter().map(OsString::from).collect()
    }

    #[test]
    fn arguments_round_trip() {
        let args = SupervisorArgs {
            state_dir: "/h/browser/default".into(),
            executable: "/usr/bin/chromium".into(),
            browser_args: os(&["--headless=new", "--", "--state-dir"]),
            idle_timeout: Duration::from_millis(600_000),
            start_timeout: Duration::from_secs(20),
            headless: true,
            navigation_guard: None,
        };
        assert_eq!(SupervisorArgs::parse(args.to_args()).unwrap(), args);
        let windowed = SupervisorArgs {
            headless: false,
            browser_args: Vec::new(),
            ..args.clone()
        };
        assert_eq!(SupervisorArgs::parse(windowed.to_args()).unwrap(), windowed);
        // The guard's policy, each form of it, a host that looks like a flag included.
        for policy in [
            NetworkPolicy::default(),
            NetworkPolicy {
                allow_private_network: true,
                allow_hosts: Vec::new(),
                ..NetworkPolicy::default()
            },
            NetworkPolicy {
                allow_private_network: false,
                allow_hosts: vec!["127.0.0.1".into(), "*.corp.example".into(), "--".into()],
                ..NetworkPolicy::default()
            },
        ] {
            let guarded = SupervisorArgs {
                navigation_guard: Some(policy),
                ..args.clone()
            };
            assert_eq!(SupervisorArgs::parse(guarded.to_args()).unwrap(), guarded);
        }
    }

    #[test]
    fn the_guard_is_written_on_the_command_line() {
        let args = SupervisorArgs {
            state_dir: "/s".into(),
            executable: "/e".into(),
            browser_args: os(&["--x"]),
            idle_timeout: Duration::from_millis(1),
            start_timeout: Duration::from_millis(2),
            headless: false,
            navigation_guard: Some(NetworkPolicy {
                allow_private_network: true,
                allow_hosts: vec!["a.example".into(), "10.0.0.1".into()],
                ..NetworkPolicy::default()
            }),
        };
        assert_eq!(
            args.to_args(),
            os(&[
                "--state-dir",
                "/s",
                "--executable",
                "/e",
                "--idle-timeout-ms",
                "1",
                "--start-timeout-ms",
                "2",
                "--guard",
                "--allow-private-network",
                "--allow-host",
                "a.example",
                "--allow-host",
                "10.0.0.1",
                "--",
                "--x",
            ])
        );
        let unguarded = SupervisorArgs {
            navigation_guard: None,
            ..args
        };
        assert!(!unguarded.to_args().contains(&OsString::from("--guard")));
    }

    #[tokio::test]
    async fn the_ready_line_is_found_among_other_output() {
        let ok = br#"{"error":"it exited at once"}"#;
        let mut out = b"a banner\n\n".to_vec();
        out.extend_from_slice(ok);
        out.push(b'\n');
        let ready = ready_line(&mut &out[..]).await.unwrap();
        assert!(matches!(ready, ReadyLine::Error(m) if m == "it exited at once"));
        assert_eq!(
            ready_line(&mut &b"a banner\n{\"ok\":{}}\n"[..])
                .await
                .unwrap_err(),
            "it printed \"{\\\"ok\\\":{}}\""
        );
        assert_eq!(
            ready_line(&mut &b""[..]).await.unwrap_err(),
            "it printed nothing"
        );
    }

    #[test]
    fn bad_arguments_say_what_is_wrong() {
        let full = [
            "--state-dir",
            "/s",
            "--executable",
            "/e",
            "--idle-timeout-ms",
            "1",
            "--start-timeout-ms",
            "2",
        ];
        assert!(SupervisorArgs::parse(os(&full)).is_ok());
        for (args, says) in [
            (&full[..7], "--start-timeout-ms needs a value"),
            (&full[2..], "--state-dir is required"),
            (&full[..6], "--start-timeout-ms is required"),
            (
                &["--idle-timeout-ms", "x"][..],
                "--idle-timeout-ms takes milliseconds",
            ),
            (&["--bogus"][..], "unknown argument \"--bogus\""),
            (
                &["--guard", "--allow-host"][..],
                "--allow-host needs a value",
            ),
            (
                &["--allow-host", "h"][..],
                "--allow-private-network and --allow-host need --guard",
            ),
        ] {
            let err = SupervisorArgs::parse(os(args)).unwrap_err().to_string();
            assert!(err.contains(says), "{args:?}: {err}");
        }
    }
}

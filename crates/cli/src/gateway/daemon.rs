//! The gateway as a daemon, lainclaw's contract: `gateway start --daemon` re-runs this
//! binary as `pincer gateway run --detached` in the background, waits until it answers
//! `/readyz` and records it in `service/gateway.json`; `gateway status` reports it as JSON;
//! `gateway stop` ends it (SIGTERM, 5 s, SIGKILL, 2 s).

use std::io::{Read as _, Seek as _, SeekFrom};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context as _, Result, bail};
use nix::sys::signal::Signal;
use pincer_ai::env::ProcessEnv;
use serde::Serialize;
use serde_json::{Value, json};
use tokio::signal::unix::{SignalKind, signal};

use crate::cli::GatewayStartArgs;
use crate::gateway::run_settings::RunSettings;
use crate::gateway::{Listen, check_auth_allowed, resolve_token, url};
use crate::log_writer::open_append;
use crate::service::{self, ServiceState};

/// How long `start` waits for the daemon to answer `/readyz`.
const START_TIMEOUT: Duration = Duration::from_secs(20);
/// lainclaw's stop: SIGTERM, up to 5 s polling every 200 ms, then SIGKILL and 2 s more.
const STOP_GRACE: Duration = Duration::from_secs(5);
const KILL_GRACE: Duration = Duration::from_secs(2);
const POLL: Duration = Duration::from_millis(200);
/// Lines of the log shown when the daemon fails to start.
const TAIL_LINES: usize = 20;

/// `$PINCER_HOME`, absolute: the daemon must find the same home whatever its directory.
fn home() -> Result<PathBuf> {
    let home = pincer_config::pincer_home(&ProcessEnv)?;
    std::path::absolute(&home).with_context(|| format!("cannot resolve {}", home.display()))
}

/// `pincer gateway start --daemon`.
pub async fn start(start: GatewayStartArgs) -> Result<ExitCode> {
    let args = start.listen;
    let home = home()?;
    // A broken configuration is reported here, not from the daemon's log.
    let app = crate::app::App::load()?;
    // A wrong Control UI directory is reported here too; the daemon gets `--control-ui`
    // absolute (it does not start in this directory).
    let control_ui = super::control_ui_root(start.control_ui.as_deref(), &app)?
        .filter(|_| start.control_ui.is_some());
    // Resolved here and passed on as flags: the daemon listens where this command said,
    // whatever its environment.
    let listen = Listen::resolve(&args, &app.config.gateway);
    check_auth_allowed(&listen)?;
    // Checked here (a `--channel` that is not configured), recorded for `gateway status`,
    // and passed on as the same flags.
    let settings = RunSettings::resolve(&start.turn, &app.config)?;
    settings.check_profile(&app)?;
    app.ensure_home()?;
    if let Some(daemon) = service::running_daemon(&home) {
        bail!(
            "the gateway is already running (pid {}, port {}, started {}); \
             `pincer gateway stop` stops it",
            daemon.pid,
            daemon.port,
            daemon.started_at
        );
    }
    // Created (and shown) here, on the terminal: the daemon's output is its log file.
    resolve_token(&home, listen.auth, app.config.gateway.token(), false)?;
    let ip = listen.bind.ip();
    let port = free_port(&home, ip, listen.port)?;

    let log_path = service::log_path(&home);
    if let Some(dir) = log_path.parent() {
        pincer_base::create_private_dir_all(dir)
            .with_context(|| format!("cannot create {}", dir.display()))?;
    }
    let log = open_append(&log_path)
        .with_context(|| format!("cannot open the log {}", log_path.display()))?;
    let log_start = log.metadata().map(|m| m.len()).unwrap_or(0);
    let exe = std::env::current_exe().context("cannot find the pincer executable")?;
    let mut args: Vec<std::ffi::OsString> = vec![
        "gateway".into(),
        "run".into(),
        "--port".into(),
        port.to_string().into(),
        "--bind".into(),
        listen.bind.to_string().into(),
        "--auth".into(),
        listen.auth.as_arg().into(),
        "--detached".into(),
    ];
    if let Some(dir) = control_ui {
        args.extend(["--control-ui".into(), dir.into_os_string()]);
    }
    args.extend(start.turn.to_args().into_iter().map(Into::into));
    // stdin is /dev/null and stdout/stderr the log (appended): nothing ties the daemon to
    // this terminal or to a pipe of whoever ran `start`. It detaches itself (`setsid`, see
    // `gateway::detach`).
    let mut child = Command::new(&exe)
        .args(&args)
        .env("PINCER_HOME", &home)
        .stdin(Stdio::null())
        .stdout(log.try_clone()?)
        .stderr(log)
        .spawn()
        .with_context(|| format!("cannot start {}", exe.display()))?;
    let pid = child.id();

    let probe = service::probe_addr(ip, port);
    let mut sigint = signal(SignalKind::interrupt()).context("cannot listen for Ctrl-C")?;
    let deadline = Instant::now() + START_TIMEOUT;
    loop {
        if let Some(status) = child.try_wait()? {
            eprintln!("error: the gateway exited during start-up ({status})");
            print_log_tail(&log_path, log_start);
            return Ok(ExitCode::from(1));
        }
        // Alive after answering: the answer came from our child, not an earlier server.
        if service::is_ready(probe).await && child.try_wait()?.is_none() {
            break;
        }
        if Instant::now() >= deadline {
            eprintln!(
                "error: the gateway did not answer on port {port} within {} s; stopped it",
                START_TIMEOUT.as_secs()
            );
            end_child(&mut child).await;
            print_log_tail(&log_path, log_start);
            return Ok(ExitCode::from(1));
        }
        tokio::select! {
            _ = tokio::time::sleep(Duration::from_millis(100)) => {}
            _ = sigint.recv() => {
                end_child(&mut child).await;
                eprintln!("interrupted: the gateway was not started");
                return Ok(ExitCode::from(130));
            }
        }
    }

    let state_path = service::state_path(&home);
    let mut argv = vec![exe.to_string_lossy().into_owned()];
    argv.extend(args.iter().map(|a| a.to_string_lossy().into_owned()));
    let state = ServiceState {
        pid,
        port,
        bind: listen.bind.to_string(),
        started_at: pincer_base::time::iso_now(),
        log_path: log_path.clone(),
        state_path: state_path.clone(),
        command: exe.to_string_lossy().into_owned(),
        argv,
        channel: settings.channels.first().cloned(),
        channels: settings.channels.clone(),
        run: Some(settings.report()),
    };
    if let Err(e) = service::write_state(&state) {
        // Without the file nothing could find (and stop) the daemon: do not leave it.
        end_child(&mut child).await;
        return Err(e.context("the gateway was stopped again"));
    }
    println!("gateway service started as daemon: pid={pid}");
    println!("status: {}", state_path.display());
    println!("log: {}", log_path.display());
    println!("url: {}", url(probe));
    Ok(ExitCode::SUCCESS)
}

/// The port to hand the daemon: `port` if it can be bound (said clearly if not), or a
/// free one for 0. Binding here first means a taken port is reported at once, and a server
/// already on it cannot be mistaken for the new daemon answering `/readyz`.
fn free_port(home: &Path, ip: std::net::IpAddr, port: u16) -> Result<u16> {
    let listener = std::net::TcpListener::bind((ip, port))
        .map_err(|e| service::bind_error(home, ip, port, &e))?;
    Ok(listener.local_addr()?.port())
}

/// Ends a child that failed to start: SIGTERM, then SIGKILL, and reaps it.
async fn end_child(child: &mut Child) {
    let _ = service::send_signal(child.id(), Signal::SIGTERM);
    let deadline = Instant::now() + STOP_GRACE;
    while Instant::now() < deadline {
        if let Ok(Some(_)) = child.try_wait() {
            return;
        }
        tokio::time::sleep(POLL).await;
    }
    let _ = child.kill();
    let _ = child.wait();
}

/// The last lines the daemon wrote since `start` began.
fn print_log_tail(path: &Path, from: u64) {
    let mut text = String::new();
    let read = std::fs::File::open(path).and_then(|mut f| {
        f.seek(SeekFrom::Start(from))?;
        // A daemon that failed at start-up wrote little; cap it anyway.
        f.take(1 << 20).read_to_string(&mut text)
    });
    if read.is_err() || text.trim().is_empty() {
        eprintln!("(nothing in {})", path.display());
        return;
    }
    let lines: Vec<&str> = text.lines().collect();
    eprintln!("last lines of {}:", path.display());
    for line in &lines[lines.len().saturating_sub(TAIL_LINES)..] {
        eprintln!("  {line}");
    }
}

/// The JSON of `gateway status`, in lainclaw's field order. `port`, `bind`, `command` and
/// `argv` are the service file's even when it is stale (what was last started); `pid` and
/// `startedAt` only while that process is alive. `channel` / `channels` are the chat channels
/// the daemon runs (each `running` with it), `settings` its run settings with their sources.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct StatusReport<'a> {
    status: &'static str,
    running: bool,
    pid: Option<u32>,
    port: Option<u16>,
    bind: Option<&'a str>,
    started_at: Option<&'a str>,
    state_path: &'a Path,
    log_path: &'a Path,
    command: Option<&'a str>,
    argv: Option<&'a [String]>,
    channel: Option<&'a str>,
    channels: Vec<Value>,
    settings: Option<&'a Value>,
}

/// `pincer gateway status [--channel c]`: lainclaw's JSON. Running means the recorded pid
/// is a live gateway process and `/readyz` answers; a stale file is `stopped`. With
/// `--channel`, the status is that channel's: `stopped` when the daemon does not run it.
pub async fn status(channel: Option<String>) -> Result<ExitCode> {
    let home = home()?;
    let state_path = service::state_path(&home);
    let state = service::read_state_lenient(&state_path);
    let alive = state
        .as_ref()
        .filter(|s| service::is_gateway_process(s.pid));
    let ready = match alive {
        Some(s) => service::is_ready(s.probe_addr()).await,
        None => false,
    };
    let running = alive.is_some() && ready;
    if let (Some(s), false) = (alive, ready) {
        eprintln!(
            "note: pid {} is alive but does not answer on port {}; see {}",
            s.pid,
            s.port,
            s.log_path.display()
        );
    }
    let word = |on: bool| if on { "running" } else { "stopped" };
    let recorded: &[String] = state.as_ref().map(|s| s.channels.as_slice()).unwrap_or(&[]);
    let run = state.as_ref().and_then(|s| s.run.as_ref());
    let channel_settings = |name: &str| {
        run.and_then(|r| r["channels"].as_array())
            .and_then(|list| list.iter().find(|c| c["channel"] == name))
            .map(|c| c["settings"].clone())
            .unwrap_or(Value::Null)
    };
    let channels: Vec<Value> = recorded
        .iter()
        .filter(|name| channel.as_deref().is_none_or(|c| c == name.as_str()))
        .map(|name| {
            json!({
                "channel": name,
                "status": word(running),
                "settings": channel_settings(name),
            })
        })
        .collect();
    let channel_running = match &channel {
        Some(c) => running && recorded.iter().any(|r| r == c),
        None => running,
    };
    let out = StatusReport {
        status: word(channel_running),
        running: channel_running,
        pid: alive.map(|s| s.pid),
        port: state.as_ref().map(|s| s.port),
        bind: state.as_ref().map(|s| s.bind.as_str()),
        started_at: alive.map(|s| s.started_at.as_str()),
        state_path: &state_path,
        log_path: &service::log_path(&home),
        command: state.as_ref().map(|s| s.command.as_str()),
        argv: state.as_ref().map(|s| s.argv.as_slice()),
        channel: channel
            .as_deref()
            .or_else(|| state.as_ref().and_then(|s| s.channel.as_deref())),
        channels,
        settings: run.map(|r| &r["settings"]),
    };
    println!("{}", serde_json::to_string_pretty(&out)?);
    Ok(ExitCode::SUCCESS)
}

/// `pincer gateway stop [--channel c]`. The gateway runs its channels in one process and
/// cannot stop one of them alone: `--channel` stops the gateway only when that is its only
/// channel, and refuses (exit 1, saying why) when it runs others too.
pub async fn stop(channel: Option<String>) -> Result<ExitCode> {
    let home = home()?;
    let state_path = service::state_path(&home);
    let Some(daemon) = service::running_daemon(&home) else {
        service::remove_state(&state_path)?;
        println!("gateway service already stopped");
        return Ok(ExitCode::SUCCESS);
    };
    if let Some(channel) = &channel {
        let runs = &daemon.channels;
        if !runs.iter().any(|c| c == channel) {
            println!(
                "channel {channel} is not running (the gateway, pid {}, runs: {})",
                daemon.pid,
                if runs.is_empty() {
                    "no chat channel".to_owned()
                } else {
                    runs.join(", ")
                }
            );
            return Ok(ExitCode::SUCCESS);
        }
        if runs.len() > 1 {
            bail!(
                "the gateway (pid {}) runs {} in one process and cannot stop {channel} alone; \
                 `pincer gateway stop` stops them all (then `pincer gateway start --daemon \
                 --channel …` with the ones to keep)",
                daemon.pid,
                runs.join(", ")
            );
        }
    }
    let pid = daemon.pid;
    service::send_signal(pid, Signal::SIGTERM)?;
    if !wait_until_gone(pid, STOP_GRACE).await {
        eprintln!(
            "warning: pid {pid} did not stop within {} s; killing it",
            STOP_GRACE.as_secs()
        );
        service::send_signal(pid, Signal::SIGKILL)?;
        if !wait_until_gone(pid, KILL_GRACE).await {
            bail!(
                "pid {pid} is still running after SIGKILL; check it with `ps -p {pid}` \
                 (its service file {} is kept)",
                state_path.display()
            );
        }
    }
    service::remove_state(&state_path)?;
    println!("gateway service stopped (pid={pid})");
    Ok(ExitCode::SUCCESS)
}

async fn wait_until_gone(pid: u32, limit: Duration) -> bool {
    let deadline = Instant::now() + limit;
    loop {
        if !service::is_alive(pid) {
            return true;
        }
        if Instant::now() >= deadline {
            return false;
        }
        tokio::time::sleep(POLL).await;
    }
}

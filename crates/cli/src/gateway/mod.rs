//! `pincer gateway`: runs the gateway server in the foreground (`run`, the default) until
//! SIGTERM or Ctrl-C, and prints the gateway token (`token`). Starting it as a daemon,
//! `status` and `stop` are in `daemon.rs`; the files and process checks they share
//! in `service.rs`; `gateway config set|show|clear` in `config_cmd.rs`; `gateway protocol` in
//! `protocol_cmd.rs`; the server's `Runtime` in `runtime.rs`; the WS client other commands use in
//! `client.rs`.
//!
//! Where it listens: `--port`/`--bind` (`PINCER_GATEWAY_PORT` stands in for `--port`),
//! else the config's `gateway.port`/`gateway.bind`, else 18789 on loopback. The token:
//! `PINCER_GATEWAY_TOKEN`, else `gateway.auth.token`, else the generated token file.
//! The browser checks (`gateway.allowedHosts`, `gateway.controlUi.allowedOrigins`) and the
//! HTTP limits (`gateway.http`) come from the config; at start the soft limit on open files
//! is raised to the hard one, and the connection cap kept below it.

pub mod client;
mod config_cmd;
mod daemon;
mod protocol_cmd;
pub mod run_settings;
mod runtime;

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context as _, Result, bail};
use pincer_ai::CancellationToken;
use pincer_ai::env::ProcessEnv;
use pincer_config::{GatewayBind, GatewayConfig};
use pincer_gateway::server::origin::BrowserPolicy;
use pincer_gateway::server::{MAX_CONNECTIONS, ServeOptions, ServerError, serve};
use pincer_tools::ProcessRegistry;
use tokio::net::TcpListener;
use tokio::signal::unix::{SignalKind, signal};

use crate::cli::{GatewayArgs, GatewayAuth, GatewayCommand, GatewayRunArgs, ListenArgs};
use crate::log_writer::{KEEP_LOGS, MAX_LOG_BYTES, RotatingLog};
use crate::service::{self, GatewayToken, TokenSource};

/// How long the server gets to finish after SIGTERM before the process exits anyway.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(10);

/// Runs a `pincer gateway …` command. It sets up its own logging and runtime: the server
/// wants a worker pool and timestamps in its log, unlike the one-turn commands.
pub fn main(args: GatewayArgs) -> Result<ExitCode> {
    match args.command.unwrap_or(GatewayCommand::Run(args.run)) {
        GatewayCommand::Run(run) => run_gateway(run),
        GatewayCommand::Start(start) if start.daemon => {
            crate::init_logging();
            current_thread()?.block_on(crate::gateway::daemon::start(start))
        }
        GatewayCommand::Start(start) => run_gateway(GatewayRunArgs {
            listen: start.listen,
            detached: false,
            control_ui: start.control_ui,
            turn: start.turn,
        }),
        GatewayCommand::Status(arg) => {
            crate::init_logging();
            current_thread()?.block_on(crate::gateway::daemon::status(arg.channel))
        }
        GatewayCommand::Stop(arg) => {
            crate::init_logging();
            current_thread()?.block_on(crate::gateway::daemon::stop(arg.channel))
        }
        GatewayCommand::Token => {
            crate::init_logging();
            print_token()
        }
        GatewayCommand::Config(command) => {
            crate::init_logging();
            crate::gateway::config_cmd::run(&ProcessEnv, command)
        }
        GatewayCommand::Protocol => crate::gateway::protocol_cmd::run(),
    }
}

/// Where the gateway listens and how clients authenticate, every source applied.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Listen {
    pub port: u16,
    pub bind: GatewayBind,
    pub auth: GatewayAuth,
}

impl Listen {
    /// The flag (clap already put `PINCER_GATEWAY_PORT` in its place when `--port` is
    /// absent), else the config, else the default.
    pub fn resolve(args: &ListenArgs, config: &GatewayConfig) -> Self {
        Self {
            port: args.port.unwrap_or_else(|| config.port()),
            bind: args.bind.unwrap_or_else(|| config.bind()),
            auth: args.auth,
        }
    }
}

fn current_thread() -> Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")
}

/// `pincer gateway token`: the token clients present, created if missing.
fn print_token() -> Result<ExitCode> {
    let home = pincer_config::pincer_home(&ProcessEnv)?;
    let config_path = pincer_config::config_path(&home);
    let config = pincer_config::load(&config_path, &ProcessEnv)?.config;
    let token = service::gateway_token(&home, &ProcessEnv, config.gateway.token())?;
    match token.source {
        TokenSource::Env => eprintln!(
            "(from {}; the token file is not used while it is set)",
            service::TOKEN_ENV
        ),
        TokenSource::Config => eprintln!(
            "(from gateway.auth.token in {}; the token file is not used while it is set)",
            config_path.display()
        ),
        TokenSource::File | TokenSource::Generated => {}
    }
    println!("{}", token.value.expose());
    Ok(ExitCode::SUCCESS)
}

/// The refusal of a network-facing gateway without authentication.
pub fn check_auth_allowed(listen: &Listen) -> Result<()> {
    let ip = listen.bind.ip();
    if listen.auth == GatewayAuth::None && !ip.is_loopback() {
        bail!(
            "refusing to listen on {ip} with --auth none: anyone who can reach this machine \
             could drive your agents. Keep token auth (the default; `pincer gateway token` \
             shows the token) or listen on loopback (--bind loopback)"
        );
    }
    Ok(())
}

/// The token the server checks, or `None` with `--auth none`. `configured` is the
/// config's `gateway.auth.token`. A newly generated one is announced on the terminal only:
/// a daemon's stdout is its log, where a secret must never be written (`gateway start
/// --daemon` creates it before detaching, so this is rare).
pub fn resolve_token(
    home: &Path,
    auth: GatewayAuth,
    configured: Option<&str>,
    detached: bool,
) -> Result<Option<pincer_base::Secret>> {
    if auth == GatewayAuth::None {
        return Ok(None);
    }
    let token = service::gateway_token(home, &ProcessEnv, configured)?;
    if token.source == TokenSource::Generated {
        announce_new_token(home, &token, detached);
    }
    Ok(Some(token.value))
}

fn announce_new_token(home: &Path, token: &GatewayToken, detached: bool) {
    let path = service::token_path(home);
    if detached {
        tracing::info!(
            "generated a gateway token in {}; `pincer gateway token` shows it",
            path.display()
        );
    } else {
        announce(&format!(
            "Your gateway token: {}\n(stored in {}, also shown by `pincer gateway token`)",
            token.value.expose(),
            path.display()
        ));
    }
}

/// `pincer gateway run`: serve until SIGTERM/SIGINT, then shut down within the grace
/// period and exit 0.
fn run_gateway(args: GatewayRunArgs) -> Result<ExitCode> {
    crate::malloc_arenas::limit_to_cores();
    if args.detached {
        detach();
    }
    let home = pincer_config::pincer_home(&ProcessEnv)?;
    let log = init_gateway_logging(&home, args.detached)?;
    let open_files = raise_open_files_limit();
    let app = Arc::new(crate::app::App::load()?);
    let listen = Listen::resolve(&args.listen, &app.config.gateway);
    check_auth_allowed(&listen)?;
    let settings = run_settings::RunSettings::resolve(&args.turn, &app.config)?;
    settings.check_profile(&app)?;
    let control_ui = control_ui_root(args.control_ui.as_deref(), &app)?;
    app.ensure_home()?;
    let token = resolve_token(
        &home,
        listen.auth,
        app.config.gateway.token(),
        args.detached,
    )?;
    if let (Some(log), Some(token)) = (&log, &token) {
        log.redact(token.expose());
    }
    // A daemon serves many connections and turns at once: a worker pool, unlike the
    // single-threaded runtime of the one-turn commands.
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    let result = runtime.block_on(serve_until_signal(
        &home,
        app,
        &listen,
        token,
        args.detached,
        open_files,
        RunExtras {
            control_ui,
            settings,
        },
    ));
    // Tasks stuck past the grace period must not hold the exit.
    runtime.shutdown_timeout(Duration::from_secs(1));
    result
}

/// What a run serves besides the gateway itself: the Control UI's files, and lainclaw's
/// run settings (flags over the config).
struct RunExtras {
    control_ui: Option<PathBuf>,
    settings: run_settings::RunSettings,
}

/// Leaves the terminal's session. `gateway start --daemon` spawns this process plainly
/// (no `pre_exec`, which would need `unsafe`), so it is not a process-group leader and
/// `setsid` succeeds: it becomes the leader of a new session without a controlling
/// terminal, and Ctrl-C or a closed terminal no longer reach it. (`process_group(0)` at
/// spawn would make it a group leader, which `setsid` refuses.)
fn detach() {
    if let Err(e) = nix::unistd::setsid() {
        eprintln!("warning: cannot start a new session ({e}); staying in the current one");
    }
}

/// Logs go to stderr in the foreground, to the size-capped `logs/gateway.log` when
/// detached. `PINCER_LOG` picks what (default: info).
fn init_gateway_logging(home: &Path, detached: bool) -> Result<Option<Arc<RotatingLog>>> {
    let filter = tracing_subscriber::EnvFilter::try_from_env("PINCER_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    let builder = tracing_subscriber::fmt().with_env_filter(filter);
    if detached {
        let path = service::log_path(home);
        let log = Arc::new(
            RotatingLog::open(&path, MAX_LOG_BYTES, KEEP_LOGS)
                .with_context(|| format!("cannot open the log {}", path.display()))?
                .redirect_std(),
        );
        let _ = builder.with_writer(Arc::clone(&log)).try_init();
        Ok(Some(log))
    } else {
        let _ = builder.with_writer(std::io::stderr).try_init();
        Ok(None)
    }
}

async fn serve_until_signal(
    home: &Path,
    app: Arc<crate::app::App>,
    listen: &Listen,
    token: Option<pincer_base::Secret>,
    detached: bool,
    open_files: Option<u64>,
    extras: RunExtras,
) -> Result<ExitCode> {
    let RunExtras {
        control_ui,
        settings,
    } = extras;
    // Registered before the port is announced, so a SIGTERM sent as soon as the gateway
    // is up is a clean stop, not the default kill.
    let mut signals = StopSignals::new()?;
    let ip = listen.bind.ip();
    let listener = TcpListener::bind((ip, listen.port))
        .await
        .map_err(|e| service::bind_error(home, ip, listen.port, &e))?;
    let addr = listener.local_addr()?;
    let processes = ProcessRegistry::new();
    // Exec groups a gateway killed without cleanup left behind go first; ours are recorded.
    let exec_records = home.join("run").join("exec");
    let reaped = {
        let dir = exec_records.clone();
        tokio::task::spawn_blocking(move || pincer_tools::exec::reap_orphans(&dir)).await?
    };
    if !reaped.killed.is_empty() {
        tracing::warn!(groups = ?reaped.killed, "killed exec processes left by an earlier gateway");
    }
    processes.set_record_dir(exec_records);
    let system_events = pincer_automation::system_events::SystemEvents::default();
    let heartbeats = pincer_gateway::server::Heartbeats::default();
    processes.set_exit_callback(exec_exit_notices(
        &app,
        system_events.clone(),
        heartbeats.clone(),
    ));
    let queue = queue_settings(&app.config.messages.queue);
    let heartbeat = crate::heartbeat_setup::heartbeat_settings(&app.config)?;
    let (cron, _cron_lock) = open_cron(&app);
    let channels = crate::channel_setup::channel_options(&app, Some(&settings))?;
    // Kept until the gateway stops: each keeps an agent's memory index current.
    let _memory_watchers = crate::memory_setup::start_watchers(&app).await;
    let gateway = app.config.gateway.clone();
    let app_for_shutdown = Arc::clone(&app);
    let exec_approver = app.exec_approver.clone();
    let runtime = Arc::new(crate::gateway::runtime::GatewayRuntime::new(
        app,
        processes.clone(),
        cron.clone(),
        settings,
    )?);
    if let Some(rpc) = runtime.rpc_runner() {
        rpc.set_gateway_port(addr.port());
    }
    let mut options = ServeOptions::new(token.clone(), runtime.clone());
    options.team = Some(runtime.team());
    // The MCP server at /mcp (the tools of `pincer mcp serve`), behind the gateway token.
    let (mcp_routes, bind_mcp) = crate::mcp_http::routes();
    options.extra_routes = Some(mcp_routes);
    options.on_start.push(bind_mcp);
    options
        .on_start
        .push(pincer_gateway::server::message_port::bind_message_port(
            runtime.message_port(),
        ));
    options
        .on_start
        .push(pincer_gateway::server::approvals::bind_exec_approvals(
            exec_approver,
        ));
    options.browser = BrowserPolicy {
        allowed_hosts: gateway.allowed_hosts,
        allowed_origins: gateway.control_ui.allowed_origins,
    };
    if let Some(ms) = gateway.http.header_read_timeout_ms {
        options.header_read_timeout = Duration::from_millis(ms);
    }
    options.max_connections = connection_cap(
        gateway.http.max_connections.unwrap_or(MAX_CONNECTIONS),
        open_files,
    );
    options.queue = queue;
    options.system_events = system_events;
    options.heartbeat = heartbeat;
    options.heartbeats = heartbeats;
    options.cron = cron;
    options.channels = Arc::new(std::sync::Mutex::new(channels));
    let control_ui_enabled = control_ui.is_some();
    options.control_ui_root = control_ui;
    // The page reads the token from the URL's fragment (never sent over the network, and
    // dropped from the address bar). Printed with it only to a terminal, so the token
    // never lands in a log file.
    let chat = match &token {
        Some(t) if std::io::IsTerminal::is_terminal(&std::io::stdout()) => {
            format!("{}#token={}", url(addr), t.expose())
        }
        Some(_) => format!("{} (token: `pincer gateway token`)", url(addr)),
        None => url(addr),
    };
    announce(&format!(
        "gateway listening on {}\nweb chat: {chat}",
        url(addr)
    ));
    if control_ui_enabled {
        // The same URL with the Control UI's path: `…/control/#token=…`.
        let base = url(addr);
        announce(&format!(
            "control UI: {}",
            chat.replacen(&base, &format!("{base}control/"), 1)
        ));
    }
    tracing::info!(
        %addr,
        auth = if token.is_some() { "token" } else { "none" },
        pid = std::process::id(),
        "listening"
    );

    let shutdown = CancellationToken::new();
    let mut server = tokio::spawn(serve(listener, options, shutdown.clone()));
    let finished = tokio::select! {
        result = &mut server => Some(result),
        name = signals.recv(detached) => { tracing::info!("{name}: shutting down"); None }
    };
    let result = match finished {
        Some(result) => result,
        None => {
            shutdown.cancel();
            match tokio::time::timeout(SHUTDOWN_GRACE, &mut server).await {
                Ok(result) => result,
                Err(_) => {
                    tracing::warn!(
                        "the server did not stop within {} s; exiting anyway",
                        SHUTDOWN_GRACE.as_secs()
                    );
                    server.abort();
                    Ok(Ok(()))
                }
            }
        }
    };
    // Background `exec` processes of the agents must not outlive the gateway.
    processes.shutdown().await;
    // Nor its RPC workers.
    if let Some(rpc) = runtime.rpc_runner() {
        rpc.shutdown().await;
    }
    // Nor the MCP servers (and their process groups).
    app_for_shutdown.mcp.shutdown().await;
    // Nor the browser its agents drove.
    if let Some(browser) = app_for_shutdown.browser_runtime_if_started() {
        use pincer_browser::BrowserRuntime as _;
        if let Err(e) = browser.stop().await {
            tracing::warn!("the browser did not stop: {e}");
        }
    }
    match result {
        Ok(Ok(())) if shutdown.is_cancelled() => {
            tracing::info!("stopped");
            Ok(ExitCode::SUCCESS)
        }
        Ok(Ok(())) => bail!("the server stopped unexpectedly"),
        Ok(Err(ServerError::PublicWithoutAuth { addr })) => bail!(
            "refusing to listen on {addr} without auth; keep token auth (the default) or \
             use --bind loopback"
        ),
        Ok(Err(e)) => Err(e.into()),
        Err(e) => bail!("the server task failed: {e}"),
    }
}

/// The Control UI's directory: `--control-ui`, else `gateway.controlUi.root` (`~/`
/// expanded), made absolute and checked to hold the app's `index.html`, so a wrong path
/// fails at start rather than as a 503 in the browser.
fn control_ui_root(flag: Option<&Path>, app: &crate::app::App) -> Result<Option<PathBuf>> {
    let (root, source) = match (flag, app.config.gateway.control_ui.root.as_deref()) {
        (Some(dir), _) => (dir.to_path_buf(), "--control-ui"),
        (None, Some(dir)) => (
            crate::app::expand_home(dir, app.env.as_ref()),
            "gateway.controlUi.root",
        ),
        (None, None) => return Ok(None),
    };
    let root = std::path::absolute(&root)
        .with_context(|| format!("{source}: cannot resolve {}", root.display()))?;
    if !root.join("index.html").is_file() {
        bail!(
            "{source}: {} has no index.html; point it at an installed openclaw package's \
             dist/control-ui directory (e.g. node_modules/openclaw/dist/control-ui)",
            root.display()
        );
    }
    Ok(Some(root))
}

/// Open files kept for everything but client connections: logs, transcripts, SQLite,
/// channel and LLM connections, child processes' pipes.
const RESERVED_FILES: u64 = 256;

/// Raises the soft limit on open files to the hard limit (capped at Linux's default
/// `nr_open`, which an unlimited hard limit cannot be raised past), so a burst of clients
/// does not leave the gateway unable to open a file or answer `/readyz`. Returns the soft
/// limit in force, `None` if it cannot be read.
fn raise_open_files_limit() -> Option<u64> {
    use nix::sys::resource::{Resource, getrlimit, setrlimit};
    const NR_OPEN: u64 = 1 << 20;
    let (soft, hard) = getrlimit(Resource::RLIMIT_NOFILE).ok()?;
    let target = hard.min(NR_OPEN).max(soft);
    if target == soft {
        return Some(soft);
    }
    match setrlimit(Resource::RLIMIT_NOFILE, target, hard) {
        Ok(()) => Some(target),
        Err(e) => {
            tracing::warn!(error = %e, soft, hard, "cannot raise the open files limit");
            Some(soft)
        }
    }
}

/// The connection cap: as configured, but leaving [`RESERVED_FILES`] of the open files
/// limit for the rest of the gateway.
fn connection_cap(configured: usize, open_files: Option<u64>) -> usize {
    let Some(limit) = open_files else {
        return configured;
    };
    let room = usize::try_from(limit.saturating_sub(RESERVED_FILES)).unwrap_or(usize::MAX);
    if configured > room {
        tracing::warn!(
            configured,
            open_files = limit,
            cap = room.max(1),
            "the open files limit is too low for gateway.http.maxConnections; lowering the cap"
        );
    }
    configured.min(room).max(1)
}

/// The cron scheduler of this home, with the lock that makes it the only one; `None` (and
/// a warning) when another process holds the lock: two would run every job twice.
fn open_cron(
    app: &crate::app::App,
) -> (
    Option<Arc<pincer_automation::cron::CronService>>,
    Option<pincer_automation::cron::SchedulerLock>,
) {
    let dir = crate::cron::cron_dir(app);
    let lock = match pincer_automation::cron::try_lock_scheduler(&dir) {
        Ok(Some(lock)) => lock,
        Ok(None) => {
            let message = format!(
                "cron jobs will not run here: another process holds {} (another gateway for \
                 this home?)",
                dir.join(pincer_automation::cron::SCHEDULER_LOCK_FILE)
                    .display()
            );
            tracing::warn!("{message}");
            announce(&format!("warning: {message}"));
            return (None, None);
        }
        Err(e) => {
            tracing::error!(error = %e, "cron jobs will not run: cannot lock the cron directory");
            announce(&format!("warning: cron jobs will not run: {e}"));
            return (None, None);
        }
    };
    let cron = pincer_automation::cron::CronService::open(
        dir,
        crate::cron::cron_settings(&app.config.cron),
        Arc::new(pincer_automation::system_events::SystemClock),
        pincer_automation::cron::local_time_zone(),
    );
    if let Some(error) = cron.load_error() {
        tracing::error!(%error, "cron jobs could not be loaded; `pincer cron status` shows why");
        announce(&format!("warning: cron: {error}"));
    }
    (Some(cron), Some(lock))
}

/// The signals that stop the gateway.
struct StopSignals {
    term: tokio::signal::unix::Signal,
    int: tokio::signal::unix::Signal,
    hup: tokio::signal::unix::Signal,
}

impl StopSignals {
    fn new() -> Result<Self> {
        let listen = |kind: SignalKind, name: &str| {
            signal(kind).with_context(|| format!("cannot listen for {name}"))
        };
        Ok(Self {
            term: listen(SignalKind::terminate(), "SIGTERM")?,
            int: listen(SignalKind::interrupt(), "SIGINT")?,
            hup: listen(SignalKind::hangup(), "SIGHUP")?,
        })
    }

    /// The next stopping signal: SIGTERM, SIGINT, and SIGHUP in the foreground (its
    /// terminal closed). A daemon has no terminal, so a SIGHUP there is a stray one: it is
    /// logged and ignored rather than killing the gateway.
    async fn recv(&mut self, detached: bool) -> &'static str {
        loop {
            tokio::select! {
                _ = self.term.recv() => return "SIGTERM",
                _ = self.int.recv() => return "SIGINT",
                _ = self.hup.recv() => {
                    if !detached {
                        return "SIGHUP";
                    }
                    tracing::info!("SIGHUP ignored; `pincer gateway stop` stops the daemon");
                }
            }
        }
    }
}

/// `http://127.0.0.1:18789/` (IPv6 addresses in brackets).
pub fn url(addr: SocketAddr) -> String {
    format!("http://{addr}/")
}

/// `messages.queue` as the server's queue settings (OpenClaw's defaults where unset).
fn queue_settings(config: &pincer_config::QueueConfig) -> pincer_gateway::server::QueueSettings {
    let mut settings = pincer_gateway::server::QueueSettings::default();
    if let Some(mode) = config.mode {
        settings.mode = mode;
    }
    if let Some(ms) = config.debounce_ms {
        settings.collect_debounce_ms = ms;
    }
    if let Some(cap) = config.cap {
        settings.collect_cap = cap as usize;
    }
    settings
}

/// Prints a line for whoever started the gateway. Whoever that is may have stopped
/// reading (a closed pipe): that must not stop the gateway, unlike `println!`.
fn announce(text: &str) {
    use std::io::Write as _;
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{text}").and_then(|()| out.flush());
}

/// Where a background `exec`'s exit goes: `Exec completed (<id8>, code N) :: <tail>` as a
/// system event of its agent's main session, and a heartbeat of that agent (reason
/// `exec:<id>:exit`), which relays the outcome to the user without anyone asking. With the
/// heartbeat off, the event waits for the session's next turn.
fn exec_exit_notices(
    app: &crate::app::App,
    events: pincer_automation::system_events::SystemEvents,
    heartbeats: pincer_gateway::server::Heartbeats,
) -> pincer_tools::exec::ExitCallback {
    let session = app.config.session.clone();
    Arc::new(move |notice: pincer_tools::ExecExitNotice| {
        let key = pincer_turns::router::main_session_key(&notice.scope, &session);
        match events.inject(&key, &notice.text, events.now_ms()) {
            Ok(_) => {
                tracing::info!(session = %key, exec = %notice.session_id, status = %notice.status, "exec exit queued as a system event");
                let reason = pincer_automation::heartbeat::exec_exit_reason(&notice.session_id);
                heartbeats.request_now(&notice.scope, &reason);
            }
            Err(e) => tracing::warn!(session = %key, error = %e, "cannot queue the exec exit"),
        }
    })
}

//! The gateway's network face: one port serving OpenClaw's WebSocket protocol (at `/`, where
//! a plain GET gets the web chat page), `/healthz` and `/readyz`, OpenClaw's Control UI at
//! `/control/` when configured (`control_ui.rs`), every request first passing
//! the browser checks (`origin.rs`: `Host` and `Origin`) and the accept loop's limits
//! (`listen.rs`: header-read timeout, connection cap). Connected clients get
//! `presence` and `health` events as that shared state changes (see `state.rs`). `serve` runs
//! until the shutdown token is cancelled, then tells connected clients (`shutdown` event),
//! aborts running turns (their partial replies are saved), waits for them to end (bounded) and
//! returns.

pub mod approvals;
mod auth;
pub mod block_delivery;
pub mod channel_ingress;
mod connection;
pub mod control_ui;
mod cron_runner;
pub mod dialogs;
pub mod frames;
mod group_activation;
mod health;
pub mod heartbeat_runner;
mod http_api;
mod lanes;
mod listen;
pub mod message_port;
pub mod methods;
pub mod origin;
pub mod preauth_io;
mod presence;
pub mod queue;
pub mod runs;
pub mod runtime;
mod send_policy;
mod session_keys;
mod state;
mod status_summary;
pub mod team_port;
pub mod tool_summaries;
pub mod tool_updates;
mod transcript_trim;
pub mod turn_events;
mod writer;
mod ws_limits;
mod ws_upgrade;

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::Router;
use axum::extract::{ConnectInfo, State};
use axum::http::HeaderMap;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

pub use auth::{Auth, Peer};
pub use health::HEALTH_REFRESH_INTERVAL;
pub use heartbeat_runner::Heartbeats;
pub use queue::{QueueMode, QueueSettings};
pub use runs::Runs;
pub use runtime::parse_thinking;
pub use runtime::{ModelDefaults, PlanError, Runtime, TurnOrigin, TurnRequest};
pub use ws_limits::PreauthLimits;

use pincer_automation::cron::CronService;
use pincer_automation::heartbeat::HeartbeatSettings;
use pincer_automation::system_events::{Clock, GC_INTERVAL, SystemClock, SystemEvents};

/// How long running turns get to end after shutdown aborts them.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(10);
/// How long a client has to send a request's headers, or a kept-alive connection may idle.
pub const HEADER_READ_TIMEOUT: Duration = Duration::from_secs(30);
/// Most connections open at once (HTTP and WebSocket).
pub const MAX_CONNECTIONS: usize = 1024;

/// What the server needs to start.
#[derive(Clone)]
pub struct ServeOptions {
    /// The shared token clients must present; `None` disables auth (refused off loopback).
    pub token: Option<pincer_base::Secret>,
    /// How turns are prepared (the composition root's side of the port).
    pub runtime: Arc<dyn Runtime>,
    /// Most agent runs at once; OpenClaw's default is min(16, max(8, CPUs)).
    pub max_concurrent_runs: usize,
    /// What a `chat.send` / `agent` message does when its session already has a run going
    /// and the request names no `queueMode` (OpenClaw's `messages.queue`): the default mode
    /// (`steer`), and for `collect` the quiet window (1000 ms) and batch cap (20).
    pub queue: QueueSettings,
    /// The system events queue; shared with whatever else feeds it (exec exits, cron).
    pub system_events: SystemEvents,
    /// How often the health snapshot is refreshed and sent to every client as a `health`
    /// event (OpenClaw: 60 s).
    pub health_refresh_interval: Duration,
    /// The heartbeat of each agent that has one (an `every` of 0 keeps a clock that only
    /// counts requests). Agents not listed have none.
    pub heartbeat: Vec<(String, HeartbeatSettings)>,
    /// Filled with the agents' heartbeat clocks as the server starts; the caller keeps a
    /// clone for whatever else wakes an agent (exec exits).
    pub heartbeats: Heartbeats,
    /// Wall time for heartbeats (active hours, event stamps); the one `system_events` uses.
    pub clock: Arc<dyn Clock>,
    /// The cron scheduler; started with the server (its jobs run through this server's
    /// turns, events and heartbeats) and stopped with it. `None`: no `cron.*` methods.
    pub cron: Option<Arc<CronService>>,
    /// The chat channels (adapters with their access rules) and the pairing store; started
    /// with the server and stopped with it.
    pub channels: Arc<std::sync::Mutex<Option<channel_ingress::ChannelOptions>>>,
    /// Host names and web origins accepted besides the gateway's own
    /// (`gateway.allowedHosts`, `gateway.controlUi.allowedOrigins`).
    pub browser: origin::BrowserPolicy,
    /// How long a client has to send a request's headers, and a kept-alive connection may
    /// sit idle ([`HEADER_READ_TIMEOUT`]).
    pub header_read_timeout: Duration,
    /// Most connections open at once ([`MAX_CONNECTIONS`]); past it new ones are closed.
    pub max_connections: usize,
    /// Most WebSocket connections not yet past `connect`, per peer and in all (16 and 128).
    pub preauth_limits: PreauthLimits,
    /// The directory of OpenClaw's Control UI to serve at `/control/`
    /// (`gateway.controlUi.root`); `None` leaves it off.
    pub control_ui_root: Option<std::path::PathBuf>,
    /// Called with the server's state once it exists and its channels are started, before
    /// any heartbeat, cron job or client runs a turn: where the composition root binds the
    /// ports that tools reach the running server through (they should keep a
    /// `Weak<Gateway>`: the server's runtime holds the tools).
    pub on_start: Vec<OnStart>,
    /// The team tools' shared state (sub-agents, delegations): bound to this server as it
    /// starts, and behind `/subagents` and the `subagents.*` methods. `None`: no team tools.
    pub team: Option<Arc<pincer_team::Team>>,
    /// Routes the binary adds next to the gateway's own (the MCP server's `/mcp`): behind
    /// the same host and origin checks, and the gateway token as `Authorization: Bearer`.
    pub extra_routes: Option<Router>,
}

/// A hook run as the server starts (see [`ServeOptions::on_start`]).
pub type OnStart = Arc<dyn Fn(&Arc<Gateway>) + Send + Sync>;

impl ServeOptions {
    /// Options with OpenClaw's default run cap.
    pub fn new(token: Option<pincer_base::Secret>, runtime: Arc<dyn Runtime>) -> Self {
        let cpus = std::thread::available_parallelism().map_or(1, usize::from);
        Self {
            token,
            runtime,
            max_concurrent_runs: cpus.clamp(8, 16),
            queue: QueueSettings::default(),
            system_events: SystemEvents::default(),
            health_refresh_interval: HEALTH_REFRESH_INTERVAL,
            heartbeat: Vec::new(),
            heartbeats: Heartbeats::default(),
            clock: Arc::new(SystemClock),
            cron: None,
            channels: Arc::default(),
            browser: origin::BrowserPolicy::default(),
            header_read_timeout: HEADER_READ_TIMEOUT,
            max_connections: MAX_CONNECTIONS,
            preauth_limits: PreauthLimits::default(),
            control_ui_root: None,
            on_start: Vec::new(),
            team: None,
            extra_routes: None,
        }
    }
}

impl std::fmt::Debug for ServeOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServeOptions")
            .field("token", &self.token)
            .field("max_concurrent_runs", &self.max_concurrent_runs)
            .field("queue", &self.queue)
            .field("health_refresh_interval", &self.health_refresh_interval)
            .field("heartbeat", &self.heartbeat)
            .field("browser", &self.browser)
            .field("header_read_timeout", &self.header_read_timeout)
            .field("max_connections", &self.max_connections)
            .field("control_ui_root", &self.control_ui_root)
            .finish_non_exhaustive()
    }
}

/// Why the server could not run.
#[derive(Debug, thiserror::Error)]
pub enum ServerError {
    #[error("refusing to listen on {addr} without auth: a non-loopback address needs a token")]
    PublicWithoutAuth { addr: SocketAddr },
    #[error("the server stopped with an error: {0}")]
    Io(#[from] std::io::Error),
}

/// Shared state of a running server.
pub struct Gateway {
    pub runtime: Arc<dyn Runtime>,
    pub runs: Arc<Runs>,
    pub auth: Auth,
    pub started: Instant,
    pub shutdown: CancellationToken,
    /// Events waiting for each session's next turn (`system-event`, `wake`, `/hooks/wake`).
    pub system_events: SystemEvents,
    /// The agents' heartbeat clocks (`wake`, `/hooks/wake`, exec exits, cron).
    pub heartbeats: Heartbeats,
    pub clock: Arc<dyn Clock>,
    pub cron: Option<Arc<CronService>>,
    /// The chat channels, once started.
    pub channels: std::sync::OnceLock<Arc<channel_ingress::ChannelIngress>>,
    /// The team tools' shared state, if the agents have them.
    pub team: Option<Arc<pincer_team::Team>>,
    /// Commands waiting for the owner's approval (`tools.exec.ask`).
    pub approvals: approvals::Approvals,
    /// Recent `send` answers, for retries.
    sent: methods::SentLog,
    /// Who is connected and the health snapshot, with their state versions.
    state: state::SharedState,
    /// Which `Host` and `Origin` headers are accepted.
    browser: origin::BrowserPolicy,
    /// WebSocket connections not yet past `connect`.
    pending: ws_limits::PendingConnections,
}

/// Serves on `listener` until `shutdown` is cancelled.
pub async fn serve(
    listener: TcpListener,
    options: ServeOptions,
    shutdown: CancellationToken,
) -> Result<(), ServerError> {
    let addr = listener.local_addr()?;
    if options.token.is_none() && !addr.ip().is_loopback() {
        return Err(ServerError::PublicWithoutAuth { addr });
    }
    let runs = Arc::new(Runs::with_queue(
        options.max_concurrent_runs,
        options.queue,
        options.system_events.clone(),
    ));
    let state = state::SharedState::new(
        // Reads the host name once, before any client can be waiting on it.
        presence::PresenceEntry::gateway(presence::host_name(), pincer_ai::now_ms()),
        health::payload(&*options.runtime, None),
        Arc::clone(&runs),
    );
    let gateway = Arc::new(Gateway {
        runtime: options.runtime,
        runs,
        auth: Auth::new(options.token),
        started: Instant::now(),
        shutdown: shutdown.clone(),
        system_events: options.system_events,
        heartbeats: options.heartbeats.clone(),
        clock: options.clock,
        cron: options.cron,
        channels: std::sync::OnceLock::new(),
        team: options.team.clone(),
        approvals: approvals::Approvals::default(),
        sent: methods::SentLog::default(),
        state,
        browser: options.browser,
        pending: ws_limits::PendingConnections::new(options.preauth_limits),
    });
    let channel_options = options
        .channels
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .take();
    if let Some(channel_options) = channel_options {
        let ingress = channel_ingress::start(&gateway, channel_options, &shutdown);
        let _ = gateway.channels.set(ingress);
    }
    if let Some(team) = &gateway.team {
        team.slot()
            .bind(Arc::new(team_port::GatewaySessions::new(&gateway)));
        // Sub-agents the last gateway left unfinished are announced as interrupted.
        tokio::spawn({
            let team = Arc::clone(team);
            async move { team.recover().await }
        });
    }
    for hook in &options.on_start {
        hook(&gateway);
    }
    options.heartbeats.start(&gateway, options.heartbeat);
    let cron_task = gateway.cron.clone().map(|cron| {
        let events = Arc::clone(&gateway.runs);
        cron.set_event_sink(Arc::new(move |payload| events.broadcast("cron", payload)));
        let executor = Arc::new(cron_runner::GatewayCronExecutor::new(Arc::clone(&gateway)));
        tokio::spawn(cron.run(executor, shutdown.clone()))
    });
    tokio::spawn(
        gateway
            .system_events
            .clone()
            .run_gc(GC_INTERVAL, shutdown.clone()),
    );
    let health_refresh = tokio::spawn(health::refresh_every(
        Arc::clone(&gateway),
        options.health_refresh_interval,
    ));
    let mut app = Router::new()
        .route("/", get(root))
        .route("/healthz", get(|| async { "ok" }))
        .route("/readyz", get(|| async { "ready" }))
        .merge(http_api::routes())
        .merge(control_ui::routes(options.control_ui_root));
    if let Some(extra) = options.extra_routes {
        app = app.merge(extra.with_state::<Arc<Gateway>>(()).route_layer(
            axum::middleware::from_fn_with_state(Arc::clone(&gateway), http_api::require_token),
        ));
    }
    let app = app
        .layer(axum::middleware::from_fn_with_state(
            Arc::clone(&gateway),
            origin::guard,
        ))
        .with_state(Arc::clone(&gateway));
    let limits = listen::Limits {
        header_read_timeout: options.header_read_timeout,
        max_connections: options.max_connections,
    };
    listen::serve(listener, app, limits, shutdown.clone()).await;
    // Stopped and waited for (it would also stop on the token, which an I/O error leaves
    // uncancelled): no `health` event goes out after `serve` returns.
    health_refresh.abort();
    let _ = health_refresh.await;
    // A heartbeat or cron run does not start during shutdown (and their tasks hold the
    // gateway).
    gateway.heartbeats.stop_all();
    if let Some(task) = cron_task {
        let _ = task.await;
    }
    gateway.runs.abort_all();
    let deadline = Instant::now() + SHUTDOWN_GRACE;
    while gateway.runs.running() > 0 && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    Ok(())
}

/// The web chat page served to plain GETs of `/` (self-contained: inline CSS and JS).
const WEBCHAT_HTML: &str = include_str!("webchat/index.html");

/// The page's Content-Security-Policy: nothing but its own inline code and the gateway's
/// WebSocket; no external fetches, no framing.
const WEBCHAT_CSP: &str = "default-src 'self'; connect-src 'self' ws: wss:; \
    style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:; \
    base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/// `/`: the WebSocket protocol for clients that upgrade, the web chat page for browsers.
async fn root(
    State(gw): State<Arc<Gateway>>,
    ConnectInfo(addr): ConnectInfo<SocketAddr>,
    headers: HeaderMap,
    upgrade: Result<ws_upgrade::WsUpgrade, ws_upgrade::NotUpgrade>,
) -> Response {
    // A page's WebSocket (its `Origin` already checked by `origin::guard`): its failed
    // tokens count even on loopback.
    let peer = Peer::new(addr, &headers);
    match upgrade {
        Ok(ws) => ws.on_upgrade(move |socket| connection::run(socket, gw, peer)),
        Err(_) => {
            use axum::http::header;
            (
                axum::http::StatusCode::OK,
                [
                    (header::CONTENT_TYPE, "text/html; charset=utf-8"),
                    (header::CACHE_CONTROL, "no-store"),
                    (header::CONTENT_SECURITY_POLICY, WEBCHAT_CSP),
                    (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
                    (header::REFERRER_POLICY, "no-referrer"),
                    (header::X_FRAME_OPTIONS, "DENY"),
                ],
                WEBCHAT_HTML,
            )
                .into_response()
        }
    }
}

//! The gateway's `rpc` runner (`agent.runner: "rpc"`): the worker pool built from
//! `agent.pool` and `agent.workerCommand`, and the capability profile each turn asks for.
//! A worker is this binary's `rpc` mode (`pincer rpc --agent <id>`) unless the config names
//! another command, such as `pi --mode rpc`.
//!
//! A session's profile is its role's (pi-gateway's `buildCapabilityProfile`): the role its
//! last route resolved (else the one its key names, see `resolve_role_for_key`), and that
//! role's `roles.capabilities` entry as the worker's hard flags (`--tools`,
//! `--system-prompt`, `--append-system-prompt` with the gateway's protocol sections after
//! the role's own text), its resources (`--skill`, `--extension`, `--prompt-template`) and
//! its environment (`PI_CODING_AGENT_DIR`). Sessions of one role share idle workers; a
//! worker of another role never serves them (the pool matches hard signatures).

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::{Context as _, Result};
use pincer_agent::AgentConfig;
use pincer_config::{PoolConfig, RoleCapabilities, RunnerKind};
use pincer_gateway::server::TurnOrigin;
use pincer_rpc::{
    CapabilityProfile, PoolSettings, RpcClient, RpcError, RpcPool, WorkerSpawner, WorkerSpec,
};
use pincer_turns::turn_rpc::{RpcTarget, RpcTurns};
use tokio_util::sync::CancellationToken;

use crate::app::App;

/// Among sessions waiting for a worker: users first, then cron runs; the heartbeat never
/// waits (it only takes an idle worker or a free slot).
const USER_PRIORITY: u8 = 10;
const CRON_PRIORITY: u8 = 5;
const HEARTBEAT_PRIORITY: u8 = 1;
/// How many sessions' routed roles are remembered (then the memory starts over; a
/// forgotten session's role comes from its key until its next message).
const MAX_ROUTED_ROLES: usize = 4096;

/// The pool of one gateway process and how its workers are started.
pub struct RpcRunner {
    turns: Arc<RpcTurns>,
    /// Workers are Pincer's own (`--agent` names the agent; `PINCER_HOME` is passed).
    own_workers: bool,
    home: PathBuf,
    maintenance: CancellationToken,
    /// The role each session's last route resolved, by session key.
    routed: Mutex<HashMap<String, String>>,
    /// Where the gateway listens, for its own workers to call back (`tools.invoke`).
    gateway_port: std::sync::OnceLock<u16>,
}

/// Starts each worker as `program base_args… profile args…` in the profile's directory.
struct CommandSpawner {
    program: PathBuf,
    base_args: Vec<String>,
}

impl WorkerSpawner for CommandSpawner {
    fn spawn(&self, profile: &CapabilityProfile) -> Result<RpcClient, RpcError> {
        let mut args = self.base_args.clone();
        args.extend(profile.args());
        RpcClient::spawn(WorkerSpec {
            program: self.program.clone(),
            args,
            env: profile
                .env
                .iter()
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
            cwd: Some(profile.cwd.clone()),
        })
    }
}

impl RpcRunner {
    /// The runner the configuration asks for; `None` for the embedded one. Starts the
    /// pool's maintenance (so call it inside the gateway's runtime).
    pub fn from_config(app: &App) -> Result<Option<Self>> {
        let agent = &app.config.agent;
        if agent.runner.unwrap_or_default() != RunnerKind::Rpc {
            return Ok(None);
        }
        let (program, base_args, own_workers) = match &agent.worker_command {
            Some(command) => {
                let (program, args) = command
                    .split_first()
                    .context("agent.workerCommand needs a program")?;
                (PathBuf::from(program), args.to_vec(), false)
            }
            None => (
                std::env::current_exe()
                    .context("cannot find this program to start `pincer rpc` workers")?,
                vec!["rpc".to_owned()],
                true,
            ),
        };
        let pool = RpcPool::new(
            pool_settings(agent.pool.as_ref()),
            CommandSpawner { program, base_args },
        );
        let maintenance = CancellationToken::new();
        tokio::spawn(
            pool.clone()
                .run_maintenance(pincer_rpc::pool::MAINTENANCE_INTERVAL, maintenance.clone()),
        );
        Ok(Some(Self {
            turns: RpcTurns::new(pool),
            own_workers,
            home: app.home.clone(),
            maintenance,
            routed: Mutex::default(),
            gateway_port: std::sync::OnceLock::new(),
        }))
    }

    /// Tells the runner where the gateway listens: its own workers then get the tools that
    /// live in the gateway (see `gateway_tools.rs`).
    pub fn set_gateway_port(&self, port: u16) {
        let _ = self.gateway_port.set(port);
    }

    /// Remembers the role `route` resolved for its session, for the session's turns.
    pub fn note_route(&self, route: &pincer_turns::router::Route) {
        let mut routed = self.routed.lock().unwrap_or_else(|e| e.into_inner());
        if routed.len() >= MAX_ROUTED_ROLES && !routed.contains_key(&route.session_key) {
            routed.clear();
        }
        routed.insert(route.session_key.clone(), route.role.clone());
    }

    /// The role `session_key` runs under: its last route's, else the one its key names.
    pub fn role_of(&self, app: &App, session_key: &str) -> String {
        let routed = self.routed.lock().unwrap_or_else(|e| e.into_inner());
        match routed.get(session_key) {
            Some(role) => role.clone(),
            None => pincer_turns::router::resolve_role_for_key(&app.config.roles, session_key),
        }
    }

    /// Where a turn of `agent_id` in `session_key` on `agent`'s model runs, for a turn asked
    /// for by `origin`.
    pub fn target(
        &self,
        app: &App,
        agent_id: &str,
        session_key: &str,
        workspace: &std::path::Path,
        agent: &AgentConfig,
        origin: &TurnOrigin,
    ) -> RpcTarget {
        let session_dir = app.agent_dir(agent_id).join("rpc-sessions");
        let role = self.role_of(app, session_key);
        let none = RoleCapabilities::default();
        let caps = app.config.roles.capabilities.get(&role).unwrap_or(&none);
        let mut hard_args = Vec::new();
        let mut env = BTreeMap::new();
        if self.own_workers {
            hard_args.extend(["--agent".to_owned(), agent_id.to_owned()]);
            env.insert("PINCER_HOME".to_owned(), self.home.display().to_string());
            if let Some(port) = self.gateway_port.get() {
                env.insert("PINCER_GATEWAY_PORT".to_owned(), port.to_string());
                env.insert(
                    super::gateway_tools::GATEWAY_TOOLS_ENV.to_owned(),
                    "1".to_owned(),
                );
            }
        }
        // A worker's own sessions (before it is pointed at the gateway's) stay out of
        // the user's pi directory.
        hard_args.extend([
            "--session-dir".to_owned(),
            session_dir.display().to_string(),
        ]);
        role_args(&mut hard_args, caps, &gateway_sections(app, agent_id));
        if let Some(dir) = caps.agent_dir.as_deref().filter(|d| !d.trim().is_empty()) {
            let dir = crate::app::expand_home(dir.trim(), app.env.as_ref());
            env.insert("PI_CODING_AGENT_DIR".to_owned(), dir.display().to_string());
        }
        let set = |items: &[String]| {
            items
                .iter()
                .filter(|i| !i.trim().is_empty())
                .map(|i| expand(app, i))
                .collect()
        };
        let (priority, background) = match origin {
            TurnOrigin::User => (USER_PRIORITY, false),
            TurnOrigin::Cron { .. } => (CRON_PRIORITY, false),
            TurnOrigin::Heartbeat { .. } => (HEARTBEAT_PRIORITY, true),
        };
        RpcTarget {
            turns: Arc::clone(&self.turns),
            profile: CapabilityProfile {
                role: format!("{agent_id}/{role}"),
                cwd: workspace.to_owned(),
                hard_args,
                provider: Some(agent.model.provider.clone()),
                model: Some(agent.model.id.clone()),
                thinking: Some(agent.thinking_level.as_str().to_owned()),
                skills: set(&caps.skills),
                extensions: set(&caps.extensions),
                prompt_templates: set(&caps.prompt_templates),
                env,
            },
            priority,
            background,
            dialogs: None,
        }
    }

    /// The pool's numbers for `health`.
    pub fn status(&self) -> serde_json::Value {
        let pool = self.turns.pool();
        let (stats, settings) = (pool.stats(), pool.settings());
        serde_json::json!({
            "kind": "rpc",
            "workerCommand": if self.own_workers { "pincer rpc" } else { "custom" },
            "workers": stats.workers, "busy": stats.busy, "waiting": stats.waiting,
            "min": settings.min, "max": settings.max,
            "spawned": stats.spawned, "stopped": stats.stopped,
        })
    }

    /// Stops maintenance and every worker (the gateway is stopping).
    pub async fn shutdown(&self) {
        self.maintenance.cancel();
        self.turns.pool().shutdown().await;
    }
}

/// The role's hard flags: `--tools`, `--system-prompt`, and one `--append-system-prompt`
/// of the role's text and then the gateway's protocol sections (as pi-gateway joins them).
fn role_args(args: &mut Vec<String>, caps: &RoleCapabilities, gateway: &str) {
    let tools: Vec<&str> = caps
        .tools
        .iter()
        .map(|t| t.trim())
        .filter(|t| !t.is_empty())
        .collect();
    if !tools.is_empty() {
        args.extend(["--tools".to_owned(), tools.join(",")]);
    }
    if let Some(prompt) = caps.system_prompt.as_deref().map(str::trim)
        && !prompt.is_empty()
    {
        args.extend(["--system-prompt".to_owned(), prompt.to_owned()]);
    }
    let append: Vec<&str> = [caps.append_system_prompt.as_deref(), Some(gateway)]
        .into_iter()
        .flatten()
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .collect();
    if !append.is_empty() {
        args.extend(["--append-system-prompt".to_owned(), append.join("\n\n")]);
    }
}

/// The gateway's protocol sections for `agent_id`'s turns, as the embedded turn's prompt
/// has them (`crate::prompt::system_prompt`), for a worker that cannot build them itself.
fn gateway_sections(app: &App, agent_id: &str) -> String {
    match crate::prompt::gateway_prompt_features(&app.config, agent_id) {
        Ok(features) => pincer_turns::prompt_sections::render_sections(
            &pincer_turns::prompt_sections::gateway_prompt_sections(features),
        ),
        Err(e) => {
            tracing::warn!(agent = agent_id, error = %e, "no gateway prompt sections for the worker");
            String::new()
        }
    }
}

/// A resource path with `~/` expanded (URIs and plain names kept as they are).
fn expand(app: &App, item: &str) -> String {
    crate::app::expand_home(item.trim(), app.env.as_ref())
        .display()
        .to_string()
}

/// `agent.pool` with pi-gateway's defaults.
fn pool_settings(pool: Option<&PoolConfig>) -> PoolSettings {
    let defaults = PoolSettings::default();
    let pool = pool.cloned().unwrap_or_default();
    let max = pool.max.unwrap_or(defaults.max).max(1);
    PoolSettings {
        min: pool.min.unwrap_or(defaults.min).min(max),
        max,
        idle_timeout: pool
            .idle_timeout_ms
            .map_or(defaults.idle_timeout, Duration::from_millis),
        // Each turn answers its worker's dialogs (forwarded to a client, or automatically).
        auto_answer_ui: false,
    }
}

//! The gateway's `rpc` runner (`agent.runner: "rpc"`): the worker pool built from
//! `agent.pool` and `agent.workerCommand`, and the capability profile each turn asks for.
//! A worker is this binary's `rpc` mode (`pincer rpc --agent <id>`) unless the config names
//! another command, such as `pi --mode rpc`.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context as _, Result};
use pincer_agent::AgentConfig;
use pincer_config::{PoolConfig, RunnerKind};
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

/// The pool of one gateway process and how its workers are started.
pub struct RpcRunner {
    turns: Arc<RpcTurns>,
    /// Workers are Pincer's own (`--agent` names the agent; `PINCER_HOME` is passed).
    own_workers: bool,
    home: PathBuf,
    maintenance: CancellationToken,
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
        }))
    }

    /// Where a turn of `agent_id` on `agent`'s model runs, for a turn asked for by `origin`.
    pub fn target(
        &self,
        app: &App,
        agent_id: &str,
        workspace: &std::path::Path,
        agent: &AgentConfig,
        origin: &TurnOrigin,
    ) -> RpcTarget {
        let session_dir = app.agent_dir(agent_id).join("rpc-sessions");
        let mut hard_args = Vec::new();
        let mut env = std::collections::BTreeMap::new();
        if self.own_workers {
            hard_args.extend(["--agent".to_owned(), agent_id.to_owned()]);
            env.insert("PINCER_HOME".to_owned(), self.home.display().to_string());
        }
        // A worker's own sessions (before it is pointed at the gateway's) stay out of
        // the user's pi directory.
        hard_args.extend([
            "--session-dir".to_owned(),
            session_dir.display().to_string(),
        ]);
        let (priority, background) = match origin {
            TurnOrigin::User => (USER_PRIORITY, false),
            TurnOrigin::Cron { .. } => (CRON_PRIORITY, false),
            TurnOrigin::Heartbeat { .. } => (HEARTBEAT_PRIORITY, true),
        };
        RpcTarget {
            turns: Arc::clone(&self.turns),
            profile: CapabilityProfile {
                role: agent_id.to_owned(),
                cwd: workspace.to_owned(),
                hard_args,
                provider: Some(agent.model.provider.clone()),
                model: Some(agent.model.id.clone()),
                thinking: Some(agent.thinking_level.as_str().to_owned()),
                env,
                ..CapabilityProfile::default()
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

//! `agent`: how agent turns run (pi-gateway's section of the same name). `runner:
//! "embedded"` (the default) runs each turn inside the gateway; `"rpc"` runs it on a pool
//! of worker processes speaking pi's RPC protocol — this binary's `pincer rpc` unless
//! `workerCommand` names another (`pi --mode rpc`).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::keypath::KeyPath;

/// `agent`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AgentRunnerConfig {
    /// `embedded` (default) or `rpc`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runner: Option<RunnerKind>,
    /// The worker pool of the `rpc` runner.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pool: Option<PoolConfig>,
    /// The worker's program and arguments, e.g. `["pi", "--mode", "rpc"]` (default: this
    /// binary's `rpc` mode with `--agent <id>`). The profile's flags (`--provider`,
    /// `--model`, `--thinking`, `--session-dir`) are appended.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub worker_command: Option<Vec<String>>,
}

/// `agent.runner`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum RunnerKind {
    #[default]
    Embedded,
    Rpc,
}

/// `agent.pool`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PoolConfig {
    /// Workers kept running even when idle (1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min: Option<usize>,
    /// The most workers at once (4); more sessions wait for one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max: Option<usize>,
    /// An idle worker above `min` stops after this long (300000).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idle_timeout_ms: Option<u64>,
}

pub(crate) fn check_runner(agent: &AgentRunnerConfig, fail: &mut impl FnMut(KeyPath, String)) {
    let path = KeyPath::root().key("agent");
    if let Some(pool) = &agent.pool {
        if pool.max == Some(0) {
            fail(path.key("pool").key("max"), "must be at least 1".to_owned());
        }
        if let (Some(min), Some(max)) = (pool.min, pool.max)
            && min > max
        {
            fail(
                path.key("pool").key("min"),
                format!("must not be more than agent.pool.max ({max})"),
            );
        }
    }
    if let Some(command) = &agent.worker_command
        && command
            .first()
            .is_none_or(|program| program.trim().is_empty())
    {
        fail(
            path.key("workerCommand"),
            "needs a program, e.g. [\"pi\", \"--mode\", \"rpc\"]; leave it out for Pincer's own workers"
                .to_owned(),
        );
    }
}

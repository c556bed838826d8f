//! The port between the worker (pi's protocol behaviour) and the program it runs in: what
//! only the composition root knows — the configured models and keys, the credentials, an
//! agent's tools and system prompt, its skills — and the background processes its tools
//! start. `pincer rpc` implements it on the CLI's `App`.

use std::future::Future;
use std::path::Path;
use std::pin::Pin;

use pincer_agent::AgentConfig;
use pincer_ai::Model;

/// What the worker asks the host to compose an agent for.
#[derive(Debug, Clone, Copy)]
pub struct ConfigRequest<'a> {
    pub agent_id: &'a str,
    /// The worker's directory (the workspace its tools are confined to).
    pub cwd: &'a Path,
    /// The model asked for (the flags' or `set_model`'s); `None`: the configured one.
    pub provider: Option<&'a str>,
    pub model: Option<&'a str>,
    /// Pincer's tool names to keep; empty: every tool the agent has.
    pub tools: &'a [String],
}

/// A skill, as `get_commands` lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkillCommand {
    pub name: String,
    pub description: String,
}

/// The host could not compose the agent; its text is the whole message (causes included),
/// as the worker answers with it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct HostError {
    message: String,
}

impl HostError {
    pub fn new(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
        }
    }
}

/// What a worker needs from the program it runs in.
pub trait WorkerHost: Send + Sync {
    /// The agent's configuration: model, stream function with credentials, thinking level,
    /// compaction, tools and system prompt. The worker applies pi's flags (`--thinking`,
    /// `--system-prompt`, `--append-system-prompt`) on top.
    fn agent_config(&self, request: &ConfigRequest<'_>) -> Result<AgentConfig, HostError>;

    /// Every model the worker can switch to (`get_available_models`).
    fn models(&self) -> Vec<Model>;

    /// The configured models `cycle_model` goes through (`provider/model`), in order.
    fn scoped_models(&self) -> Vec<String>;

    /// The skills an agent working in `cwd` has (`get_commands`).
    fn skills(&self, cwd: &Path) -> Vec<SkillCommand>;

    /// The gateway session whose transcript `session_file` is, if the host can tell (its
    /// tools then act for that session). Blocking: the worker calls it off its thread.
    fn session_key(&self, agent_id: &str, session_file: &Path) -> Option<String> {
        let _ = (agent_id, session_file);
        None
    }

    /// The sandbox the user's `bash` commands run in for `agent_id` in session
    /// `session_key` (the agent's `exec` sandbox); `None`: unsandboxed. An error refuses
    /// the command.
    fn bash_sandbox(
        &self,
        agent_id: &str,
        session_key: Option<&str>,
        cwd: &Path,
    ) -> Result<Option<pincer_sandbox::SandboxPolicy>, HostError> {
        let _ = (agent_id, session_key, cwd);
        Ok(None)
    }

    /// Stops what the agent's tools left running (the worker is ending).
    fn shutdown(&self) -> Pin<Box<dyn Future<Output = ()> + Send + '_>>;
}

//! [`SessionPort`]: what the session tools and sub-agents need from the running gateway —
//! the agents, their session stores, turns started in a session's lane and waited for, and
//! a reply sent to the chat a session last heard from. Mechanics only: who may see or reach
//! what is decided here in pincer-team ([`crate::policy`]), never by the port.

use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

use pincer_store::SessionStore;

/// A boxed future a port method returns.
pub type PortFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// One configured agent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentInfo {
    pub id: String,
    pub name: Option<String>,
    /// `provider/model` a new turn of the agent would use, if one is available.
    pub model: Option<String>,
}

/// A turn the tools want run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TeamTurn {
    /// The run's id, chosen by the caller (so it can name the run before it starts).
    pub run_id: String,
    pub agent_id: String,
    pub session_key: String,
    /// The user message of the turn (the tools put who sent it and why in front).
    pub message: String,
}

/// How a turn ended.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct TurnOutcome {
    /// The reply's text (empty when it failed before replying).
    pub text: String,
    pub error: Option<String>,
    pub aborted: bool,
}

/// Why the port could not do something.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PortError {
    /// The gateway is shutting down or gone.
    #[error("the gateway is not running")]
    Stopped,
    #[error("{0}")]
    Refused(String),
}

/// The running gateway, as the team tools see it.
pub trait SessionPort: Send + Sync {
    /// The configured agents (at least the default one), in configuration order.
    fn agents(&self) -> Vec<AgentInfo>;
    /// The agent that answers when nothing names one.
    fn default_agent_id(&self) -> String;
    /// `agent:<id>:<mainKey>`.
    fn main_session_key(&self, agent_id: &str) -> String;
    /// The session store of `agent_id` (blocking to use: call it on the blocking pool).
    fn store(&self, agent_id: &str) -> SessionStore;
    /// Starts `turn` in its session's lane, after whatever is running or queued there;
    /// returns at once.
    fn start_turn(&self, turn: TeamTurn) -> Result<(), PortError>;
    /// Waits up to `timeout` for run `run_id`; `None` while it still runs (or when no such
    /// run is known).
    fn wait(&self, run_id: &str, timeout: Duration) -> PortFuture<'_, Option<TurnOutcome>>;
    /// `reference` (`provider/model`, or a model id or alias the configuration knows) as
    /// the `provider/model` a session of `agent_id` may switch to; else an error listing
    /// the valid ones.
    fn resolve_model(&self, agent_id: &str, reference: &str) -> Result<String, String>;
    /// Aborts the runs of `session_key` (the running one and those queued); how many.
    fn abort(&self, session_key: &str) -> usize;
    /// The runs going on `session_key`.
    fn active_runs(&self, session_key: &str) -> Vec<String>;
    /// Sends `text` (a reply: `MEDIA:` lines as files of `agent_id`'s workspace) to the
    /// chat `session_key` last heard from; `Ok(false)` when it never heard from a chat or
    /// its session's send policy is `deny`.
    fn deliver<'a>(
        &'a self,
        agent_id: &'a str,
        session_key: &'a str,
        text: &'a str,
    ) -> PortFuture<'a, Result<bool, String>>;
}

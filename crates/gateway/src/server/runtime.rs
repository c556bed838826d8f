//! The port between the server and the rest of Pincer: how to prepare a turn for a session
//! (agent, model, tools, prompt: composed by the binary) and where an agent's sessions are.
//! The server owns protocol, lanes and runs; it never builds agents itself.

use futures_util::future::BoxFuture;
use pincer_store::SessionStore;

use crate::turn::TurnPlan;

/// One turn the server wants to run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TurnRequest {
    pub agent_id: String,
    pub session_key: String,
    pub message: String,
}

/// Model facts shown as `defaults` in `sessions.list` and `chat.history`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelDefaults {
    pub provider: String,
    pub model: String,
    pub context_tokens: u64,
}

/// What the server needs from the composition root.
pub trait Runtime: Send + Sync + 'static {
    /// The agent that answers when nothing names one.
    fn default_agent_id(&self) -> String;
    /// Whether `agent_id` is configured (or `main`).
    fn is_known_agent(&self, agent_id: &str) -> bool;
    /// The main session key of an agent (`agent:<id>:<mainKey>`).
    fn main_session_key(&self, agent_id: &str) -> String;
    /// The session store of an agent.
    fn sessions(&self, agent_id: &str) -> SessionStore;
    /// The model a new turn of the agent would use.
    fn model_defaults(&self, agent_id: &str) -> ModelDefaults;
    /// Prepares a turn: model, stream function, tools, system prompt. The server fills in
    /// the abort token; an error is shown to the client as the run's error.
    fn plan(&self, request: TurnRequest) -> BoxFuture<'static, Result<TurnPlan, String>>;
    /// The models clients may choose (`models.list`): `{id, name, provider, contextWindow}`.
    fn models(&self) -> Vec<serde_json::Value>;
    /// The tools an agent has (`tools.list`): `{name, description, inputSchema}`.
    fn tools(&self, agent_id: &str) -> Vec<serde_json::Value>;
    /// The configuration with secrets masked (`config.get`), and the file it is in.
    fn config_redacted(&self) -> (String, serde_json::Value);
    /// Asks for a heartbeat run of `agent_id` soon (`wake` with mode `now`, `/hooks/wake`);
    /// `reason` says why (`wake`, `hook:wake`, `exec:<id>:exit`). The heartbeat executor of
    /// issue 6 implements it (coalescing, busy lanes); until then the queued system events
    /// wait for the session's next turn, which is what this default (nothing) leaves.
    fn request_heartbeat(&self, agent_id: &str, reason: &str) {
        let _ = (agent_id, reason);
    }
}

//! The port between the server and the rest of Pincer: how to prepare a turn for a session
//! (agent, model, tools, prompt: composed by the binary) and where an agent's sessions are.
//! The server owns protocol, lanes and runs; it never builds agents itself.

use std::path::PathBuf;
use std::sync::Arc;

use pincer_store::SessionStore;

use pincer_automation::heartbeat::PromptKind;
use pincer_turns::turn::TurnPlan;

/// One turn the server wants to run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TurnRequest {
    pub agent_id: String,
    pub session_key: String,
    pub message: String,
    /// Who asked: a user's reply streams as it comes; a heartbeat's is held back until the
    /// `HEARTBEAT_OK` rules decided whether anyone sees it.
    pub origin: TurnOrigin,
    /// Files that came with the message, in the agent's workspace (paths relative to it):
    /// named in the message, images sent to a model that takes them
    /// ([`pincer_turns::media_input`]).
    pub media: Vec<pincer_channel_port::InboundMedia>,
    /// This turn's thinking level (`chat.send`'s `thinking`, a cron job's `payload.thinking`),
    /// above the session's `/think`; `None`: the session's, else the configured one.
    pub thinking: Option<pincer_ai::ThinkingLevel>,
}

impl TurnRequest {
    /// A turn a user (or a client acting for one) asked for.
    pub fn user(agent_id: &str, session_key: &str, message: impl Into<String>) -> Self {
        Self {
            agent_id: agent_id.to_owned(),
            session_key: session_key.to_owned(),
            message: message.into(),
            origin: TurnOrigin::User,
            media: Vec::new(),
            thinking: None,
        }
    }
}

/// A thinking level as a request names it (`off|minimal|low|medium|high|xhigh`, any case),
/// or the error a client sees.
pub fn parse_thinking(level: &str) -> Result<pincer_ai::ThinkingLevel, String> {
    serde_json::from_value(serde_json::json!(level.trim().to_ascii_lowercase())).map_err(|_| {
        format!(
            "invalid thinking level {level:?}: use one of off, minimal, low, medium, high, xhigh"
        )
    })
}

/// Why a turn runs.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum TurnOrigin {
    #[default]
    User,
    /// A heartbeat run with the prompt `kind`: no deltas go out, and the final reply only
    /// when [`pincer_automation::heartbeat::heartbeat_reply_delivery`] keeps something of it.
    Heartbeat {
        kind: PromptKind,
        ack_max_chars: usize,
        /// The heartbeat's target is not `none`: a kept reply goes out as a `chat` final.
        deliver: bool,
    },
    /// An isolated run of cron job `job_id` (session `cron:<jobId>`): a fresh session each
    /// run (the old transcript archived, as a reset does), on the job's `model` if it names
    /// one.
    Cron {
        job_id: String,
        model: Option<String>,
    },
}

/// Model facts shown as `defaults` in `sessions.list` and `chat.history` (empty: no model).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ModelDefaults {
    pub provider: String,
    pub model: String,
    pub context_tokens: u64,
}

/// The error's cause chain behind a [`PlanError`].
pub type PlanSource = Box<dyn std::error::Error + Send + Sync + 'static>;

/// Why a turn could not be prepared. Its text (the cause chain, `outer: inner: …`) is what
/// the client sees as the run's error.
#[derive(Debug, thiserror::Error)]
pub enum PlanError {
    /// The agent's workspace could not be created.
    #[error("{}", pincer_base::error_chain(.0.as_ref()))]
    Workspace(PlanSource),
    /// The session's index or transcript could not be read.
    #[error("{}", pincer_base::error_chain(.0.as_ref()))]
    Session(PlanSource),
    /// The agent could not be put together: model, credentials, tools, prompt.
    #[error("{}", pincer_base::error_chain(.0.as_ref()))]
    Agent(PlanSource),
}

/// Makes `call` on `runtime` on the blocking pool: the seam for the port's blocking calls
/// (`plan`, `workspace`, `tools`, `model_defaults`, `config_redacted`, `skills`). `Err` when the task
/// failed (it panicked).
pub async fn on_blocking_pool<T, F>(
    runtime: &Arc<dyn Runtime>,
    call: F,
) -> Result<T, tokio::task::JoinError>
where
    T: Send + 'static,
    F: FnOnce(&dyn Runtime) -> T + Send + 'static,
{
    let runtime = Arc::clone(runtime);
    tokio::task::spawn_blocking(move || call(runtime.as_ref())).await
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
    /// The model a new turn of the agent would use. Blocking (it reads the auth profiles):
    /// the server calls it on the blocking pool.
    fn model_defaults(&self, agent_id: &str) -> ModelDefaults;
    /// Prepares a turn: model, stream function, tools, system prompt. The server fills in
    /// the abort token; an error is shown to the client as the run's error. Blocking: the
    /// server calls it on the blocking pool (it reads the workspace, skills and the
    /// session's entry), and opens the turn's session in the same trip.
    fn plan(&self, request: TurnRequest) -> Result<TurnPlan, PlanError>;
    /// Every model Pincer knows (the catalog and the configured providers' models):
    /// `models.list` shows those the configuration names, with these facts.
    fn models(&self) -> Vec<pincer_ai::Model>;
    /// The tools an agent has (`tools.list`): `{name, description, inputSchema}`. Called on
    /// the blocking pool: it may create the agent's workspace.
    fn tools(&self, agent_id: &str) -> Vec<serde_json::Value>;
    /// The tool `name` as a turn of `agent_id` in `session_key` would have it (`tools.invoke`);
    /// `None` when that turn has no such tool. Blocking (it may create the workspace): the
    /// server calls it on the blocking pool.
    fn agent_tool(
        &self,
        agent_id: &str,
        session_key: &str,
        name: &str,
    ) -> Option<Arc<dyn pincer_agent::AgentTool>> {
        let _ = (agent_id, session_key, name);
        None
    }
    /// The configuration with secrets masked (`config.get`), and the file it is in.
    /// Blocking (it reads the file): the server calls it on the blocking pool.
    fn config_redacted(&self) -> (String, serde_json::Value);
    /// More sections of the `status` answer, by key (e.g. `mcp`: the MCP servers), from
    /// parts of the composition root the gateway does not know.
    fn status_extras(&self) -> serde_json::Map<String, serde_json::Value> {
        serde_json::Map::new()
    }
    /// Who runs the turns, for `health`: `{kind: "embedded"}`, or the RPC pool's numbers.
    fn runner_status(&self) -> serde_json::Value {
        serde_json::json!({ "kind": "embedded" })
    }
    /// Where a channel's message goes: agent, session key (see [`pincer_turns::router`]). The
    /// default routes with an empty configuration (the default agent).
    fn route(&self, input: &pincer_turns::router::RouteInput) -> pincer_turns::router::Route {
        pincer_turns::router::resolve_route(&pincer_config::PincerConfig::default(), input)
    }
    /// The agent's workspace directory (where HEARTBEAT.md is), if it has one. It may
    /// create the workspace: the server calls it on the blocking pool.
    fn workspace(&self, agent_id: &str) -> Option<PathBuf> {
        let _ = agent_id;
        None
    }
    /// The configuration the server describes itself from: the agents (`agents.list`), the
    /// models they name (`models.list`), the session settings. The default is empty.
    fn config(&self) -> &pincer_config::PincerConfig {
        static EMPTY: std::sync::LazyLock<pincer_config::PincerConfig> =
            std::sync::LazyLock::new(pincer_config::PincerConfig::default);
        &EMPTY
    }
    /// The skills the agent sees (`skills.status`). Blocking (it reads the skill
    /// directories): the server calls it on the blocking pool.
    fn skills(&self, agent_id: &str) -> pincer_turns::skills::SkillSet {
        let _ = agent_id;
        pincer_turns::skills::SkillSet::default()
    }
    /// The file the gateway logs to (`logs.tail`), if it has one.
    fn log_file(&self) -> Option<PathBuf> {
        None
    }
    /// How big a file sent with a message may be (`chat.send` and `agent` attachments):
    /// `agents.defaults.mediaMaxMb` of [`Runtime::config`], else 20 MB.
    fn media_limits(&self) -> pincer_turns::media_input::MediaLimits {
        pincer_turns::media_input::MediaLimits::with_media_max_mb(
            self.config().agents.defaults.media_max_mb,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, thiserror::Error)]
    #[error("cannot read the index")]
    struct Outer(#[source] std::io::Error);

    #[test]
    fn a_plan_error_reads_as_its_cause_chain() {
        let io = std::io::Error::other("disk on fire");
        let e = PlanError::Session(Box::new(Outer(io)));
        assert_eq!(e.to_string(), "cannot read the index: disk on fire");
        let e = PlanError::Agent("no model".into());
        assert_eq!(e.to_string(), "no model");
    }
}

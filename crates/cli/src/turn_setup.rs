//! Everything a turn's agent needs, composed from the configuration: the model (and its
//! fallbacks) chosen in OpenClaw's order, an LLM client with the configured keys, the
//! failover stream function over the credential source, the thinking level, the tools and
//! the system prompt. Shared by `pincer ask` and the gateway's runtime.

use std::path::Path;
use std::sync::{Arc, Mutex};

use anyhow::Result;
use pincer_agent::{AgentConfig, AgentTool};
use pincer_ai::{LlmClient, ModelRegistry, ThinkingLevel};
use pincer_store::SessionEntry;
use pincer_turns::failover::{Attempts, failover_stream_fn};
use pincer_turns::model_select::{ModelChoice, ModelRequest, SelectionContext, select_model};
use serde_json::json;

use crate::app::App;
use crate::credentials::TurnAuth;

/// The model catalog and the LLM client turns use. `pincer ask` builds one per run; the
/// gateway keeps one for its whole life, so its HTTP connection pool (and the TLS roots,
/// which take milliseconds to load) are built once, not once per turn.
pub struct Llm {
    pub registry: Arc<ModelRegistry>,
    client: LlmClient,
    /// Providers whose configured key the client already has.
    keyed: Mutex<Vec<String>>,
}

impl Llm {
    pub fn new(app: &App) -> Result<Self> {
        let registry = app.registry()?;
        let client = LlmClient::with_env(Arc::clone(&app.env));
        // Providers of `api: "proxy"` (pi's proxy) stream through it.
        if let Some(proxy) = registry.proxy_api() {
            client.apis().register(proxy, None);
        }
        Ok(Self {
            registry: Arc::new(registry),
            client,
            keyed: Mutex::default(),
        })
    }

    /// The client, with the keys of `models`' providers.
    fn client_for(&self, app: &App, models: &[pincer_ai::Model]) -> Result<LlmClient> {
        let mut keyed = self.keyed.lock().unwrap_or_else(|e| e.into_inner());
        app.add_keys(&self.client, &self.registry, models, &mut keyed)?;
        Ok(self.client.clone())
    }
}

/// What a turn is for.
pub struct AgentSetup<'a> {
    pub agent_id: &'a str,
    pub session_key: &'a str,
    pub workspace: &'a Path,
    /// The session's index entry (its own model and thinking level win over the config's).
    pub entry: Option<&'a SessionEntry>,
    pub cli_provider: Option<&'a str>,
    pub cli_model: Option<&'a str>,
    pub tools: Vec<Arc<dyn AgentTool>>,
    /// The auth file as this turn read it: profiles for choosing the model, and credentials.
    pub auth: TurnAuth,
    pub llm: &'a Llm,
    /// Where the turn comes from (`cli`, `webchat`, …), for the prompt's runtime line.
    pub channel: &'a str,
    /// This turn's own thinking level (`chat.send`'s `thinking`, a cron job's), above the
    /// session's.
    pub thinking: Option<ThinkingLevel>,
}

/// An agent ready to run.
pub struct PreparedAgent {
    pub config: AgentConfig,
    /// Which credentials and models failed, and who answered.
    pub attempts: Attempts,
}

/// Composes the agent of a turn.
pub fn prepare_agent(app: &App, setup: AgentSetup<'_>) -> Result<PreparedAgent> {
    let choice = choose_model(app, &setup, &setup.llm.registry)?;
    let client = setup.llm.client_for(app, &choice.chain())?;
    let attempts = Attempts::default();
    let stream_fn = failover_stream_fn(
        client,
        choice.fallbacks.clone(),
        Arc::clone(&setup.auth.credentials),
        attempts.clone(),
    );
    let mut config = AgentConfig::new(choice.primary.clone(), stream_fn);
    config.tools = setup.tools;
    config.session_key = Some(Arc::from(setup.session_key));
    config.thinking_level = setup
        .thinking
        .unwrap_or_else(|| thinking_level(app, setup.agent_id, setup.entry));
    if let Some(compaction) = &app.config.agents.defaults.compaction {
        let c = &mut config.compaction;
        c.enabled = compaction.enabled.unwrap_or(c.enabled);
        c.reserve_tokens = compaction.reserve_tokens.unwrap_or(c.reserve_tokens);
        c.keep_recent_tokens = compaction
            .keep_recent_tokens
            .unwrap_or(c.keep_recent_tokens);
    }
    config.system_prompt = crate::prompt::system_prompt(
        app,
        setup.agent_id,
        setup.session_key,
        setup.workspace,
        setup.channel,
        &config,
    )?;
    Ok(PreparedAgent { config, attempts })
}

fn choose_model(
    app: &App,
    setup: &AgentSetup<'_>,
    registry: &ModelRegistry,
) -> Result<ModelChoice> {
    let request = ModelRequest {
        cli_provider: setup.cli_provider,
        cli_model: setup.cli_model,
        session: setup.entry.and_then(|e| e.model.as_deref()),
        agent: app
            .agent_entry(setup.agent_id)
            .and_then(|a| a.model.as_ref()),
        defaults: app.config.agents.defaults.model.as_ref(),
    };
    let custom = app.custom_providers();
    let cx = SelectionContext {
        registry,
        env: app.env.as_ref(),
        custom_providers: &custom,
        profile_providers: &setup.auth.profile_providers,
    };
    Ok(select_model(&request, &cx)?)
}

/// The session's thinking level, else the agent's, else the defaults', else off.
fn thinking_level(app: &App, agent_id: &str, entry: Option<&SessionEntry>) -> ThinkingLevel {
    let from_session = entry
        .and_then(|e| e.thinking_level.as_deref())
        .and_then(|l| serde_json::from_value(json!(l)).ok());
    let configured = app
        .agent_entry(agent_id)
        .and_then(|a| a.thinking_level)
        .or(app.config.agents.defaults.thinking_level);
    from_session.or(configured).unwrap_or(ThinkingLevel::Off)
}

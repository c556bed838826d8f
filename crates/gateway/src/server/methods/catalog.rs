//! What a chat client offers its user, in OpenClaw's shapes: `commands.list` (Pincer's chat
//! commands, from `pincer_turns::commands`, the table the parser reads), `models.list` (the
//! models the configuration names: the agent's primary and fallbacks, then every
//! `models.providers.*.models` entry — not the whole built-in catalog, which `/v1/models`
//! and `pincer models` show), `models.authStatus` (which of those providers have a key in
//! the configuration) and `chat.metadata` (models and commands together, what the Control
//! UI's chat pane reads before it sends).

use pincer_ai::Model;
use pincer_config::PincerConfig;
use pincer_turns::commands::COMMANDS;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::super::Gateway;
use super::super::frames::MethodError;
use super::agent_of_key;
use super::params::parse;

/// The thinking levels of a model that reasons (pi's, without `xhigh`, which few models
/// take), and of one that does not.
const REASONING_LEVELS: &[&str] = &["off", "minimal", "low", "medium", "high"];
const PLAIN_LEVELS: &[&str] = &["off"];

/// The params of `commands.list`.
#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct CommandsListParams {
    /// Whose commands (every agent has the same ones).
    agent_id: Option<String>,
    /// Where the commands are typed: `text`, `native` or `both` (all of Pincer's are both).
    scope: Option<String>,
    /// Include each command's `args` (Pincer's take free text, so there are none).
    include_args: Option<bool>,
}

/// One command as OpenClaw lists it.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct CommandEntry {
    name: &'static str,
    native_name: &'static str,
    text_aliases: &'static [&'static str],
    description: &'static str,
    category: &'static str,
    source: &'static str,
    scope: &'static str,
    accepts_args: bool,
}

#[derive(Serialize)]
pub(super) struct CommandsListResponse {
    commands: Vec<CommandEntry>,
}

/// Pincer's chat commands (all typed as text and offered natively, so every scope sees all).
fn commands() -> Vec<CommandEntry> {
    COMMANDS
        .iter()
        .map(|c| CommandEntry {
            name: c.name,
            native_name: c.name,
            text_aliases: c.aliases,
            description: c.description,
            category: c.category.as_str(),
            source: "native",
            scope: "both",
            accepts_args: c.accepts_args,
        })
        .collect()
}

pub(super) fn commands_list(p: &Value) -> Result<CommandsListResponse, MethodError> {
    let params: CommandsListParams = parse(p)?;
    let _ = (params.agent_id, params.include_args);
    if let Some(scope) = params.scope.as_deref()
        && !["text", "native", "both"].contains(&scope)
    {
        return Err(MethodError::invalid(format!(
            "scope must be text, native or both, not {scope:?}"
        )));
    }
    Ok(CommandsListResponse {
        commands: commands(),
    })
}

/// The params of `models.list` and `chat.metadata`.
#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ModelsListParams {
    /// Whose models; else the agent of `sessionKey`, else the default agent.
    agent_id: Option<String>,
    session_key: Option<String>,
    /// OpenClaw's `configured` or `all`: Pincer lists the configured models either way.
    view: Option<String>,
}

impl ModelsListParams {
    fn agent(&self, gw: &Gateway) -> Result<String, MethodError> {
        agent_named(gw, self.agent_id.as_deref(), self.session_key.as_deref())
    }
}

/// `agentId` if given (and known), else the agent of `sessionKey`, else the default agent.
pub(super) fn agent_named(
    gw: &Gateway,
    agent_id: Option<&str>,
    session_key: Option<&str>,
) -> Result<String, MethodError> {
    match (agent_id.map(str::trim), session_key) {
        (Some(id), _) if gw.runtime.is_known_agent(id) => Ok(id.to_owned()),
        (Some(id), _) => Err(MethodError::invalid(format!("unknown agentId: {id}"))),
        (None, Some(key)) => Ok(agent_of_key(gw, key)),
        (None, None) => Ok(gw.runtime.default_agent_id()),
    }
}

/// A thinking level as a picker shows it.
#[derive(Serialize)]
pub(super) struct ThinkingLevel {
    id: &'static str,
    label: &'static str,
}

/// What a model or agent offers to think at: the levels, their ids, and the default.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct Thinking {
    pub(super) thinking_levels: Vec<ThinkingLevel>,
    pub(super) thinking_options: Vec<&'static str>,
    pub(super) thinking_default: &'static str,
}

impl Thinking {
    /// The levels of a model that reasons or not, defaulting to `configured` when it is
    /// one of them (else `off`).
    pub(super) fn of(reasoning: bool, configured: Option<&str>) -> Self {
        let levels = if reasoning {
            REASONING_LEVELS
        } else {
            PLAIN_LEVELS
        };
        Self {
            thinking_levels: levels
                .iter()
                .map(|&l| ThinkingLevel { id: l, label: l })
                .collect(),
            thinking_options: levels.to_vec(),
            thinking_default: levels
                .iter()
                .find(|&&l| Some(l) == configured)
                .copied()
                .unwrap_or("off"),
        }
    }
}

/// One configured model.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct ModelEntry {
    id: String,
    name: String,
    provider: String,
    reasoning: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    context_window: Option<u64>,
    tags: Vec<&'static str>,
    thinking_levels: Vec<ThinkingLevel>,
    thinking_default: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    manual_selection_allowed: Option<bool>,
    /// Pincer knows how to call it (the catalog or a configured provider has it).
    available: bool,
}

impl ModelEntry {
    /// How a session names it (`provider/id`).
    pub(super) fn reference(&self) -> String {
        if self.provider.is_empty() {
            self.id.clone()
        } else {
            format!("{}/{}", self.provider, self.id)
        }
    }
}

/// How a client picks the credentials: Pincer rotates auth profiles by itself.
#[derive(Serialize)]
pub(super) struct AccountSelection {
    kind: &'static str,
    label: &'static str,
}

const AUTOMATIC: AccountSelection = AccountSelection {
    kind: "automatic",
    label: "Automatic account selection",
};

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct ModelsListResponse {
    models: Vec<ModelEntry>,
    account_selection: AccountSelection,
}

/// The agent's model choice: its own, else the defaults'.
pub(in crate::server) fn model_selection<'a>(
    config: &'a PincerConfig,
    agent_id: &str,
) -> Option<&'a pincer_config::ModelSelection> {
    config
        .agents
        .list
        .iter()
        .find(|a| a.id == agent_id)
        .and_then(|a| a.model.as_ref())
        .or(config.agents.defaults.model.as_ref())
}

/// The agent's configured thinking level, as its wire name.
pub(super) fn thinking_level(config: &PincerConfig, agent_id: &str) -> Option<String> {
    config
        .agents
        .list
        .iter()
        .find(|a| a.id == agent_id)
        .and_then(|a| a.thinking_level)
        .or(config.agents.defaults.thinking_level)
        .map(|level| level.as_str().to_owned())
}

/// `provider/id` split at the first slash; a reference without one has no provider.
fn split_reference(reference: &str) -> (&str, &str) {
    reference.split_once('/').unwrap_or(("", reference))
}

/// The configured models of `agent_id`, in order: primary (tag `default`), fallbacks (tag
/// `fallback`), then the providers' models, each once.
pub(super) fn configured_models(gw: &Gateway, agent_id: &str) -> Vec<ModelEntry> {
    let config = gw.runtime.config();
    let known = gw.runtime.models();
    let level = thinking_level(config, agent_id);
    let mut refs: Vec<(String, &'static str)> = Vec::new();
    if let Some(selection) = model_selection(config, agent_id) {
        refs.push((selection.primary().to_owned(), "default"));
        refs.extend(
            selection
                .fallbacks()
                .iter()
                .map(|f| (f.clone(), "fallback")),
        );
    }
    for (provider, p) in &config.models.providers {
        refs.extend(
            p.models
                .iter()
                .map(|m| (format!("{provider}/{}", m.id), "")),
        );
    }
    let mut entries: Vec<ModelEntry> = Vec::new();
    let mut seen: Vec<String> = Vec::new();
    for (reference, tag) in refs {
        if seen.contains(&reference) {
            continue;
        }
        seen.push(reference.clone());
        let (provider, id) = split_reference(&reference);
        let found: Option<&Model> = known
            .iter()
            .find(|m| m.id == id && (provider.is_empty() || m.provider == provider));
        let custom = config
            .models
            .providers
            .get(provider)
            .and_then(|p| p.models.iter().find(|m| m.id == id));
        let reasoning = found
            .map(|m| m.reasoning)
            .or(custom.and_then(|m| m.reasoning))
            .unwrap_or(false);
        let thinking = Thinking::of(reasoning, level.as_deref());
        entries.push(ModelEntry {
            id: id.to_owned(),
            name: custom
                .and_then(|m| m.name.clone())
                .or_else(|| found.map(|m| m.name.clone()))
                .unwrap_or_else(|| id.to_owned()),
            provider: found.map_or_else(|| provider.to_owned(), |m| m.provider.clone()),
            reasoning,
            context_window: found.map(|m| m.context_window),
            tags: if tag.is_empty() {
                Vec::new()
            } else {
                vec![tag]
            },
            thinking_levels: thinking.thinking_levels,
            thinking_default: thinking.thinking_default,
            manual_selection_allowed: Some(true),
            available: found.is_some(),
        });
    }
    entries
}

pub(super) fn models_list(gw: &Gateway, p: &Value) -> Result<ModelsListResponse, MethodError> {
    let params: ModelsListParams = parse(p)?;
    let _ = &params.view;
    let agent = params.agent(gw)?;
    Ok(ModelsListResponse {
        models: configured_models(gw, &agent),
        account_selection: AUTOMATIC,
    })
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct ChatMetadataResponse {
    models: Vec<ModelEntry>,
    commands: Vec<CommandEntry>,
    swarm_enabled: bool,
    account_selection: AccountSelection,
    runtime_selection_locked: bool,
}

/// `chat.metadata {agentId?, sessionKey?}`: the models (without `manualSelectionAllowed`,
/// as OpenClaw's) and the commands.
pub(super) fn chat_metadata(gw: &Gateway, p: &Value) -> Result<ChatMetadataResponse, MethodError> {
    let params: ModelsListParams = parse(p)?;
    let agent = params.agent(gw)?;
    let mut models = configured_models(gw, &agent);
    for m in &mut models {
        m.manual_selection_allowed = None;
    }
    Ok(ChatMetadataResponse {
        models,
        commands: commands(),
        swarm_enabled: false,
        account_selection: AUTOMATIC,
        runtime_selection_locked: false,
    })
}

/// The params of `models.authStatus`.
#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct AuthStatusParams {
    agent_id: Option<String>,
}

/// Where a provider's key comes from.
#[derive(Serialize)]
pub(super) struct KeySource {
    source: &'static str,
}

/// One provider's credentials, as far as the configuration tells.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct ProviderAuth {
    provider: String,
    auth_provider: String,
    display_name: String,
    /// `static` with a key in the configuration, else `missing` (a key from the
    /// environment or an auth profile is not looked at here).
    status: &'static str,
    profiles: Vec<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    api_key: Option<KeySource>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct AuthStatusResponse {
    ts: i64,
    providers: Vec<ProviderAuth>,
    provider_capabilities: Vec<Value>,
}

/// `models.authStatus {agentId?}`: the providers of the agent's configured models.
pub(super) fn auth_status(gw: &Gateway, p: &Value) -> Result<AuthStatusResponse, MethodError> {
    let params: AuthStatusParams = parse(p)?;
    let agent = agent_named(gw, params.agent_id.as_deref(), None)?;
    let config = gw.runtime.config();
    let mut providers: Vec<ProviderAuth> = Vec::new();
    for model in configured_models(gw, &agent) {
        if model.provider.is_empty() || providers.iter().any(|p| p.provider == model.provider) {
            continue;
        }
        let keyed = config
            .models
            .providers
            .get(&model.provider)
            .is_some_and(|p| p.api_key.is_some());
        providers.push(ProviderAuth {
            auth_provider: model.provider.clone(),
            display_name: model.provider.clone(),
            provider: model.provider,
            status: if keyed { "static" } else { "missing" },
            profiles: Vec::new(),
            api_key: keyed.then_some(KeySource { source: "config" }),
        });
    }
    Ok(AuthStatusResponse {
        ts: pincer_ai::now_ms(),
        providers,
        provider_capabilities: Vec::new(),
    })
}

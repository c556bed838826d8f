//! The shape of `pincer.json5`: one Rust type per section, camelCase keys as OpenClaw writes
//! them, unknown keys refused (`deny_unknown_fields`) so a typo never passes silently. The
//! JSON schema (`pincer config schema`) is derived from these types.

use crate::automation::{CronConfig, HeartbeatConfig};
use std::collections::BTreeMap;

use pincer_ai::ModelsConfig;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::channels::ChannelsConfig;
use crate::gateway::GatewayConfig;
use crate::memory::{CompactionConfig, MemorySearchConfig};
use crate::runner::AgentRunnerConfig;
use crate::streaming::{
    BlockStreamingBreak, BlockStreamingChunkConfig, BlockStreamingCoalesceConfig,
    BlockStreamingDefault,
};

/// The whole configuration. Every section is optional; an empty file is a valid config.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PincerConfig {
    /// Editors' schema hint; ignored.
    #[serde(rename = "$schema", default, skip_serializing_if = "Option::is_none")]
    pub schema: Option<String>,
    /// Agents: defaults for all, and the list of agents with their own workspace.
    #[serde(default)]
    pub agents: AgentsConfig,
    /// Which agent answers which channel, account, guild or peer (most specific wins).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub bindings: Vec<Binding>,
    /// Session keys and session maintenance.
    #[serde(default)]
    pub session: SessionConfig,
    /// Custom providers and models, in pi's `models.json` shape.
    #[serde(default)]
    pub models: ModelsConfig,
    /// Auth-profile order per provider and failover cooldowns.
    #[serde(default)]
    pub auth: AuthConfig,
    /// Which tools agents get.
    #[serde(default)]
    pub tools: ToolsConfig,
    /// Where skills are loaded from besides the standard directories.
    #[serde(default)]
    pub skills: SkillsConfig,
    /// Worker roles (capability profiles) by channel and group.
    #[serde(default)]
    pub roles: RolesConfig,
    /// Where `pincer gateway` listens and the token its clients present.
    #[serde(default)]
    pub gateway: GatewayConfig,
    /// How messages are handled, e.g. what one does while its session is busy.
    #[serde(default)]
    pub messages: MessagesConfig,
    /// Scheduled jobs.
    #[serde(default)]
    pub cron: CronConfig,
    /// How agent turns run: in the gateway, or on a pool of RPC worker processes.
    #[serde(default)]
    pub agent: AgentRunnerConfig,
    /// The chat apps the gateway connects to, and who may talk to the agent there.
    #[serde(default)]
    pub channels: ChannelsConfig,
    /// The dedicated Chromium the `browser` tool drives.
    #[serde(default)]
    pub browser: crate::web::BrowserConfig,
    /// MCP servers whose tools the agents get (`mcp.servers.<name>`).
    #[serde(default)]
    pub mcp: crate::mcp::McpConfig,
}

/// `messages` (OpenClaw's section of the same name).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct MessagesConfig {
    /// What a message does when its session already has a run going.
    #[serde(default)]
    pub queue: QueueConfig,
}

/// `messages.queue`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct QueueConfig {
    /// `steer` (default: injected into the running turn at its next tool boundary),
    /// `followup` (its own turn afterwards), `collect` (gathered, then one turn) or
    /// `interrupt` (the running turn is aborted).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<crate::QueueMode>,
    /// `collect`: the quiet time after the last message before the batch runs (1000).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub debounce_ms: Option<u64>,
    /// `collect`: the most messages in one batch (20).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cap: Option<u32>,
}

/// `agents`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AgentsConfig {
    #[serde(default)]
    pub defaults: AgentDefaults,
    /// Agents besides (or overriding) `main`. The default agent is the one marked
    /// `default: true`, else `main`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub list: Vec<AgentEntry>,
}

/// `agents.defaults`: what every agent uses unless its entry says otherwise.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AgentDefaults {
    /// The model, `provider/model`, or `{ primary, fallbacks }`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<ModelSelection>,
    /// Thinking level: off, minimal, low, medium, high, xhigh.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thinking_level: Option<pincer_ai::ThinkingLevel>,
    /// Most characters injected from one workspace file (default 20000).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bootstrap_max_chars: Option<usize>,
    /// Most characters injected from all workspace files together (default 150000).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bootstrap_total_max_chars: Option<usize>,
    /// Largest file taken with a message, in MB (default 20): a `chat.send` attachment, an
    /// OpenAI API image, a file named to `pincer ask` (channels have their own limits).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub media_max_mb: Option<u64>,
    /// Days a received file stays in the workspace inbox (`inbox/<date>/`; default 30; 0
    /// keeps them all). Pruned with the session maintenance; today's never are.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub media_retention_days: Option<u32>,
    /// The model the `image` tool asks about pictures, `provider/model` or `{ primary,
    /// fallbacks }` (it must take images); unset: the agent's own model if it takes images.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub image_model: Option<ModelSelection>,
    /// The heartbeat of every agent (each agent's own `heartbeat` wins field by field).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub heartbeat: Option<HeartbeatConfig>,
    /// Forces the gateway's protocol sections of the system prompt on or off for every
    /// agent (each agent's own `gatewayPrompts` wins field by field).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gateway_prompts: Option<GatewayPromptsConfig>,
    /// Memory search of every agent (each agent's own `memorySearch` wins field by field).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_search: Option<MemorySearchConfig>,
    /// Automatic compaction (`enabled`, `reserveTokens`, `keepRecentTokens`) and the
    /// pre-compaction memory flush (`compaction.memoryFlush`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compaction: Option<CompactionConfig>,
    /// `on`: channel replies are sent in blocks as they stream (default `off`: whole, at
    /// the end); a channel's `blockStreaming` wins.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub block_streaming_default: Option<BlockStreamingDefault>,
    /// `text_end` (default: blocks go as they are cut) or `message_end` (once each assistant
    /// message ended).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub block_streaming_break: Option<BlockStreamingBreak>,
    /// Block sizes: `{ minChars: 800, maxChars: 1200 }` by default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub block_streaming_chunk: Option<BlockStreamingChunkConfig>,
    /// How blocks are merged before they are sent (`minChars`, `maxChars`, `idleMs`); a
    /// channel's own `blockStreamingCoalesce` wins.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub block_streaming_coalesce: Option<BlockStreamingCoalesceConfig>,
    /// Background sub-agents (`sessions_spawn`): slots, model, nesting, allowed agents.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subagents: Option<crate::team::SubagentsConfig>,
    /// `delegate_to_agent`: the agents tasks may be handed to, and its limits.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delegation: Option<crate::team::DelegationConfig>,
    /// Every agent's sandbox for its commands (below `tools.exec.sandbox` and each agent's
    /// own `sandbox`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sandbox: Option<crate::sandbox::SandboxSetting>,
}

/// One entry of `agents.list`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AgentEntry {
    /// `^[a-z0-9][a-z0-9_-]{0,63}$`.
    pub id: String,
    /// This agent answers what no binding claims.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub default: bool,
    /// A display name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Workspace directory (default `$PINCER_HOME/agents/<id>/workspace`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workspace: Option<String>,
    /// Overrides `agents.defaults.model`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<ModelSelection>,
    /// Overrides `agents.defaults.thinkingLevel`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thinking_level: Option<pincer_ai::ThinkingLevel>,
    /// Overrides the global `tools` section for this agent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<ToolsConfig>,
    /// Overrides `agents.defaults.heartbeat` field by field.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub heartbeat: Option<HeartbeatConfig>,
    /// Overrides `agents.defaults.gatewayPrompts` field by field.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gateway_prompts: Option<GatewayPromptsConfig>,
    /// Overrides `agents.defaults.memorySearch` field by field.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_search: Option<MemorySearchConfig>,
    /// Overrides `agents.defaults.subagents` field by field.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subagents: Option<crate::team::SubagentsConfig>,
    /// Overrides `agents.defaults.delegation` field by field.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delegation: Option<crate::team::DelegationConfig>,
    /// The MCP servers (`mcp.servers` names) whose tools this agent gets (default: all).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mcp: Option<Vec<String>>,
    /// This agent's sandbox for its commands (over `tools.exec.sandbox` and
    /// `agents.defaults.sandbox`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sandbox: Option<crate::sandbox::SandboxSetting>,
}

/// `gatewayPrompts`: which protocol sections gateway turns append to the system prompt.
/// By default each follows its feature: the heartbeat section when the agent's heartbeat
/// runs, the cron section while cron is enabled, the media section when a channel is
/// configured. `true` or `false` here forces one on or off.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct GatewayPromptsConfig {
    /// The "Heartbeat Protocol" section (`HEARTBEAT_OK`, HEARTBEAT.md).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub heartbeat: Option<bool>,
    /// The "Cron Event Protocol" section (`[CRON:<jobId>]` events, the `cron` tool).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cron: Option<bool>,
    /// The "Media Reply Protocol" section (`MEDIA:<path>` lines that send files).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub media: Option<bool>,
}

impl GatewayPromptsConfig {
    /// `self` over `base`, field by field (an agent's own settings over the defaults).
    pub fn or(self, base: Self) -> Self {
        Self {
            heartbeat: self.heartbeat.or(base.heartbeat),
            cron: self.cron.or(base.cron),
            media: self.media.or(base.media),
        }
    }
}

/// A model choice: `"provider/model"` or `{ primary, fallbacks }` (OpenClaw's forms).
/// Deserialize is written by hand (see below); Serialize and the schema are untagged.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum ModelSelection {
    /// Just the primary model.
    Primary(String),
    /// A primary model and the models tried, in order, when it fails over.
    Chain(ModelChain),
}

/// `{ primary, fallbacks }`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ModelChain {
    pub primary: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub fallbacks: Vec<String>,
}

/// By hand rather than `#[serde(untagged)]`: an untagged enum buffers the value and, when
/// no variant fits, reports only "did not match any variant", losing the inner key path
/// and message (`fallbacks[1]: expected a string`, an unknown key in the object).
impl<'de> Deserialize<'de> for ModelSelection {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct SelectionVisitor;

        impl<'de> serde::de::Visitor<'de> for SelectionVisitor {
            type Value = ModelSelection;

            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a model \"provider/model\" or { primary, fallbacks }")
            }

            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Self::Value, E> {
                Ok(ModelSelection::Primary(v.to_owned()))
            }

            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                map: A,
            ) -> Result<Self::Value, A::Error> {
                ModelChain::deserialize(serde::de::value::MapAccessDeserializer::new(map))
                    .map(ModelSelection::Chain)
            }
        }

        deserializer.deserialize_any(SelectionVisitor)
    }
}

impl ModelSelection {
    /// The primary model reference.
    pub fn primary(&self) -> &str {
        match self {
            Self::Primary(p) => p,
            Self::Chain(c) => &c.primary,
        }
    }

    /// The fallbacks, in order.
    pub fn fallbacks(&self) -> &[String] {
        match self {
            Self::Primary(_) => &[],
            Self::Chain(c) => &c.fallbacks,
        }
    }
}

/// One entry of `bindings`: messages matching `match` go to `agentId`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Binding {
    pub agent_id: String,
    #[serde(rename = "match")]
    pub match_: BindingMatch,
}

/// What a binding matches. Every field given must match; the most specific binding wins
/// (peer 8 > guild 4 > account 2 > channel 1, summed).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct BindingMatch {
    /// Channel id: telegram, discord, feishu, slack, webchat, cli, …
    pub channel: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub account_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub peer: Option<PeerMatch>,
    /// Discord guild.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub guild_id: Option<String>,
    /// Slack team.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub team_id: Option<String>,
}

/// A peer in a binding: a direct chat partner, a group or a channel.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PeerMatch {
    pub kind: PeerKind,
    pub id: String,
}

/// Kinds of chat.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum PeerKind {
    Direct,
    Group,
    Channel,
}

/// `session`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SessionConfig {
    /// `per-sender` (default) or `global` (everything in one session, key `global`).
    #[serde(default)]
    pub scope: SessionScope,
    /// How direct messages map to sessions (default `main`: all DMs share the main session).
    #[serde(default)]
    pub dm_scope: DmScope,
    /// The main session's key suffix: `agent:<agentId>:<mainKey>` (default `main`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub main_key: Option<String>,
    /// One person on several channels: canonical name -> `["telegram:123", "discord:456"]`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub identity_links: BTreeMap<String, Vec<String>>,
    /// Retention of old sessions.
    #[serde(default)]
    pub maintenance: SessionMaintenance,
    /// `sessions_send`'s reply-back ping-pong.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_to_agent: Option<crate::team::SessionAgentToAgentConfig>,
}

impl SessionConfig {
    /// `mainKey`, defaulting to `main`.
    pub fn main_key(&self) -> &str {
        self.main_key.as_deref().unwrap_or("main")
    }
}

/// `session.scope`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum SessionScope {
    #[default]
    PerSender,
    Global,
}

/// `session.dmScope`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum DmScope {
    /// Every DM goes to the agent's main session.
    #[default]
    Main,
    /// One session per sender, across channels: `agent:<a>:direct:<peer>`.
    PerPeer,
    /// One session per channel and sender: `agent:<a>:<channel>:direct:<peer>`.
    PerChannelPeer,
    /// One session per account, channel and sender.
    PerAccountChannelPeer,
}

/// `session.maintenance`: which old sessions are pruned. The active session never is.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SessionMaintenance {
    /// `warn` (default: report what would be pruned) or `enforce`.
    #[serde(default)]
    pub mode: MaintenanceMode,
    /// Sessions not updated for this long are pruned, e.g. `30d`, `12h` (default `30d`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prune_after: Option<String>,
    /// Most sessions kept per agent, newest first (default 500).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_entries: Option<usize>,
}

/// `session.maintenance.mode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum MaintenanceMode {
    #[default]
    Warn,
    Enforce,
}

/// `auth`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AuthConfig {
    /// Profile ids to try, in order, per provider: `{ anthropic: ["anthropic:work", …] }`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub order: BTreeMap<String, Vec<String>>,
    /// Cooldowns after consecutive rate limits, in milliseconds (default 1 m, 5 m, 25 m, 1 h).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cooldowns_ms: Option<Vec<u64>>,
}

/// `tools` (also per agent in `agents.list[].tools`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ToolsConfig {
    /// full (default), coding, messaging or minimal.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile: Option<ToolProfileName>,
    /// Tools added beyond the profile (names or globs).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub allow: Vec<String>,
    /// Tools removed whatever else says (names or globs); deny wins.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub deny: Vec<String>,
    /// What `exec` may run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exec: Option<ExecConfig>,
    /// How received media is understood (`audio`: voice notes transcribed to text).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub media: Option<MediaToolsConfig>,
    /// `web_fetch` and `web_search`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub web: Option<crate::web::WebToolsConfig>,
    /// Which sessions the session tools see (`visibility`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sessions: Option<crate::team::SessionToolsConfig>,
    /// Whether agents may reach each other's sessions (off by default).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_to_agent: Option<crate::team::AgentToAgentConfig>,
    /// The `message` tool: which chats it may write to (`allowTargets`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<crate::message_tool::MessageToolConfig>,
}

/// `tools.media`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct MediaToolsConfig {
    /// Voice notes and audio files are transcribed here; without it they are only named.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub audio: Option<AudioTranscriptionConfig>,
}

/// `tools.media.audio`: an OpenAI-compatible `/audio/transcriptions` endpoint.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AudioTranscriptionConfig {
    /// `openai` or `groq` (their base URL and key from the environment), or any name
    /// with `baseUrl`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider: Option<String>,
    /// e.g. `whisper-1`, `gpt-4o-mini-transcribe`, `whisper-large-v3-turbo`.
    pub model: String,
    /// The API's base URL (`/audio/transcriptions` is appended); the provider's by default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_url: Option<String>,
    /// The key; the provider's key from the environment by default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_key: Option<String>,
    /// Longest a transcription may take, in seconds (default 60).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_seconds: Option<u64>,
}

/// Tool profiles.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ToolProfileName {
    Full,
    Coding,
    Messaging,
    Minimal,
}

/// `tools.exec`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ExecConfig {
    /// deny, allowlist or full (default full for the CLI's own agent, as OpenClaw).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub security: Option<ExecSecurityName>,
    /// Program names `allowlist` permits.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub allow: Vec<String>,
    /// Whether a backgrounded command's exit is queued for its session as a system event
    /// and wakes the agent (a heartbeat) (default true, as OpenClaw). A call's own
    /// `notifyOnExit` wins over it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub notify_on_exit: Option<bool>,
    /// When a command waits for the owner's approval (OpenClaw's `ask`): `off` (default),
    /// `on-miss` (when the allowlist and `exec-approvals.json` do not match it) or `always`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ask: Option<ExecAskName>,
    /// How long a command waits for an approval before it is denied, in ms (default
    /// 1800000, OpenClaw's 30 minutes).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approval_timeout_ms: Option<u64>,
    /// Run commands in a sandbox: "off" (default), "bwrap", "landlock", or
    /// `{ mode: off|non-main|all, backend, network, readOnly, readWrite }`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sandbox: Option<crate::sandbox::SandboxSetting>,
}

/// `tools.exec.ask`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum ExecAskName {
    Off,
    OnMiss,
    Always,
}

/// `tools.exec.security`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ExecSecurityName {
    Deny,
    Allowlist,
    Full,
}

/// `skills`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SkillsConfig {
    #[serde(default)]
    pub load: SkillsLoad,
}

/// `skills.load`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SkillsLoad {
    /// Extra skill directories (each holding skill directories, or itself one skill's
    /// directory or SKILL.md), lowest precedence.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub extra_dirs: Vec<String>,
}

/// `roles`: which worker role (capability profile) a session runs under. Resolution order
/// (pi-gateway's): a Discord guild's role, then the Discord channel's; a Telegram group's,
/// then the Telegram channel's; generally a group's, then its channel's; then `default`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RolesConfig {
    /// The role of everything not matched below.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<String>,
    /// Per channel id.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub channels: BTreeMap<String, ChannelRoles>,
    /// What each role's RPC workers are started with (tools, prompts, skills, pi's agent
    /// directory), by role name.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub capabilities: BTreeMap<String, crate::roles::RoleCapabilities>,
}

/// Roles of one channel.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ChannelRoles {
    /// The channel's role.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role: Option<String>,
    /// Roles by group: Discord guild id, Telegram chat id, Slack team id, Feishu chat id.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub groups: BTreeMap<String, String>,
}

//! pincer-config: the typed `$PINCER_HOME/pincer.json5`. Every key is a Rust type (the JSON
//! schema is derived from them), loading is strict (an unknown key, a wrong type or a bad
//! value is an error naming the key, the file and the line), `${ENV}` references are
//! substituted as OpenClaw does, and writes are checked first, then atomic and 0600.
//!
//! Comments in the file are not preserved by [`set`]/[`unset`] + [`save`]: json5 parses to
//! a plain tree with no comment-keeping round trip, and the file is rewritten as JSON.

mod automation;
mod channels;
mod edit;
mod env_subst;
mod error;
mod gateway;
mod keypath;
mod load;
mod locate;
mod mcp;
mod memory;
mod message_tool;
pub mod origin;
mod paths;
mod queue_mode;
mod raw;
mod redact;
mod roles;
mod runner;
mod sandbox;
mod schema;
mod streaming;
mod strict_de;
mod team;
pub mod types;
mod validate;
mod web;

pub use automation::{
    ActiveHoursConfig, CronConfig, CronRetryConfig, HeartbeatConfig, parse_clock_minutes,
    parse_heartbeat_every,
};
pub use channels::{
    AccessFields, ChannelSection, ChannelsConfig, DiscordConfig, DmPolicyName, FeishuConfig,
    FeishuConnectionMode, GroupConfig, GroupPolicyName, PairingNotifyConfig, SlackConfig,
    TelegramConfig, enabled_accounts,
};
pub use edit::{get, parse_cli_value, set, unset};
pub use error::{ConfigError, ConfigIssue, SourcePosition};
pub use gateway::{
    ControlUiConfig, DEFAULT_GATEWAY_PORT, GatewayAuthConfig, GatewayBind, GatewayConfig,
    GatewayHttpConfig, GatewayRunSettings, InvalidBind,
};
pub use keypath::{KeyPath, PathSegment};
pub use load::{LoadedConfig, MAX_CONFIG_BYTES, ParsedConfig, load, parse_str, read_raw, save};
pub use locate::locate;
pub use mcp::{
    DEFAULT_MCP_IDLE_TIMEOUT_MS, DEFAULT_MCP_STARTUP_TIMEOUT_MS, DEFAULT_MCP_TOOL_TIMEOUT_MS,
    McpConfig, McpOAuthConfig, McpServerConfig, is_valid_mcp_server_name,
};
pub use memory::{
    CompactionConfig, MemoryChunkingConfig, MemoryDecayConfig, MemoryFlushConfig,
    MemoryHybridConfig, MemoryLocalConfig, MemoryMmrConfig, MemoryProviderName, MemoryQueryConfig,
    MemoryRemoteConfig, MemorySearchConfig, MemorySyncConfig,
};
pub use message_tool::MessageToolConfig;
pub use paths::{CONFIG_FILE_NAME, config_path, pincer_home};
pub use queue_mode::{QUEUE_MODE_NAMES, QueueMode, UnknownQueueMode};
pub use raw::{MAX_DEPTH, parse_raw};
pub use redact::{is_secret_key, mask, redact, redacted_get};
pub use roles::RoleCapabilities;
pub use runner::{AgentRunnerConfig, PoolConfig, RunnerKind};
pub use sandbox::{
    ResolvedSandbox, SandboxBackendName, SandboxConfig, SandboxModeName, SandboxSetting,
};
pub use schema::schema_json;
pub use streaming::{
    BlockStreamingBreak, BlockStreamingChunkConfig, BlockStreamingCoalesceConfig,
    BlockStreamingDefault, BreakPreference, StreamingFields,
};
pub use team::{
    AgentToAgentConfig, DelegationConfig, SessionAgentToAgentConfig, SessionToolsConfig,
    SessionToolsVisibility, SubagentsConfig,
};
pub use types::*;
pub use validate::{MAIN_AGENT_ID, is_valid_agent_id};
pub use web::{
    BrowserConfig, WebFetchConfig, WebSearchConfig, WebSearchProviderName, WebToolsConfig,
};

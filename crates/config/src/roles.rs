//! `roles.capabilities`: what a worker of each role is started with on the `rpc` runner
//! (pi-gateway's `roles.capabilities` and capability profile). A role is resolved per
//! session from `roles.default` / `roles.channels` (see `RolesConfig`); its entry here
//! becomes the worker's hard flags (`--tools`, `--system-prompt`, `--append-system-prompt`),
//! its resources (`--skill`, `--extension`, `--prompt-template`) and its environment
//! (`PI_CODING_AGENT_DIR`), so workers of different roles are never shared.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// `roles.capabilities.<role>`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RoleCapabilities {
    /// The tools the role's workers may use (pi's `--tools`, e.g. `["read", "bash"]`);
    /// every tool when empty.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<String>,
    /// Replaces the worker's system prompt (pi's `--system-prompt`: text or a file).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system_prompt: Option<String>,
    /// Appended to the system prompt, before the gateway's protocol sections (pi's
    /// `--append-system-prompt`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub append_system_prompt: Option<String>,
    /// Skill files or directories the workers load (pi's `--skill`). A worker that has more
    /// skills than a session asks for can still serve it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub skills: Vec<String>,
    /// pi extensions (`--extension`); Pincer's own workers have none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub extensions: Vec<String>,
    /// pi prompt templates (`--prompt-template`); Pincer's own workers have none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub prompt_templates: Vec<String>,
    /// pi's agent directory for the role's workers (`PI_CODING_AGENT_DIR`: its settings,
    /// auth and models); the gateway's environment's when unset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_dir: Option<String>,
}

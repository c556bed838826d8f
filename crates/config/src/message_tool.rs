//! `tools.message`: the `message` tool's gate. An agent may message the chats that have
//! talked to it (a session of it last heard from them); `allowTargets` names more.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// `tools.message`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct MessageToolConfig {
    /// Chats the `message` tool may write to besides the ones that have talked to the
    /// agent: `"<channel>:<chatId>"` (one chat, e.g. `"telegram:123456"`), `"<channel>:*"`
    /// (any chat of a channel) or `"*"` (anywhere). Default: none, so only chats that have
    /// talked to the agent. `pincer message send` and the WebSocket `send` are not limited.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub allow_targets: Vec<String>,
}

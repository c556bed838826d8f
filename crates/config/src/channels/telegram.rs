//! `channels.telegram`: a Telegram bot (Bot API, long polling).

use std::collections::BTreeMap;
use std::num::NonZeroUsize;

use pincer_base::Secret;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::streaming::{BlockStreamingCoalesceConfig, StreamingFields};

use super::{AccessFields, ChannelSection, DmPolicyName, GroupConfig, GroupPolicyName};

/// `channels.telegram` (and each of its `accounts`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TelegramConfig {
    /// Off without deleting the settings (default on when a token is set).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enabled: Option<bool>,
    /// From @BotFather, e.g. `"${TELEGRAM_BOT_TOKEN}"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bot_token: Option<Secret>,
    /// The Bot API's address (default `https://api.telegram.org`): a local Bot API server,
    /// a proxy, or a test fake.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_base_url: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dm_policy: Option<DmPolicyName>,
    /// Telegram user ids (or `@usernames`) allowed to DM the agent; `"*"` with `open`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allow_from: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group_policy: Option<GroupPolicyName>,
    /// Group chat ids (or sender ids) the agent answers in under `allowlist`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group_allow_from: Option<Vec<String>>,
    /// Per group chat id, or `"*"` for all.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub groups: BTreeMap<String, GroupConfig>,
    /// Largest inbound file taken, in MB (default 20, the Bot API's download limit).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub media_max_mb: Option<u64>,
    /// Replies sent in blocks as they stream (`true`) or whole (`false`); unset:
    /// `agents.defaults.blockStreamingDefault`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub block_streaming: Option<bool>,
    /// Overrides `agents.defaults.blockStreamingCoalesce` here.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub block_streaming_coalesce: Option<BlockStreamingCoalesceConfig>,
    /// The most chars of one streamed message (default 4000).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text_chunk_limit: Option<NonZeroUsize>,
    /// Further bots, by account id; each field they leave out comes from the channel.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub accounts: BTreeMap<String, TelegramConfig>,
}

impl ChannelSection for TelegramConfig {
    const NAME: &'static str = "telegram";
    const OWN_KEYS: &'static [&'static str] = &["botToken"];

    fn has_credentials(&self) -> bool {
        self.bot_token.is_some()
    }

    fn enabled(&self) -> Option<bool> {
        self.enabled
    }

    fn accounts(&self) -> &BTreeMap<String, Self> {
        &self.accounts
    }

    fn streaming(&self) -> StreamingFields {
        StreamingFields {
            block_streaming: self.block_streaming,
            block_streaming_coalesce: self.block_streaming_coalesce,
            text_chunk_limit: self.text_chunk_limit,
        }
    }

    fn access(&self) -> AccessFields<'_> {
        AccessFields {
            dm_policy: self.dm_policy,
            allow_from: self.allow_from.as_deref(),
            group_policy: self.group_policy,
            group_allow_from: self.group_allow_from.as_deref(),
            groups: &self.groups,
        }
    }
}

//! `channels.slack`: a Slack app (Socket Mode for events, the Web API for replies).

use std::collections::BTreeMap;
use std::num::NonZeroUsize;

use pincer_base::Secret;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::streaming::{BlockStreamingCoalesceConfig, StreamingFields};

use super::{AccessFields, ChannelSection, DmPolicyName, GroupConfig, GroupPolicyName};

/// `channels.slack` (and each of its `accounts`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SlackConfig {
    /// Off without deleting the settings (default on when tokens are set).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enabled: Option<bool>,
    /// The bot token (`xoxb-…`, "OAuth & Permissions"), e.g. `"${SLACK_BOT_TOKEN}"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bot_token: Option<Secret>,
    /// The app-level token with `connections:write` (`xapp-…`, "Basic Information"),
    /// which opens Socket Mode connections, e.g. `"${SLACK_APP_TOKEN}"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub app_token: Option<Secret>,
    /// The Web API's address (default `https://slack.com/api`): a proxy or a test fake.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_base_url: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dm_policy: Option<DmPolicyName>,
    /// Slack user ids (`U…`) allowed to DM the agent; `"*"` with `open`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allow_from: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group_policy: Option<GroupPolicyName>,
    /// Channel ids (`C…`/`G…`), workspace (team) ids (`T…`) or user ids the agent answers
    /// in under `allowlist`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group_allow_from: Option<Vec<String>>,
    /// Per channel id, or `"*"` for all.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub groups: BTreeMap<String, GroupConfig>,
    /// Largest inbound file taken, in MB (default 20).
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
    /// Further apps, by account id; each field they leave out comes from the channel.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub accounts: BTreeMap<String, SlackConfig>,
}

impl ChannelSection for SlackConfig {
    const NAME: &'static str = "slack";
    const OWN_KEYS: &'static [&'static str] = &["botToken", "appToken"];

    fn has_credentials(&self) -> bool {
        self.bot_token.is_some() || self.app_token.is_some()
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

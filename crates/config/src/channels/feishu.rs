//! `channels.feishu`: a Feishu (飞书) or Lark app bot — events over the long connection
//! (default) or HTTP callbacks, replies through the Open API.

use std::collections::BTreeMap;
use std::num::NonZeroUsize;

use pincer_base::Secret;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::streaming::{BlockStreamingCoalesceConfig, StreamingFields};

use super::{AccessFields, ChannelSection, DmPolicyName, GroupConfig, GroupPolicyName};

/// How events reach the gateway.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum FeishuConnectionMode {
    /// The long connection (WebSocket) the gateway opens: no public URL needed (the default).
    #[default]
    Websocket,
    /// Feishu POSTs events to `webhookHost:webhookPort/webhookPath` (behind your HTTPS
    /// reverse proxy).
    Webhook,
}

/// `channels.feishu` (and each of its `accounts`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct FeishuConfig {
    /// Off without deleting the settings (default on when app credentials are set).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enabled: Option<bool>,
    /// The app's App ID (`cli_…`, "Credentials & Basic Info").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub app_id: Option<String>,
    /// The app's App Secret, e.g. `"${FEISHU_APP_SECRET}"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub app_secret: Option<Secret>,
    /// `"feishu"` (open.feishu.cn, the default), `"lark"` (open.larksuite.com, Lark
    /// international), or a base URL (a proxy or a test fake).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub domain: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connection_mode: Option<FeishuConnectionMode>,
    /// Webhook mode: the address to listen on (default `127.0.0.1`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub webhook_host: Option<String>,
    /// Webhook mode: the port (default 3000).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub webhook_port: Option<u16>,
    /// Webhook mode: the path (default `/feishu/events`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub webhook_path: Option<String>,
    /// "Events & Callbacks → Encryption Strategy": the Verification Token events carry.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verification_token: Option<Secret>,
    /// The Encrypt Key: events arrive encrypted and signed (checked) when set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub encrypt_key: Option<Secret>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dm_policy: Option<DmPolicyName>,
    /// Users' open ids (`ou_…`) allowed to DM the agent; `"*"` with `open`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allow_from: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group_policy: Option<GroupPolicyName>,
    /// Group chat ids (`oc_…`) or sender open ids the agent answers in under `allowlist`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group_allow_from: Option<Vec<String>>,
    /// Per group chat id, or `"*"` for all.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub groups: BTreeMap<String, GroupConfig>,
    /// Largest inbound file taken, in MB (default 30).
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
    pub accounts: BTreeMap<String, FeishuConfig>,
}

impl ChannelSection for FeishuConfig {
    const NAME: &'static str = "feishu";
    // A second app has its own credentials and, in webhook mode, its own port.
    const OWN_KEYS: &'static [&'static str] = &[
        "appId",
        "appSecret",
        "verificationToken",
        "encryptKey",
        "webhookPort",
    ];

    fn has_credentials(&self) -> bool {
        self.app_id.is_some() || self.app_secret.is_some()
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

//! `channels`: the chat apps the gateway connects to, in OpenClaw's shapes — credentials,
//! where each platform's API is (so tests and proxies can point elsewhere), and who may
//! talk to the agent: `dmPolicy` / `allowFrom` for direct messages, `groupPolicy` /
//! `groupAllowFrom` / `requireMention` / `groups` for groups. A channel may have several
//! bot accounts (`accounts`), each overriding the channel's fields.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::keypath::KeyPath;

/// `channels`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ChannelsConfig {
    /// Telegram (Bot API, long polling).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub telegram: Option<TelegramConfig>,
    /// Discord (gateway WebSocket + REST).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub discord: Option<DiscordConfig>,
    /// Where the owner is told about new pairing requests.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pairing_notify: Option<PairingNotifyConfig>,
}

/// `channels.pairingNotify`: a chat of one of the configured channels.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PairingNotifyConfig {
    /// `telegram`, …
    pub channel: String,
    /// The chat id (for Telegram, your own user id is your private chat with the bot).
    pub to: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub account_id: Option<String>,
}

/// `dmPolicy`: who may message the agent directly.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum DmPolicyName {
    /// Strangers get a pairing code the owner approves (the default).
    #[default]
    Pairing,
    /// Only `allowFrom`; strangers get no answer at all.
    Allowlist,
    /// Everyone; needs `"*"` in `allowFrom` to say so explicitly.
    Open,
    /// Nobody.
    Disabled,
}

/// `groupPolicy`: which groups the agent answers in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum GroupPolicyName {
    /// Any group the bot is in.
    Open,
    /// Groups (or senders) in `groupAllowFrom` (the default).
    #[default]
    Allowlist,
    Disabled,
}

/// `groups.<id>`: one group's settings (`"*"`: every group's).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct GroupConfig {
    /// Answer only when mentioned or replied to (default true).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub require_mention: Option<bool>,
}

/// `channels.telegram` (and each of its `accounts`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TelegramConfig {
    /// Off without deleting the settings (default on when a token is set).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enabled: Option<bool>,
    /// From @BotFather, e.g. `"${TELEGRAM_BOT_TOKEN}"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bot_token: Option<String>,
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
    /// Further bots, by account id; each field they leave out comes from the channel.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub accounts: BTreeMap<String, TelegramConfig>,
}

/// `channels.discord` (and each of its `accounts`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DiscordConfig {
    /// Off without deleting the settings (default on when a token is set).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enabled: Option<bool>,
    /// The bot token from the Developer Portal, e.g. `"${DISCORD_BOT_TOKEN}"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token: Option<String>,
    /// Discord's address (default `https://discord.com`; the REST API is under `/api/v10`,
    /// the gateway URL comes from `/gateway/bot`): a proxy or a test fake.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_base_url: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dm_policy: Option<DmPolicyName>,
    /// Discord user ids allowed to DM the agent; `"*"` with `open`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allow_from: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group_policy: Option<GroupPolicyName>,
    /// Guild channel ids (or guild ids, or sender ids) the agent answers in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group_allow_from: Option<Vec<String>>,
    /// Per channel id, or `"*"` for all.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub groups: BTreeMap<String, GroupConfig>,
    /// Largest inbound attachment taken, in MB (default 8).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub media_max_mb: Option<u64>,
    /// Further bots, by account id; each field they leave out comes from the channel.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub accounts: BTreeMap<String, DiscordConfig>,
}

pub(crate) fn check_channels(channels: &ChannelsConfig, fail: &mut impl FnMut(KeyPath, String)) {
    let path = KeyPath::root().key("channels");
    if let Some(telegram) = &channels.telegram {
        let at = path.key("telegram");
        check_access(
            telegram.dm_policy,
            telegram.allow_from.as_deref(),
            &at,
            fail,
        );
        for (id, account) in &telegram.accounts {
            let at = at.key("accounts").key(id);
            if !account.accounts.is_empty() {
                fail(at.key("accounts"), "accounts do not nest".to_owned());
            }
            let policy = account.dm_policy.or(telegram.dm_policy);
            let allow = account
                .allow_from
                .as_deref()
                .or(telegram.allow_from.as_deref());
            check_access(policy, allow, &at, fail);
        }
    }
    if let Some(discord) = &channels.discord {
        let at = path.key("discord");
        check_access(discord.dm_policy, discord.allow_from.as_deref(), &at, fail);
        for (id, account) in &discord.accounts {
            let at = at.key("accounts").key(id);
            if !account.accounts.is_empty() {
                fail(at.key("accounts"), "accounts do not nest".to_owned());
            }
            let policy = account.dm_policy.or(discord.dm_policy);
            let allow = account
                .allow_from
                .as_deref()
                .or(discord.allow_from.as_deref());
            check_access(policy, allow, &at, fail);
        }
    }
}

/// `open` must say `"*"`: an open bot is a choice, never an accident.
fn check_access(
    policy: Option<DmPolicyName>,
    allow_from: Option<&[String]>,
    at: &KeyPath,
    fail: &mut impl FnMut(KeyPath, String),
) {
    if policy == Some(DmPolicyName::Open)
        && !allow_from.is_some_and(|list| list.iter().any(|e| e == "*"))
    {
        fail(
            at.key("dmPolicy"),
            "\"open\" lets anyone talk to the agent: add \"*\" to allowFrom to confirm, or use \"pairing\"".to_owned(),
        );
    }
}

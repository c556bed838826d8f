//! `channels`: the chat apps the gateway connects to, in OpenClaw's shapes — credentials,
//! where each platform's API is (so tests and proxies can point elsewhere), and who may
//! talk to the agent: `dmPolicy` / `allowFrom` for direct messages, `groupPolicy` /
//! `groupAllowFrom` / `requireMention` / `groups` for groups. A channel may have several
//! bot accounts (`accounts`), each overriding the channel's fields.

#[macro_use]
mod section_macro;

mod discord;
mod feishu;
mod slack;
mod telegram;

pub use discord::DiscordConfig;
pub use feishu::{FeishuConfig, FeishuConnectionMode};
pub use slack::SlackConfig;
pub use telegram::TelegramConfig;

use std::collections::BTreeMap;

use pincer_base::Secret;
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;

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
    /// Slack (Socket Mode + Web API).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slack: Option<SlackConfig>,
    /// Feishu / Lark (long connection or HTTP callbacks + Open API).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub feishu: Option<FeishuConfig>,
    /// Where the owner is told about new pairing requests.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pairing_notify: Option<PairingNotifyConfig>,
}

impl ChannelsConfig {
    /// The names of the configured channels, in a fixed order.
    pub fn configured(&self) -> Vec<&'static str> {
        [
            self.telegram.is_some().then_some(TelegramConfig::NAME),
            self.discord.is_some().then_some(DiscordConfig::NAME),
            self.slack.is_some().then_some(SlackConfig::NAME),
            self.feishu.is_some().then_some(FeishuConfig::NAME),
        ]
        .into_iter()
        .flatten()
        .collect()
    }
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

/// What every channel's section has: credentials of its own, `enabled`, `accounts`, and
/// the access fields.
pub trait ChannelSection: Clone + Serialize + DeserializeOwned {
    /// The key under `channels`.
    const NAME: &'static str;
    /// Keys an account never inherits from the channel (its credentials).
    const OWN_KEYS: &'static [&'static str];
    /// Whether the channel section itself names a bot (else only its `accounts` do).
    fn has_credentials(&self) -> bool;
    fn enabled(&self) -> Option<bool>;
    fn accounts(&self) -> &BTreeMap<String, Self>;
    fn access(&self) -> AccessFields<'_>;
    /// The block-streaming keys (`blockStreaming`, `blockStreamingCoalesce`,
    /// `textChunkLimit`).
    fn streaming(&self) -> crate::streaming::StreamingFields;
}

/// The access fields of a channel or account section.
#[derive(Debug, Clone, Copy)]
pub struct AccessFields<'a> {
    pub dm_policy: Option<DmPolicyName>,
    pub allow_from: Option<&'a [String]>,
    pub group_policy: Option<GroupPolicyName>,
    pub group_allow_from: Option<&'a [String]>,
    pub groups: &'a BTreeMap<String, GroupConfig>,
}

/// Every enabled bot of a channel, with its account id: the channel's own (when it has
/// credentials), then each of its `accounts` with the fields it leaves out taken from the
/// channel (but never the channel's credentials; `groups` are merged by group id).
pub fn enabled_accounts<C: ChannelSection>(channel: &C) -> Vec<(Option<String>, C)> {
    let own = channel.has_credentials().then(|| (None, channel.clone()));
    own.into_iter()
        .chain(
            channel
                .accounts()
                .iter()
                .map(|(id, account)| (Some(id.clone()), account_view(channel, account))),
        )
        .filter(|(_, config)| config.enabled() != Some(false))
        .collect()
}

/// `account` over `channel`. Done on the serialized forms so one rule serves every
/// channel's struct; both came from the same type, so the merge deserializes back (if it
/// somehow did not, the account's own fields alone are used).
fn account_view<C: ChannelSection>(channel: &C, account: &C) -> C {
    let (Ok(Value::Object(base)), Ok(Value::Object(over))) =
        (serde_json::to_value(channel), serde_json::to_value(account))
    else {
        return account.clone();
    };
    let mut merged = base;
    merged.remove("accounts");
    for key in C::OWN_KEYS {
        merged.remove(*key);
    }
    for (key, value) in over {
        match (merged.get_mut(&key), value) {
            (Some(Value::Object(groups)), Value::Object(more)) if key == "groups" => {
                groups.extend(more);
            }
            (_, value) => {
                merged.insert(key, value);
            }
        }
    }
    serde_json::from_value(Value::Object(merged)).unwrap_or_else(|_| account.clone())
}

pub(crate) fn check_channels(channels: &ChannelsConfig, fail: &mut impl FnMut(KeyPath, String)) {
    let path = KeyPath::root().key("channels");
    if let Some(c) = &channels.telegram {
        check_section(c, &path, fail);
    }
    if let Some(c) = &channels.discord {
        check_section(c, &path, fail);
    }
    if let Some(c) = &channels.slack {
        check_section(c, &path, fail);
    }
    if let Some(c) = &channels.feishu {
        check_section(c, &path, fail);
        check_feishu(c, &path.key(FeishuConfig::NAME), fail);
    }
}

fn check_section<C: ChannelSection>(
    channel: &C,
    path: &KeyPath,
    fail: &mut impl FnMut(KeyPath, String),
) {
    let at = path.key(C::NAME);
    let access = channel.access();
    check_access(access.dm_policy, access.allow_from, &at, fail);
    for (id, account) in channel.accounts() {
        let at = at.key("accounts").key(id);
        if !account.accounts().is_empty() {
            fail(at.key("accounts"), "accounts do not nest".to_owned());
        }
        let own = account.access();
        let policy = own.dm_policy.or(access.dm_policy);
        let allow = own.allow_from.or(access.allow_from);
        check_access(policy, allow, &at, fail);
    }
}

/// Webhook mode checks what would otherwise only fail at the first event.
fn check_feishu(feishu: &FeishuConfig, at: &KeyPath, fail: &mut impl FnMut(KeyPath, String)) {
    let sections = std::iter::once((at.clone(), feishu.clone())).chain(
        feishu
            .accounts
            .iter()
            .map(|(id, a)| (at.key("accounts").key(id), account_view(feishu, a))),
    );
    for (at, section) in sections {
        if let Some(domain) = &section.domain
            && !matches!(domain.as_str(), "feishu" | "lark")
            && !domain.starts_with("http://")
            && !domain.starts_with("https://")
        {
            fail(
                at.key("domain"),
                format!(
                    "\"{domain}\" is not a domain: use \"feishu\", \"lark\" or an http(s) base URL"
                ),
            );
        }
        if section.connection_mode == Some(FeishuConnectionMode::Webhook)
            && section
                .verification_token
                .as_ref()
                .is_none_or(Secret::is_empty)
            && section.encrypt_key.as_ref().is_none_or(Secret::is_empty)
        {
            fail(
                at.key("connectionMode"),
                "\"webhook\" needs verificationToken (and best encryptKey) from the app's \"Events & Callbacks\" page, so forged events are refused".to_owned(),
            );
        }
        if let Some(path) = &section.webhook_path
            && !path.starts_with('/')
        {
            fail(at.key("webhookPath"), "must start with \"/\"".to_owned());
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

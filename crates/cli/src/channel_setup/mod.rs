//! The gateway's chat channels from the configuration: one adapter per configured bot
//! account (a channel's `accounts` each override the channel's fields), its access rules,
//! the pairing store in `$PINCER_HOME/credentials`, and where the owner hears about
//! pairing requests.

use std::collections::HashMap;
use std::time::Duration;

use anyhow::{Context as _, Result};

use pincer_config::{
    AccessFields, DiscordConfig, DmPolicyName, FeishuConfig, GroupPolicyName, SlackConfig,
    TelegramConfig,
};
use pincer_gateway::pairing::{DmPolicy, GroupPolicy, PairingStore};
use pincer_gateway::server::channel_ingress::{
    AccessSettings, ChannelEndpoint, ChannelOptions, NotifyTarget,
};

use crate::app::App;

#[cfg(feature = "discord")]
mod discord;
#[cfg(feature = "feishu")]
mod feishu;
#[cfg(feature = "slack")]
mod slack;
#[cfg(feature = "telegram")]
mod telegram;

/// The channels to start; `None` when no channel is configured.
pub fn channel_options(app: &App) -> Result<Option<ChannelOptions>> {
    let channels = &app.config.channels;
    if channels.configured().is_empty() {
        return Ok(None);
    }
    // One HTTP client (and connection pool) for every adapter.
    let client = reqwest::Client::builder()
        .connect_timeout(Duration::from_secs(10))
        .build()
        .context("cannot build the HTTP client for the chat channels")?;
    let mut endpoints = Vec::new();
    if let Some(telegram) = &channels.telegram {
        endpoints.extend(telegram_endpoints(app, telegram, &client)?);
    }
    if let Some(discord) = &channels.discord {
        endpoints.extend(discord_endpoints(app, discord, &client)?);
    }
    if let Some(slack) = &channels.slack {
        endpoints.extend(slack_endpoints(app, slack, &client)?);
    }
    if let Some(feishu) = &channels.feishu {
        endpoints.extend(feishu_endpoints(app, feishu, &client)?);
    }
    if endpoints.is_empty() {
        return Ok(None);
    }
    let pairing_notify = app
        .config
        .channels
        .pairing_notify
        .as_ref()
        .map(|n| NotifyTarget {
            channel: n.channel.clone(),
            account_id: n.account_id.clone(),
            to: n.to.clone(),
        });
    Ok(Some(ChannelOptions {
        endpoints,
        pairing: Some(pairing_store(app)),
        pairing_notify,
    }))
}

/// The pairing store of this home.
pub fn pairing_store(app: &App) -> PairingStore {
    PairingStore::new(app.home.join("credentials"))
}

/// Where adapters save received files until the ingress has routed the message and moves
/// them into the agent's workspace inbox (`pincer_turns::media_inbox`).
#[cfg_attr(
    not(any(
        feature = "telegram",
        feature = "discord",
        feature = "slack",
        feature = "feishu"
    )),
    allow(dead_code)
)]
fn media_staging_dir(home: &std::path::Path) -> std::path::PathBuf {
    home.join("media").join("staging")
}

#[cfg_attr(
    not(any(
        feature = "telegram",
        feature = "discord",
        feature = "slack",
        feature = "feishu"
    )),
    allow(dead_code)
)]
fn required_token(
    token: Option<&str>,
    channel: &str,
    account: Option<&str>,
    field: &str,
    source: &str,
) -> Result<String> {
    let at = match account {
        Some(id) => format!("channels.{channel}.accounts.{id}"),
        None => format!("channels.{channel}"),
    };
    token
        .filter(|t| !t.trim().is_empty())
        .map(str::to_owned)
        .with_context(|| format!("{at}.{field} is empty: set it to {source}"))
}

/// The gateway's access rules from a section's `dmPolicy`, `allowFrom`, `groupPolicy`,
/// `groupAllowFrom` and `groups` (the same fields on every channel).
#[cfg_attr(
    not(any(
        feature = "telegram",
        feature = "discord",
        feature = "slack",
        feature = "feishu"
    )),
    allow(dead_code)
)]
fn access_settings(access: AccessFields<'_>) -> AccessSettings {
    let groups: HashMap<String, bool> = access
        .groups
        .iter()
        .filter_map(|(id, g)| g.require_mention.map(|m| (id.clone(), m)))
        .collect();
    AccessSettings {
        dm_policy: match access.dm_policy.unwrap_or_default() {
            DmPolicyName::Pairing => DmPolicy::Pairing,
            DmPolicyName::Allowlist => DmPolicy::Allowlist,
            DmPolicyName::Open => DmPolicy::Open,
            DmPolicyName::Disabled => DmPolicy::Disabled,
        },
        allow_from: access
            .allow_from
            .map(<[String]>::to_vec)
            .unwrap_or_default(),
        group_policy: match access.group_policy.unwrap_or_default() {
            GroupPolicyName::Open => GroupPolicy::Open,
            GroupPolicyName::Allowlist => GroupPolicy::Allowlist,
            GroupPolicyName::Disabled => GroupPolicy::Disabled,
        },
        group_allow_from: access
            .group_allow_from
            .map(<[String]>::to_vec)
            .unwrap_or_default(),
        require_mention: true,
        groups,
    }
}

/// The adapters of one channel, or an error when this build left the channel out.
macro_rules! channel_endpoints {
    ($fn_name:ident, $feature:literal, $module:ident, $config:ty, $label:literal) => {
        fn $fn_name(
            app: &App,
            config: &$config,
            client: &reqwest::Client,
        ) -> Result<Vec<ChannelEndpoint>> {
            #[cfg(feature = $feature)]
            {
                $module::endpoints(app, config, client)
            }
            #[cfg(not(feature = $feature))]
            {
                let _ = (app, config, client);
                anyhow::bail!(concat!(
                    "channels.",
                    $feature,
                    " is configured, but this build has no ",
                    $label,
                    " support (cargo feature `",
                    $feature,
                    "`)"
                ))
            }
        }
    };
}

channel_endpoints!(
    telegram_endpoints,
    "telegram",
    telegram,
    TelegramConfig,
    "Telegram"
);
channel_endpoints!(
    discord_endpoints,
    "discord",
    discord,
    DiscordConfig,
    "Discord"
);
channel_endpoints!(slack_endpoints, "slack", slack, SlackConfig, "Slack");
channel_endpoints!(
    feishu_endpoints,
    "feishu",
    feishu,
    FeishuConfig,
    "Feishu/Lark"
);

//! The gateway's chat channels from the configuration: one adapter per configured bot
//! account (a channel's `accounts` each override the channel's fields), its access rules,
//! the pairing store in `$PINCER_HOME/credentials`, and where the owner hears about
//! pairing requests.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context as _, Result};
use std::collections::BTreeMap;

use pincer_config::{DiscordConfig, DmPolicyName, GroupConfig, GroupPolicyName, TelegramConfig};
use pincer_gateway::channels::supervisor::Backoff;
use pincer_gateway::pairing::{DmPolicy, GroupPolicy, PairingStore};
use pincer_gateway::server::channel_ingress::{
    AccessSettings, ChannelEndpoint, ChannelOptions, NotifyTarget,
};

use crate::app::App;

/// The channels to start; `None` when no channel is configured.
pub fn channel_options(app: &App) -> Result<Option<ChannelOptions>> {
    let mut endpoints = Vec::new();
    if let Some(telegram) = &app.config.channels.telegram {
        endpoints.extend(telegram_endpoints(app, telegram)?);
    }
    if let Some(discord) = &app.config.channels.discord {
        endpoints.extend(discord_endpoints(app, discord)?);
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

#[cfg(feature = "telegram")]
fn telegram_endpoints(app: &App, telegram: &TelegramConfig) -> Result<Vec<ChannelEndpoint>> {
    use pincer_channels::telegram::{
        DEFAULT_API_BASE, DEFAULT_MEDIA_MAX_BYTES, TelegramAdapter, TelegramSettings,
    };
    let client = reqwest::Client::builder()
        .connect_timeout(Duration::from_secs(10))
        .build()
        .context("cannot build the HTTP client for Telegram")?;
    let mut accounts: Vec<(Option<String>, TelegramConfig)> = Vec::new();
    if telegram.bot_token.is_some() {
        accounts.push((None, telegram.clone()));
    }
    for (id, account) in &telegram.accounts {
        accounts.push((Some(id.clone()), merged(telegram, account)));
    }
    let mut out = Vec::new();
    for (account_id, config) in accounts {
        if config.enabled == Some(false) {
            continue;
        }
        let where_ = match &account_id {
            Some(id) => format!("channels.telegram.accounts.{id}"),
            None => "channels.telegram".to_owned(),
        };
        let token = config
            .bot_token
            .clone()
            .filter(|t| !t.trim().is_empty())
            .with_context(|| {
                format!("{where_}.botToken is empty: set it to the token @BotFather gave you")
            })?;
        let settings = TelegramSettings {
            account_id,
            bot_token: token,
            api_base: config
                .api_base_url
                .clone()
                .unwrap_or_else(|| DEFAULT_API_BASE.to_owned()),
            state_dir: app.home.join("channels"),
            media_dir: app.home.join("media").join("inbound"),
            media_max_bytes: config
                .media_max_mb
                .map_or(DEFAULT_MEDIA_MAX_BYTES, |mb| mb * 1024 * 1024),
            poll_timeout: poll_timeout(app),
        };
        out.push(ChannelEndpoint {
            adapter: Arc::new(TelegramAdapter::new(settings, client.clone())),
            access: access(&config),
            backoff: Backoff::default(),
        });
    }
    Ok(out)
}

#[cfg(not(feature = "telegram"))]
fn telegram_endpoints(_app: &App, _telegram: &TelegramConfig) -> Result<Vec<ChannelEndpoint>> {
    anyhow::bail!(
        "channels.telegram is configured, but this build has no Telegram support (cargo feature `telegram`)"
    )
}

/// How long a Telegram long poll waits (`PINCER_TELEGRAM_POLL_SECS`, for tests; 30 s).
fn poll_timeout(app: &App) -> Duration {
    app.env
        .var("PINCER_TELEGRAM_POLL_SECS")
        .and_then(|v| v.parse().ok())
        .map_or(Duration::from_secs(30), Duration::from_secs)
}

/// An account's settings: its own fields, else the channel's.
fn merged(channel: &TelegramConfig, account: &TelegramConfig) -> TelegramConfig {
    let mut groups = channel.groups.clone();
    groups.extend(account.groups.clone());
    TelegramConfig {
        enabled: account.enabled.or(channel.enabled),
        bot_token: account.bot_token.clone(),
        api_base_url: account
            .api_base_url
            .clone()
            .or_else(|| channel.api_base_url.clone()),
        dm_policy: account.dm_policy.or(channel.dm_policy),
        allow_from: account
            .allow_from
            .clone()
            .or_else(|| channel.allow_from.clone()),
        group_policy: account.group_policy.or(channel.group_policy),
        group_allow_from: account
            .group_allow_from
            .clone()
            .or_else(|| channel.group_allow_from.clone()),
        groups,
        media_max_mb: account.media_max_mb.or(channel.media_max_mb),
        accounts: Default::default(),
    }
}

fn access(config: &TelegramConfig) -> AccessSettings {
    access_settings(
        config.dm_policy,
        config.allow_from.as_deref(),
        config.group_policy,
        config.group_allow_from.as_deref(),
        &config.groups,
    )
}

/// The gateway's access rules from a channel's `dmPolicy`, `allowFrom`, `groupPolicy`,
/// `groupAllowFrom` and `groups` (the same fields on every channel).
fn access_settings(
    dm_policy: Option<DmPolicyName>,
    allow_from: Option<&[String]>,
    group_policy: Option<GroupPolicyName>,
    group_allow_from: Option<&[String]>,
    groups: &BTreeMap<String, GroupConfig>,
) -> AccessSettings {
    let groups: HashMap<String, bool> = groups
        .iter()
        .filter_map(|(id, g)| g.require_mention.map(|m| (id.clone(), m)))
        .collect();
    AccessSettings {
        dm_policy: match dm_policy.unwrap_or_default() {
            DmPolicyName::Pairing => DmPolicy::Pairing,
            DmPolicyName::Allowlist => DmPolicy::Allowlist,
            DmPolicyName::Open => DmPolicy::Open,
            DmPolicyName::Disabled => DmPolicy::Disabled,
        },
        allow_from: allow_from.map(<[String]>::to_vec).unwrap_or_default(),
        group_policy: match group_policy.unwrap_or_default() {
            GroupPolicyName::Open => GroupPolicy::Open,
            GroupPolicyName::Allowlist => GroupPolicy::Allowlist,
            GroupPolicyName::Disabled => GroupPolicy::Disabled,
        },
        group_allow_from: group_allow_from.map(<[String]>::to_vec).unwrap_or_default(),
        require_mention: true,
        groups,
    }
}

#[cfg(feature = "discord")]
fn discord_endpoints(app: &App, discord: &DiscordConfig) -> Result<Vec<ChannelEndpoint>> {
    use pincer_channels::discord::{
        DEFAULT_API_BASE, DEFAULT_MEDIA_MAX_BYTES, DiscordAdapter, DiscordSettings,
    };
    let client = reqwest::Client::builder()
        .connect_timeout(Duration::from_secs(10))
        .build()
        .context("cannot build the HTTP client for Discord")?;
    let mut accounts: Vec<(Option<String>, DiscordConfig)> = Vec::new();
    if discord.token.is_some() {
        accounts.push((None, discord.clone()));
    }
    for (id, account) in &discord.accounts {
        accounts.push((Some(id.clone()), merged_discord(discord, account)));
    }
    let mut out = Vec::new();
    for (account_id, config) in accounts {
        if config.enabled == Some(false) {
            continue;
        }
        let where_ = match &account_id {
            Some(id) => format!("channels.discord.accounts.{id}"),
            None => "channels.discord".to_owned(),
        };
        let token = config
            .token
            .clone()
            .filter(|t| !t.trim().is_empty())
            .with_context(|| {
                format!("{where_}.token is empty: set it to the bot token from the Discord Developer Portal")
            })?;
        let settings = DiscordSettings {
            account_id,
            token,
            api_base: config
                .api_base_url
                .clone()
                .unwrap_or_else(|| DEFAULT_API_BASE.to_owned()),
            media_dir: app.home.join("media").join("inbound"),
            media_max_bytes: config
                .media_max_mb
                .map_or(DEFAULT_MEDIA_MAX_BYTES, |mb| mb * 1024 * 1024),
        };
        out.push(ChannelEndpoint {
            adapter: Arc::new(DiscordAdapter::new(settings, client.clone())),
            access: access_settings(
                config.dm_policy,
                config.allow_from.as_deref(),
                config.group_policy,
                config.group_allow_from.as_deref(),
                &config.groups,
            ),
            backoff: Backoff::default(),
        });
    }
    Ok(out)
}

#[cfg(not(feature = "discord"))]
fn discord_endpoints(_app: &App, _discord: &DiscordConfig) -> Result<Vec<ChannelEndpoint>> {
    anyhow::bail!(
        "channels.discord is configured, but this build has no Discord support (cargo feature `discord`)"
    )
}

/// A Discord account's settings: its own fields, else the channel's.
#[cfg_attr(not(feature = "discord"), allow(dead_code))]
fn merged_discord(channel: &DiscordConfig, account: &DiscordConfig) -> DiscordConfig {
    let mut groups = channel.groups.clone();
    groups.extend(account.groups.clone());
    DiscordConfig {
        enabled: account.enabled.or(channel.enabled),
        token: account.token.clone(),
        api_base_url: account
            .api_base_url
            .clone()
            .or_else(|| channel.api_base_url.clone()),
        dm_policy: account.dm_policy.or(channel.dm_policy),
        allow_from: account
            .allow_from
            .clone()
            .or_else(|| channel.allow_from.clone()),
        group_policy: account.group_policy.or(channel.group_policy),
        group_allow_from: account
            .group_allow_from
            .clone()
            .or_else(|| channel.group_allow_from.clone()),
        groups,
        media_max_mb: account.media_max_mb.or(channel.media_max_mb),
        accounts: Default::default(),
    }
}

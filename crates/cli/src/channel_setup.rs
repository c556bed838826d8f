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
    let channels = &app.config.channels;
    if channels.telegram.is_none() && channels.discord.is_none() {
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
fn telegram_endpoints(
    app: &App,
    telegram: &TelegramConfig,
    client: &reqwest::Client,
) -> Result<Vec<ChannelEndpoint>> {
    use pincer_channels::telegram::{
        DEFAULT_API_BASE, DEFAULT_MEDIA_MAX_BYTES, TelegramAdapter, TelegramSettings,
    };
    let accounts = enabled_accounts(
        telegram,
        &telegram.accounts,
        telegram.bot_token.is_some(),
        merged,
        |c| c.enabled,
    );
    let mut out = Vec::new();
    for (account_id, config) in accounts {
        let token = required_token(
            config.bot_token.as_deref(),
            "telegram",
            account_id.as_deref(),
            "botToken",
            "the token @BotFather gave you",
        )?;
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

#[cfg(not(feature = "telegram"))]
fn telegram_endpoints(
    _app: &App,
    _telegram: &TelegramConfig,
    _client: &reqwest::Client,
) -> Result<Vec<ChannelEndpoint>> {
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

/// Every enabled bot of a channel, with its account id: the channel's own (when it has a
/// token), then each of its `accounts` merged over the channel's fields.
#[cfg_attr(not(any(feature = "telegram", feature = "discord")), allow(dead_code))]
fn enabled_accounts<C: Clone>(
    channel: &C,
    accounts: &BTreeMap<String, C>,
    channel_has_token: bool,
    merge: fn(&C, &C) -> C,
    enabled: fn(&C) -> Option<bool>,
) -> Vec<(Option<String>, C)> {
    let own = channel_has_token.then(|| (None, channel.clone()));
    own.into_iter()
        .chain(
            accounts
                .iter()
                .map(|(id, account)| (Some(id.clone()), merge(channel, account))),
        )
        .filter(|(_, config)| enabled(config) != Some(false))
        .collect()
}

/// A bot's token, or an error naming the key to set and where the token comes from.
#[cfg_attr(not(any(feature = "telegram", feature = "discord")), allow(dead_code))]
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
fn discord_endpoints(
    app: &App,
    discord: &DiscordConfig,
    client: &reqwest::Client,
) -> Result<Vec<ChannelEndpoint>> {
    use pincer_channels::discord::{
        DEFAULT_API_BASE, DEFAULT_MEDIA_MAX_BYTES, DiscordAdapter, DiscordSettings,
    };
    let accounts = enabled_accounts(
        discord,
        &discord.accounts,
        discord.token.is_some(),
        merged_discord,
        |c| c.enabled,
    );
    let mut out = Vec::new();
    for (account_id, config) in accounts {
        let token = required_token(
            config.token.as_deref(),
            "discord",
            account_id.as_deref(),
            "token",
            "the bot token from the Discord Developer Portal",
        )?;
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
fn discord_endpoints(
    _app: &App,
    _discord: &DiscordConfig,
    _client: &reqwest::Client,
) -> Result<Vec<ChannelEndpoint>> {
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

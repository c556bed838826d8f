//! The gateway's chat channels from the configuration: one adapter per configured bot
//! account (a channel's `accounts` each override the channel's fields), its access rules,
//! the pairing store in `$PINCER_HOME/credentials`, and where the owner hears about
//! pairing requests.

use std::time::Duration;

use anyhow::{Context as _, Result};

use pincer_config::{DiscordConfig, DmPolicyName, FeishuConfig, SlackConfig, TelegramConfig};
use pincer_gateway::pairing::{DmPolicy, PairingStore};
use pincer_gateway::server::channel_ingress::{
    AccessSettings, ChannelEndpoint, ChannelOptions, NotifyTarget,
};

use crate::gateway::run_settings::{ChannelSettings, RunSettings};

use crate::app::App;

#[cfg(feature = "discord")]
mod discord;
#[cfg(feature = "feishu")]
mod feishu;
mod shared;
#[cfg(feature = "slack")]
mod slack;
#[cfg(feature = "telegram")]
mod telegram;

/// The channels to start; `None` when no channel is configured. `settings` (a gateway
/// run's flags over `gateway.default` / `gateway.channels`) picks the channels and replaces
/// their DM policy, allow list and pairing limits.
pub fn channel_options(
    app: &App,
    settings: Option<&RunSettings>,
) -> Result<Option<ChannelOptions>> {
    let mut channels = app.config.channels.clone();
    if let Some(settings) = settings {
        let run = |name: &str| settings.channels.iter().any(|c| c == name);
        if !run("telegram") {
            channels.telegram = None;
        }
        if !run("discord") {
            channels.discord = None;
        }
        if !run("slack") {
            channels.slack = None;
        }
        if !run("feishu") {
            channels.feishu = None;
        }
    }
    let channels = &channels;
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
    if let Some(settings) = settings {
        for endpoint in &mut endpoints {
            if let Some(own) = settings.channel(endpoint.adapter.channel()) {
                overlay_access(&mut endpoint.access, own);
            }
        }
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
        pairing: Some(match settings {
            Some(settings) => with_limits(pairing_store_plain(app), settings.store_limits()),
            None => pairing_store(app),
        }),
        pairing_notify,
        debug_source: settings
            .filter(|s| s.debug.value)
            .map(|s| s.profile.value.clone().unwrap_or_else(|| "auto".to_owned())),
    }))
}

/// A run's `pairingPolicy` / `pairingAllowFrom` over the channel's `dmPolicy` /
/// `allowFrom`. lainclaw's `open` admits everyone, so it brings the `"*"` Pincer's `open`
/// asks for.
fn overlay_access(access: &mut AccessSettings, own: &ChannelSettings) {
    if let Some(allow) = &own.pairing_allow_from.value {
        access.allow_from = allow.clone();
    }
    if let Some(policy) = own.policy() {
        access.dm_policy = match policy {
            DmPolicyName::Pairing => DmPolicy::Pairing,
            DmPolicyName::Allowlist => DmPolicy::Allowlist,
            DmPolicyName::Open => DmPolicy::Open,
            DmPolicyName::Disabled => DmPolicy::Disabled,
        };
        if policy == DmPolicyName::Open && !access.allow_from.iter().any(|e| e == "*") {
            access.allow_from.push("*".to_owned());
        }
    }
}

/// The pairing store of this home, with each channel's pending TTL and maximum from the
/// config (`gateway.channels.<name>` over `gateway.default`, else 1 h and 3).
pub fn pairing_store(app: &App) -> PairingStore {
    with_limits(
        pairing_store_plain(app),
        crate::gateway::run_settings::store_limits(&app.config),
    )
}

fn pairing_store_plain(app: &App) -> PairingStore {
    PairingStore::new(app.home.join("credentials"))
}

fn with_limits(store: PairingStore, limits: Vec<(String, Duration, usize)>) -> PairingStore {
    limits
        .into_iter()
        .fold(store, |store, (channel, ttl, max)| {
            store.with_channel_limits(&channel, ttl, max)
        })
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
                shared::account_endpoints(app, config, client, $module::adapter)
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

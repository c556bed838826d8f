//! The gateway's chat channels from the configuration: one adapter per configured bot
//! account (a channel's `accounts` each override the channel's fields), its access rules,
//! the pairing store in `$PINCER_HOME/credentials`, and where the owner hears about
//! pairing requests.

use std::time::Duration;

use anyhow::{Context as _, Result};

use pincer_config::{DiscordConfig, FeishuConfig, SlackConfig, TelegramConfig};
use pincer_gateway::pairing::PairingStore;
use pincer_gateway::server::channel_ingress::{ChannelEndpoint, ChannelOptions, NotifyTarget};

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

//! `channels.discord`: one Discord adapter per bot.

use std::sync::Arc;

use anyhow::Result;
use pincer_config::DiscordConfig;
use pincer_gateway::server::channel_ingress::ChannelEndpoint;

use super::shared::{account_endpoints, media_max_bytes};
use crate::app::App;

pub(super) fn endpoints(
    app: &App,
    discord: &DiscordConfig,
    client: &reqwest::Client,
) -> Result<Vec<ChannelEndpoint>> {
    use pincer_channels::discord::{
        DEFAULT_API_BASE, DEFAULT_MEDIA_MAX_BYTES, DiscordAdapter, DiscordSettings,
    };
    account_endpoints(app, discord, |account, config| {
        let token = account.required_secret(
            config.token.as_ref(),
            "token",
            "the bot token from the Discord Developer Portal",
        )?;
        let settings = DiscordSettings {
            account_id: account.id,
            token: token.into(),
            api_base: config
                .api_base_url
                .clone()
                .unwrap_or_else(|| DEFAULT_API_BASE.to_owned()),
            media_dir: super::shared::media_staging_dir(&app.home),
            media_max_bytes: media_max_bytes(config.media_max_mb, DEFAULT_MEDIA_MAX_BYTES),
        };
        Ok(Arc::new(DiscordAdapter::new(settings, client.clone())))
    })
}

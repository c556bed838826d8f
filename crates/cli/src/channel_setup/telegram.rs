//! `channels.telegram`: one Telegram adapter per bot.

use std::sync::Arc;
use std::time::Duration;

use anyhow::Result;
use pincer_config::TelegramConfig;
use pincer_gateway::server::channel_ingress::ChannelEndpoint;

use super::shared::{account_endpoints, media_max_bytes};
use crate::app::App;

pub(super) fn endpoints(
    app: &App,
    telegram: &TelegramConfig,
    client: &reqwest::Client,
) -> Result<Vec<ChannelEndpoint>> {
    use pincer_channels::telegram::{
        DEFAULT_API_BASE, DEFAULT_MEDIA_MAX_BYTES, TelegramAdapter, TelegramSettings,
    };
    account_endpoints(app, telegram, |account, config| {
        let token = account.required_secret(
            config.bot_token.as_ref(),
            "botToken",
            "the token @BotFather gave you",
        )?;
        let settings = TelegramSettings {
            account_id: account.id,
            bot_token: token.into(),
            api_base: config
                .api_base_url
                .clone()
                .unwrap_or_else(|| DEFAULT_API_BASE.to_owned()),
            state_dir: app.home.join("channels"),
            media_dir: super::shared::media_staging_dir(&app.home),
            media_max_bytes: media_max_bytes(config.media_max_mb, DEFAULT_MEDIA_MAX_BYTES),
            poll_timeout: poll_timeout(app),
        };
        Ok(Arc::new(TelegramAdapter::new(settings, client.clone())))
    })
}

/// How long a Telegram long poll waits (`PINCER_TELEGRAM_POLL_SECS`, for tests; 30 s).
fn poll_timeout(app: &App) -> Duration {
    app.env
        .var("PINCER_TELEGRAM_POLL_SECS")
        .and_then(|v| v.parse().ok())
        .map_or(Duration::from_secs(30), Duration::from_secs)
}

//! `channels.telegram`: one Telegram adapter per bot.

use std::sync::Arc;
use std::time::Duration;

use anyhow::Result;
use pincer_channel_port::ChannelAdapter;
use pincer_channels::telegram::{
    DEFAULT_API_BASE, DEFAULT_MEDIA_MAX_BYTES, TelegramAdapter, TelegramSettings,
};
use pincer_config::TelegramConfig;

use super::shared::{AccountContext, api_base, media_max_bytes};
use crate::app::App;

/// The adapter of one bot.
pub(super) fn adapter(
    context: &AccountContext<'_>,
    config: &TelegramConfig,
) -> Result<Arc<dyn ChannelAdapter>> {
    let token = context.account.required_secret(
        config.bot_token.as_ref(),
        "botToken",
        "the token @BotFather gave you",
    )?;
    let settings = TelegramSettings {
        account_id: context.account.id.clone(),
        bot_token: token.into(),
        api_base: api_base(config.api_base_url.as_deref(), DEFAULT_API_BASE),
        state_dir: context.app.home.join("channels"),
        media_dir: context.media_dir(),
        media_max_bytes: media_max_bytes(config.media_max_mb, DEFAULT_MEDIA_MAX_BYTES),
        poll_timeout: poll_timeout(context.app),
    };
    Ok(Arc::new(TelegramAdapter::new(settings, context.client())))
}

/// How long a Telegram long poll waits (`PINCER_TELEGRAM_POLL_SECS`, for tests; 30 s).
fn poll_timeout(app: &App) -> Duration {
    app.env
        .var("PINCER_TELEGRAM_POLL_SECS")
        .and_then(|v| v.parse().ok())
        .map_or(Duration::from_secs(30), Duration::from_secs)
}

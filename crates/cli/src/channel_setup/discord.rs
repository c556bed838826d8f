//! `channels.discord`: one Discord adapter per bot.

use std::sync::Arc;

use anyhow::Result;
use pincer_channel_port::ChannelAdapter;
use pincer_channels::discord::{
    DEFAULT_API_BASE, DEFAULT_MEDIA_MAX_BYTES, DiscordAdapter, DiscordSettings,
};
use pincer_config::DiscordConfig;

use super::shared::{AccountContext, api_base, media_max_bytes};

/// The adapter of one bot.
pub(super) fn adapter(
    context: &AccountContext<'_>,
    config: &DiscordConfig,
) -> Result<Arc<dyn ChannelAdapter>> {
    let token = context.account.required_secret(
        config.token.as_ref(),
        "token",
        "the bot token from the Discord Developer Portal",
    )?;
    let settings = DiscordSettings {
        account_id: context.account.id.clone(),
        token: token.into(),
        api_base: api_base(config.api_base_url.as_deref(), DEFAULT_API_BASE),
        media_dir: context.media_dir(),
        media_max_bytes: media_max_bytes(config.media_max_mb, DEFAULT_MEDIA_MAX_BYTES),
    };
    Ok(Arc::new(DiscordAdapter::new(settings, context.client())))
}

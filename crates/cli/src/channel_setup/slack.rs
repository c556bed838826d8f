//! `channels.slack`: one Slack adapter per app (Socket Mode needs both tokens).

use std::sync::Arc;

use anyhow::Result;
use pincer_channel_port::ChannelAdapter;
use pincer_channels::slack::{
    DEFAULT_API_BASE, DEFAULT_MEDIA_MAX_BYTES, SlackAdapter, SlackSettings,
};
use pincer_config::SlackConfig;

use super::shared::{AccountContext, api_base, media_max_bytes};

/// The adapter of one app.
pub(super) fn adapter(
    context: &AccountContext<'_>,
    config: &SlackConfig,
) -> Result<Arc<dyn ChannelAdapter>> {
    let account = &context.account;
    let bot_token = account.required_secret(
        config.bot_token.as_ref(),
        "botToken",
        "the app's Bot User OAuth Token (xoxb-…, \"OAuth & Permissions\")",
    )?;
    let app_token = account.required_secret(config.app_token.as_ref(), "appToken", "an app-level token with connections:write (xapp-…, \"Basic Information\"; turn on Socket Mode)")?;
    let settings = SlackSettings {
        account_id: account.id.clone(),
        bot_token: bot_token.into(),
        app_token: app_token.into(),
        api_base: api_base(config.api_base_url.as_deref(), DEFAULT_API_BASE),
        media_dir: context.media_dir(),
        media_max_bytes: media_max_bytes(config.media_max_mb, DEFAULT_MEDIA_MAX_BYTES),
    };
    Ok(Arc::new(SlackAdapter::new(settings, context.client())))
}

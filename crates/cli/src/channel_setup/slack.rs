//! `channels.slack`: one Slack adapter per app (Socket Mode needs both tokens).

use std::sync::Arc;

use anyhow::Result;
use pincer_config::SlackConfig;
use pincer_gateway::server::channel_ingress::ChannelEndpoint;

use super::shared::{account_endpoints, media_max_bytes};
use crate::app::App;

pub(super) fn endpoints(
    app: &App,
    slack: &SlackConfig,
    client: &reqwest::Client,
) -> Result<Vec<ChannelEndpoint>> {
    use pincer_channels::slack::{
        DEFAULT_API_BASE, DEFAULT_MEDIA_MAX_BYTES, SlackAdapter, SlackSettings,
    };
    account_endpoints(app, slack, |account, config| {
        let bot_token = account.required_secret(
            config.bot_token.as_ref(),
            "botToken",
            "the app's Bot User OAuth Token (xoxb-…, \"OAuth & Permissions\")",
        )?;
        let app_token = account.required_secret(config.app_token.as_ref(), "appToken", "an app-level token with connections:write (xapp-…, \"Basic Information\"; turn on Socket Mode)")?;
        let settings = SlackSettings {
            account_id: account.id,
            bot_token: bot_token.into(),
            app_token: app_token.into(),
            api_base: config
                .api_base_url
                .clone()
                .unwrap_or_else(|| DEFAULT_API_BASE.to_owned()),
            media_dir: super::shared::media_staging_dir(&app.home),
            media_max_bytes: media_max_bytes(config.media_max_mb, DEFAULT_MEDIA_MAX_BYTES),
        };
        Ok(Arc::new(SlackAdapter::new(settings, client.clone())))
    })
}

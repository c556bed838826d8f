//! `channels.feishu`: one Feishu/Lark adapter per app, on the long connection or, in
//! webhook mode, listening for event callbacks.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::Arc;

use anyhow::{Context as _, Result};
use pincer_channel_port::ChannelAdapter;
use pincer_channels::feishu::{
    DEFAULT_MEDIA_MAX_BYTES, FeishuAdapter, FeishuMode, FeishuSettings, api_base_for_domain,
};
use pincer_config::{FeishuConfig, FeishuConnectionMode};

use super::shared::{Account, AccountContext, media_max_bytes};

const DEFAULT_WEBHOOK_PORT: u16 = 3000;
const DEFAULT_WEBHOOK_PATH: &str = "/feishu/events";

/// The adapter of one app.
pub(super) fn adapter(
    context: &AccountContext<'_>,
    config: &FeishuConfig,
) -> Result<Arc<dyn ChannelAdapter>> {
    let account = &context.account;
    let app_id = account.required(
        config.app_id.as_deref(),
        "appId",
        "the App ID (cli_…) from the app's \"Credentials & Basic Info\" page",
    )?;
    let app_secret = account.required_secret(
        config.app_secret.as_ref(),
        "appSecret",
        "the App Secret from the app's \"Credentials & Basic Info\" page",
    )?;
    let mode = match config.connection_mode.unwrap_or_default() {
        FeishuConnectionMode::Websocket => FeishuMode::LongConnection,
        FeishuConnectionMode::Webhook => FeishuMode::Webhook {
            listen: webhook_address(config, account)?,
            path: config
                .webhook_path
                .clone()
                .unwrap_or_else(|| DEFAULT_WEBHOOK_PATH.to_owned()),
        },
    };
    let settings = FeishuSettings {
        account_id: account.id.clone(),
        app_id,
        app_secret: app_secret.into(),
        api_base: api_base_for_domain(config.domain.as_deref().unwrap_or("feishu")),
        mode,
        verification_token: config.verification_token.clone().filter(|t| !t.is_empty()),
        encrypt_key: config.encrypt_key.clone().filter(|k| !k.is_empty()),
        media_dir: context.media_dir(),
        media_max_bytes: media_max_bytes(config.media_max_mb, DEFAULT_MEDIA_MAX_BYTES),
    };
    Ok(Arc::new(FeishuAdapter::new(settings, context.client())))
}

/// Where the callback listener binds: loopback unless told otherwise (Feishu reaches it
/// through the user's HTTPS reverse proxy).
fn webhook_address(config: &FeishuConfig, account: &Account) -> Result<SocketAddr> {
    let host = match config.webhook_host.as_deref() {
        None | Some("") | Some("localhost") => IpAddr::V4(Ipv4Addr::LOCALHOST),
        Some(host) => host.parse().with_context(|| {
            let at = account.path();
            format!(
                "{at}.webhookHost is \"{host}\": use an IP address such as 127.0.0.1 or 0.0.0.0"
            )
        })?,
    };
    Ok(SocketAddr::new(
        host,
        config.webhook_port.unwrap_or(DEFAULT_WEBHOOK_PORT),
    ))
}

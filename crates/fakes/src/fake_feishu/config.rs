//! How the fake Feishu starts: [`FakeFeishuConfig`] and its defaults (credentials, the
//! bot's identity, the long connection's ping interval and service id, token lifetime).

use std::net::{Ipv4Addr, SocketAddr};

/// The app id accepted unless configured otherwise.
pub const DEFAULT_APP_ID: &str = "cli_fake0123456789";
/// The app secret accepted unless configured otherwise.
pub const DEFAULT_APP_SECRET: &str = "fake-app-secret";
/// The bot's open_id.
pub const DEFAULT_BOT_OPEN_ID: &str = "ou_fakebot0001";
/// The bot's (app's) name.
pub const DEFAULT_BOT_NAME: &str = "Pincer";
/// The `token` put in the header of events sent on the long connection.
pub const DEFAULT_VERIFICATION_TOKEN: &str = "fake-verification-token";

/// How the fake starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FakeFeishuConfig {
    pub app_id: String,
    pub app_secret: String,
    pub bot_open_id: String,
    pub bot_name: String,
    pub tenant_key: String,
    pub verification_token: String,
    /// `PingInterval` in the endpoint's and pongs' ClientConfig, seconds (default 120).
    pub ping_interval_secs: u64,
    /// The long connection's `service_id` (default 33).
    pub service_id: i32,
    /// The tenant token's `expire`, seconds (default 7200).
    pub token_expire_secs: u64,
    /// Where to listen (default `127.0.0.1:0`, a free port).
    pub addr: SocketAddr,
}

impl Default for FakeFeishuConfig {
    fn default() -> Self {
        Self {
            app_id: DEFAULT_APP_ID.to_owned(),
            app_secret: DEFAULT_APP_SECRET.to_owned(),
            bot_open_id: DEFAULT_BOT_OPEN_ID.to_owned(),
            bot_name: DEFAULT_BOT_NAME.to_owned(),
            tenant_key: "fake-tenant".to_owned(),
            verification_token: DEFAULT_VERIFICATION_TOKEN.to_owned(),
            ping_interval_secs: 120,
            service_id: 33,
            token_expire_secs: 7200,
            addr: SocketAddr::from((Ipv4Addr::LOCALHOST, 0)),
        }
    }
}

crate::fake_support::setters!(FakeFeishuConfig {
    text: app_id, app_secret, bot_open_id;
    plain: ping_interval_secs: u64, token_expire_secs: u64, addr: SocketAddr
});

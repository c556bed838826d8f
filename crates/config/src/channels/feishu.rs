//! `channels.feishu`: a Feishu (飞书) or Lark app bot — events over the long connection
//! (default) or HTTP callbacks, replies through the Open API.

use std::collections::BTreeMap;

use pincer_base::Secret;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// How events reach the gateway.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum FeishuConnectionMode {
    /// The long connection (WebSocket) the gateway opens: no public URL needed (the default).
    #[default]
    Websocket,
    /// Feishu POSTs events to `webhookHost:webhookPort/webhookPath` (behind your HTTPS
    /// reverse proxy).
    Webhook,
}

channel_section! {
    name: "feishu",
    pub struct FeishuConfig {
        /// The app's App ID (`cli_…`, "Credentials & Basic Info").
        pub app_id: Option<String>,
        /// The app's App Secret, e.g. `"${FEISHU_APP_SECRET}"`.
        pub app_secret: Option<Secret>,
        /// `"feishu"` (open.feishu.cn, the default), `"lark"` (open.larksuite.com, Lark
        /// international), or a base URL (a proxy or a test fake).
        pub domain: Option<String>,
        pub connection_mode: Option<FeishuConnectionMode>,
        /// Webhook mode: the address to listen on (default `127.0.0.1`).
        pub webhook_host: Option<String>,
        /// Webhook mode: the port (default 3000).
        pub webhook_port: Option<u16>,
        /// Webhook mode: the path (default `/feishu/events`).
        pub webhook_path: Option<String>,
        /// "Events & Callbacks → Encryption Strategy": the Verification Token events carry.
        pub verification_token: Option<Secret>,
        /// The Encrypt Key: events arrive encrypted and signed (checked) when set.
        pub encrypt_key: Option<Secret>,
    }
    // A second app has its own credentials and, in webhook mode, its own port.
    own_keys: [
        "appId",
        "appSecret",
        "verificationToken",
        "encryptKey",
        "webhookPort",
    ],
    credentials: [app_id, app_secret],
    docs {
        enabled: "app credentials are set",
        allow_from: "Users' open ids (`ou_…`)",
        /// Group chat ids (`oc_…`) or sender open ids the agent answers in under `allowlist`.
        group_allow_from,
        groups: "group chat id",
        media_max_mb: "file", 30,
        text_chunk_limit: 4000,
        accounts: "apps",
    }
}

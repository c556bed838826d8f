//! `channels.telegram`: a Telegram bot (Bot API, long polling).

use std::collections::BTreeMap;

use pincer_base::Secret;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

channel_section! {
    name: "telegram",
    pub struct TelegramConfig {
        /// From @BotFather, e.g. `"${TELEGRAM_BOT_TOKEN}"`.
        pub bot_token: Option<Secret>,
        /// The Bot API's address (default `https://api.telegram.org`): a local Bot API server,
        /// a proxy, or a test fake.
        pub api_base_url: Option<String>,
    }
    own_keys: ["botToken"],
    credentials: [bot_token],
    docs {
        enabled: "a token is set",
        allow_from: "Telegram user ids (or `@usernames`)",
        /// Group chat ids (or sender ids) the agent answers in under `allowlist`.
        group_allow_from,
        groups: "group chat id",
        media_max_mb: "file", "20, the Bot API's download limit",
        text_chunk_limit: 4000,
        accounts: "bots",
    }
}

//! `channels.telegram`: a Telegram bot (Bot API, long polling).

use std::collections::BTreeMap;

use pincer_base::Secret;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

channel_section! {
    /// `channels.telegram` (and each of its `accounts`).
    pub struct TelegramConfig {
        /// Off without deleting the settings (default on when a token is set).
        enabled,
        own {
            /// From @BotFather, e.g. `"${TELEGRAM_BOT_TOKEN}"`.
            pub bot_token: Option<Secret>,
            /// The Bot API's address (default `https://api.telegram.org`): a local Bot API server,
            /// a proxy, or a test fake.
            pub api_base_url: Option<String>,
        }
        /// Telegram user ids (or `@usernames`) allowed to DM the agent; `"*"` with `open`.
        allow_from,
        /// Group chat ids (or sender ids) the agent answers in under `allowlist`.
        group_allow_from,
        /// Per group chat id, or `"*"` for all.
        groups,
        /// Largest inbound file taken, in MB (default 20, the Bot API's download limit).
        media_max_mb,
        /// The most chars of one streamed message (default 4000).
        text_chunk_limit,
        /// Further bots, by account id; each field they leave out comes from the channel.
        accounts,
    }
    impl ChannelSection {
        const NAME: &'static str = "telegram";
        const OWN_KEYS: &'static [&'static str] = &["botToken"];

        fn has_credentials(&self) -> bool {
            self.bot_token.is_some()
        }
    }
}

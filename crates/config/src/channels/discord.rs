//! `channels.discord`: a Discord bot (gateway WebSocket + REST).

use std::collections::BTreeMap;

use pincer_base::Secret;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

channel_section! {
    /// `channels.discord` (and each of its `accounts`).
    pub struct DiscordConfig {
        /// Off without deleting the settings (default on when a token is set).
        enabled,
        own {
            /// The bot token from the Developer Portal, e.g. `"${DISCORD_BOT_TOKEN}"`.
            pub token: Option<Secret>,
            /// Discord's address (default `https://discord.com`; the REST API is under `/api/v10`,
            /// the gateway URL comes from `/gateway/bot`): a proxy or a test fake.
            pub api_base_url: Option<String>,
        }
        /// Discord user ids allowed to DM the agent; `"*"` with `open`.
        allow_from,
        /// Guild channel ids (or guild ids, or sender ids) the agent answers in.
        group_allow_from,
        /// Per channel id, or `"*"` for all.
        groups,
        /// Largest inbound attachment taken, in MB (default 8).
        media_max_mb,
        /// The most chars of one streamed message (default 2000).
        text_chunk_limit,
        /// Further bots, by account id; each field they leave out comes from the channel.
        accounts,
    }
    impl ChannelSection {
        const NAME: &'static str = "discord";
        const OWN_KEYS: &'static [&'static str] = &["token"];

        fn has_credentials(&self) -> bool {
            self.token.is_some()
        }
    }
}

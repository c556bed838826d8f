//! `channels.discord`: a Discord bot (gateway WebSocket + REST).

use std::collections::BTreeMap;

use pincer_base::Secret;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

channel_section! {
    name: "discord",
    pub struct DiscordConfig {
        /// The bot token from the Developer Portal, e.g. `"${DISCORD_BOT_TOKEN}"`.
        pub token: Option<Secret>,
        /// Discord's address (default `https://discord.com`; the REST API is under `/api/v10`,
        /// the gateway URL comes from `/gateway/bot`): a proxy or a test fake.
        pub api_base_url: Option<String>,
    }
    own_keys: ["token"],
    credentials: [token],
    docs {
        enabled: "a token is set",
        allow_from: "Discord user ids",
        /// Guild channel ids (or guild ids, or sender ids) the agent answers in.
        group_allow_from,
        groups: "channel id",
        media_max_mb: "attachment", 8,
        text_chunk_limit: 2000,
        accounts: "bots",
    }
}

//! `channels.slack`: a Slack app (Socket Mode for events, the Web API for replies).

use std::collections::BTreeMap;

use pincer_base::Secret;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

channel_section! {
    /// `channels.slack` (and each of its `accounts`).
    pub struct SlackConfig {
        /// Off without deleting the settings (default on when tokens are set).
        enabled,
        own {
            /// The bot token (`xoxb-…`, "OAuth & Permissions"), e.g. `"${SLACK_BOT_TOKEN}"`.
            pub bot_token: Option<Secret>,
            /// The app-level token with `connections:write` (`xapp-…`, "Basic Information"),
            /// which opens Socket Mode connections, e.g. `"${SLACK_APP_TOKEN}"`.
            pub app_token: Option<Secret>,
            /// The Web API's address (default `https://slack.com/api`): a proxy or a test fake.
            pub api_base_url: Option<String>,
        }
        /// Slack user ids (`U…`) allowed to DM the agent; `"*"` with `open`.
        allow_from,
        /// Channel ids (`C…`/`G…`), workspace (team) ids (`T…`) or user ids the agent answers
        /// in under `allowlist`.
        group_allow_from,
        /// Per channel id, or `"*"` for all.
        groups,
        /// Largest inbound file taken, in MB (default 20).
        media_max_mb,
        /// The most chars of one streamed message (default 4000).
        text_chunk_limit,
        /// Further apps, by account id; each field they leave out comes from the channel.
        accounts,
    }
    impl ChannelSection {
        const NAME: &'static str = "slack";
        const OWN_KEYS: &'static [&'static str] = &["botToken", "appToken"];

        fn has_credentials(&self) -> bool {
            self.bot_token.is_some() || self.app_token.is_some()
        }
    }
}

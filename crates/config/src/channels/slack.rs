//! `channels.slack`: a Slack app (Socket Mode for events, the Web API for replies).

use std::collections::BTreeMap;

use pincer_base::Secret;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

channel_section! {
    name: "slack",
    pub struct SlackConfig {
        /// The bot token (`xoxb-…`, "OAuth & Permissions"), e.g. `"${SLACK_BOT_TOKEN}"`.
        pub bot_token: Option<Secret>,
        /// The app-level token with `connections:write` (`xapp-…`, "Basic Information"),
        /// which opens Socket Mode connections, e.g. `"${SLACK_APP_TOKEN}"`.
        pub app_token: Option<Secret>,
        /// The Web API's address (default `https://slack.com/api`): a proxy or a test fake.
        pub api_base_url: Option<String>,
    }
    own_keys: ["botToken", "appToken"],
    credentials: [bot_token, app_token],
    docs {
        enabled: "tokens are set",
        allow_from: "Slack user ids (`U…`)",
        /// Channel ids (`C…`/`G…`), workspace (team) ids (`T…`) or user ids the agent answers
        /// in under `allowlist`.
        group_allow_from,
        groups: "channel id",
        media_max_mb: "file", 20,
        text_chunk_limit: 4000,
        accounts: "apps",
    }
}

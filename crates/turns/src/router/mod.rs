//! The router: which agent answers an inbound message, in which session, under which role.
//!
//! It owns agent ids (`agent_id`), session keys in OpenClaw's exact format (`session_key`),
//! binding scoring and `/<agent>` prefixes (`bindings`) and role lookup (`roles`). It is pure:
//! it reads the config it is given and nothing else, so every answer is reproducible.
//!
//! Order of agent resolution (pi-gateway's three layers): the best static binding, then a
//! `/<agentId>` prefix on the text (stripped), then the default agent.

mod agent_id;
mod bindings;
mod roles;
mod session_key;

use pincer_config::PincerConfig;
use thiserror::Error;

pub use agent_id::{
    DEFAULT_AGENT_ID, default_agent_id, is_known_agent, is_valid_agent_id, known_agent_ids,
    normalize_agent_id, validate_agent_id,
};
pub use bindings::binding_score;
pub use pincer_channel_port::{ChatKind, ThreadRef};
pub use roles::{DEFAULT_ROLE, resolve_role, resolve_role_for_key};
pub use session_key::{
    ChatAddress, DEFAULT_ACCOUNT_ID, DEFAULT_MAIN_KEY, GLOBAL_SESSION_KEY, MAX_SESSION_KEY_CHARS,
    ParsedSessionKey, SessionKind, SessionTarget, chat_session_key, cron_session_key,
    main_session_key, normalize_account_id, normalize_cli_session_key, normalize_main_key,
    parse_session_key, subagent_session_key,
};

/// What the router refuses.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum RouterError {
    #[error("invalid agent id {id:?}: agent ids match ^[a-z0-9][a-z0-9_-]{{0,63}}$")]
    InvalidAgentId { id: String },
    #[error("the session key is empty")]
    EmptySessionKey,
    #[error("invalid session key {key:?}: {reason}")]
    InvalidSessionKey { key: String, reason: String },
}

/// An inbound message, as far as routing needs to know.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RouteInput {
    /// Channel id: `telegram`, `discord`, `feishu`, `slack`, `webchat`, `cli`, …
    pub channel: String,
    /// The bot account that received it, for channels with several (`default` when `None`).
    pub account_id: Option<String>,
    /// Direct chat, group, channel or room.
    pub chat_kind: ChatKind,
    /// Direct: the sender's id; otherwise the group's, channel's or room's id.
    pub peer_id: String,
    /// A reply thread or Telegram forum topic inside the chat.
    pub thread: Option<ThreadRef>,
    /// Discord guild.
    pub guild_id: Option<String>,
    /// Slack team.
    pub team_id: Option<String>,
    /// The message text (a `/<agentId> ` prefix may pick the agent).
    pub text: String,
}

/// Why the route chose its agent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MatchedBy {
    /// `config.bindings[index]` scored highest.
    Binding { index: usize },
    /// The text began with `/<agentId>`.
    Prefix,
    /// Nothing else applied: the default agent.
    Default,
}

/// Where an inbound message goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Route {
    pub agent_id: String,
    /// The channel, normalised (lowercase).
    pub channel: String,
    /// The account, normalised (`default` when the message named none).
    pub account_id: String,
    /// The session the message belongs to.
    pub session_key: String,
    /// The agent's main session (where heartbeats and main-mode cron go).
    pub main_session_key: String,
    /// What kind of session `session_key` is.
    pub session_kind: SessionKind,
    /// The message text, without a `/<agentId>` prefix that picked the agent.
    pub text: String,
    pub matched_by: MatchedBy,
    /// The worker role for the session (see [`resolve_role`]).
    pub role: String,
}

/// Routes an inbound message: agent (binding, then prefix, then default), session key,
/// main session key and role.
pub fn resolve_route(cfg: &PincerConfig, input: &RouteInput) -> Route {
    let (agent_id, matched_by, text) =
        if let Some((index, agent)) = bindings::best_binding(cfg, input) {
            (agent, MatchedBy::Binding { index }, input.text.clone())
        } else if let Some((agent, rest)) = bindings::strip_agent_prefix(cfg, &input.text) {
            (agent, MatchedBy::Prefix, rest)
        } else {
            (
                default_agent_id(cfg),
                MatchedBy::Default,
                input.text.clone(),
            )
        };

    let address = ChatAddress {
        channel: &input.channel,
        account_id: input.account_id.as_deref(),
        kind: input.chat_kind,
        peer_id: &input.peer_id,
        thread: input.thread.as_ref(),
    };
    let session_key = chat_session_key(&agent_id, &address, &cfg.session);
    let main_session_key = main_session_key(&agent_id, &cfg.session);
    let session_kind = if session_key == main_session_key {
        SessionKind::Main
    } else if input.chat_kind == ChatKind::Direct {
        SessionKind::Direct
    } else {
        SessionKind::Group
    };

    Route {
        channel: session_key::normalize_channel(&input.channel),
        account_id: normalize_account_id(input.account_id.as_deref()),
        role: resolve_role(&cfg.roles, input),
        agent_id,
        session_key,
        main_session_key,
        session_kind,
        text,
        matched_by,
    }
}

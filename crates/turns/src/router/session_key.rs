//! Session keys exactly as OpenClaw writes them (`src/routing/session-key.ts`): building them
//! for inbound chats, cron jobs and sub-agents, parsing them back into parts, and turning a
//! CLI user's `--session` argument into a full key.
//!
//! Keys are lowercase throughout (OpenClaw lowercases every key it builds), so the same chat
//! always lands in the same session whatever case a channel reports ids in.

use pincer_channel_port::{ChatKind, ThreadRef};
use pincer_config::{DmScope, SessionConfig, SessionScope};

use super::RouterError;
use super::agent_id::{is_valid_agent_id, normalize_agent_id, validate_agent_id};

/// `session.mainKey` when unset.
pub const DEFAULT_MAIN_KEY: &str = "main";
/// The account of a channel that has only one.
pub const DEFAULT_ACCOUNT_ID: &str = "default";
/// The one session of `session.scope: global`.
pub const GLOBAL_SESSION_KEY: &str = "global";
/// Longest key `normalize_cli_session_key` accepts (OpenClaw's `chat.send` limit).
pub const MAX_SESSION_KEY_CHARS: usize = 512;

/// What a session is for, which decides what it may see (MEMORY.md only in private ones).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SessionKind {
    /// The agent's main session: its owner's DMs under `dmScope: main`, the CLI, heartbeats,
    /// `global` scope, and named sessions the operator opens by key.
    Main,
    /// One person's own DM session (`per-peer` and narrower DM scopes).
    Direct,
    /// A group, channel or room shared with other people — and any key shape Pincer does not
    /// recognise, since it is not known to be private.
    Group,
    /// An isolated cron run.
    Cron,
    /// A sub-agent's session.
    Subagent,
}

impl SessionKind {
    /// Lowercase name, as the system prompt's runtime line shows it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Main => "main",
            Self::Direct => "direct",
            Self::Group => "group",
            Self::Cron => "cron",
            Self::Subagent => "subagent",
        }
    }
}

/// A session key taken apart.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParsedSessionKey {
    /// The agent of an `agent:<id>:…` key; `None` for `global` and bare `cron:<job>`.
    pub agent_id: Option<String>,
    /// What the key addresses.
    pub target: SessionTarget,
    /// A `:thread:<id>` or `:topic:<n>` suffix.
    pub thread: Option<ThreadRef>,
}

/// The part of a key after `agent:<id>:` (and before any thread suffix).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SessionTarget {
    /// `global`.
    Global,
    /// `cron:<jobId>` (or `agent:<a>:cron:<jobId>`).
    Cron { job_id: String },
    /// `agent:<a>:<name>`: the main session when `name` is the main key, else a session the
    /// operator named (`pincer ask --session foo`).
    Named { name: String },
    /// A DM session: `direct:<peer>`, `<channel>:direct:<peer>` or
    /// `<channel>:<account>:direct:<peer>`.
    Direct {
        channel: Option<String>,
        account_id: Option<String>,
        peer: String,
    },
    /// `<channel>:<group|channel|room>:<id>`.
    Chat {
        channel: String,
        kind: ChatKind,
        id: String,
    },
    /// `subagent:<id>`.
    Subagent { id: String },
    /// Any other `agent:<a>:…` shape (hooks, web chat tabs, …), kept verbatim.
    Other { rest: String },
}

impl ParsedSessionKey {
    /// The kind of session the key addresses.
    pub fn kind(&self) -> SessionKind {
        match &self.target {
            SessionTarget::Global | SessionTarget::Named { .. } => SessionKind::Main,
            SessionTarget::Direct { .. } => SessionKind::Direct,
            SessionTarget::Chat { .. } | SessionTarget::Other { .. } => SessionKind::Group,
            SessionTarget::Cron { .. } => SessionKind::Cron,
            SessionTarget::Subagent { .. } => SessionKind::Subagent,
        }
    }
}

/// OpenClaw's `normalizeMainKey`: trimmed and lowercased, `main` when unset or blank.
pub fn normalize_main_key(main_key: Option<&str>) -> String {
    let trimmed = main_key.unwrap_or_default().trim();
    if trimmed.is_empty() {
        DEFAULT_MAIN_KEY.to_string()
    } else {
        trimmed.to_lowercase()
    }
}

/// OpenClaw's `normalizeAccountId`: lowercase; characters outside `[a-z0-9_-]` collapse to
/// `-` (leading and trailing dashes dropped, at most 64 characters); blank or nothing left
/// means `default`.
pub fn normalize_account_id(account_id: Option<&str>) -> String {
    let trimmed = account_id.unwrap_or_default().trim();
    if trimmed.is_empty() {
        return DEFAULT_ACCOUNT_ID.to_string();
    }
    let lowered = trimmed.to_lowercase();
    if is_valid_agent_id(&lowered) {
        // Account ids follow the agent-id pattern, so a valid one needs no repair.
        return lowered;
    }
    let mut collapsed = String::with_capacity(lowered.len());
    for c in lowered.chars() {
        let keep = c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == '-';
        if keep {
            collapsed.push(c);
        } else if !collapsed.ends_with('-') {
            collapsed.push('-');
        }
    }
    let repaired: String = collapsed.trim_matches('-').chars().take(64).collect();
    if repaired.is_empty() {
        DEFAULT_ACCOUNT_ID.to_string()
    } else {
        repaired
    }
}

/// A channel id as keys and bindings use it: trimmed, lowercased, `unknown` when blank.
pub(crate) fn normalize_channel(channel: &str) -> String {
    let trimmed = channel.trim();
    if trimmed.is_empty() {
        "unknown".to_string()
    } else {
        trimmed.to_lowercase()
    }
}

/// The agent's main session: `agent:<agentId>:<mainKey>`, or `global` under
/// `session.scope: global`. Heartbeats, main-mode cron and the CLI all land here.
pub fn main_session_key(agent_id: &str, session: &SessionConfig) -> String {
    if session.scope == SessionScope::Global {
        return GLOBAL_SESSION_KEY.to_string();
    }
    format!(
        "agent:{}:{}",
        normalize_agent_id(agent_id),
        normalize_main_key(session.main_key.as_deref())
    )
}

/// The session of a chat, OpenClaw's `buildAgentPeerSessionKey` plus thread suffixes.
///
/// - `session.scope: global` → `global` for every chat.
/// - Direct chats by `session.dmScope`: `main` → the main key; `per-peer` →
///   `agent:<a>:direct:<peer>`; `per-channel-peer` → `agent:<a>:<channel>:direct:<peer>`;
///   `per-account-channel-peer` → `agent:<a>:<channel>:<account>:direct:<peer>`. The peer is
///   first mapped through `session.identityLinks` (not under `main`), then lowercased; a
///   blank peer falls back to the main key.
/// - Groups, channels, rooms: `agent:<a>:<channel>:<group|channel|room>:<id>`.
/// - A thread appends `:thread:<id>`, a Telegram topic `:topic:<n>`.
pub fn chat_session_key(agent_id: &str, chat: &ChatAddress<'_>, session: &SessionConfig) -> String {
    if session.scope == SessionScope::Global {
        return GLOBAL_SESSION_KEY.to_string();
    }
    let base = peer_session_key(agent_id, chat, session);
    match chat.thread {
        Some(thread) => with_thread_suffix(base, thread),
        None => base,
    }
}

/// Where a message came from, as far as its session key is concerned.
#[derive(Debug, Clone, Copy)]
pub struct ChatAddress<'a> {
    pub channel: &'a str,
    pub account_id: Option<&'a str>,
    pub kind: ChatKind,
    /// Direct: the sender; otherwise the chat's id.
    pub peer_id: &'a str,
    pub thread: Option<&'a ThreadRef>,
}

fn peer_session_key(agent_id: &str, chat: &ChatAddress<'_>, session: &SessionConfig) -> String {
    let agent = normalize_agent_id(agent_id);
    let channel = normalize_channel(chat.channel);
    if chat.kind != ChatKind::Direct {
        let id = match chat.peer_id.trim() {
            "" => "unknown".to_string(),
            id => id.to_lowercase(),
        };
        return format!("agent:{agent}:{channel}:{}:{id}", chat.kind.as_str());
    }
    let mut peer = chat.peer_id.trim().to_string();
    if session.dm_scope != DmScope::Main
        && let Some(canonical) = resolve_identity_link(session, &channel, &peer)
    {
        peer = canonical;
    }
    let peer = peer.to_lowercase();
    if peer.is_empty() {
        return main_session_key(&agent, session);
    }
    match session.dm_scope {
        DmScope::Main => main_session_key(&agent, session),
        DmScope::PerPeer => format!("agent:{agent}:direct:{peer}"),
        DmScope::PerChannelPeer => format!("agent:{agent}:{channel}:direct:{peer}"),
        DmScope::PerAccountChannelPeer => {
            let account = normalize_account_id(chat.account_id);
            format!("agent:{agent}:{channel}:{account}:direct:{peer}")
        }
    }
}

/// OpenClaw's `resolveLinkedPeerId`: the canonical name whose list holds the peer, either
/// bare (`123`) or scoped by channel (`telegram:123`), compared trimmed and lowercased.
fn resolve_identity_link(session: &SessionConfig, channel: &str, peer: &str) -> Option<String> {
    if peer.is_empty() {
        return None;
    }
    let bare = peer.to_lowercase();
    let scoped = format!("{channel}:{peer}").to_lowercase();
    session
        .identity_links
        .iter()
        .filter(|(canonical, _)| !canonical.trim().is_empty())
        .find(|(_, ids)| {
            ids.iter().any(|id| {
                let id = id.trim().to_lowercase();
                !id.is_empty() && (id == bare || id == scoped)
            })
        })
        .map(|(canonical, _)| canonical.trim().to_string())
}

fn with_thread_suffix(base: String, thread: &ThreadRef) -> String {
    let (marker, id) = match thread {
        ThreadRef::Thread(id) => ("thread", id),
        ThreadRef::Topic(id) => ("topic", id),
    };
    match id.trim() {
        "" => base,
        id => format!("{base}:{marker}:{}", id.to_lowercase()),
    }
}

/// An isolated cron run's session: `cron:<jobId>`.
pub fn cron_session_key(job_id: &str) -> String {
    format!("cron:{}", job_id.trim().to_lowercase())
}

/// A sub-agent's session: `agent:<agentId>:subagent:<id>` (the id is usually a UUID).
pub fn subagent_session_key(agent_id: &str, id: &str) -> String {
    format!(
        "agent:{}:subagent:{}",
        normalize_agent_id(agent_id),
        id.trim().to_lowercase()
    )
}

fn malformed(key: &str, reason: impl Into<String>) -> RouterError {
    RouterError::InvalidSessionKey {
        key: key.to_string(),
        reason: reason.into(),
    }
}

/// Takes a session key apart. Case and surrounding whitespace are ignored (keys are
/// lowercase). Errors on a blank key, an `agent:` key whose agent id is invalid or that has
/// nothing after it, an empty segment (`a::b`), and a `cron:` key without a job id.
pub fn parse_session_key(key: &str) -> Result<ParsedSessionKey, RouterError> {
    let lowered = key.trim().to_lowercase();
    if lowered.is_empty() {
        return Err(RouterError::EmptySessionKey);
    }
    if lowered == GLOBAL_SESSION_KEY {
        return Ok(ParsedSessionKey {
            agent_id: None,
            target: SessionTarget::Global,
            thread: None,
        });
    }
    let segments: Vec<&str> = lowered.split(':').collect();
    if segments.iter().any(|s| s.is_empty()) {
        return Err(malformed(
            key,
            "it has an empty segment (`::` or a `:` at an end)",
        ));
    }
    match segments.as_slice() {
        ["cron", job @ ..] if !job.is_empty() => Ok(ParsedSessionKey {
            agent_id: None,
            target: SessionTarget::Cron {
                job_id: job.join(":"),
            },
            thread: None,
        }),
        ["cron"] => Err(malformed(key, "`cron:` needs a job id")),
        ["agent", agent, rest @ ..] => {
            if !is_valid_agent_id(agent) {
                return Err(malformed(
                    key,
                    format!("`{agent}` is not a valid agent id (^[a-z0-9][a-z0-9_-]{{0,63}}$)"),
                ));
            }
            if rest.is_empty() {
                return Err(malformed(key, "nothing follows `agent:<id>:`"));
            }
            let (base, thread) = split_thread_suffix(rest);
            Ok(ParsedSessionKey {
                agent_id: Some((*agent).to_string()),
                target: classify_agent_rest(base),
                thread,
            })
        }
        ["agent"] => Err(malformed(key, "`agent:` needs an agent id and a session")),
        _ => Err(malformed(
            key,
            "a session key is `global`, `cron:<job>` or `agent:<agentId>:<rest>`",
        )),
    }
}

/// Splits a trailing `thread:<id>` (the last one, as OpenClaw's `parseThreadSessionSuffix`)
/// or `topic:<n>` off the segments after `agent:<id>:`.
fn split_thread_suffix<'a>(rest: &'a [&'a str]) -> (&'a [&'a str], Option<ThreadRef>) {
    // The marker must leave at least one segment before it and one after it.
    if let Some(i) = (1..rest.len().saturating_sub(1))
        .rev()
        .find(|&i| rest[i] == "thread")
    {
        return (&rest[..i], Some(ThreadRef::Thread(rest[i + 1..].join(":"))));
    }
    if rest.len() >= 3 && rest[rest.len() - 2] == "topic" {
        let topic = rest[rest.len() - 1].to_string();
        return (&rest[..rest.len() - 2], Some(ThreadRef::Topic(topic)));
    }
    (rest, None)
}

fn classify_agent_rest(base: &[&str]) -> SessionTarget {
    match base {
        [name] => SessionTarget::Named {
            name: (*name).to_string(),
        },
        ["subagent", id @ ..] => SessionTarget::Subagent { id: id.join(":") },
        ["cron", job @ ..] => SessionTarget::Cron {
            job_id: job.join(":"),
        },
        ["direct", peer @ ..] => SessionTarget::Direct {
            channel: None,
            account_id: None,
            peer: peer.join(":"),
        },
        [channel, "direct", peer @ ..] if !peer.is_empty() => SessionTarget::Direct {
            channel: Some((*channel).to_string()),
            account_id: None,
            peer: peer.join(":"),
        },
        [channel, account, "direct", peer @ ..] if !peer.is_empty() => SessionTarget::Direct {
            channel: Some((*channel).to_string()),
            account_id: Some((*account).to_string()),
            peer: peer.join(":"),
        },
        [channel, kind, id @ ..] if !id.is_empty() => match ChatKind::from_key_segment(kind) {
            Some(kind) => SessionTarget::Chat {
                channel: (*channel).to_string(),
                kind,
                id: id.join(":"),
            },
            None => SessionTarget::Other {
                rest: base.join(":"),
            },
        },
        _ => SessionTarget::Other {
            rest: base.join(":"),
        },
    }
}

fn is_cli_key_char(c: char) -> bool {
    c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, '_' | '-' | '.' | '@' | '+' | ':')
}

/// Turns `pincer ask --session <input>` into a full session key for `agent_id`:
///
/// - `main` → the agent's main session key (`global` under `session.scope: global`);
/// - a full key (`agent:…`, `cron:…`, `global`) → kept, lowercased, after checking it parses;
/// - any other name → `agent:<agentId>:<name>`, lowercased.
///
/// Only ASCII letters, digits and `_ - . @ + :` are accepted, so a key never carries
/// whitespace, slashes or control characters into file names and logs.
pub fn normalize_cli_session_key(
    agent_id: &str,
    input: &str,
    session: &SessionConfig,
) -> Result<String, RouterError> {
    let agent = validate_agent_id(agent_id)?;
    let lowered = input.trim().to_lowercase();
    if lowered.is_empty() {
        return Err(RouterError::EmptySessionKey);
    }
    if let Some(bad) = lowered.chars().find(|&c| !is_cli_key_char(c)) {
        return Err(malformed(
            input,
            format!("the character {bad:?} is not allowed; use letters, digits and _ - . @ + :"),
        ));
    }
    if lowered == DEFAULT_MAIN_KEY {
        return Ok(main_session_key(&agent, session));
    }
    let full = if lowered == GLOBAL_SESSION_KEY
        || lowered.starts_with("agent:")
        || lowered.starts_with("cron:")
    {
        lowered
    } else {
        format!("agent:{agent}:{lowered}")
    };
    if full.chars().count() > MAX_SESSION_KEY_CHARS {
        return Err(malformed(
            input,
            format!("it is longer than {MAX_SESSION_KEY_CHARS} characters"),
        ));
    }
    parse_session_key(&full).map_err(|err| match err {
        RouterError::InvalidSessionKey { reason, .. } => malformed(input, reason),
        other => other,
    })?;
    Ok(full)
}

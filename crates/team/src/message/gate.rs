//! `tools.message.allowTargets`: which chats an agent's `message` tool may write to beyond
//! the ones that have talked to it. Each entry is `"<channel>:<chatId>"` (one chat),
//! `"<channel>:*"` (every chat of a channel) or `"*"` (anywhere). Chats that have talked to
//! the agent are always allowed (the gateway knows them from the agent's sessions); an
//! empty or absent list allows only those. Operators' own sends (`pincer message send`, the
//! WebSocket `send`) are not gated.

use std::fmt;
use std::str::FromStr;

/// The kind prefixes a target may carry (`user:123`, `channel:C1`, `group:-100…`); the gate
/// compares the bare chat id.
const KIND_PREFIXES: [&str; 3] = ["user:", "channel:", "group:"];

/// `to` without its kind prefixes (`user:U1` → `U1`), trimmed.
pub fn bare_chat_id(to: &str) -> &str {
    let mut id = to.trim();
    while let Some(rest) = KIND_PREFIXES
        .iter()
        .find_map(|prefix| strip_prefix_ignore_case(id, prefix))
    {
        id = rest.trim();
    }
    id
}

fn strip_prefix_ignore_case<'a>(text: &'a str, prefix: &str) -> Option<&'a str> {
    let head = text.get(..prefix.len())?;
    head.eq_ignore_ascii_case(prefix)
        .then(|| &text[prefix.len()..])
}

/// One entry of `allowTargets`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TargetRule {
    /// `*`: any chat of any channel.
    Any,
    /// `<channel>:*`: any chat of one channel.
    Channel(String),
    /// `<channel>:<chatId>`: one chat.
    Chat { channel: String, chat_id: String },
}

/// An `allowTargets` entry that is none of the three forms.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "tools.message.allowTargets: {entry:?} is not a target: use \"<channel>:<chatId>\", \
     \"<channel>:*\" or \"*\""
)]
pub struct InvalidRule {
    pub entry: String,
}

impl FromStr for TargetRule {
    type Err = InvalidRule;

    fn from_str(entry: &str) -> Result<Self, InvalidRule> {
        let invalid = || InvalidRule {
            entry: entry.to_owned(),
        };
        let trimmed = entry.trim();
        if trimmed == "*" {
            return Ok(Self::Any);
        }
        // The channel is up to the first colon: chat ids may hold colons themselves.
        let (channel, chat) = trimmed.split_once(':').ok_or_else(invalid)?;
        let (channel, chat) = (channel.trim(), bare_chat_id(chat));
        let valid_channel = !channel.is_empty()
            && channel
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
        if !valid_channel || chat.is_empty() {
            return Err(invalid());
        }
        let channel = channel.to_ascii_lowercase();
        if chat == "*" {
            return Ok(Self::Channel(channel));
        }
        Ok(Self::Chat {
            channel,
            chat_id: chat.to_owned(),
        })
    }
}

impl fmt::Display for TargetRule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Any => f.write_str("*"),
            Self::Channel(channel) => write!(f, "{channel}:*"),
            Self::Chat { channel, chat_id } => write!(f, "{channel}:{chat_id}"),
        }
    }
}

impl TargetRule {
    /// Whether the rule names chat `to` of `channel`.
    pub fn matches(&self, channel: &str, to: &str) -> bool {
        match self {
            Self::Any => true,
            Self::Channel(c) => c.eq_ignore_ascii_case(channel.trim()),
            Self::Chat {
                channel: c,
                chat_id,
            } => c.eq_ignore_ascii_case(channel.trim()) && chat_id == bare_chat_id(to),
        }
    }
}

/// The targets an agent may message besides the chats that talked to it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct AllowTargets {
    rules: Vec<TargetRule>,
}

impl AllowTargets {
    /// Only the chats that have talked to the agent (the default).
    pub fn talked_only() -> Self {
        Self::default()
    }

    /// The config's list; the first entry that is not a target is the error.
    pub fn parse<S: AsRef<str>>(entries: &[S]) -> Result<Self, InvalidRule> {
        let rules = entries
            .iter()
            .map(|entry| entry.as_ref().parse())
            .collect::<Result<_, _>>()?;
        Ok(Self { rules })
    }

    /// The rules, as parsed.
    pub fn rules(&self) -> &[TargetRule] {
        &self.rules
    }

    /// Whether the list itself names chat `to` of `channel` (the chats that talked to the
    /// agent are the port's to tell).
    pub fn names(&self, channel: &str, to: &str) -> bool {
        self.rules.iter().any(|rule| rule.matches(channel, to))
    }
}

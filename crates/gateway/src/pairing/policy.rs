//! Access decisions for inbound messages, as pure functions (no I/O): the channel passes
//! its configuration, the approved senders from the [`PairingStore`](super::PairingStore)
//! and the sender's identities, and gets what to do.
//!
//! DMs ([`dm_access`], OpenClaw's `dmPolicy`):
//! - `pairing` (default): listed senders (configured or approved) get through; a stranger
//!   gets a pairing code ([`DmAccess::Pair`]).
//! - `allowlist`: only configured senders; strangers are ignored without a reply, and the
//!   approved-senders store is not consulted (OpenClaw's `mergeDmAllowFromSources`): the
//!   configuration alone decides.
//! - `open`: everyone, but only with an explicit `"*"` in the configured list; without it,
//!   nobody (the config loader also insists on the `"*"`, this function does not rely on
//!   it).
//! - `disabled`: nobody.
//!
//! Groups ([`group_access`], `groupPolicy`): `allowlist` (default) admits a group whose id
//! or whose sender is in `groupAllowFrom` (`"*"` there admits every group, as in OpenClaw);
//! `open` admits every group; `disabled` none. An admitted group message still needs the
//! bot mentioned (or replied to) when `requireMention` is on.
//!
//! Matching ([`entry_matches`]) is exact, with two allowances: an entry may carry a prefix
//! `<name>:` (`telegram:123`, `tg:123`; the prefix is not checked, the lists are per channel
//! already), and an identity starting with `@` is a username, matched without regard to
//! case and with or without the `@` in the entry (`@Alice`, `alice`, `telegram:@alice`).
//! Channels pass every identity of a sender (`["123", "@alice"]`). A `"*"` entry matches
//! nothing here; it only means "everyone" where described above.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The wildcard entry.
const WILDCARD: &str = "*";

/// Who may send the bot a DM (OpenClaw's `dmPolicy`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum DmPolicy {
    /// Listed senders; strangers get a pairing code.
    #[default]
    Pairing,
    /// Configured senders only; strangers are ignored.
    Allowlist,
    /// Everyone, with `"*"` in the configured list.
    Open,
    /// Nobody.
    Disabled,
}

impl DmPolicy {
    /// The configuration name (`pairing`, `allowlist`, `open`, `disabled`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Pairing => "pairing",
            Self::Allowlist => "allowlist",
            Self::Open => "open",
            Self::Disabled => "disabled",
        }
    }
}

/// What to do with a DM.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DmAccess {
    /// Process the message.
    Allow,
    /// Do not process it; answer with a pairing code (see
    /// [`PairingStore::request`](super::PairingStore::request)).
    Pair,
    /// Do not process it and do not answer.
    Ignore,
}

/// Which groups the bot takes part in (OpenClaw's `groupPolicy`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum GroupPolicy {
    /// Every group.
    Open,
    /// Groups, or senders, listed in `groupAllowFrom`.
    #[default]
    Allowlist,
    /// No group.
    Disabled,
}

impl GroupPolicy {
    /// The configuration name (`open`, `allowlist`, `disabled`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Open => "open",
            Self::Allowlist => "allowlist",
            Self::Disabled => "disabled",
        }
    }
}

/// What to do with a group message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum GroupAccess {
    /// Process the message.
    Allow,
    /// Do not process it and do not answer.
    Ignore,
}

/// Decides a DM from a sender known by `sender_ids` (see the module doc).
pub fn dm_access(
    policy: DmPolicy,
    configured_allow_from: &[String],
    stored_allow_from: &[String],
    sender_ids: &[&str],
) -> DmAccess {
    match policy {
        DmPolicy::Disabled => DmAccess::Ignore,
        DmPolicy::Open if has_wildcard(configured_allow_from) => DmAccess::Allow,
        DmPolicy::Open => DmAccess::Ignore,
        DmPolicy::Allowlist if is_listed(configured_allow_from, sender_ids) => DmAccess::Allow,
        DmPolicy::Allowlist => DmAccess::Ignore,
        DmPolicy::Pairing
            if is_listed(configured_allow_from, sender_ids)
                || is_listed(stored_allow_from, sender_ids) =>
        {
            DmAccess::Allow
        }
        DmPolicy::Pairing => DmAccess::Pair,
    }
}

/// Whether a sender known by `sender_ids` is one of the channel's owners: listed in its
/// configured `allowFrom` or approved by pairing (`stored_allow_from`). `"*"` makes nobody an
/// owner (it admits everyone to talk, not to command). In groups, only owners may use the
/// chat commands that change the shared session (OpenClaw's command authorization).
pub fn is_owner(
    configured_allow_from: &[String],
    stored_allow_from: &[String],
    sender_ids: &[&str],
) -> bool {
    is_listed(configured_allow_from, sender_ids) || is_listed(stored_allow_from, sender_ids)
}

/// Decides a message in group `group_id` from a sender known by `sender_ids` (see the
/// module doc). `mentioned` is true when the bot is mentioned or the message replies to it.
pub fn group_access(
    policy: GroupPolicy,
    group_allow_from: &[String],
    group_id: &str,
    sender_ids: &[&str],
    require_mention: bool,
    mentioned: bool,
) -> GroupAccess {
    let admitted = match policy {
        GroupPolicy::Disabled => false,
        GroupPolicy::Open => true,
        GroupPolicy::Allowlist => {
            has_wildcard(group_allow_from)
                || is_listed(group_allow_from, &[group_id])
                || is_listed(group_allow_from, sender_ids)
        }
    };
    if admitted && (mentioned || !require_mention) {
        GroupAccess::Allow
    } else {
        GroupAccess::Ignore
    }
}

/// Whether any entry of `list` matches any of `ids` ([`entry_matches`]). An empty list
/// admits nobody.
pub fn is_listed(list: &[String], ids: &[&str]) -> bool {
    list.iter()
        .any(|entry| ids.iter().any(|id| entry_matches(entry, id)))
}

/// Whether allow-list `entry` names the identity `id` (see the module doc for the rule).
pub fn entry_matches(entry: &str, id: &str) -> bool {
    let entry = entry.trim();
    let id = id.trim();
    if entry.is_empty() || entry == WILDCARD || id.is_empty() {
        return false;
    }
    let bare = strip_prefix(entry);
    if entry == id || bare == id {
        return true;
    }
    match id.strip_prefix('@') {
        Some(username) if !username.is_empty() => {
            let wanted = bare.strip_prefix('@').unwrap_or(bare);
            wanted.eq_ignore_ascii_case(username)
        }
        _ => false,
    }
}

/// `entry` without a leading `<name>:` where name is `[A-Za-z0-9_-]+`; as it is otherwise.
fn strip_prefix(entry: &str) -> &str {
    match entry.split_once(':') {
        Some((prefix, rest))
            if !prefix.is_empty()
                && !rest.trim().is_empty()
                && prefix
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-') =>
        {
            rest.trim()
        }
        _ => entry,
    }
}

fn has_wildcard(list: &[String]) -> bool {
    list.iter().any(|e| e.trim() == WILDCARD)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matching_rule() {
        let cases: &[(&str, &str, bool)] = &[
            ("123", "123", true),
            (" 123 ", "123", true),
            ("telegram:123", "123", true),
            ("tg:123", "123", true),
            ("TELEGRAM:123", "123", true),
            ("1234", "123", false),
            ("123", "1234", false),
            ("@Alice", "@alice", true),
            ("alice", "@alice", true),
            ("telegram:@ALICE", "@alice", true),
            ("alice", "alice", true),
            ("Alice", "alice", false),
            ("@alice", "alice", false),
            ("@alice", "@alicea", false),
            ("*", "*", false),
            ("*", "123", false),
            ("", "", false),
            ("telegram:", "telegram:", true),
            ("uuid:abc", "uuid:abc", true),
            ("@bob:matrix.org", "@bob:matrix.org", true),
            ("+15550001", "+15550001", true),
        ];
        for (entry, id, expected) in cases {
            assert_eq!(entry_matches(entry, id), *expected, "{entry:?} vs {id:?}");
        }
    }

    #[test]
    fn policy_names() {
        for p in [
            DmPolicy::Pairing,
            DmPolicy::Allowlist,
            DmPolicy::Open,
            DmPolicy::Disabled,
        ] {
            assert_eq!(
                serde_json::to_value(p).ok(),
                Some(serde_json::Value::from(p.as_str()))
            );
        }
        for p in [
            GroupPolicy::Open,
            GroupPolicy::Allowlist,
            GroupPolicy::Disabled,
        ] {
            assert_eq!(
                serde_json::to_value(p).ok(),
                Some(serde_json::Value::from(p.as_str()))
            );
        }
    }
}

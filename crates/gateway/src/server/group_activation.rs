//! A group session's `groupActivation` (OpenClaw's, set by `sessions.patch` or
//! `/activation mention|always`): it overrides the channel's `requireMention` for that group
//! — `always` answers every message there, `mention` only those that mention the bot (or
//! reply to it); unset, the channel's rule holds.

use pincer_channel_port::Inbound;
use pincer_store::SessionEntry;
use pincer_turns::router::{ChatKind, RouteInput};

use super::Gateway;

/// The stored values.
const MENTION: &str = "mention";
const ALWAYS: &str = "always";

/// What a routing needs of `message`: the chat (a DM's peer is its sender), the thread, the
/// guild or team, the text.
pub(super) fn route_input(message: &Inbound) -> RouteInput {
    RouteInput {
        channel: message.channel.clone(),
        account_id: message.account_id.clone(),
        chat_kind: message.chat.kind,
        peer_id: match message.chat.kind {
            ChatKind::Direct => message.sender.id.clone(),
            _ => message.chat.id.clone(),
        },
        thread: message.chat.thread.clone(),
        guild_id: message.guild_id.clone(),
        team_id: message.team_id.clone(),
        text: message.text.clone(),
    }
}

/// Whether group message `message` must mention the bot to be answered: the group
/// session's `groupActivation` when it has one, else `configured` (the channel's rule). A
/// message that mentions the bot passes either way, so only the others cost a look at the
/// session (its entry, read on the blocking pool; unreadable: the channel's rule).
pub(super) async fn requires_mention(gw: &Gateway, message: &Inbound, configured: bool) -> bool {
    if message.mentioned {
        return configured;
    }
    let route = gw.runtime.route(&route_input(message));
    let key = route.session_key.clone();
    #[expect(clippy::disallowed_methods, reason = "inside SessionStore::run")]
    let entry = gw
        .runtime
        .sessions(&route.agent_id)
        .run(move |store| store.entry(&key))
        .await;
    match entry {
        Ok(entry) => activation_requires_mention(entry.as_ref()).unwrap_or(configured),
        Err(e) => {
            tracing::warn!(session = %route.session_key, error = %e, "cannot read the group's activation; the channel's rule holds");
            configured
        }
    }
}

/// What `entry`'s activation says of mentions (`None`: it says nothing).
pub fn activation_requires_mention(entry: Option<&SessionEntry>) -> Option<bool> {
    match normalize(entry?.group_activation.as_deref()?) {
        Ok(ALWAYS) => Some(false),
        Ok(_) => Some(true),
        Err(_) => None,
    }
}

/// A `groupActivation` value in its stored form (`mention` or `always`), or the error the
/// client sees (OpenClaw's words).
pub(super) fn normalize(value: &str) -> Result<&'static str, String> {
    match value.trim().to_ascii_lowercase().as_str() {
        MENTION => Ok(MENTION),
        ALWAYS => Ok(ALWAYS),
        _ => Err("invalid groupActivation (use \"mention\"|\"always\")".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(activation: Option<&str>) -> SessionEntry {
        SessionEntry {
            group_activation: activation.map(str::to_owned),
            ..SessionEntry::default()
        }
    }

    #[test]
    fn the_activation_overrides_the_channels_rule_only_when_set() {
        assert_eq!(activation_requires_mention(None), None);
        assert_eq!(activation_requires_mention(Some(&entry(None))), None);
        assert_eq!(
            activation_requires_mention(Some(&entry(Some("always")))),
            Some(false)
        );
        assert_eq!(
            activation_requires_mention(Some(&entry(Some("Mention")))),
            Some(true)
        );
        assert_eq!(
            activation_requires_mention(Some(&entry(Some("loud")))),
            None
        );
    }

    #[test]
    fn patch_values_are_normalized_or_refused() {
        assert_eq!(normalize(" ALWAYS"), Ok("always"));
        assert_eq!(
            normalize("sometimes"),
            Err("invalid groupActivation (use \"mention\"|\"always\")".to_owned())
        );
    }
}

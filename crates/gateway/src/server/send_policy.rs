//! A session's `sendPolicy` (OpenClaw's, set by `sessions.patch`): `deny` keeps the
//! session's replies off chat channels — its turns still run and are stored, and WebSocket
//! clients still see them; `allow` or nothing delivers. Every path that sends a session's
//! words to a chat asks [`may_deliver`]: a channel turn's reply (whole or in blocks), a
//! heartbeat's kept reply, a cron announcement to the main session's last chat.

use pincer_store::SessionEntry;

use super::Gateway;
use super::tool_summaries::Verbose;

/// The policy that stops delivery.
const DENY: &str = "deny";

/// Whether the session `session_key` of `agent_id` may send to a chat channel now. Reads
/// the session's entry on the blocking pool; when it cannot be read the answer is no (the
/// policy is a privacy control: an unreadable index must not open it), and the log says so.
pub(super) async fn may_deliver(gw: &Gateway, agent_id: &str, session_key: &str) -> bool {
    deliverable_entry(gw, agent_id, session_key).await.is_some()
}

/// How a channel turn's reply goes out: `None` when it may not ([`may_deliver`]), else
/// how much of its tool calls the chat hears about (the session's `verboseLevel`, read in
/// the same trip).
pub(super) async fn channel_reply(
    gw: &Gateway,
    agent_id: &str,
    session_key: &str,
) -> Option<Verbose> {
    let entry = deliverable_entry(gw, agent_id, session_key).await?;
    Some(Verbose::of(entry.as_ref()))
}

/// The session's entry (`Some(None)`: it has none yet) when its policy allows delivery.
async fn deliverable_entry(
    gw: &Gateway,
    agent_id: &str,
    session_key: &str,
) -> Option<Option<SessionEntry>> {
    let key = session_key.to_owned();
    #[expect(clippy::disallowed_methods, reason = "inside SessionStore::run")]
    let entry = gw
        .runtime
        .sessions(agent_id)
        .run(move |store| store.entry(&key))
        .await;
    match entry {
        Ok(entry) if allows(entry.as_ref()) => Some(entry),
        Ok(_) => {
            tracing::info!(session = %session_key, "sendPolicy deny: reply not sent to the channel");
            None
        }
        Err(e) => {
            tracing::error!(session = %session_key, error = %e, "cannot read the session's sendPolicy; reply not sent");
            None
        }
    }
}

/// What `entry`'s policy says (no entry, no policy: allowed).
pub fn allows(entry: Option<&SessionEntry>) -> bool {
    !entry
        .and_then(|e| e.send_policy.as_deref())
        .is_some_and(|policy| policy.trim().eq_ignore_ascii_case(DENY))
}

/// A `sessions.patch` `sendPolicy` value in its stored form (`allow` or `deny`), or the
/// error the client sees (OpenClaw's words).
pub(super) fn normalize(value: &str) -> Result<&'static str, String> {
    match value.trim().to_ascii_lowercase().as_str() {
        "allow" => Ok("allow"),
        "deny" => Ok(DENY),
        _ => Err("invalid sendPolicy (use \"allow\"|\"deny\")".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(policy: Option<&str>) -> SessionEntry {
        SessionEntry {
            send_policy: policy.map(str::to_owned),
            ..SessionEntry::default()
        }
    }

    #[test]
    fn only_deny_stops_delivery() {
        assert!(allows(None));
        assert!(allows(Some(&entry(None))));
        assert!(allows(Some(&entry(Some("allow")))));
        assert!(!allows(Some(&entry(Some("deny")))));
        assert!(!allows(Some(&entry(Some(" DENY ")))));
    }

    #[test]
    fn patch_values_are_normalized_or_refused() {
        assert_eq!(normalize("Allow"), Ok("allow"));
        assert_eq!(normalize("deny"), Ok("deny"));
        assert_eq!(
            normalize("off"),
            Err("invalid sendPolicy (use \"allow\"|\"deny\")".to_owned())
        );
    }
}

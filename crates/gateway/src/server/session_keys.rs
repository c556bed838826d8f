//! Session keys a caller names (`/hooks/agent`, the OpenAI endpoint's session header,
//! `system-event`, the session methods): whether one may be used, and whose agent it is.

use super::Gateway;

/// Longest session key a caller may name (keys end up in the session index).
pub(super) const MAX_SESSION_KEY: usize = 512;

/// A session key a caller named: bounded and printable, so it cannot smuggle control
/// characters into the index, the system-event queue's map or the logs.
pub(super) fn valid_session_key(key: &str) -> bool {
    !key.is_empty() && key.len() <= MAX_SESSION_KEY && !key.chars().any(char::is_control)
}

/// The agent a session key belongs to (`agent:<id>:…`) when that agent exists.
pub(super) fn known_agent_of_key(gw: &Gateway, key: &str) -> Option<String> {
    let id = key.strip_prefix("agent:")?.split(':').next()?;
    gw.runtime.is_known_agent(id).then(|| id.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn session_keys_callers_may_name() {
        assert!(valid_session_key("agent:main:custom"));
        assert!(valid_session_key("agent:main:telegram:direct:42"));
        assert!(!valid_session_key(""));
        assert!(!valid_session_key("a\nb"));
        assert!(!valid_session_key("a\u{7}b"));
        assert!(!valid_session_key(&"k".repeat(MAX_SESSION_KEY + 1)));
    }
}

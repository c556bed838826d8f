//! Who may see and reach which session: OpenClaw's `tools.sessions.visibility` (`self`,
//! `tree`, `agent`, `all`) and `tools.agentToAgent` (`enabled`, `allow` patterns), and the
//! refusals it words. Another agent's session is out of reach unless agent-to-agent is
//! enabled for both agents; a refusal never says whether the session exists.

use crate::settings::{AgentToAgent, TeamSettings, Visibility};

/// What a tool wants to do with a session (the refusals name it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    List,
    History,
    Send,
    Status,
}

impl Action {
    fn noun(self) -> &'static str {
        match self {
            Self::List => "list",
            Self::History => "history",
            Self::Send => "send",
            Self::Status => "status",
        }
    }

    /// "Session list", "Session send", …
    fn prefix(self) -> String {
        format!("Session {}", self.noun())
    }
}

/// The agent a session key belongs to: `agent:<id>:…`; `None` for keys without one
/// (`global`, `cron:<job>`, `delegate:…`).
pub fn agent_of_key(key: &str) -> Option<&str> {
    let rest = key.strip_prefix("agent:")?;
    let id = rest.split(':').next()?;
    (!id.is_empty()).then_some(id)
}

/// Whether `agent_id` matches one of `patterns` (`*`, exact ids, `*` wildcards inside);
/// an empty list matches every agent.
fn matches_allow(patterns: &[String], agent_id: &str) -> bool {
    patterns.is_empty()
        || patterns
            .iter()
            .any(|pattern| glob_matches(pattern.trim(), agent_id))
}

/// A case-insensitive match of `pattern` with `*` wildcards (no backtracking: each
/// literal part is found in order).
pub fn glob_matches(pattern: &str, text: &str) -> bool {
    if pattern.is_empty() {
        return false;
    }
    if !pattern.contains('*') {
        return pattern == text;
    }
    let (pattern, text) = (pattern.to_lowercase(), text.to_lowercase());
    let parts: Vec<&str> = pattern.split('*').collect();
    let (first, last) = (parts[0], parts[parts.len() - 1]);
    if !text.starts_with(first) || !text[first.len()..].ends_with(last) {
        return false;
    }
    let end = text.len() - last.len();
    let mut pos = first.len();
    for part in &parts[1..parts.len() - 1] {
        match text[pos..end].find(part) {
            Some(i) => pos += i + part.len(),
            None => return false,
        }
    }
    pos <= end
}

impl AgentToAgent {
    /// Whether `requester` may reach `target` (always its own agent).
    pub fn allows(&self, requester: &str, target: &str) -> bool {
        requester == target
            || (self.enabled
                && matches_allow(&self.allow, requester)
                && matches_allow(&self.allow, target))
    }
}

/// One session a tool asks about, as the policy needs to see it.
#[derive(Debug, Clone, Copy)]
pub struct Target<'a> {
    pub key: &'a str,
    pub agent_id: &'a str,
    /// The target was spawned (directly or further down) by the requesting session.
    pub spawned_by_requester: bool,
}

/// The session a tool runs in.
#[derive(Debug, Clone, Copy)]
pub struct Requester<'a> {
    pub key: &'a str,
    pub agent_id: &'a str,
}

/// `Ok` when `requester` may do `action` on `target`; else the refusal the model reads.
pub fn check(
    settings: &TeamSettings,
    action: Action,
    requester: Requester<'_>,
    target: Target<'_>,
) -> Result<(), String> {
    if target.key == requester.key || target.spawned_by_requester {
        return Ok(());
    }
    match settings.visibility {
        Visibility::SelfOnly => Err(format!(
            "{} visibility is restricted to the current session (tools.sessions.visibility=self).",
            action.prefix()
        )),
        Visibility::Tree => Err(format!(
            "{} visibility is restricted to the current session tree (tools.sessions.visibility=tree).",
            action.prefix()
        )),
        Visibility::Agent if target.agent_id != requester.agent_id => Err(format!(
            "{} visibility is restricted. Set tools.sessions.visibility=all to allow \
             cross-agent access; use tools.agentToAgent to restrict permitted agent pairs.",
            action.prefix()
        )),
        Visibility::Agent => Ok(()),
        Visibility::All => check_agents(
            &settings.agent_to_agent,
            action,
            requester.agent_id,
            target.agent_id,
        ),
    }
}

/// Whether agent `requester` may reach agent `target` at all (`agents_list`, `sessions_send`
/// by agent).
pub fn check_agents(
    a2a: &AgentToAgent,
    action: Action,
    requester: &str,
    target: &str,
) -> Result<(), String> {
    if a2a.allows(requester, target) {
        return Ok(());
    }
    if !a2a.enabled {
        return Err(match action {
            Action::Send => {
                "Agent-to-agent messaging is disabled. Set tools.agentToAgent.enabled=true \
                             to allow cross-agent sends."
                    .to_owned()
            }
            Action::List => {
                "Agent-to-agent listing is disabled. Set tools.agentToAgent.enabled=true \
                             to allow cross-agent visibility."
                    .to_owned()
            }
            other => format!(
                "Agent-to-agent {} is disabled. Set tools.agentToAgent.enabled=true to allow \
                 cross-agent access.",
                other.noun()
            ),
        });
    }
    let what = match action {
        Action::Send => "messaging",
        Action::List => "listing",
        other => other.noun(),
    };
    Err(format!(
        "Agent-to-agent {what} denied by tools.agentToAgent.allow."
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs_match_prefixes_suffixes_and_inner_parts_in_order() {
        assert!(glob_matches("*", "anything"));
        assert!(glob_matches("res*", "research"));
        assert!(glob_matches("*er", "writer"));
        assert!(glob_matches("a*c*e", "abcde"));
        assert!(!glob_matches("a*e*c", "abcde"));
        assert!(!glob_matches("ab*ab", "ab"));
        assert!(glob_matches("Main", "Main"));
        assert!(!glob_matches("main", "Main"));
        assert!(!glob_matches("", "x"));
    }

    #[test]
    fn the_agent_of_a_key_is_its_second_part() {
        assert_eq!(agent_of_key("agent:ops:telegram:direct:1"), Some("ops"));
        assert_eq!(agent_of_key("agent:main:main"), Some("main"));
        assert_eq!(agent_of_key("cron:job-1"), None);
        assert_eq!(agent_of_key("agent::x"), None);
    }
}

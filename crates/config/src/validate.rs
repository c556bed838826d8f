//! The rules types cannot express, checked after typed loading: agent ids and their
//! uniqueness, one default agent, bindings that name a known agent, `provider/model`
//! references, `channel:id` identity links, `session.mainKey`, `session.maintenance.pruneAfter`
//! (a duration such as `30d`), `auth.cooldownsMs`, `gateway.auth.token`. Every
//! problem is reported (not just the first), each with the key path it concerns.

use std::collections::BTreeMap;

use crate::keypath::KeyPath;
use crate::types::{ModelSelection, PincerConfig};

/// The agent every config has, whether or not `agents.list` names it.
pub const MAIN_AGENT_ID: &str = "main";

/// A rule broken at `path`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct RuleViolation {
    pub(crate) path: KeyPath,
    pub(crate) message: String,
}

/// Whether `id` is a valid agent id: `^[a-z0-9][a-z0-9_-]{0,63}$`.
pub fn is_valid_agent_id(id: &str) -> bool {
    let bytes = id.as_bytes();
    let allowed = |b: &u8| b.is_ascii_lowercase() || b.is_ascii_digit() || *b == b'_' || *b == b'-';
    !bytes.is_empty()
        && bytes.len() <= 64
        && (bytes[0].is_ascii_lowercase() || bytes[0].is_ascii_digit())
        && bytes.iter().all(allowed)
}

/// Checks every rule; an empty list means the config is valid.
pub(crate) fn check(config: &PincerConfig) -> Vec<RuleViolation> {
    let mut out = Vec::new();
    let mut fail = |path: KeyPath, message: String| out.push(RuleViolation { path, message });

    let list_path = KeyPath::root().key("agents").key("list");
    let mut first_with_id: BTreeMap<&str, usize> = BTreeMap::new();
    let mut first_default: Option<usize> = None;
    for (i, agent) in config.agents.list.iter().enumerate() {
        let at = list_path.index(i);
        if !is_valid_agent_id(&agent.id) {
            fail(
                at.key("id"),
                format!(
                    "invalid agent id \"{}\": use 1 to 64 of a-z, 0-9, _ and -, starting with a letter or digit",
                    agent.id
                ),
            );
        } else if let Some(first) = first_with_id.get(agent.id.as_str()) {
            fail(
                at.key("id"),
                format!(
                    "duplicate agent id \"{}\" (also agents.list[{first}])",
                    agent.id
                ),
            );
        } else {
            first_with_id.insert(&agent.id, i);
        }
        if agent.default {
            match first_default {
                Some(first) => fail(
                    at.key("default"),
                    format!("only one agent can be the default; agents.list[{first}] already is"),
                ),
                None => first_default = Some(i),
            }
        }
        if let Some(model) = &agent.model {
            check_model(model, &at.key("model"), &mut fail);
        }
        if let Some(heartbeat) = &agent.heartbeat {
            crate::automation::check_heartbeat(heartbeat, &at.key("heartbeat"), &mut fail);
        }
        if agent.memory_search.is_some() {
            let merged = crate::memory::MemorySearchConfig::merged(
                config.agents.defaults.memory_search.as_ref(),
                agent.memory_search.as_ref(),
            );
            crate::memory::check_memory(&merged, &at.key("memorySearch"), &mut fail);
        }
    }
    let defaults_path = KeyPath::root().key("agents").key("defaults");
    if let Some(memory) = &config.agents.defaults.memory_search {
        let at = defaults_path.key("memorySearch");
        crate::memory::check_memory(memory, &at, &mut fail);
    }
    if let Some(heartbeat) = &config.agents.defaults.heartbeat {
        let at = defaults_path.key("heartbeat");
        crate::automation::check_heartbeat(heartbeat, &at, &mut fail);
    }
    crate::automation::check_cron(&config.cron, &mut fail);
    crate::runner::check_runner(&config.agent, &mut fail);
    crate::channels::check_channels(&config.channels, &mut fail);
    if let Some(model) = &config.agents.defaults.model {
        check_model(model, &defaults_path.key("model"), &mut fail);
    }

    for (i, binding) in config.bindings.iter().enumerate() {
        let id = binding.agent_id.as_str();
        if id != MAIN_AGENT_ID && !first_with_id.contains_key(id) {
            let mut known: Vec<&str> = vec![MAIN_AGENT_ID];
            known.extend(first_with_id.keys().filter(|k| **k != MAIN_AGENT_ID));
            fail(
                KeyPath::root().key("bindings").index(i).key("agentId"),
                format!(
                    "unknown agent \"{id}\" (known agents: {})",
                    known.join(", ")
                ),
            );
        }
    }

    let session = KeyPath::root().key("session");
    for (name, links) in &config.session.identity_links {
        for (i, link) in links.iter().enumerate() {
            if split_pair(link, ':').is_none() {
                fail(
                    session.key("identityLinks").key(name).index(i),
                    format!(
                        "invalid identity link \"{link}\": expected channel:id, like \"telegram:123\""
                    ),
                );
            }
        }
    }
    if let Some(main_key) = &config.session.main_key {
        if main_key.is_empty() {
            fail(session.key("mainKey"), "must not be empty".to_owned());
        } else if main_key.contains(':') {
            fail(
                session.key("mainKey"),
                format!(
                    "\"{main_key}\" must not contain ':' (it is the last part of a session key)"
                ),
            );
        }
    }
    if let Some(after) = &config.session.maintenance.prune_after
        && let Err(e) = pincer_base::duration::parse_duration(after)
    {
        fail(session.key("maintenance").key("pruneAfter"), e);
    }
    if config.auth.cooldowns_ms.as_ref().is_some_and(Vec::is_empty) {
        fail(
            KeyPath::root().key("auth").key("cooldownsMs"),
            "must list at least one cooldown (leave it out for the defaults)".to_owned(),
        );
    }
    if config
        .gateway
        .auth
        .token
        .as_ref()
        .is_some_and(|t| t.expose().trim().is_empty())
    {
        fail(
            KeyPath::root().key("gateway").key("auth").key("token"),
            "must not be empty (leave it out to use the generated token file)".to_owned(),
        );
    }
    let http = KeyPath::root().key("gateway").key("http");
    if config.gateway.http.header_read_timeout_ms == Some(0) {
        fail(
            http.key("headerReadTimeoutMs"),
            "must be at least 1 (a client must not hold a connection without a request)".to_owned(),
        );
    }
    if config.gateway.http.max_connections == Some(0) {
        fail(http.key("maxConnections"), "must be at least 1".to_owned());
    }
    crate::mcp::check(config, &mut fail);
    out
}

fn check_model(model: &ModelSelection, path: &KeyPath, fail: &mut impl FnMut(KeyPath, String)) {
    let (primary_path, fallbacks_path) = match model {
        ModelSelection::Primary(_) => (path.clone(), path.key("fallbacks")),
        ModelSelection::Chain(_) => (path.key("primary"), path.key("fallbacks")),
    };
    let mut check_one = |reference: &str, at: KeyPath| {
        if split_pair(reference, '/').is_none() {
            fail(
                at,
                format!(
                    "invalid model reference \"{reference}\": expected provider/model, like \"anthropic/claude-sonnet-4-5\""
                ),
            );
        }
    };
    check_one(model.primary(), primary_path);
    for (i, fallback) in model.fallbacks().iter().enumerate() {
        check_one(fallback, fallbacks_path.index(i));
    }
}

/// `a<sep>b` with both parts non-empty (split at the first `sep`: a model id may hold more).
fn split_pair(text: &str, sep: char) -> Option<(&str, &str)> {
    text.split_once(sep)
        .filter(|(a, b)| !a.trim().is_empty() && !b.trim().is_empty())
}

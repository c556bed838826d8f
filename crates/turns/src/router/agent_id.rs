//! Agent ids: validation, OpenClaw's best-effort normalisation, and which agents a config
//! knows (the implicit `main` plus `agents.list`) and which one is the default.

use pincer_config::PincerConfig;

use super::RouterError;

/// The agent that exists without configuration and answers when nothing else does.
pub const DEFAULT_AGENT_ID: &str = "main";

/// Whether `id` matches `^[a-z0-9][a-z0-9_-]{0,63}$` exactly (no trimming, no case folding);
/// the config's rule, so both places agree.
pub use pincer_config::is_valid_agent_id;

/// Longest agent id: the `{0,63}` of the pattern plus the first character.
const MAX_AGENT_ID_CHARS: usize = 64;

/// Characters `normalize_agent_id` keeps as they are.
fn is_id_char(c: char) -> bool {
    c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == '-'
}

/// Checks a user-supplied agent id. Surrounding whitespace is trimmed and ASCII case folded
/// first, because OpenClaw's check is case-insensitive and its ids are stored lowercase
/// (`Work` and `work` are one agent). Returns the canonical id.
pub fn validate_agent_id(id: &str) -> Result<String, RouterError> {
    let canonical = id.trim().to_ascii_lowercase();
    if is_valid_agent_id(&canonical) {
        Ok(canonical)
    } else {
        Err(RouterError::InvalidAgentId { id: id.to_string() })
    }
}

/// OpenClaw's `normalizeAgentId`: a valid id is lowercased; anything else is repaired
/// best-effort (runs of other characters become `-`, leading and trailing dashes go, at most
/// 64 characters) so a path or key built from it stays safe; empty input means `main`.
/// The repaired id is not guaranteed to validate (it may start with `_`), exactly as upstream.
pub fn normalize_agent_id(id: &str) -> String {
    let trimmed = id.trim();
    if trimmed.is_empty() {
        return DEFAULT_AGENT_ID.to_string();
    }
    let lowered = trimmed.to_ascii_lowercase();
    if is_valid_agent_id(&lowered) {
        return lowered;
    }
    let mut collapsed = String::with_capacity(lowered.len());
    let mut in_invalid_run = false;
    for c in lowered.chars() {
        if is_id_char(c) {
            collapsed.push(c);
            in_invalid_run = false;
        } else if !in_invalid_run {
            collapsed.push('-');
            in_invalid_run = true;
        }
    }
    let repaired: String = collapsed
        .trim_matches('-')
        .chars()
        .take(MAX_AGENT_ID_CHARS)
        .collect();
    if repaired.is_empty() {
        DEFAULT_AGENT_ID.to_string()
    } else {
        repaired
    }
}

/// Every agent the config knows, normalised, in config order: `main` first (it always
/// exists), then `agents.list` without duplicates.
pub fn known_agent_ids(cfg: &PincerConfig) -> Vec<String> {
    let mut ids = vec![DEFAULT_AGENT_ID.to_string()];
    for entry in &cfg.agents.list {
        let id = normalize_agent_id(&entry.id);
        if !ids.contains(&id) {
            ids.push(id);
        }
    }
    ids
}

/// Whether `agent_id` (any case) names an agent the config knows.
pub fn is_known_agent(cfg: &PincerConfig, agent_id: &str) -> bool {
    let wanted = normalize_agent_id(agent_id);
    wanted == DEFAULT_AGENT_ID
        || cfg
            .agents
            .list
            .iter()
            .any(|entry| normalize_agent_id(&entry.id) == wanted)
}

/// The agent that answers what no binding or prefix claims: the first `agents.list` entry
/// marked `default: true`, else `main`.
pub fn default_agent_id(cfg: &PincerConfig) -> String {
    cfg.agents
        .list
        .iter()
        .find(|entry| entry.default)
        .map(|entry| normalize_agent_id(&entry.id))
        .unwrap_or_else(|| DEFAULT_AGENT_ID.to_string())
}

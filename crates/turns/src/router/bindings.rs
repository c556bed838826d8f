//! Choosing an agent for an inbound message: static bindings scored by specificity
//! (pi-gateway's `matchBinding`: peer 8 > guild 4 > account 2 > channel 1, summed), then a
//! `/<agentId>` prefix on the text.
//!
//! Details taken from OpenClaw's `resolve-route.ts`: channels compare lowercased, accounts
//! through `normalizeAccountId` (so a missing account is `default`) with `*` meaning any
//! account, guild/team/peer ids compare exactly (trimmed), and a `group` peer binding also
//! matches a `channel` (and, here, a `room`) because channels name the same thing
//! differently. A Slack `teamId` scores like a Discord `guildId`: it is the same tier (the
//! workspace a chat lives in), which OpenClaw checks right after guilds.

use pincer_config::{Binding, BindingMatch, PeerKind, PincerConfig};

use super::ChatKind;
use super::RouteInput;
use super::agent_id::{is_known_agent, normalize_agent_id, validate_agent_id};
use super::session_key::{normalize_account_id, normalize_channel};

const PEER_SCORE: u32 = 8;
const GUILD_SCORE: u32 = 4;
const TEAM_SCORE: u32 = 4;
const ACCOUNT_SCORE: u32 = 2;
const CHANNEL_SCORE: u32 = 1;

/// A binding's score for `input`, or `None` when any field it gives does not match.
pub fn binding_score(binding: &BindingMatch, input: &RouteInput) -> Option<u32> {
    let binding_channel = binding.channel.trim();
    // OpenClaw drops bindings without a channel; one that named no channel matches nothing.
    if binding_channel.is_empty()
        || normalize_channel(binding_channel) != normalize_channel(&input.channel)
    {
        return None;
    }
    let mut score = CHANNEL_SCORE;

    if let Some(account) = binding.account_id.as_deref().map(str::trim)
        && !account.is_empty()
        && account != "*"
    {
        if normalize_account_id(Some(account)) != normalize_account_id(input.account_id.as_deref())
        {
            return None;
        }
        score += ACCOUNT_SCORE;
    }
    if let Some(guild) = given(binding.guild_id.as_deref()) {
        if given(input.guild_id.as_deref()) != Some(guild) {
            return None;
        }
        score += GUILD_SCORE;
    }
    if let Some(team) = given(binding.team_id.as_deref()) {
        if given(input.team_id.as_deref()) != Some(team) {
            return None;
        }
        score += TEAM_SCORE;
    }
    if let Some(peer) = &binding.peer {
        let id = given(Some(&peer.id))?;
        if !peer_kind_matches(peer.kind, input.chat_kind) || input.peer_id.trim() != id {
            return None;
        }
        score += PEER_SCORE;
    }
    Some(score)
}

/// A field a binding or an input gives: trimmed, `None` when blank.
fn given(value: Option<&str>) -> Option<&str> {
    value.map(str::trim).filter(|v| !v.is_empty())
}

fn peer_kind_matches(binding_kind: PeerKind, chat_kind: ChatKind) -> bool {
    match binding_kind {
        PeerKind::Direct => chat_kind == ChatKind::Direct,
        PeerKind::Group | PeerKind::Channel => chat_kind != ChatKind::Direct,
    }
}

/// The best-scoring binding whose agent exists: `(index in config.bindings, agent id)`.
/// Ties go to the binding listed first. A binding naming an agent the config does not know
/// is skipped (as pi-gateway does), so a typo never routes to a phantom agent.
pub(super) fn best_binding(cfg: &PincerConfig, input: &RouteInput) -> Option<(usize, String)> {
    let mut best: Option<(u32, usize, &Binding)> = None;
    for (index, binding) in cfg.bindings.iter().enumerate() {
        if !is_known_agent(cfg, &binding.agent_id) {
            continue;
        }
        let Some(score) = binding_score(&binding.match_, input) else {
            continue;
        };
        if best.is_none_or(|(best_score, _, _)| score > best_score) {
            best = Some((score, index, binding));
        }
    }
    best.map(|(_, index, binding)| (index, normalize_agent_id(&binding.agent_id)))
}

/// A leading `/<agentId>` naming a known agent, followed by whitespace or the end:
/// `(agent id, the text after it, trimmed)`. Anything else (an unknown agent, `/help`,
/// `/work:` …) is left for the default agent, untouched.
pub(super) fn strip_agent_prefix(cfg: &PincerConfig, text: &str) -> Option<(String, String)> {
    let after_slash = text.strip_prefix('/')?;
    let token_end = after_slash
        .find(char::is_whitespace)
        .unwrap_or(after_slash.len());
    let (token, rest) = after_slash.split_at(token_end);
    // The token must be an agent id as written (any case), not something that merely
    // normalises to one: `/work:` or `/work!` is not a prefix.
    let agent = validate_agent_id(token).ok()?;
    if !is_known_agent(cfg, &agent) {
        return None;
    }
    Some((agent, rest.trim().to_string()))
}

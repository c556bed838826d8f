//! Which worker role (capability profile) a session runs under — pi-gateway's
//! `resolveRoleForSession`, flattened onto Pincer's `roles` config: the most specific entry
//! wins.

use pincer_config::RolesConfig;

use super::ChatKind;
use super::RouteInput;
use super::session_key::{SessionTarget, normalize_channel, parse_session_key};

/// The role when the config names none.
pub const DEFAULT_ROLE: &str = "default";

/// Resolution order, first hit wins:
/// 1. `roles.channels.<channel>.groups.<id>` for the chat's own id (a Telegram group, a
///    Discord channel — the most specific, like pi-gateway's per-channel guild role), then its
///    Discord guild id, then its Slack team id. DMs have no group, so they skip this step.
/// 2. `roles.channels.<channel>.role`.
/// 3. `roles.default`.
/// 4. `"default"`.
pub fn resolve_role(roles: &RolesConfig, input: &RouteInput) -> String {
    let channel = normalize_channel(&input.channel);
    if let Some(channel_roles) = roles.channels.get(&channel) {
        let chat_id = (input.chat_kind != ChatKind::Direct).then_some(input.peer_id.as_str());
        let group_role = [chat_id, input.guild_id.as_deref(), input.team_id.as_deref()]
            .into_iter()
            .flatten()
            .map(str::trim)
            .filter(|id| !id.is_empty())
            .find_map(|id| channel_roles.groups.get(id));
        if let Some(role) = group_role.or(channel_roles.role.as_ref()) {
            return role.clone();
        }
    }
    roles
        .default
        .clone()
        .unwrap_or_else(|| DEFAULT_ROLE.to_string())
}

/// The role of a session known only by its key (a turn asked for over WebSocket, a
/// heartbeat, a cron run): [`resolve_role`] for the chat the key names — its channel and
/// group id, or its channel for a DM — and `roles.default` for keys naming no chat (the
/// main session, named and cron sessions). A Discord guild or Slack team is not in the
/// key, so only a route knows their roles; the caller prefers the role its last route gave.
pub fn resolve_role_for_key(roles: &RolesConfig, session_key: &str) -> String {
    let input = match parse_session_key(session_key).map(|k| k.target) {
        Ok(SessionTarget::Chat { channel, kind, id }) => RouteInput {
            channel,
            chat_kind: kind,
            peer_id: id,
            ..RouteInput::default()
        },
        Ok(SessionTarget::Direct {
            channel: Some(channel),
            peer,
            ..
        }) => RouteInput {
            channel,
            chat_kind: ChatKind::Direct,
            peer_id: peer,
            ..RouteInput::default()
        },
        _ => RouteInput::default(),
    };
    resolve_role(roles, &input)
}

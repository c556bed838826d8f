//! `/activation mention|always` (OpenClaw's), answered like the other chat commands (see
//! `chat_commands.rs`): in a group chat's session it sets `groupActivation` on the
//! session's index entry (where `sessions.patch` keeps it), which overrides the channel's
//! `requireMention` for that group (`server/group_activation.rs`). Only a channel owner may
//! use it in a group (it changes the shared session: `Command::changes_session`).

use pincer_turns::commands::Setting;
use pincer_turns::router::{SessionKind, parse_session_key};
use serde_json::json;

use super::super::Gateway;
use super::super::group_activation::normalize;
use super::chat_commands::set;

/// OpenClaw's answers.
const USAGE: &str = "⚙️ Usage: /activation mention|always";
const NOT_A_GROUP: &str = "⚙️ Group activation only applies to group chats.";

/// `/activation [mode]` on session `key` of `agent_id`.
pub(super) async fn activation(
    gw: &Gateway,
    agent_id: &str,
    key: &str,
    setting: Option<Setting>,
) -> Result<String, String> {
    let is_group = parse_session_key(key).is_ok_and(|k| k.kind() == SessionKind::Group);
    if !is_group {
        return Ok(NOT_A_GROUP.to_owned());
    }
    let Some(Setting::Value(mode)) = setting else {
        return Ok(USAGE.to_owned());
    };
    let Ok(mode) = normalize(&mode) else {
        return Ok(USAGE.to_owned());
    };
    set(gw, agent_id, key, json!({ "groupActivation": mode })).await?;
    Ok(format!("⚙️ Group activation set to {mode}."))
}

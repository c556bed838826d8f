//! The agents, in OpenClaw's shapes: `agents.list` (every agent the configuration knows —
//! `main` always — with its workspace, model and thinking levels) and `agent.identity.get`
//! (the name, emoji and avatar the agent's workspace `IDENTITY.md` gives it, which the
//! Control UI shows next to its replies). Workspaces are looked at on the blocking pool.

use std::path::{Path, PathBuf};

use pincer_config::PincerConfig;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::super::Gateway;
use super::super::frames::MethodError;
use super::super::runtime::on_blocking_pool;
use super::catalog::{Thinking, model_selection, thinking_level};
use super::params::parse;

/// The name and avatar of an agent whose workspace names none (OpenClaw's).
const DEFAULT_NAME: &str = "Assistant";
const DEFAULT_AVATAR: &str = "A";

/// `IDENTITY.md` is a short file: a larger one is not read.
const MAX_IDENTITY_BYTES: u64 = 64 * 1024;

/// An agent's model as `agents.list` shows it.
#[derive(Serialize)]
pub(super) struct AgentModel {
    primary: String,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    fallbacks: Vec<String>,
}

/// One agent of `agents.list`.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct AgentRow {
    id: String,
    kind: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    name: Option<String>,
    workspace: String,
    workspace_git: bool,
    #[serde(flatten)]
    thinking: Thinking,
    #[serde(skip_serializing_if = "Option::is_none")]
    model: Option<AgentModel>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct AgentsListResponse {
    default_id: String,
    /// One operator owns every agent; none has to be picked before chatting.
    ownership: &'static str,
    selection_required: bool,
    main_key: String,
    scope: &'static str,
    agents: Vec<AgentRow>,
}

/// `agents.list`.
pub(super) async fn list(gw: &Gateway) -> Result<AgentsListResponse, MethodError> {
    let config = gw.runtime.config();
    let ids = pincer_turns::router::known_agent_ids(config);
    // Where each workspace is may create it (the runtime makes it with its starter files).
    let workspaces = on_blocking_pool(&gw.runtime, move |runtime| {
        ids.into_iter()
            .map(|id| {
                let dir = runtime.workspace(&id);
                let git = dir.as_deref().is_some_and(is_git_checkout);
                (id, dir, git)
            })
            .collect::<Vec<_>>()
    })
    .await
    .map_err(|e| MethodError::unavailable(format!("the workspaces' task failed: {e}")))?;
    let known = gw.runtime.models();
    let agents = workspaces
        .into_iter()
        .map(|(id, dir, workspace_git)| {
            let selection = model_selection(config, &id);
            let reasoning = selection.is_some_and(|s| {
                let (provider, model) = s.primary().split_once('/').unwrap_or(("", s.primary()));
                known.iter().any(|m| {
                    m.id == model && m.reasoning && (provider.is_empty() || m.provider == provider)
                })
            });
            AgentRow {
                name: config
                    .agents
                    .list
                    .iter()
                    .find(|a| pincer_turns::router::normalize_agent_id(&a.id) == id)
                    .and_then(|a| a.name.clone()),
                kind: "agent",
                workspace: dir.map(|d| d.display().to_string()).unwrap_or_default(),
                workspace_git,
                thinking: Thinking::of(reasoning, thinking_level(config, &id).as_deref()),
                model: selection.map(|s| AgentModel {
                    primary: s.primary().to_owned(),
                    fallbacks: s.fallbacks().to_vec(),
                }),
                id,
            }
        })
        .collect();
    Ok(AgentsListResponse {
        default_id: gw.runtime.default_agent_id(),
        ownership: "sole",
        selection_required: false,
        main_key: main_key(config),
        scope: match config.session.scope {
            pincer_config::SessionScope::PerSender => "per-sender",
            pincer_config::SessionScope::Global => "global",
        },
        agents,
    })
}

/// Whether `dir` is a git checkout (it has `.git`).
#[expect(
    clippy::disallowed_methods,
    reason = "runs on the blocking pool: agents.list"
)]
fn is_git_checkout(dir: &Path) -> bool {
    dir.join(".git").exists()
}

fn main_key(config: &PincerConfig) -> String {
    pincer_turns::router::normalize_main_key(config.session.main_key.as_deref())
}

/// The params of `agent.identity.get`.
#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct AgentIdentityParams {
    /// The default agent's when absent.
    agent_id: Option<String>,
    /// Or the agent of this session.
    session_key: Option<String>,
}

/// An agent's identity as the Control UI shows it.
#[derive(Serialize, Debug, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub(super) struct IdentityResponse {
    agent_id: String,
    name: String,
    /// `workspace` (IDENTITY.md), `config` (`agents.list[].name`) or `default`.
    name_source: &'static str,
    /// What to draw: an image URL, else the emoji, else a letter.
    avatar: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    emoji: Option<String>,
    /// The avatar IDENTITY.md names, as written (`remote URL` for a web address).
    #[serde(skip_serializing_if = "Option::is_none")]
    avatar_source: Option<String>,
    /// `remote` (drawn from its URL) or `none` (not drawn: see `avatarReason`).
    #[serde(skip_serializing_if = "Option::is_none")]
    avatar_status: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    avatar_reason: Option<&'static str>,
}

/// `agent.identity.get {agentId?, sessionKey?}`. An unknown agent gets the default
/// identity, as OpenClaw's.
pub(super) async fn identity(gw: &Gateway, p: &Value) -> Result<IdentityResponse, MethodError> {
    let params: AgentIdentityParams = parse(p)?;
    let agent_id = match (params.agent_id, params.session_key) {
        (Some(id), _) => id.trim().to_owned(),
        (None, Some(key)) => super::agent_of_key(gw, &key),
        (None, None) => gw.runtime.default_agent_id(),
    };
    let configured_name = gw
        .runtime
        .config()
        .agents
        .list
        .iter()
        .find(|a| a.id == agent_id)
        .and_then(|a| a.name.clone());
    let file = if gw.runtime.is_known_agent(&agent_id) {
        let id = agent_id.clone();
        on_blocking_pool(&gw.runtime, move |runtime| {
            runtime.workspace(&id).and_then(|dir| read_identity(&dir))
        })
        .await
        .map_err(|e| MethodError::unavailable(format!("the identity's task failed: {e}")))?
    } else {
        None
    };
    Ok(resolve_identity(
        agent_id,
        file.as_ref(),
        configured_name.as_deref(),
    ))
}

/// The fields of an `IDENTITY.md`.
#[derive(Debug, Default, PartialEq, Eq)]
pub(super) struct IdentityFile {
    name: Option<String>,
    emoji: Option<String>,
    avatar: Option<String>,
}

/// Reads `IDENTITY.md` in `workspace` (`None` when absent, unreadable or large).
#[expect(
    clippy::disallowed_methods,
    reason = "runs on the blocking pool: agent.identity.get"
)]
fn read_identity(workspace: &Path) -> Option<IdentityFile> {
    let path: PathBuf = workspace.join("IDENTITY.md");
    let meta = std::fs::metadata(&path).ok()?;
    if !meta.is_file() || meta.len() > MAX_IDENTITY_BYTES {
        return None;
    }
    std::fs::read_to_string(&path)
        .ok()
        .map(|text| parse_identity(&text))
}

/// The `Name`, `Emoji` and `Avatar` lines of an `IDENTITY.md`, as the template writes them
/// (`- **Name:** Clawd`) or plainly (`Name: Clawd`), keys in any case. A value still in
/// the template's `_(…)_` form is no value.
pub(super) fn parse_identity(text: &str) -> IdentityFile {
    let mut file = IdentityFile::default();
    for line in text.lines() {
        let line = line.trim().trim_start_matches(['-', '*', '+']).trim();
        let Some((key, value)) = line.split_once(':') else {
            continue;
        };
        let key = key.trim().trim_matches('*').trim().to_lowercase();
        let value = value.trim().trim_start_matches('*').trim();
        let placeholder = value.starts_with("_(") && value.ends_with(")_");
        if value.is_empty() || placeholder {
            continue;
        }
        let slot = match key.as_str() {
            "name" => &mut file.name,
            "emoji" => &mut file.emoji,
            "avatar" => &mut file.avatar,
            _ => continue,
        };
        slot.get_or_insert_with(|| value.to_owned());
    }
    file
}

/// The identity from the file's fields, the configured name and the defaults.
pub(super) fn resolve_identity(
    agent_id: String,
    file: Option<&IdentityFile>,
    configured_name: Option<&str>,
) -> IdentityResponse {
    let (name, name_source) = match (file.and_then(|f| f.name.as_deref()), configured_name) {
        (Some(name), _) => (name.to_owned(), "workspace"),
        (None, Some(name)) => (name.to_owned(), "config"),
        (None, None) => (DEFAULT_NAME.to_owned(), "default"),
    };
    let emoji = file.and_then(|f| f.emoji.clone());
    let fallback = emoji.clone().unwrap_or_else(|| DEFAULT_AVATAR.to_owned());
    let mut identity = IdentityResponse {
        agent_id,
        name,
        name_source,
        avatar: fallback,
        emoji,
        avatar_source: None,
        avatar_status: None,
        avatar_reason: None,
    };
    if let Some(avatar) = file.and_then(|f| f.avatar.as_deref()) {
        if avatar.starts_with("https://") || avatar.starts_with("http://") {
            identity.avatar = avatar.to_owned();
            identity.avatar_source = Some("remote URL".to_owned());
            identity.avatar_status = Some("remote");
        } else {
            // Pincer serves no files from the workspace: a local avatar is not drawn.
            identity.avatar_source = Some(avatar.to_owned());
            identity.avatar_status = Some("none");
            identity.avatar_reason = Some("unsupported");
        }
    }
    identity
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_template_and_plain_lines_are_read() {
        let file = parse_identity(
            "# IDENTITY.md\n\n- **Name:** Clawd\n- **Creature:** _(AI? robot?)_\n- **Emoji:** 🦞\navatar: https://x.test/a.png\n",
        );
        assert_eq!(
            file,
            IdentityFile {
                name: Some("Clawd".into()),
                emoji: Some("🦞".into()),
                avatar: Some("https://x.test/a.png".into()),
            }
        );
        let template = parse_identity(include_str!(
            "../../../../turns/src/workspace/templates/IDENTITY.md"
        ));
        assert_eq!(template, IdentityFile::default());
    }

    #[test]
    fn the_defaults_fill_what_the_file_leaves_out() {
        let id = resolve_identity("main".into(), None, None);
        assert_eq!(
            (id.name.as_str(), id.name_source, id.avatar.as_str()),
            ("Assistant", "default", "A")
        );
        let file = parse_identity("- **Emoji:** 🦞\n- **Avatar:** me.png\n");
        let id = resolve_identity("main".into(), Some(&file), Some("Work"));
        assert_eq!(
            (id.name.as_str(), id.name_source, id.avatar.as_str()),
            ("Work", "config", "🦞")
        );
        assert_eq!(id.avatar_status, Some("none"));
    }
}

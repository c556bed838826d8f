//! The system prompt of a CLI turn: the agent's workspace files, its skills and its tools,
//! assembled by the gateway's prompt builder. Skill problems are reported on stderr (a
//! broken SKILL.md never stops a turn).
//!
//! Gateway turns also get the gateway's protocol sections (heartbeat, cron, media) for the
//! features the agent has; a one-shot `pincer ask` turn does not, since no heartbeat poll,
//! cron event or channel attachment can reach it, nor does a `pincer rpc` worker's (its
//! gateway appends them, see `rpc::runner`).

use std::path::Path;

use anyhow::Result;
use pincer_agent::AgentConfig;
use pincer_config::PincerConfig;
use pincer_turns::prompt::{PromptInputs, PromptTool, build_system_prompt};
use pincer_turns::prompt_sections::{GatewayPromptFeatures, gateway_prompt_sections};
use pincer_turns::router::{SessionKind, parse_session_key};
use pincer_turns::skills::{SkillDirs, load_skills};
use pincer_turns::workspace::{BootstrapLimits, load_bootstrap_files};

use crate::app::App;

/// Builds the prompt for a turn of `session_key` with `config`'s model and tools.
pub fn system_prompt(
    app: &App,
    agent_id: &str,
    session_key: &str,
    workspace: &Path,
    channel: &str,
    config: &AgentConfig,
) -> Result<String> {
    let kind = parse_session_key(session_key).map_or(SessionKind::Main, |k| k.kind());
    let files = load_bootstrap_files(workspace, kind, &BootstrapLimits::from_config(&app.config))?;
    let skills = load_skills(&skill_dirs(app, workspace));
    for issue in &skills.issues {
        eprintln!("warning: skill skipped: {issue}");
    }
    let tools: Vec<PromptTool> = config
        .tools
        .iter()
        .map(|t| PromptTool::from_agent_tool(t.as_ref()))
        .collect();
    let model = config.model.reference();
    let thinking = serde_json::to_value(config.thinking_level)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned));
    let now = pincer_base::time::iso_now();
    let extra_sections = if is_gateway_turn(channel) {
        gateway_prompt_sections(gateway_prompt_features(&app.config, agent_id)?)
    } else {
        Vec::new()
    };
    let inputs = PromptInputs {
        agent_id,
        agent_name: app.agent_entry(agent_id).and_then(|a| a.name.as_deref()),
        model: &model,
        thinking: thinking.as_deref(),
        channel: Some(channel),
        session_kind: kind,
        workspace_dir: workspace,
        tools: &tools,
        skills: &skills.skills,
        bootstrap_files: &files,
        current_time: Some(&now),
        extra_sections: &extra_sections,
    };
    Ok(build_system_prompt(&inputs))
}

/// Where an agent working in `workspace` finds its skills: the standard directories (unless
/// `App::discover_skills` is off) and `skills.load.extraDirs`.
pub fn skill_dirs(app: &App, workspace: &Path) -> SkillDirs {
    let home_dir = app.env.var("HOME").map(std::path::PathBuf::from);
    let mut dirs = SkillDirs::new(
        workspace,
        home_dir.as_deref(),
        &app.home,
        &app.config.skills,
    );
    dirs.discover = app.discover_skills;
    dirs
}

/// The channel of `pincer ask`'s one-shot turns; every other channel is the gateway's.
const CLI_CHANNEL: &str = "cli";
/// The channel of a `pincer rpc` worker's turns: the gateway that drives it passes its
/// sections with `--append-system-prompt` (as to a pi worker), so the worker adds none.
const RPC_CHANNEL: &str = "rpc";

fn is_gateway_turn(channel: &str) -> bool {
    channel != CLI_CHANNEL && channel != RPC_CHANNEL
}

/// Which protocol sections `agent_id`'s gateway turns get: a feature's section when the
/// feature is on for that agent, unless `agents.defaults.gatewayPrompts` or the agent's own
/// `gatewayPrompts` (which wins field by field) forces it on or off.
pub fn gateway_prompt_features(
    config: &PincerConfig,
    agent_id: &str,
) -> Result<GatewayPromptFeatures> {
    let heartbeat = crate::heartbeat_setup::heartbeat_settings(config)?
        .iter()
        .any(|(id, settings)| id == agent_id && settings.every_ms > 0);
    let cron = config.cron.enabled != Some(false);
    // Files go out on every gateway surface: the chat channels deliver `MEDIA:` lines as
    // attachments and the web chat shows them (`chat.media.get`).
    let media = true;
    let defaults = config.agents.defaults.gateway_prompts.unwrap_or_default();
    let forced = config
        .agents
        .list
        .iter()
        .find(|a| a.id == agent_id)
        .and_then(|a| a.gateway_prompts)
        .unwrap_or_default()
        .or(defaults);
    Ok(GatewayPromptFeatures {
        heartbeat: forced.heartbeat.unwrap_or(heartbeat),
        cron: forced.cron.unwrap_or(cron),
        media: forced.media.unwrap_or(media),
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn features(text: &str, agent_id: &str) -> GatewayPromptFeatures {
        let config =
            pincer_config::parse_str(text, "pincer.json5", &pincer_ai::env::MapEnv::default())
                .unwrap()
                .config;
        gateway_prompt_features(&config, agent_id).unwrap()
    }

    fn on(heartbeat: bool, cron: bool, media: bool) -> GatewayPromptFeatures {
        GatewayPromptFeatures {
            heartbeat,
            cron,
            media,
        }
    }

    #[test]
    fn by_default_every_feature_is_on() {
        assert_eq!(features("{}", "main"), on(true, true, true));
    }

    #[test]
    fn the_features_follow_the_heartbeat_and_cron_settings() {
        let text = "{cron: {enabled: false}, agents: {list: [\
                    {id: 'main'}, {id: 'quiet', heartbeat: {every: '0m'}}]}}";
        assert_eq!(features(text, "main"), on(true, false, true));
        assert_eq!(features(text, "quiet"), on(false, false, true));
        // An agent the configuration does not know has no heartbeat.
        assert_eq!(features(text, "ghost"), on(false, false, true));
    }

    #[test]
    fn gateway_prompts_force_each_feature_and_the_agent_wins_field_by_field() {
        let text = "{agents: {\
                    defaults: {gatewayPrompts: {heartbeat: false, cron: false}},\
                    list: [{id: 'main'}, {id: 'ops', gatewayPrompts: {cron: true, media: true}}]}}";
        assert_eq!(features(text, "main"), on(false, false, true));
        assert_eq!(features(text, "ops"), on(false, true, true));
        let forced_on = "{cron: {enabled: false}, agents: {defaults: \
                         {heartbeat: {every: '0m'}, gatewayPrompts: {heartbeat: true, cron: true, media: false}}}}";
        assert_eq!(features(forced_on, "main"), on(true, true, false));
    }

    #[test]
    fn only_gateway_turns_get_the_sections() {
        assert!(!is_gateway_turn("cli"));
        assert!(is_gateway_turn("webchat"));
    }
}

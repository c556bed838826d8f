//! The system prompt of a CLI turn: the agent's workspace files, its skills and its tools,
//! assembled by the gateway's prompt builder. Skill problems are reported on stderr (a
//! broken SKILL.md never stops a turn).

use std::path::Path;

use anyhow::Result;
use pincer_agent::AgentConfig;
use pincer_gateway::prompt::{PromptInputs, PromptTool, build_system_prompt};
use pincer_gateway::router::{SessionKind, parse_session_key};
use pincer_gateway::skills::{SkillDirs, load_skills};
use pincer_gateway::workspace::{BootstrapLimits, load_bootstrap_files};

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
    let home_dir = app.env.var("HOME").map(std::path::PathBuf::from);
    let skill_dirs = SkillDirs::new(
        workspace,
        home_dir.as_deref(),
        &app.home,
        &app.config.skills,
    );
    let skills = load_skills(&skill_dirs);
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
    let now = pincer_store::ids::iso_now();
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
        extra_sections: &[],
    };
    Ok(build_system_prompt(&inputs))
}

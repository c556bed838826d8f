//! The system prompt through the public API: a golden prompt for a seeded workspace, and
//! the rules that shape its sections.

use std::fs;
use std::path::{Path, PathBuf};

use futures_util::future::BoxFuture;
use pincer_agent::{AgentTool, ToolContext, ToolError, ToolOutput, typed};
use pincer_config::SkillsConfig;
use pincer_turns::prompt::{
    PromptInputs, PromptSection, PromptTool, build_system_prompt, core_tool_summary,
};
use pincer_turns::router::SessionKind;
use pincer_turns::skills::{SkillDirs, load_skills};
use pincer_turns::workspace::{
    BootstrapLimits, STARTER_FILES, ensure_workspace, load_bootstrap_files,
};
use serde_json::Value;

/// A workspace `ws` in a new temporary directory holding `files`; the directory (kept
/// alive by the caller) and the workspace path.
fn seeded(files: &[(&str, &str)]) -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let workspace = tmp.path().join("ws");
    for (name, content) in files {
        let path = workspace.join(name);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, content).unwrap();
    }
    (tmp, workspace)
}

fn inputs<'a>(
    workspace: &'a Path,
    tools: &'a [PromptTool],
    skills: &'a [pincer_turns::skills::Skill],
    files: &'a [pincer_turns::workspace::BootstrapFile],
    extra: &'a [PromptSection],
) -> PromptInputs<'a> {
    PromptInputs {
        agent_id: "main",
        agent_name: Some("Pinchy"),
        model: "anthropic/claude-sonnet-4-5",
        thinking: Some("low"),
        channel: Some("Telegram"),
        session_kind: SessionKind::Direct,
        workspace_dir: workspace,
        tools,
        skills,
        bootstrap_files: files,
        current_time: Some("2026-05-01 09:30 (Europe/Berlin)"),
        extra_sections: extra,
    }
}

const GOLDEN: &str = "\
You are Pinchy, a personal assistant running inside Pincer.

## Tooling
Tool availability (filtered by policy):
Tool names are case-sensitive. Call tools exactly as listed.
- read: Read file contents
- exec: Run shell commands (long runs continue in the background)
- tools.echo: Echo text back unchanged
- weather: Look up the weather
- zz_custom
TOOLS.md does not control tool availability; it is user guidance for how to use external tools.

## Skills (mandatory)
Before replying: scan <available_skills> <description> entries.
- If exactly one skill clearly applies: read its SKILL.md at <location> with `read`, then follow it.
- If multiple could apply: choose the most specific one, then read/follow it.
- If none clearly apply: do not read any SKILL.md.
Constraints: never read more than one skill up front; only read after selecting.

The following skills provide specialized instructions for specific tasks.
Use the read tool to load a skill's file when the task matches its description.
When a skill file references a relative path, resolve it against the skill directory (parent of SKILL.md / dirname of the path) and use that absolute path in tool commands.

<available_skills>
  <skill>
    <name>pdf</name>
    <description>Read and summarise PDF files</description>
    <location>/WORKSPACE/skills/pdf/SKILL.md</location>
  </skill>
</available_skills>

## Workspace
Your working directory is: /WORKSPACE
Treat this directory as the single global workspace for file operations unless explicitly instructed otherwise.

## Workspace Files (injected)
These user-editable files are loaded by Pincer and included below in Project Context.

# Project Context

The following project context files have been loaded:
If SOUL.md is present, embody its persona and tone. Avoid stiff, generic replies; follow its guidance unless higher-priority instructions override it.

## AGENTS.md

# Rules

Be brief.

## SOUL.md

Warm and direct.

## USER.md

- **Name:** Ann

## HEARTBEAT.md

# HEARTBEAT.md

## MEMORY.md

Ann likes tea.

## Heartbeat Protocol
When a heartbeat poll arrives and nothing needs attention, reply HEARTBEAT_OK.

## Runtime
Runtime: agent=main | model=anthropic/claude-sonnet-4-5 | channel=telegram | session=direct | thinking=low
Current date and time: 2026-05-01 09:30 (Europe/Berlin)";

#[test]
fn golden_prompt_for_a_seeded_workspace() {
    let (tmp, workspace) = seeded(&[
        ("AGENTS.md", "# Rules\n\nBe brief.\n"),
        ("SOUL.md", "Warm and direct.\n"),
        ("USER.md", "- **Name:** Ann\n"),
        ("IDENTITY.md", "   \n"),
        ("HEARTBEAT.md", "# HEARTBEAT.md\n"),
        ("MEMORY.md", "Ann likes tea.\n"),
        (
            "skills/pdf/SKILL.md",
            "---\nname: pdf\ndescription: Read and summarise PDF files\n---\nUse `pdftotext`.\n",
        ),
        (
            "skills/deploy/SKILL.md",
            "---\nname: deploy\ndescription: Ship it\ndisable-model-invocation: true\n---\n",
        ),
    ]);
    let files =
        load_bootstrap_files(&workspace, SessionKind::Direct, &BootstrapLimits::default()).unwrap();
    let skill_set = load_skills(&SkillDirs::new(
        &workspace,
        None,
        &tmp.path().join("pincer"),
        &SkillsConfig::default(),
    ));
    assert_eq!(skill_set.skills.len(), 2);
    assert_eq!(skill_set.issues, vec![]);
    // Unordered, with a duplicate: the prompt orders and dedupes them.
    let tools = [
        PromptTool::new("zz_custom", ""),
        PromptTool::new("weather", "Look up the weather"),
        PromptTool::new("exec", core_tool_summary("exec").unwrap()),
        PromptTool::new("tools.echo", ""),
        PromptTool::new("read", "Read file contents"),
        PromptTool::new("read", "a duplicate"),
    ];
    let extra = [PromptSection {
        title: "Heartbeat Protocol".into(),
        body: "When a heartbeat poll arrives and nothing needs attention, reply HEARTBEAT_OK.\n"
            .into(),
    }];
    let prompt = build_system_prompt(&inputs(
        &workspace,
        &tools,
        &skill_set.skills,
        &files,
        &extra,
    ));
    let shown = prompt.replace(&workspace.display().to_string(), "/WORKSPACE");
    assert_eq!(shown, GOLDEN);
    // Deterministic: the same inputs give the same bytes.
    let again = build_system_prompt(&inputs(
        &workspace,
        &tools,
        &skill_set.skills,
        &files,
        &extra,
    ));
    assert_eq!(again, prompt);
}

#[test]
fn a_bare_prompt_has_only_the_fixed_sections() {
    let prompt = build_system_prompt(&PromptInputs {
        agent_id: "ops",
        agent_name: None,
        model: "openai/gpt-5",
        thinking: None,
        channel: None,
        session_kind: SessionKind::Cron,
        workspace_dir: Path::new("/srv/ops"),
        tools: &[],
        skills: &[],
        bootstrap_files: &[],
        current_time: None,
        extra_sections: &[],
    });
    assert_eq!(
        prompt,
        "\
You are a personal assistant running inside Pincer.

## Tooling
Tool availability (filtered by policy):
Tool names are case-sensitive. Call tools exactly as listed.
(no tools are available in this session)
TOOLS.md does not control tool availability; it is user guidance for how to use external tools.

## Workspace
Your working directory is: /srv/ops
Treat this directory as the single global workspace for file operations unless explicitly instructed otherwise.

## Runtime
Runtime: agent=ops | model=openai/gpt-5 | session=cron | thinking=off"
    );
}

#[test]
fn a_fresh_starter_workspace_is_injected_file_by_file() {
    let tmp = tempfile::tempdir().unwrap();
    let workspace = tmp.path().join("ws");
    ensure_workspace(&workspace).unwrap();
    let files =
        load_bootstrap_files(&workspace, SessionKind::Group, &BootstrapLimits::default()).unwrap();
    let prompt = build_system_prompt(&PromptInputs {
        agent_id: "main",
        agent_name: None,
        model: "m/x",
        thinking: None,
        channel: Some("discord"),
        session_kind: SessionKind::Group,
        workspace_dir: &workspace,
        tools: &[],
        skills: &[],
        bootstrap_files: &files,
        current_time: None,
        extra_sections: &[],
    });
    // Groups get every starter file but MEMORY.md, each under its own heading.
    for (name, content) in STARTER_FILES {
        let section = format!("## {name}\n\n{}", content.trim_end());
        assert_eq!(prompt.contains(&section), name != "MEMORY.md", "{name}");
    }
}

#[test]
fn skills_tell_the_model_to_use_the_read_tool_it_actually_has() {
    let (tmp, workspace) = seeded(&[(
        "skills/pdf/SKILL.md",
        "---\nname: pdf\ndescription: PDFs\n---\n",
    )]);
    let skills = load_skills(&SkillDirs::new(
        &workspace,
        None,
        tmp.path(),
        &SkillsConfig::default(),
    ))
    .skills;
    let tools = [PromptTool::new("fs.read_file", "")];
    let prompt = build_system_prompt(&inputs(&workspace, &tools, &skills, &[], &[]));
    assert!(
        prompt.contains("read its SKILL.md at <location> with `fs.read_file`, then follow it.")
    );
    assert!(prompt.contains("Use the fs.read_file tool to load a skill's file"));
    assert!(!prompt.contains("# Project Context"));
}

/// A tool with a long description and no built-in summary.
struct Weather;

impl AgentTool for Weather {
    fn name(&self) -> &str {
        "weather"
    }
    fn description(&self) -> &str {
        "\n  Look up the weather for a city. Uses the Open-Meteo API.\nMore details."
    }
    fn parameters(&self) -> &Value {
        &Value::Null
    }
    fn execute(
        &self,
        _args: Value,
        _ctx: ToolContext,
    ) -> BoxFuture<'_, Result<ToolOutput, ToolError>> {
        Box::pin(std::future::pending())
    }
}

#[test]
fn prompt_tools_come_from_live_tools() {
    assert_eq!(
        PromptTool::from_agent_tool(&Weather),
        PromptTool::new("weather", "Look up the weather for a city")
    );
    let echo = typed(pincer_tools::basic::Echo);
    assert_eq!(
        PromptTool::from_agent_tool(echo.as_ref()),
        PromptTool::new("tools.echo", "Echo text back unchanged")
    );
}

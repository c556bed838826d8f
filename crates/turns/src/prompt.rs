//! The agent's system prompt, assembled the way OpenClaw's `buildAgentSystemPrompt` does:
//! a base identity line, the tool list, the skills block, the workspace, the injected
//! workspace files under "Project Context", extra sections (the gateway's protocol sections),
//! and a runtime line last.
//!
//! The output is a pure function of its inputs — no clock, no environment, no filesystem —
//! so the same inputs always give the same bytes. That keeps provider prompt caches warm and
//! lets tests compare whole prompts. The runtime section (which carries the current time) is
//! last so that everything before it stays a stable prefix.
//!
//! Layout note: OpenClaw builds the same lines but drops every blank line in the end
//! (`lines.filter(Boolean)`); Pincer keeps one blank line between sections and around each
//! injected file, which is how the lines were laid out before that filter and reads better
//! as Markdown.

use std::path::Path;

use pincer_agent::AgentTool;

use crate::router::SessionKind;
use crate::skills::{Skill, format_skills_for_prompt};
use crate::workspace::BootstrapFile;

/// One tool as the prompt lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PromptTool {
    pub name: String,
    /// One short line; empty means "use the built-in summary, if any".
    pub summary: String,
}

impl PromptTool {
    pub fn new(name: impl Into<String>, summary: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            summary: summary.into(),
        }
    }

    /// From a live tool: the built-in summary for well-known names, else the first sentence
    /// of the tool's description.
    pub fn from_agent_tool(tool: &dyn AgentTool) -> Self {
        let summary = match core_tool_summary(tool.name()) {
            Some(summary) => summary.to_string(),
            None => first_sentence(tool.description()),
        };
        Self::new(tool.name(), summary)
    }
}

fn first_sentence(text: &str) -> String {
    let line = text
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or_default();
    let sentence = match line.find(". ") {
        Some(end) => &line[..end],
        None => line,
    };
    sentence.trim_end_matches('.').trim().to_string()
}

/// Tools in the order OpenClaw lists them; any other tool follows, sorted by name.
const TOOL_ORDER: [&str; 24] = [
    "read",
    "write",
    "edit",
    "apply_patch",
    "grep",
    "find",
    "ls",
    "exec",
    "process",
    "web_search",
    "web_fetch",
    "browser",
    "cron",
    "message",
    "gateway",
    "agents_list",
    "sessions_list",
    "sessions_history",
    "sessions_send",
    "sessions_spawn",
    "session_status",
    "image",
    "memory_search",
    "memory_get",
];

/// One-line summaries of well-known tools (OpenClaw's `coreToolSummaries`, plus Pincer's
/// basic tools), so the prompt does not depend on how long a tool's description is.
pub fn core_tool_summary(name: &str) -> Option<&'static str> {
    Some(match name {
        "read" => "Read file contents",
        "write" => "Create or overwrite files",
        "edit" => "Make precise edits to files",
        "apply_patch" => "Apply multi-file patches",
        "grep" => "Search file contents for patterns",
        "find" => "Find files by glob pattern",
        "ls" => "List directory contents",
        "exec" => "Run shell commands (long runs continue in the background)",
        "process" => "Manage background exec sessions",
        "web_search" => "Search the web",
        "web_fetch" => "Fetch and extract readable content from a URL",
        "browser" => "Control web browser",
        "cron" => "Manage cron jobs and wake events",
        "message" => "Send messages and channel actions",
        "gateway" => "Restart, apply config, or run updates on the running Pincer process",
        "agents_list" => "List agent ids allowed for sessions_spawn",
        "sessions_list" => "List other sessions (incl. sub-agents) with filters/last",
        "sessions_history" => "Fetch history for another session/sub-agent",
        "sessions_send" => "Send a message to another session/sub-agent",
        "sessions_spawn" => "Spawn a sub-agent session",
        "session_status" => "Show session status: usage, time, model",
        "image" => "Analyze an image with the configured image model",
        "memory_search" => "Search MEMORY.md and memory/*.md",
        "memory_get" => "Read lines from a memory file",
        "time.now" => "Get the current date and time",
        "tools.echo" => "Echo text back unchanged",
        "shell.pwd" => "Get the working directory",
        "fs.list_dir" => "List a directory in the workspace",
        "fs.read_file" => "Read a text file in the workspace",
        _ => return None,
    })
}

/// A section appended after the project context, e.g. a gateway protocol.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PromptSection {
    /// Rendered as `## <title>`; empty for a section without a heading.
    pub title: String,
    pub body: String,
}

/// Everything the system prompt is built from.
#[derive(Debug, Clone, Copy)]
pub struct PromptInputs<'a> {
    pub agent_id: &'a str,
    /// A display name (`agents.list[].name`).
    pub agent_name: Option<&'a str>,
    /// `provider/model`.
    pub model: &'a str,
    /// Thinking level name (`off` when `None`).
    pub thinking: Option<&'a str>,
    /// The channel the turn came from, if any.
    pub channel: Option<&'a str>,
    pub session_kind: SessionKind,
    pub workspace_dir: &'a Path,
    pub tools: &'a [PromptTool],
    /// The agent's skills; those with `disable-model-invocation` are not listed.
    pub skills: &'a [Skill],
    /// From `workspace::load_bootstrap_files`, in order.
    pub bootstrap_files: &'a [BootstrapFile],
    /// The current date and time, formatted by the caller (never read from the clock here).
    pub current_time: Option<&'a str>,
    pub extra_sections: &'a [PromptSection],
}

/// Builds the system prompt. Deterministic: equal inputs give equal output.
pub fn build_system_prompt(inputs: &PromptInputs<'_>) -> String {
    let tools = ordered_tools(inputs.tools);
    let mut sections: Vec<String> = vec![identity_section(inputs), tooling_section(&tools)];
    // Skills are loaded with `read`; an agent that only has the basic `fs.read_file` is told
    // to use that instead, so the instruction names a tool it can call.
    let has_tool = |name: &str| tools.iter().any(|t| t.name == name);
    let read_tool = if !has_tool("read") && has_tool("fs.read_file") {
        "fs.read_file"
    } else {
        "read"
    };
    let skills_block = format_skills_for_prompt(inputs.skills, read_tool);
    if !skills_block.is_empty() {
        sections.push(skills_section(&skills_block, read_tool));
    }
    sections.push(format!(
        "## Workspace\n\
         Your working directory is: {}\n\
         Treat this directory as the single global workspace for file operations unless \
         explicitly instructed otherwise.",
        inputs.workspace_dir.display()
    ));
    let files: Vec<&BootstrapFile> = inputs
        .bootstrap_files
        .iter()
        .filter(|f| !f.content.trim().is_empty())
        .collect();
    if !files.is_empty() {
        sections.push(
            "## Workspace Files (injected)\n\
             These user-editable files are loaded by Pincer and included below in Project Context."
                .to_string(),
        );
        sections.push(project_context_section(&files));
    }
    for extra in inputs.extra_sections {
        let body = extra.body.trim_end();
        sections.push(match extra.title.trim() {
            "" => body.to_string(),
            title => format!("## {title}\n{body}"),
        });
    }
    sections.push(runtime_section(inputs));
    sections.join("\n\n")
}

fn identity_section(inputs: &PromptInputs<'_>) -> String {
    match inputs.agent_name.map(str::trim).filter(|n| !n.is_empty()) {
        Some(name) => format!("You are {name}, a personal assistant running inside Pincer."),
        None => "You are a personal assistant running inside Pincer.".to_string(),
    }
}

/// Known tools in OpenClaw's order, then the rest by name; duplicates dropped.
fn ordered_tools(tools: &[PromptTool]) -> Vec<&PromptTool> {
    let mut unique: Vec<&PromptTool> = Vec::new();
    for tool in tools {
        if !tool.name.trim().is_empty() && !unique.iter().any(|t| t.name == tool.name) {
            unique.push(tool);
        }
    }
    let rank = |name: &str| {
        TOOL_ORDER
            .iter()
            .position(|known| *known == name)
            .unwrap_or(TOOL_ORDER.len())
    };
    unique.sort_by(|a, b| {
        rank(&a.name)
            .cmp(&rank(&b.name))
            .then_with(|| a.name.cmp(&b.name))
    });
    unique
}

fn tooling_section(tools: &[&PromptTool]) -> String {
    let mut lines = vec![
        "## Tooling".to_string(),
        "Tool availability (filtered by policy):".to_string(),
        "Tool names are case-sensitive. Call tools exactly as listed.".to_string(),
    ];
    if tools.is_empty() {
        lines.push("(no tools are available in this session)".to_string());
    }
    for tool in tools {
        let summary = match tool.summary.trim() {
            "" => core_tool_summary(&tool.name).unwrap_or_default(),
            summary => summary,
        };
        lines.push(if summary.is_empty() {
            format!("- {}", tool.name)
        } else {
            format!("- {}: {summary}", tool.name)
        });
    }
    lines.push(
        "TOOLS.md does not control tool availability; it is user guidance for how to use \
         external tools."
            .to_string(),
    );
    lines.join("\n")
}

fn skills_section(skills_block: &str, read_tool: &str) -> String {
    format!(
        "## Skills (mandatory)\n\
         Before replying: scan <available_skills> <description> entries.\n\
         - If exactly one skill clearly applies: read its SKILL.md at <location> with `{read_tool}`, then follow it.\n\
         - If multiple could apply: choose the most specific one, then read/follow it.\n\
         - If none clearly apply: do not read any SKILL.md.\n\
         Constraints: never read more than one skill up front; only read after selecting.\n\
         \n\
         {skills_block}"
    )
}

/// OpenClaw's "Project Context": a heading, the intro line, the SOUL.md hint when SOUL.md
/// is among the files, then one `## <FILE NAME>` subsection per file.
fn project_context_section(files: &[&BootstrapFile]) -> String {
    let mut out =
        String::from("# Project Context\n\nThe following project context files have been loaded:");
    if files.iter().any(|f| f.name.eq_ignore_ascii_case("SOUL.md")) {
        out.push_str(
            "\nIf SOUL.md is present, embody its persona and tone. Avoid stiff, generic replies; \
             follow its guidance unless higher-priority instructions override it.",
        );
    }
    for file in files {
        out.push_str(&format!(
            "\n\n## {}\n\n{}",
            file.name,
            file.content.trim_end()
        ));
    }
    out
}

fn runtime_section(inputs: &PromptInputs<'_>) -> String {
    let mut parts = vec![
        format!("agent={}", inputs.agent_id),
        format!("model={}", inputs.model),
    ];
    if let Some(channel) = inputs.channel.map(str::trim).filter(|c| !c.is_empty()) {
        parts.push(format!("channel={}", channel.to_lowercase()));
    }
    parts.push(format!("session={}", inputs.session_kind.as_str()));
    parts.push(format!("thinking={}", inputs.thinking.unwrap_or("off")));
    let mut out = format!("## Runtime\nRuntime: {}", parts.join(" | "));
    if let Some(now) = inputs.current_time.map(str::trim).filter(|t| !t.is_empty()) {
        out.push_str(&format!("\nCurrent date and time: {now}"));
    }
    out
}

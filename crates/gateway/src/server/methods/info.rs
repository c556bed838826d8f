//! What the Control UI's status pages read, in OpenClaw's shapes: `usage.status` (the
//! token totals of every agent's sessions; Pincer tracks no provider quotas),
//! `tools.catalog` and `tools.effective` (the agent's tools, grouped), `skills.status`
//! (the skills the agent sees), `system.info` (the machine and the process),
//! `logs.tail` (the gateway log's last lines, redacted, with OpenClaw's cursor) and
//! `update.status` (Pincer does not update itself: nothing to report). Files are read on the
//! blocking pool.

use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use pincer_turns::skills::{Skill, SkillSource};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::super::Gateway;
use super::super::frames::MethodError;
use super::super::runtime::on_blocking_pool;
use super::catalog::agent_named;
use super::params::parse;
use super::sessions::all_sessions;

/// `logs.tail`'s bounds (OpenClaw's): lines and bytes by default and at most.
const DEFAULT_LINES: u64 = 500;
const MAX_LINES: u64 = 5000;
const DEFAULT_BYTES: u64 = 250_000;
const MAX_BYTES: u64 = 1_000_000;

/// The tool profiles, smallest first, as `tools.catalog` lists them.
const PROFILES: &[(&str, &str)] = &[
    ("minimal", "Minimal"),
    ("coding", "Coding"),
    ("messaging", "Messaging"),
    ("full", "Full"),
];

fn task_failed(what: &str, e: impl std::fmt::Display) -> MethodError {
    MethodError::unavailable(format!("the {what} task failed: {e}"))
}

/// Token totals over sessions.
#[derive(Serialize, Default)]
#[serde(rename_all = "camelCase")]
pub(super) struct UsageTotals {
    sessions: usize,
    input_tokens: u64,
    output_tokens: u64,
    total_tokens: u64,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct UsageStatusResponse {
    updated_at: i64,
    /// Provider quota windows: none, Pincer does not poll providers for them.
    providers: Vec<Value>,
    totals: UsageTotals,
}

/// `usage.status`.
pub(super) async fn usage_status(gw: &Gateway) -> Result<UsageStatusResponse, MethodError> {
    let mut totals = UsageTotals::default();
    for agent in pincer_turns::router::known_agent_ids(gw.runtime.config()) {
        let sessions = all_sessions(&gw.runtime.sessions(&agent)).await?;
        for (_, entry) in sessions {
            totals.sessions += 1;
            totals.input_tokens += entry.input_tokens.unwrap_or(0);
            totals.output_tokens += entry.output_tokens.unwrap_or(0);
            totals.total_tokens += entry.total_tokens.unwrap_or(0);
        }
    }
    Ok(UsageStatusResponse {
        updated_at: pincer_ai::now_ms(),
        providers: Vec::new(),
        totals,
    })
}

/// The params of `tools.catalog` and `tools.effective`.
#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ToolsCatalogParams {
    /// The default agent's (or `sessionKey`'s agent's) when absent.
    agent_id: Option<String>,
    session_key: Option<String>,
}

/// The group a tool is shown under, by its name.
fn tool_group(name: &str) -> (&'static str, &'static str) {
    match name {
        "read" | "write" | "edit" | "ls" | "grep" | "find" => ("fs", "Files"),
        "exec" | "process" => ("runtime", "Runtime"),
        "cron" => ("automation", "Automation"),
        n if n.starts_with("fs.") => ("fs", "Files"),
        n if n.starts_with("shell.") => ("runtime", "Runtime"),
        n if n.starts_with("memory") => ("memory", "Memory"),
        _ => ("basics", "Basics"),
    }
}

/// A tool as `tools.catalog` lists it.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct CatalogTool {
    id: String,
    label: String,
    description: String,
    source: &'static str,
    default_profiles: Vec<String>,
}

#[derive(Serialize)]
pub(super) struct ToolGroup<T> {
    id: &'static str,
    label: &'static str,
    source: &'static str,
    tools: Vec<T>,
}

#[derive(Serialize)]
pub(super) struct Profile {
    id: &'static str,
    label: &'static str,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct ToolsCatalogResponse {
    agent_id: String,
    profiles: Vec<Profile>,
    groups: Vec<ToolGroup<CatalogTool>>,
}

/// The agent's tools from the runtime (`{name, description, profiles?}`), on the blocking
/// pool: building them may create the workspace.
async fn agent_tools(gw: &Gateway, agent: &str) -> Result<Vec<Value>, MethodError> {
    let agent = agent.to_owned();
    on_blocking_pool(&gw.runtime, move |runtime| runtime.tools(&agent))
        .await
        .map_err(|e| task_failed("tools", e))
}

fn text(tool: &Value, field: &str) -> String {
    tool[field].as_str().unwrap_or_default().to_owned()
}

/// The agent whose tools `tools.catalog` / `tools.effective` show: the one named, else the
/// session's, else the default.
fn tools_agent(gw: &Gateway, p: &Value) -> Result<String, MethodError> {
    let params: ToolsCatalogParams = parse(p)?;
    agent_named(
        gw,
        params.agent_id.as_deref(),
        params.session_key.as_deref(),
    )
}

/// `tools.catalog {agentId?}`: the agent's tools in groups, in the runtime's order.
pub(super) async fn tools_catalog(
    gw: &Gateway,
    p: &Value,
) -> Result<ToolsCatalogResponse, MethodError> {
    let agent = tools_agent(gw, p)?;
    let mut groups: Vec<ToolGroup<CatalogTool>> = Vec::new();
    for tool in agent_tools(gw, &agent).await? {
        let name = text(&tool, "name");
        let (id, label) = tool_group(&name);
        let entry = CatalogTool {
            label: name.clone(),
            description: text(&tool, "description"),
            source: "core",
            default_profiles: tool["profiles"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|p| p.as_str().map(str::to_owned))
                .collect(),
            id: name,
        };
        match groups.iter_mut().find(|g| g.id == id) {
            Some(group) => group.tools.push(entry),
            None => groups.push(ToolGroup {
                id,
                label,
                source: "core",
                tools: vec![entry],
            }),
        }
    }
    Ok(ToolsCatalogResponse {
        agent_id: agent,
        profiles: PROFILES
            .iter()
            .map(|&(id, label)| Profile { id, label })
            .collect(),
        groups,
    })
}

/// A tool as `tools.effective` lists it.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct EffectiveTool {
    id: String,
    label: String,
    description: String,
    raw_description: String,
    source: &'static str,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct ToolsEffectiveResponse {
    agent_id: String,
    profile: String,
    groups: Vec<ToolGroup<EffectiveTool>>,
}

/// `tools.effective {sessionKey, agentId?}`: the tools a turn of the session gets, in one
/// group (Pincer's tools are all built in).
pub(super) async fn tools_effective(
    gw: &Gateway,
    p: &Value,
) -> Result<ToolsEffectiveResponse, MethodError> {
    let agent = tools_agent(gw, p)?;
    let config = gw.runtime.config();
    let profile = config
        .agents
        .list
        .iter()
        .find(|a| a.id == agent)
        .and_then(|a| a.tools.as_ref())
        .and_then(|t| t.profile)
        .or(config.tools.profile)
        .and_then(|p| serde_json::to_value(p).ok())
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_else(|| "full".to_owned());
    let tools = agent_tools(gw, &agent)
        .await?
        .iter()
        .map(|tool| {
            let name = text(tool, "name");
            let description = text(tool, "description");
            EffectiveTool {
                label: name.clone(),
                id: name,
                raw_description: description.clone(),
                description,
                source: "core",
            }
        })
        .collect();
    Ok(ToolsEffectiveResponse {
        agent_id: agent,
        profile,
        groups: vec![ToolGroup {
            id: "core",
            label: "Built-in tools",
            source: "core",
            tools,
        }],
    })
}

/// The params of `skills.status`.
#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct SkillsStatusParams {
    agent_id: Option<String>,
}

/// What a skill needs (Pincer checks none of it).
#[derive(Serialize, Default)]
#[serde(rename_all = "camelCase")]
pub(super) struct Requirements {
    bins: Vec<String>,
    any_bins: Vec<String>,
    env: Vec<String>,
    config: Vec<String>,
    os: Vec<String>,
}

/// One skill as `skills.status` lists it.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct SkillRow {
    name: String,
    description: String,
    source: &'static str,
    bundled: bool,
    file_path: PathBuf,
    base_dir: PathBuf,
    skill_key: String,
    always: bool,
    disabled: bool,
    blocked_by_allowlist: bool,
    blocked_by_agent_filter: bool,
    eligible: bool,
    platform_incompatible: bool,
    model_visible: bool,
    user_invocable: bool,
    command_visible: bool,
    requirements: Requirements,
    missing: Requirements,
    config_checks: Vec<Value>,
    install: Vec<Value>,
}

fn source_name(source: SkillSource) -> &'static str {
    match source {
        SkillSource::Workspace => "workspace",
        SkillSource::WorkspaceAgents => "agents-workspace",
        SkillSource::PersonalAgents => "agents-personal",
        SkillSource::Managed => "managed",
        SkillSource::Extra => "extra",
    }
}

impl From<Skill> for SkillRow {
    fn from(skill: Skill) -> Self {
        Self {
            source: source_name(skill.source),
            bundled: false,
            file_path: skill.location,
            base_dir: skill.base_dir,
            skill_key: skill.name.clone(),
            always: false,
            disabled: false,
            blocked_by_allowlist: false,
            blocked_by_agent_filter: false,
            eligible: true,
            platform_incompatible: false,
            model_visible: !skill.disable_model_invocation,
            user_invocable: skill.user_invocable,
            command_visible: skill.user_invocable,
            requirements: Requirements::default(),
            missing: Requirements::default(),
            config_checks: Vec::new(),
            install: Vec::new(),
            name: skill.name,
            description: skill.description,
        }
    }
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct SkillsStatusResponse {
    workspace_dir: String,
    managed_skills_dir: String,
    agent_id: String,
    skills: Vec<SkillRow>,
}

/// `skills.status {agentId?}`.
pub(super) async fn skills_status(
    gw: &Gateway,
    p: &Value,
) -> Result<SkillsStatusResponse, MethodError> {
    let params: SkillsStatusParams = parse(p)?;
    let agent = agent_named(gw, params.agent_id.as_deref(), None)?;
    let id = agent.clone();
    let (workspace, set) = on_blocking_pool(&gw.runtime, move |runtime| {
        (runtime.workspace(&id), runtime.skills(&id))
    })
    .await
    .map_err(|e| task_failed("skills", e))?;
    let shown = |dir: Option<PathBuf>| dir.map(|d| d.display().to_string()).unwrap_or_default();
    Ok(SkillsStatusResponse {
        // Pincer's shared skills live under `$PINCER_HOME/skills`, which the server does
        // not know; the rows carry each skill's own path.
        managed_skills_dir: String::new(),
        workspace_dir: shown(workspace),
        agent_id: agent,
        skills: set.skills.into_iter().map(SkillRow::from).collect(),
    })
}

/// `system.info`: the machine and this process.
pub(super) async fn system_info(gw: &Gateway) -> Result<Value, MethodError> {
    let procfs = tokio::task::spawn_blocking(read_procfs)
        .await
        .map_err(|e| task_failed("system info", e))?;
    let release = procfs.release.unwrap_or_default();
    let host = super::super::presence::host_name();
    let os = std::env::consts::OS;
    // OpenClaw reports Node's names for the architecture.
    let arch = match std::env::consts::ARCH {
        "x86_64" => "x64",
        "aarch64" => "arm64",
        other => other,
    };
    let mut info = json!({
        "machineName": host,
        "hostname": host,
        "platform": os,
        "release": release,
        "arch": arch,
        "osLabel": format!("{}{}{}", capitalized(os), if release.is_empty() { "" } else { " " }, release),
        "version": env!("CARGO_PKG_VERSION"),
        "pid": std::process::id(),
        "uptimeMs": gw.started.elapsed().as_millis() as u64,
        "cpuCount": std::thread::available_parallelism().map_or(1, usize::from),
    });
    if let Some(load) = procfs.load_average {
        info["loadAverage"] = json!(load);
    }
    if let Some((total, free)) = procfs.memory {
        info["memoryTotalBytes"] = json!(total);
        info["memoryFreeBytes"] = json!(free);
    }
    if let Some(rss) = procfs.rss_bytes {
        info["processMemory"] = json!({ "rssBytes": rss });
    }
    Ok(info)
}

fn capitalized(word: &str) -> String {
    let mut chars = word.chars();
    chars
        .next()
        .map(|c| c.to_uppercase().chain(chars).collect())
        .unwrap_or_default()
}

/// What `system.info` reads from `/proc` (each `None` where it cannot be read).
#[derive(Default)]
struct ProcFacts {
    release: Option<String>,
    load_average: Option<Vec<f64>>,
    /// Total and available bytes.
    memory: Option<(u64, u64)>,
    rss_bytes: Option<u64>,
}

#[expect(
    clippy::disallowed_methods,
    reason = "runs on the blocking pool: system.info"
)]
fn read_procfs() -> ProcFacts {
    let read = |path: &str| std::fs::read_to_string(path).ok();
    let kib = |text: &str, key: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(key))
            .and_then(|rest| rest.split_whitespace().next())
            .and_then(|n| n.parse::<u64>().ok())
            .map(|n| n * 1024)
    };
    let meminfo = read("/proc/meminfo").unwrap_or_default();
    let status = read("/proc/self/status").unwrap_or_default();
    ProcFacts {
        release: read("/proc/sys/kernel/osrelease").map(|s| s.trim().to_owned()),
        load_average: read("/proc/loadavg").map(|s| {
            s.split_whitespace()
                .take(3)
                .filter_map(|n| n.parse().ok())
                .collect()
        }),
        memory: kib(&meminfo, "MemTotal:").zip(kib(&meminfo, "MemAvailable:")),
        rss_bytes: kib(&status, "VmRSS:"),
    }
}

/// The params of `logs.tail`.
#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct LogsTailParams {
    /// Where the last answer ended (its `cursor`): only what came after.
    cursor: Option<u64>,
    /// At most this many lines (default 500, at most 5000).
    limit: Option<u64>,
    /// At most this many bytes from the end (default 250000, at most 1000000).
    max_bytes: Option<u64>,
}

#[derive(Serialize, Debug, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub(super) struct LogsTailResponse {
    file: String,
    /// Where the last whole line shown ends: pass it back to read only newer lines.
    cursor: u64,
    size: u64,
    lines: Vec<String>,
    /// Older lines were left out (bytes or line limit).
    truncated: bool,
    /// The cursor was past the end (the log rotated) or too far behind: read from the tail.
    reset: bool,
}

/// `logs.tail {cursor?, limit?, maxBytes?}`.
pub(super) async fn logs_tail(gw: &Gateway, p: &Value) -> Result<LogsTailResponse, MethodError> {
    let params: LogsTailParams = parse(p)?;
    let Some(file) = gw.runtime.log_file() else {
        return Ok(empty_tail(String::new(), params.cursor));
    };
    let window = Window {
        cursor: params.cursor,
        limit: params.limit.unwrap_or(DEFAULT_LINES).clamp(1, MAX_LINES) as usize,
        max_bytes: params
            .max_bytes
            .unwrap_or(DEFAULT_BYTES)
            .clamp(1, MAX_BYTES),
    };
    tokio::task::spawn_blocking(move || read_tail(&file, &window))
        .await
        .map_err(|e| task_failed("log", e))?
        .map_err(|e| MethodError::unavailable(format!("log read failed: {e}")))
}

fn empty_tail(file: String, cursor: Option<u64>) -> LogsTailResponse {
    LogsTailResponse {
        file,
        cursor: 0,
        size: 0,
        lines: Vec::new(),
        truncated: false,
        reset: cursor.is_some_and(|c| c > 0),
    }
}

/// What part of the log to read.
struct Window {
    cursor: Option<u64>,
    limit: usize,
    max_bytes: u64,
}

/// The lines of `file` the window selects (a missing file has none).
#[expect(
    clippy::disallowed_methods,
    reason = "runs on the blocking pool: logs.tail"
)]
fn read_tail(file: &Path, window: &Window) -> std::io::Result<LogsTailResponse> {
    let shown = file.display().to_string();
    let mut f = match std::fs::File::open(file) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Ok(empty_tail(shown, window.cursor));
        }
        Err(e) => return Err(e),
    };
    let size = f.metadata()?.len();
    let tail_start = size.saturating_sub(window.max_bytes);
    let (start, reset) = match window.cursor {
        Some(c) if c > size => (tail_start, true),
        Some(c) if size - c > window.max_bytes => (tail_start, true),
        Some(c) => (c, false),
        None => (tail_start, false),
    };
    let mut truncated = start > 0 && start == tail_start && (window.cursor.is_none() || reset);
    let mut buf = Vec::new();
    // A line cut by the window's start is dropped: only whole lines are shown.
    let read_from = start.saturating_sub(1);
    f.seek(SeekFrom::Start(read_from))?;
    f.take(size - read_from).read_to_end(&mut buf)?;
    // The next read starts after the last whole line: a line still being written is
    // shown once it ends.
    let cursor = buf
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(start, |i| (read_from + i as u64 + 1).max(start));
    let mut text = String::from_utf8_lossy(&buf).into_owned();
    if start > 0 {
        text = match text.find('\n') {
            Some(i) => text[i + 1..].to_owned(),
            None => String::new(),
        };
    }
    // The last line counts once it ends.
    let mut lines: Vec<String> = text
        .split_inclusive('\n')
        .filter(|l| l.ends_with('\n'))
        .map(|l| redact_line(l.trim_end_matches(['\n', '\r'])))
        .collect();
    if lines.len() > window.limit {
        truncated = true;
        lines.drain(..lines.len() - window.limit);
    }
    Ok(LogsTailResponse {
        file: shown,
        cursor,
        size,
        lines,
        truncated,
        reset,
    })
}

/// `line` with credentials masked: the word after `Bearer`, and tokens that start like
/// API keys (`sk-…`, `xoxb-…` and the like) at a word's start or after `=`, `:` or a quote.
pub(super) fn redact_line(line: &str) -> String {
    const PREFIXES: &[&str] = &["sk-", "xoxb-", "xoxp-", "xapp-", "ghp_", "AIza"];
    const BEARER: &str = "bearer ";
    let token_end = |from: usize| {
        line[from..]
            .find(|c: char| !(c.is_ascii_alphanumeric() || "-_.~+/=".contains(c)))
            .map_or(line.len(), |n| from + n)
    };
    let mut secrets: Vec<(usize, usize)> = Vec::new();
    let lower = line.to_ascii_lowercase();
    for (at, _) in lower.match_indices(BEARER) {
        let from = at + BEARER.len();
        let end = token_end(from);
        if end > from {
            secrets.push((from, end));
        }
    }
    for prefix in PREFIXES {
        for (at, _) in line.match_indices(prefix) {
            let boundary = line[..at]
                .chars()
                .next_back()
                .is_none_or(|c| !c.is_ascii_alphanumeric());
            let end = token_end(at);
            if boundary && end - at >= prefix.len() + 8 {
                secrets.push((at, end));
            }
        }
    }
    secrets.sort_unstable();
    let mut out = String::with_capacity(line.len());
    let mut done = 0;
    for (from, end) in secrets {
        if from < done {
            continue;
        }
        out.push_str(&line[done..from]);
        out.push_str("***");
        done = end;
    }
    out.push_str(&line[done..]);
    out
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct UpdateStatusResponse {
    sentinel: Option<Value>,
    update_available: Option<bool>,
    effective_channel: &'static str,
    schedule: Value,
}

/// `update.status`: Pincer has no updater, so nothing is known to be newer.
pub(super) fn update_status() -> UpdateStatusResponse {
    UpdateStatusResponse {
        sentinel: None,
        update_available: None,
        effective_channel: "stable",
        schedule: json!({ "channel": "stable", "autoEnabled": false, "install": { "kind": "package" } }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credentials_in_log_lines_are_masked() {
        assert_eq!(
            redact_line("auth Bearer abc.def ok key=sk-1234567890abcdef"),
            "auth Bearer *** ok key=***"
        );
        assert_eq!(redact_line("token \"xoxb-123456789012\""), "token \"***\"");
        assert_eq!(redact_line("sk-short is fine"), "sk-short is fine");
    }

    #[test]
    #[expect(clippy::disallowed_methods, reason = "a test's own file")]
    fn the_tail_is_whole_lines_within_the_window() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("gateway.log");
        std::fs::write(&file, "one\ntwo\nthree\npartial").unwrap();
        let read = |cursor, limit, max_bytes| {
            read_tail(
                &file,
                &Window {
                    cursor,
                    limit,
                    max_bytes,
                },
            )
            .unwrap()
        };
        let all = read(None, 500, 1000);
        assert_eq!(
            (all.lines.clone(), all.cursor, all.truncated),
            (vec!["one".into(), "two".into(), "three".into()], 14, false)
        );
        let cut = read(None, 500, 14);
        assert_eq!((cut.lines, cut.truncated), (vec!["three".to_owned()], true));
        let limited = read(None, 1, 1000);
        assert_eq!(
            (limited.lines, limited.truncated),
            (vec!["three".to_owned()], true)
        );
        let newer = read(Some(4), 500, 1000);
        assert_eq!(
            (newer.lines, newer.reset),
            (vec!["two".to_owned(), "three".to_owned()], false)
        );
        let rotated = read(Some(999), 500, 1000);
        assert_eq!((rotated.lines.len(), rotated.reset), (3, true));
    }
}

//! Loading the workspace files injected into the system prompt ("bootstrap files"), with
//! OpenClaw's order, per-session-kind selection, size limits and truncation marker
//! (`loadWorkspaceBootstrapFiles`, `filterBootstrapFilesForSession`,
//! `buildBootstrapContextFiles` and `trimBootstrapContent`).
//!
//! Sizes are counted in Unicode scalar values (`char`s); OpenClaw counts UTF-16 code units,
//! which differs only for characters outside the Basic Multilingual Plane (most emoji).

use std::fs;
use std::io;
use std::path::Path;

use pincer_config::PincerConfig;

use super::WorkspaceError;
use crate::router::SessionKind;

/// Most characters injected from one file (`agents.defaults.bootstrapMaxChars`).
pub const DEFAULT_BOOTSTRAP_MAX_CHARS: usize = 20_000;
/// Most characters injected from all files together (`agents.defaults.bootstrapTotalMaxChars`).
pub const DEFAULT_BOOTSTRAP_TOTAL_MAX_CHARS: usize = 150_000;
/// When less than this is left of the total budget, no further file is started: a few
/// dozen characters of a file would be noise, not context.
const MIN_FILE_BUDGET_CHARS: usize = 64;

/// The files of every session, in OpenClaw's order. `BOOTSTRAP.md` is a one-off onboarding
/// script a user may drop in; Pincer does not create it but injects it while it exists.
const SHARED_FILES: [&str; 7] = [
    "AGENTS.md",
    "SOUL.md",
    "TOOLS.md",
    "IDENTITY.md",
    "USER.md",
    "HEARTBEAT.md",
    "BOOTSTRAP.md",
];
/// What cron runs and sub-agents see (OpenClaw's minimal allowlist): the working rules and
/// the local tool notes, not the persona or anything personal.
const MINIMAL_FILES: [&str; 2] = ["AGENTS.md", "TOOLS.md"];
/// Long-term memory: private, so only main and direct sessions get it.
const MEMORY_FILE: &str = "MEMORY.md";
/// OpenClaw also accepts the lowercase spelling.
const MEMORY_FILE_ALT: &str = "memory.md";

/// Size limits for injected files.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BootstrapLimits {
    pub max_chars_per_file: usize,
    pub max_total_chars: usize,
}

impl Default for BootstrapLimits {
    fn default() -> Self {
        Self {
            max_chars_per_file: DEFAULT_BOOTSTRAP_MAX_CHARS,
            max_total_chars: DEFAULT_BOOTSTRAP_TOTAL_MAX_CHARS,
        }
    }
}

impl BootstrapLimits {
    /// The limits `agents.defaults` sets; unset or zero means the default (as OpenClaw).
    pub fn from_config(cfg: &PincerConfig) -> Self {
        let defaults = &cfg.agents.defaults;
        let positive =
            |value: Option<usize>, fallback| value.filter(|&v| v > 0).unwrap_or(fallback);
        Self {
            max_chars_per_file: positive(defaults.bootstrap_max_chars, DEFAULT_BOOTSTRAP_MAX_CHARS),
            max_total_chars: positive(
                defaults.bootstrap_total_max_chars,
                DEFAULT_BOOTSTRAP_TOTAL_MAX_CHARS,
            ),
        }
    }
}

/// One file as it goes into the prompt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BootstrapFile {
    /// The file name (`AGENTS.md`), which the prompt uses as its heading.
    pub name: String,
    /// What is injected: the file without trailing whitespace, cut to the limits.
    pub content: String,
    /// Whether anything was cut.
    pub truncated: bool,
    /// Characters in the file (without trailing whitespace) before any cut.
    pub original_chars: usize,
}

/// The files to inject for a session of `kind`, in order. Missing and empty files are
/// skipped. Each file is cut to `max_chars_per_file` (keeping its head and tail around a
/// marker, as OpenClaw) and the whole set to `max_total_chars`. A file that exists but cannot
/// be read is an error: silently dropping, say, AGENTS.md would change the agent's rules.
#[expect(
    clippy::disallowed_methods,
    reason = "runs on the blocking pool: called by Runtime::plan (on the pool) and the CLI's one-shot commands"
)]
pub fn load_bootstrap_files(
    dir: &Path,
    kind: SessionKind,
    limits: &BootstrapLimits,
) -> Result<Vec<BootstrapFile>, WorkspaceError> {
    let mut names: Vec<&str> = match kind {
        SessionKind::Cron | SessionKind::Subagent => MINIMAL_FILES.to_vec(),
        SessionKind::Main | SessionKind::Direct | SessionKind::Group => SHARED_FILES.to_vec(),
    };
    if matches!(kind, SessionKind::Main | SessionKind::Direct) {
        let primary_exists = fs::symlink_metadata(dir.join(MEMORY_FILE)).is_ok();
        names.push(if primary_exists {
            MEMORY_FILE
        } else {
            MEMORY_FILE_ALT
        });
    }

    let mut remaining = limits.max_total_chars.max(1);
    let mut files = Vec::new();
    for name in names {
        if remaining == 0 {
            break;
        }
        let path = dir.join(name);
        let raw = match fs::read(&path) {
            Ok(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
            Err(err) if err.kind() == io::ErrorKind::NotFound => continue,
            Err(source) => return Err(WorkspaceError::ReadFile { path, source }),
        };
        if remaining < MIN_FILE_BUDGET_CHARS {
            break;
        }
        let file_max = limits.max_chars_per_file.min(remaining).max(1);
        let trimmed = trim_to_limit(&raw, name, file_max);
        let content = clamp_to_budget(&trimmed.content, remaining);
        if content.is_empty() {
            continue;
        }
        let injected_chars = content.chars().count();
        let truncated = trimmed.truncated || content != trimmed.content;
        remaining = remaining.saturating_sub(injected_chars);
        files.push(BootstrapFile {
            name: name.to_string(),
            content,
            truncated,
            original_chars: trimmed.original_chars,
        });
    }
    Ok(files)
}

struct Trimmed {
    content: String,
    truncated: bool,
    original_chars: usize,
}

/// OpenClaw's `trimBootstrapContent`: trailing whitespace goes; a file over `max_chars`
/// keeps its first 70% and last 20% around a marker that tells the model to read the file.
fn trim_to_limit(raw: &str, name: &str, max_chars: usize) -> Trimmed {
    let trimmed = raw.trim_end();
    let original_chars = trimmed.chars().count();
    if original_chars <= max_chars {
        return Trimmed {
            content: trimmed.to_string(),
            truncated: false,
            original_chars,
        };
    }
    let head_chars = max_chars * 7 / 10;
    let tail_chars = max_chars * 2 / 10;
    let head = first_chars(trimmed, head_chars);
    let tail = last_chars(trimmed, tail_chars);
    let marker = format!(
        "\n[...truncated, read {name} for full content...]\n\
         …(truncated {name}: kept {head_chars}+{tail_chars} chars of {original_chars})…\n"
    );
    Trimmed {
        content: format!("{head}\n{marker}\n{tail}"),
        truncated: true,
        original_chars,
    }
}

/// OpenClaw's `clampToBudget`: past the budget, cut and end with `…`.
fn clamp_to_budget(content: &str, budget: usize) -> String {
    if budget == 0 {
        return String::new();
    }
    if content.chars().count() <= budget {
        return content.to_string();
    }
    if budget <= 3 {
        return first_chars(content, budget).to_string();
    }
    format!("{}…", first_chars(content, budget - 1))
}

fn first_chars(s: &str, n: usize) -> &str {
    match s.char_indices().nth(n) {
        Some((byte, _)) => &s[..byte],
        None => s,
    }
}

fn last_chars(s: &str, n: usize) -> &str {
    if n == 0 {
        return "";
    }
    match s.char_indices().rev().nth(n - 1) {
        Some((byte, _)) => &s[byte..],
        None => s,
    }
}

//! An agent's workspace: the directory of user-editable Markdown files that make up its
//! persona and notes (OpenClaw's `AGENTS.md`, `SOUL.md`, `TOOLS.md`, `IDENTITY.md`,
//! `USER.md`, `HEARTBEAT.md`, `MEMORY.md`, plus `memory/` and `skills/`).
//!
//! This module owns where the workspace is (`$PINCER_HOME/agents/<agentId>/workspace` unless
//! configured), creating it with starter files, and loading the files injected into the
//! system prompt (`bootstrap`). It never overwrites a file that exists: once created, the
//! files belong to the user.

mod bootstrap;

use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use pincer_config::PincerConfig;
use thiserror::Error;

use crate::router::normalize_agent_id;

pub use bootstrap::{
    BootstrapFile, BootstrapLimits, DEFAULT_BOOTSTRAP_MAX_CHARS, DEFAULT_BOOTSTRAP_TOTAL_MAX_CHARS,
    load_bootstrap_files,
};

/// Starter files `ensure_workspace` writes when missing, in OpenClaw's injection order.
/// HEARTBEAT.md's starter is headings only, i.e. effectively empty, so a new workspace skips
/// heartbeat ticks until the user writes a checklist.
pub const STARTER_FILES: [(&str, &str); 7] = [
    ("AGENTS.md", include_str!("templates/AGENTS.md")),
    ("SOUL.md", include_str!("templates/SOUL.md")),
    ("TOOLS.md", include_str!("templates/TOOLS.md")),
    ("IDENTITY.md", include_str!("templates/IDENTITY.md")),
    ("USER.md", include_str!("templates/USER.md")),
    ("HEARTBEAT.md", include_str!("templates/HEARTBEAT.md")),
    ("MEMORY.md", include_str!("templates/MEMORY.md")),
];

/// Directories `ensure_workspace` creates when missing.
pub const STARTER_DIRS: [&str; 2] = ["memory", "skills"];

/// What could not be done to a workspace.
#[derive(Debug, Error)]
pub enum WorkspaceError {
    #[error("cannot create the workspace directory {path}: {source}")]
    CreateDir { path: PathBuf, source: io::Error },
    #[error("{path} exists but is not a directory")]
    NotADirectory { path: PathBuf },
    #[error("cannot write the starter file {path}: {source}")]
    WriteStarter { path: PathBuf, source: io::Error },
    #[error("cannot read the workspace file {path}: {source}")]
    ReadFile { path: PathBuf, source: io::Error },
}

/// What `ensure_workspace` did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EnsureReport {
    pub dir: PathBuf,
    /// Whether the workspace directory itself was created.
    pub created_dir: bool,
    /// Starter files and directories created, in `STARTER_FILES` then `STARTER_DIRS` order
    /// (directories with a trailing `/`).
    pub created: Vec<String>,
    /// Starter files and directories that already existed and were left alone.
    pub kept: Vec<String>,
}

/// The default workspace of an agent: `<pincer_home>/agents/<agentId>/workspace`.
pub fn default_workspace_dir(pincer_home: &Path, agent_id: &str) -> PathBuf {
    pincer_home
        .join("agents")
        .join(normalize_agent_id(agent_id))
        .join("workspace")
}

/// The workspace of an agent: its `agents.list[].workspace` if configured, else the default.
/// A configured `~` or `~/…` expands against `home_dir` (passed in, never read from the
/// environment, so tests stay away from the real home); a relative path is taken relative to
/// `pincer_home`, so the answer does not depend on the process's working directory.
pub fn resolve_workspace_dir(
    cfg: &PincerConfig,
    agent_id: &str,
    pincer_home: &Path,
    home_dir: Option<&Path>,
) -> PathBuf {
    let wanted = normalize_agent_id(agent_id);
    let configured = cfg
        .agents
        .list
        .iter()
        .find(|entry| normalize_agent_id(&entry.id) == wanted)
        .and_then(|entry| entry.workspace.as_deref())
        .map(str::trim)
        .filter(|dir| !dir.is_empty());
    match configured {
        Some(dir) => expand_user_path(dir, pincer_home, home_dir),
        None => default_workspace_dir(pincer_home, &wanted),
    }
}

/// Expands a leading `~` against `home_dir` and makes a relative path relative to `base`.
/// Without a home directory a `~` path is taken literally (relative to `base`).
pub fn expand_user_path(path: &str, base: &Path, home_dir: Option<&Path>) -> PathBuf {
    let expanded = match (path, home_dir) {
        ("~", Some(home)) => home.to_path_buf(),
        (p, Some(home)) if p.starts_with("~/") => home.join(&p[2..]),
        (p, _) => PathBuf::from(p),
    };
    if expanded.is_absolute() {
        expanded
    } else {
        base.join(expanded)
    }
}

/// Creates the workspace directory and whatever starter files and directories are missing.
/// Existing files are never touched, whatever their content: they are the user's.
pub fn ensure_workspace(dir: &Path) -> Result<EnsureReport, WorkspaceError> {
    let created_dir = ensure_dir(dir)?;
    let mut report = EnsureReport {
        dir: dir.to_path_buf(),
        created_dir,
        created: Vec::new(),
        kept: Vec::new(),
    };
    for (name, content) in STARTER_FILES {
        let path = dir.join(name);
        let wrote = write_if_missing(&path, content)
            .map_err(|source| WorkspaceError::WriteStarter { path, source })?;
        let bucket = if wrote {
            &mut report.created
        } else {
            &mut report.kept
        };
        bucket.push(name.to_string());
    }
    for name in STARTER_DIRS {
        let bucket = if ensure_dir(&dir.join(name))? {
            &mut report.created
        } else {
            &mut report.kept
        };
        bucket.push(format!("{name}/"));
    }
    Ok(report)
}

/// Creates `path` (and parents) unless it is already a directory; `true` if it was created.
#[expect(
    clippy::disallowed_methods,
    reason = "runs on the blocking pool: ensure_workspace, called by the Runtime (on the pool) and the CLI's one-shot commands"
)]
fn ensure_dir(path: &Path) -> Result<bool, WorkspaceError> {
    match fs::metadata(path) {
        Ok(meta) if meta.is_dir() => return Ok(false),
        Ok(_) => {
            return Err(WorkspaceError::NotADirectory {
                path: path.to_path_buf(),
            });
        }
        Err(err) if err.kind() == io::ErrorKind::NotFound => {}
        Err(source) => {
            return Err(WorkspaceError::CreateDir {
                path: path.to_path_buf(),
                source,
            });
        }
    }
    // 0700: the workspace holds the agent's memory (`MEMORY.md`, `memory/`) and its notes
    // about the user; nobody else on the machine has a reason to read them.
    pincer_base::create_private_dir_all(path).map_err(|source| WorkspaceError::CreateDir {
        path: path.to_path_buf(),
        source,
    })?;
    Ok(true)
}

/// Writes `content` to `path` only if nothing is there; `true` if it wrote.
///
/// The content goes to a temporary file first and is then hard-linked into place: linking
/// fails if the target exists (so a file the user creates meanwhile is never replaced) and
/// a crash never leaves a half-written starter file behind, which a later run would then
/// keep forever. Filesystems without hard links fall back to an exclusive create.
#[expect(
    clippy::disallowed_methods,
    reason = "runs on the blocking pool: ensure_workspace, called by the Runtime (on the pool) and the CLI's one-shot commands"
)]
fn write_if_missing(path: &Path, content: &str) -> io::Result<bool> {
    if fs::symlink_metadata(path).is_ok() {
        return Ok(false);
    }
    let file_name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    // Unique per process and call, so two threads ensuring the same workspace never share
    // (and truncate) one temporary file.
    static NEXT_TEMP: AtomicU64 = AtomicU64::new(0);
    let n = NEXT_TEMP.fetch_add(1, Ordering::Relaxed);
    let temp = path.with_file_name(format!(".{file_name}.{}.{n}.tmp", std::process::id()));
    let written = (|| {
        let mut file = pincer_base::private_open_options()
            .write(true)
            .create(true)
            .truncate(true)
            .open(&temp)?;
        file.write_all(content.as_bytes())?;
        file.sync_all()
    })();
    let outcome = written.and_then(|()| match fs::hard_link(&temp, path) {
        Ok(()) => Ok(true),
        Err(err) if err.kind() == io::ErrorKind::AlreadyExists => Ok(false),
        Err(_) => create_new_with(path, content),
    });
    // The temporary file is ours alone; failing to remove it only leaves a stray file.
    let _ = fs::remove_file(&temp);
    outcome
}

#[expect(
    clippy::disallowed_methods,
    reason = "runs on the blocking pool: ensure_workspace, called by the Runtime (on the pool) and the CLI's one-shot commands"
)]
fn create_new_with(path: &Path, content: &str) -> io::Result<bool> {
    match pincer_base::private_open_options()
        .write(true)
        .create_new(true)
        .open(path)
    {
        Ok(mut file) => {
            file.write_all(content.as_bytes())?;
            file.sync_all()?;
            Ok(true)
        }
        Err(err) if err.kind() == io::ErrorKind::AlreadyExists => Ok(false),
        Err(err) => Err(err),
    }
}

//! `$PINCER_HOME/exec-approvals.json`: the commands each agent may run without asking, in
//! OpenClaw's format (`{"version": 1, "agents": {"<id>": {"allowlist": [...]}}}`; keys
//! Pincer does not use, such as `socket` and `defaults`, are kept as they are).
//!
//! An allowlist entry is a string or an object with a non-empty `pattern` (plus `id`,
//! `source`, `commandText`, `lastUsedAt`, ...). Two kinds of pattern: `=command:<hash>`
//! (OpenClaw's durable approval of one exact command line: the first 16 hex digits of the
//! SHA-256 of the trimmed line), which `allow-always` adds, and a program name, matched as
//! `tools.exec.allow` entries are (see [`super::allowlist`]).
//!
//! The file is read on every check (it is small and a person may edit it), written
//! atomically and private (0600). A file that does not parse is an error the caller shows:
//! it is never replaced by an empty one.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

/// The file's name under `$PINCER_HOME`.
pub const FILE_NAME: &str = "exec-approvals.json";
/// The largest file read (a person's allowlist is a few kilobytes).
pub const MAX_FILE_BYTES: u64 = 1024 * 1024;
/// What `allow-always` writes as an entry's `source` (OpenClaw's).
pub const SOURCE_ALLOW_ALWAYS: &str = "allow-always";

/// Why the approvals file cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum ApprovalsFileError {
    #[error("{path}: {source}")]
    Io {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("{path} is larger than {MAX_FILE_BYTES} bytes")]
    TooLarge { path: String },
    #[error("{path} is not valid: {reason}")]
    Invalid { path: String, reason: String },
}

/// The whole file.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ApprovalsFile {
    pub version: u64,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub agents: BTreeMap<String, AgentApprovals>,
    /// Keys Pincer does not read (`socket`, `defaults`), kept on write.
    #[serde(flatten)]
    pub other: Map<String, Value>,
}

/// One agent's part.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct AgentApprovals {
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub allowlist: Vec<AllowlistEntry>,
    #[serde(flatten)]
    pub other: Map<String, Value>,
}

/// One allowlist entry (a bare string in the file reads as `{"pattern": "..."}`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(from = "RawEntry")]
#[serde(rename_all = "camelCase")]
pub struct AllowlistEntry {
    pub pattern: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command_text: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_used_at: Option<i64>,
    #[serde(flatten)]
    pub other: Map<String, Value>,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum RawEntry {
    Pattern(String),
    Entry {
        pattern: String,
        #[serde(default)]
        id: Option<String>,
        #[serde(default)]
        source: Option<String>,
        #[serde(default, rename = "commandText")]
        command_text: Option<String>,
        #[serde(default, rename = "lastUsedAt")]
        last_used_at: Option<f64>,
        #[serde(flatten)]
        other: Map<String, Value>,
    },
}

impl From<RawEntry> for AllowlistEntry {
    fn from(raw: RawEntry) -> Self {
        match raw {
            RawEntry::Pattern(pattern) => Self::pattern(pattern),
            RawEntry::Entry {
                pattern,
                id,
                source,
                command_text,
                last_used_at,
                other,
            } => Self {
                pattern,
                id,
                source,
                command_text,
                // Saturating float-to-int cast: OpenClaw writes milliseconds as numbers.
                last_used_at: last_used_at.filter(|t| t.is_finite()).map(|t| t as i64),
                other,
            },
        }
    }
}

impl AllowlistEntry {
    /// An entry with only a pattern.
    pub fn pattern(pattern: impl Into<String>) -> Self {
        Self {
            pattern: pattern.into(),
            id: None,
            source: None,
            command_text: None,
            last_used_at: None,
            other: Map::new(),
        }
    }
}

/// The pattern that approves exactly `command` (OpenClaw's `=command:<sha256 prefix>`).
pub fn command_pattern(command: &str) -> String {
    let digest = Sha256::digest(command.trim().as_bytes());
    let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    format!("=command:{}", &hex[..16])
}

/// Parses the file's text; `path` names it in errors.
pub fn parse(text: &str, path: &str) -> Result<ApprovalsFile, ApprovalsFileError> {
    let invalid = |reason: String| ApprovalsFileError::Invalid {
        path: path.to_owned(),
        reason,
    };
    let file: ApprovalsFile = serde_json::from_str(text).map_err(|e| {
        invalid(format!(
            "{e} (expected {{\"version\": 1, \"agents\": {{\"<agent>\": {{\"allowlist\": \
             [\"<program>\" or {{\"pattern\": ...}}]}}}}}})"
        ))
    })?;
    if file.version != 1 {
        return Err(invalid(format!(
            "version {} is not supported (expected 1)",
            file.version
        )));
    }
    for (agent, approvals) in &file.agents {
        for (i, entry) in approvals.allowlist.iter().enumerate() {
            if entry.pattern.trim().is_empty() {
                return Err(invalid(format!(
                    "agents.{agent}.allowlist[{i}]: expected a non-empty pattern"
                )));
            }
        }
    }
    Ok(file)
}

impl ApprovalsFile {
    /// An empty file of the current version.
    pub fn empty() -> Self {
        Self {
            version: 1,
            ..Self::default()
        }
    }

    /// `agent_id`'s patterns.
    pub fn patterns(&self, agent_id: &str) -> impl Iterator<Item = &str> {
        self.agents
            .get(agent_id)
            .into_iter()
            .flat_map(|a| a.allowlist.iter().map(|e| e.pattern.trim()))
    }

    /// Whether `agent_id` approved exactly `command` for always.
    pub fn approves_command(&self, agent_id: &str, command: &str) -> bool {
        let wanted = command_pattern(command);
        self.patterns(agent_id).any(|p| p == wanted)
    }

    /// The program names among `agent_id`'s patterns (the `=...` forms are not programs).
    pub fn programs(&self, agent_id: &str) -> Vec<String> {
        self.patterns(agent_id)
            .filter(|p| !p.starts_with('='))
            .map(str::to_owned)
            .collect()
    }

    /// Adds (or refreshes) the approval of exactly `command` for `agent_id`; `id` names a
    /// new entry.
    pub fn approve_command(&mut self, agent_id: &str, command: &str, id: String, now_ms: i64) {
        let pattern = command_pattern(command);
        let allowlist = &mut self
            .agents
            .entry(agent_id.to_owned())
            .or_default()
            .allowlist;
        if let Some(entry) = allowlist.iter_mut().find(|e| e.pattern.trim() == pattern) {
            entry.source = Some(SOURCE_ALLOW_ALWAYS.to_owned());
            entry.last_used_at = Some(now_ms);
            return;
        }
        allowlist.push(AllowlistEntry {
            id: Some(id),
            source: Some(SOURCE_ALLOW_ALWAYS.to_owned()),
            command_text: Some(command.trim().to_owned()),
            last_used_at: Some(now_ms),
            ..AllowlistEntry::pattern(pattern)
        });
    }
}

/// The file at a path, read and written whole. Blocking: call from `spawn_blocking`.
#[derive(Debug, Clone)]
pub struct ApprovalsStore {
    path: PathBuf,
}

/// Serialises this process's read-modify-write cycles (the write itself is atomic).
static WRITE_LOCK: Mutex<()> = Mutex::new(());

impl ApprovalsStore {
    /// The file `FILE_NAME` in `home` (`$PINCER_HOME`).
    pub fn in_home(home: &Path) -> Self {
        Self::at(home.join(FILE_NAME))
    }

    pub fn at(path: PathBuf) -> Self {
        Self { path }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The file; a missing file is an empty one.
    pub fn load(&self) -> Result<ApprovalsFile, ApprovalsFileError> {
        let shown = self.path.display().to_string();
        let io = |source| ApprovalsFileError::Io {
            path: shown.clone(),
            source,
        };
        let meta = match std::fs::metadata(&self.path) {
            Ok(meta) => meta,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Ok(ApprovalsFile::empty());
            }
            Err(e) => return Err(io(e)),
        };
        if meta.len() > MAX_FILE_BYTES {
            return Err(ApprovalsFileError::TooLarge { path: shown });
        }
        let text = std::fs::read_to_string(&self.path).map_err(io)?;
        parse(&text, &shown)
    }

    /// Records `allow-always` of `command` for `agent_id`. A file that does not parse is
    /// left alone and the error returned.
    pub fn approve_command(
        &self,
        agent_id: &str,
        command: &str,
        now_ms: i64,
    ) -> Result<(), ApprovalsFileError> {
        let _guard = WRITE_LOCK.lock().unwrap_or_else(|e| e.into_inner());
        let mut file = self.load()?;
        file.approve_command(agent_id, command, pincer_base::id::uuid_v4(), now_ms);
        let mut text =
            serde_json::to_string_pretty(&file).map_err(|e| ApprovalsFileError::Invalid {
                path: self.path.display().to_string(),
                reason: e.to_string(),
            })?;
        text.push('\n');
        pincer_base::atomic::write_atomic(&self.path, text.as_bytes()).map_err(|source| {
            ApprovalsFileError::Io {
                path: self.path.display().to_string(),
                source,
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parsed(text: &str) -> Result<ApprovalsFile, String> {
        parse(text, "exec-approvals.json").map_err(|e| e.to_string())
    }

    #[test]
    fn reads_openclaws_format_with_strings_and_objects() {
        let file = parsed(
            r#"{"version": 1, "socket": {"path": "/x.sock"}, "defaults": {"ask": "on-miss"},
                "agents": {"main": {"security": "allowlist", "allowlist": ["git",
                  {"id": "a", "pattern": "=command:0123456789abcdef", "source": "allow-always",
                   "lastUsedAt": 1700000000000.0, "lastResolvedPath": "/usr/bin/git"}]}}}"#,
        )
        .unwrap();
        assert_eq!(file.programs("main"), ["git"]);
        assert_eq!(file.programs("other"), Vec::<String>::new());
        let entry = &file.agents["main"].allowlist[1];
        assert_eq!(entry.last_used_at, Some(1_700_000_000_000));
        assert_eq!(entry.other["lastResolvedPath"], "/usr/bin/git");
        // Unknown keys survive a round trip.
        let again = serde_json::to_value(&file).unwrap();
        assert_eq!(again["socket"]["path"], "/x.sock");
        assert_eq!(again["defaults"]["ask"], "on-miss");
        assert_eq!(again["agents"]["main"]["security"], "allowlist");
        assert_eq!(again["agents"]["main"]["allowlist"][0]["pattern"], "git");
    }

    #[test]
    fn malformed_files_are_clear_errors() {
        let cases = [
            ("", "EOF while parsing"),
            ("[]", "invalid type: sequence"),
            (
                r#"{"version": 2}"#,
                "version 2 is not supported (expected 1)",
            ),
            (r#"{"agents": {}}"#, "missing field `version`"),
            (
                r#"{"version": 1, "agents": {"main": {"allowlist": [" "]}}}"#,
                "agents.main.allowlist[0]: expected a non-empty pattern",
            ),
            (
                r#"{"version": 1, "agents": {"main": {"allowlist": [7]}}}"#,
                "did not match any variant",
            ),
            (
                r#"{"version": 1, "agents": {"main": {"allowlist": "git"}}}"#,
                "invalid type: string",
            ),
        ];
        for (text, wanted) in cases {
            let error = parsed(text).unwrap_err();
            assert!(
                error.starts_with("exec-approvals.json is not valid: "),
                "{error}"
            );
            assert!(error.contains(wanted), "{text:?}: {error}");
        }
    }

    #[test]
    fn command_patterns_bind_the_exact_trimmed_line() {
        let p = command_pattern("echo hi");
        assert_eq!(p, command_pattern("  echo hi\n"));
        assert_ne!(p, command_pattern("echo hi!"));
        assert_ne!(p, command_pattern("echo  hi"));
        assert_eq!(p.len(), "=command:".len() + 16);
        let mut file = ApprovalsFile::empty();
        file.approve_command("main", "echo hi", "id1".into(), 5);
        file.approve_command("main", "echo hi", "id2".into(), 6);
        assert!(file.approves_command("main", "echo hi"));
        assert!(!file.approves_command("main", "echo bye"));
        assert!(!file.approves_command("other", "echo hi"));
        let entries = &file.agents["main"].allowlist;
        assert_eq!(entries.len(), 1);
        assert_eq!(entries[0].id.as_deref(), Some("id1"));
        assert_eq!(entries[0].last_used_at, Some(6));
        assert_eq!(entries[0].command_text.as_deref(), Some("echo hi"));
        assert!(file.programs("main").is_empty());
    }

    #[test]
    fn a_malformed_file_is_not_replaced() {
        let dir = tempfile::tempdir().unwrap();
        let store = ApprovalsStore::in_home(dir.path());
        std::fs::write(store.path(), "{not json").unwrap();
        let error = store.approve_command("main", "ls", 1).unwrap_err();
        assert!(error.to_string().contains("is not valid"), "{error}");
        assert_eq!(std::fs::read_to_string(store.path()).unwrap(), "{not json");
    }

    #[test]
    fn approving_writes_a_private_file() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let store = ApprovalsStore::in_home(dir.path());
        assert_eq!(store.load().unwrap(), ApprovalsFile::empty());
        store.approve_command("main", "ls -l", 7).unwrap();
        let mode = std::fs::metadata(store.path())
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
        let file = store.load().unwrap();
        assert!(file.approves_command("main", "ls -l"));
        let raw: Value =
            serde_json::from_str(&std::fs::read_to_string(store.path()).unwrap()).unwrap();
        assert_eq!(raw["version"], 1);
        assert_eq!(
            raw["agents"]["main"]["allowlist"][0]["source"],
            "allow-always"
        );
        assert_eq!(
            raw["agents"]["main"]["allowlist"][0]["commandText"],
            "ls -l"
        );
    }
}

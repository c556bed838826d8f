//! The sandbox policy: which backend, what the command may see and change, whether it may
//! use the network. It travels as JSON (the `--policy` of `pincer sandbox-exec`), so
//! parsing is strict: unknown fields, relative paths and a workspace of `/` are refused.

use std::path::{Component, Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::SandboxError;

/// Which sandbox runs a command.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SandboxMode {
    /// No sandbox: the command runs with the user's full rights.
    #[default]
    Off,
    /// bubblewrap (`bwrap`): mount, PID and network namespaces.
    Bwrap,
    /// Landlock, applied by `pincer sandbox-exec` to itself before it execs the command.
    Landlock,
}

impl SandboxMode {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Off => "off",
            Self::Bwrap => "bwrap",
            Self::Landlock => "landlock",
        }
    }
}

impl std::fmt::Display for SandboxMode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What a sandboxed command may do. Everything not granted here is read-only (bwrap: the
/// system) or invisible (Landlock: everything outside the system paths and the grants).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SandboxPolicy {
    pub mode: SandboxMode,
    /// Read-write: the agent's workspace.
    pub workspace: PathBuf,
    /// Where the command starts (inside the workspace; default the workspace).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workdir: Option<PathBuf>,
    /// Extra paths readable (missing ones are skipped).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub read_only: Vec<PathBuf>,
    /// Extra paths writable (missing ones are skipped).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub read_write: Vec<PathBuf>,
    /// TCP and other network access (default: none).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub network: bool,
    /// Paths the command must not see at all (e.g. `$PINCER_HOME` with its credentials).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hide: Vec<PathBuf>,
    /// The command runs on a terminal it must keep as its controlling terminal (`pty`):
    /// bwrap then does not start a new session.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub tty: bool,
}

impl SandboxPolicy {
    /// A policy for `mode` with `workspace` read-write and nothing else granted.
    pub fn new(mode: SandboxMode, workspace: impl Into<PathBuf>) -> Self {
        Self {
            mode,
            workspace: workspace.into(),
            workdir: None,
            read_only: Vec::new(),
            read_write: Vec::new(),
            network: false,
            hide: Vec::new(),
            tty: false,
        }
    }

    /// The `--policy` argument of `sandbox-exec`: JSON (starting with `{`) or the path of a
    /// file holding it. Validated ([`Self::validate`]).
    pub fn parse_arg(arg: &str) -> Result<Self, SandboxError> {
        let text = if arg.trim_start().starts_with('{') {
            arg.to_owned()
        } else {
            std::fs::read_to_string(arg).map_err(|e| {
                SandboxError::InvalidPolicy(format!("cannot read the policy file {arg}: {e}"))
            })?
        };
        Self::parse(&text)
    }

    /// A policy from its JSON, validated.
    pub fn parse(json: &str) -> Result<Self, SandboxError> {
        let policy: Self = serde_json::from_str(json)
            .map_err(|e| SandboxError::InvalidPolicy(format!("not a sandbox policy: {e}")))?;
        policy.validate()?;
        Ok(policy)
    }

    /// The JSON [`Self::parse`] reads.
    pub fn to_json(&self) -> String {
        // A struct of strings, paths and bools: serialising cannot fail (a non-UTF-8 path
        // is the one exception, and `validate` refuses those).
        serde_json::to_string(self).unwrap_or_default()
    }

    /// Absolute, normalised, UTF-8 paths; a workspace that is not `/`; a workdir inside
    /// the workspace.
    pub fn validate(&self) -> Result<(), SandboxError> {
        check_path("workspace", &self.workspace)?;
        if self.workspace.parent().is_none() {
            return Err(SandboxError::InvalidPolicy(
                "the workspace cannot be / (it would grant the whole file system)".to_owned(),
            ));
        }
        if let Some(workdir) = &self.workdir {
            check_path("workdir", workdir)?;
            if !workdir.starts_with(&self.workspace) {
                return Err(SandboxError::InvalidPolicy(format!(
                    "workdir {} is outside the workspace {}",
                    workdir.display(),
                    self.workspace.display()
                )));
            }
        }
        for (what, list) in [
            ("readOnly", &self.read_only),
            ("readWrite", &self.read_write),
            ("hide", &self.hide),
        ] {
            for path in list {
                check_path(what, path)?;
            }
        }
        Ok(())
    }

    /// Where the command starts.
    pub fn start_dir(&self) -> &Path {
        self.workdir.as_deref().unwrap_or(&self.workspace)
    }
}

/// Absolute, without `.`/`..`, valid UTF-8 (the policy is JSON).
fn check_path(what: &str, path: &Path) -> Result<(), SandboxError> {
    let ok = path.is_absolute()
        && path.to_str().is_some()
        && path
            .components()
            .all(|c| matches!(c, Component::RootDir | Component::Normal(_)));
    if ok {
        Ok(())
    } else {
        Err(SandboxError::InvalidPolicy(format!(
            "{what} path {:?} must be absolute, without . or .., and UTF-8",
            path.display().to_string()
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_policy_round_trips_through_its_json() {
        let mut policy = SandboxPolicy::new(SandboxMode::Landlock, "/w/ws");
        policy.workdir = Some("/w/ws/sub".into());
        policy.hide = vec!["/home/u/.pincer".into()];
        policy.network = true;
        let json = policy.to_json();
        assert_eq!(
            json,
            r#"{"mode":"landlock","workspace":"/w/ws","workdir":"/w/ws/sub","network":true,"hide":["/home/u/.pincer"]}"#
        );
        assert_eq!(SandboxPolicy::parse(&json).unwrap(), policy);
        assert_eq!(SandboxPolicy::parse_arg(&json).unwrap(), policy);
    }

    #[test]
    fn malformed_policies_are_refused_with_the_reason() {
        let cases = [
            (
                "",
                "not a sandbox policy: EOF while parsing a value at line 1 column 0",
            ),
            (
                "{",
                "not a sandbox policy: EOF while parsing an object at line 1 column 1",
            ),
            (
                r#"{"mode":"docker","workspace":"/w"}"#,
                "unknown variant `docker`",
            ),
            (
                r#"{"mode":"off","workspace":"/w","extra":1}"#,
                "unknown field `extra`",
            ),
            (r#"{"mode":"off"}"#, "missing field `workspace`"),
            (
                r#"{"mode":"bwrap","workspace":"w"}"#,
                "workspace path \"w\" must be absolute",
            ),
            (
                r#"{"mode":"bwrap","workspace":"/"}"#,
                "the workspace cannot be /",
            ),
            (
                r#"{"mode":"bwrap","workspace":"/w/../etc"}"#,
                "without . or ..",
            ),
            (
                r#"{"mode":"bwrap","workspace":"/w","workdir":"/x"}"#,
                "workdir /x is outside the workspace /w",
            ),
            (
                r#"{"mode":"bwrap","workspace":"/w","hide":["rel"]}"#,
                "hide path \"rel\"",
            ),
            (
                r#"{"mode":"bwrap","workspace":"/w","network":"yes"}"#,
                "invalid type: string",
            ),
        ];
        for (json, want) in cases {
            let err = SandboxPolicy::parse(json).unwrap_err().to_string();
            assert!(err.contains(want), "{json}: {err}");
        }
    }

    #[test]
    fn a_policy_argument_that_is_not_json_is_a_file_path() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("p.json");
        std::fs::write(&file, r#" {"mode":"bwrap","workspace":"/w"}"#).unwrap();
        let policy = SandboxPolicy::parse_arg(file.to_str().unwrap()).unwrap();
        assert_eq!(policy, SandboxPolicy::new(SandboxMode::Bwrap, "/w"));
        let err = SandboxPolicy::parse_arg("/nonexistent/p.json").unwrap_err();
        assert!(
            err.to_string().starts_with(
                "invalid sandbox policy: cannot read the policy file /nonexistent/p.json:"
            ),
            "{err}"
        );
    }
}

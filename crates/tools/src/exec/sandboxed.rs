//! `exec` in a sandbox: which sessions of an agent are sandboxed ([`ExecSandbox`], from
//! `tools.exec.sandbox` / `agents.*.sandbox`), the policy a command gets (the workspace
//! writable, `$PINCER_HOME` hidden, network as configured), and the program that is
//! spawned instead of `sh` ([`pincer_sandbox::wrap`]). A sandbox that cannot run is an
//! error for the call, never an unsandboxed run.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use pincer_sandbox::{SandboxMode, SandboxPolicy};

use super::session::SpawnSpec;

/// The shell a sandboxed command runs with (by absolute path: the sandbox's environment
/// is exactly the command's, which may lack `PATH`).
const SHELL: &str = "/bin/sh";

/// An agent's sandbox settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExecSandbox {
    /// `Bwrap` or `Landlock`.
    pub mode: SandboxMode,
    /// Only sessions other than the agent's main one (OpenClaw's `non-main`).
    pub non_main_only: bool,
    pub network: bool,
    pub read_only: Vec<PathBuf>,
    pub read_write: Vec<PathBuf>,
    /// Never visible inside (`$PINCER_HOME`: credentials, sessions, config).
    pub hide: Vec<PathBuf>,
}

impl ExecSandbox {
    /// The policy for a command of `agent_id` in session `session_key`, run in `cwd` of
    /// `workspace` (`None`: this session is not sandboxed).
    pub fn policy_for(
        &self,
        agent_id: &str,
        session_key: Option<&str>,
        workspace: &Path,
        cwd: &Path,
    ) -> Option<SandboxPolicy> {
        if self.mode == SandboxMode::Off {
            return None;
        }
        if self.non_main_only && session_key == Some(format!("agent:{agent_id}:main").as_str()) {
            return None;
        }
        let mut policy = SandboxPolicy::new(self.mode, workspace);
        policy.workdir = Some(cwd.to_owned());
        policy.network = self.network;
        policy.read_only = self.read_only.clone();
        policy.read_write = self.read_write.clone();
        policy.hide = self.hide.clone();
        Some(policy)
    }
}

/// The program and arguments that run `spec`'s command: `sh -c <command>`, or its
/// sandbox's wrapper around `/bin/sh -c <command>`.
pub(super) fn shell_command(spec: &SpawnSpec) -> std::io::Result<(OsString, Vec<OsString>)> {
    let args: Vec<OsString> = vec!["-c".into(), spec.command.clone().into()];
    let Some(policy) = &spec.sandbox else {
        return Ok(("sh".into(), args));
    };
    let mut policy = policy.clone();
    policy.tty = spec.pty;
    pincer_sandbox::wrap(&policy, SHELL.as_ref(), &args)
        .map_err(|e| std::io::Error::other(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn non_main_spares_only_the_agents_main_session() {
        let sandbox = ExecSandbox {
            mode: SandboxMode::Bwrap,
            non_main_only: true,
            network: true,
            read_only: vec![],
            read_write: vec![],
            hide: vec!["/h".into()],
        };
        let (ws, cwd) = (Path::new("/w"), Path::new("/w/sub"));
        assert_eq!(
            sandbox.policy_for("main", Some("agent:main:main"), ws, cwd),
            None
        );
        let policy = sandbox
            .policy_for("main", Some("agent:main:cron:1"), ws, cwd)
            .unwrap();
        assert_eq!(
            policy.to_json(),
            r#"{"mode":"bwrap","workspace":"/w","workdir":"/w/sub","network":true,"hide":["/h"]}"#
        );
        assert!(
            sandbox
                .policy_for("ops", Some("agent:main:main"), ws, cwd)
                .is_some()
        );
        let all = ExecSandbox {
            non_main_only: false,
            ..sandbox
        };
        assert!(
            all.policy_for("main", Some("agent:main:main"), ws, cwd)
                .is_some()
        );
    }
}

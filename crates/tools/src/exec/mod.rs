//! `exec` and `process`: shell commands for an agent, after OpenClaw's async exec tool.
//!
//! `exec` runs `sh -c <command>` in its own process group, in a directory inside the
//! workspace, with a cleaned environment ([`env`]), stdout and stderr merged and sanitised
//! ([`output`]); `pty: true` runs it on a pseudo-terminal instead ([`pty`]). It streams
//! the output tail as partial results; a command that outlives `yieldMs` (or asks for
//! `background`) keeps running in the [`ProcessRegistry`] and the agent follows up with
//! `process`. Backgrounded sessions announce their exit through the
//! registry's callback (`Exec completed (<id8>, code 0) :: <tail>`), which the gateway turns
//! into a system event. [`ExecSecurity`] decides what may run at all; in allowlist mode the
//! command line is parsed ([`allowlist`]) and every program in it must be listed.
//!
//! No process outlives its session: timeouts, kills, aborts and
//! [`ProcessRegistry::shutdown`] signal the whole group, and whatever the shell leaves in
//! its group is killed when it exits. Nor its owner: a group dies with the process that
//! started it, even one killed with SIGKILL ([`orphans`]).

use std::sync::Arc;

use pincer_agent::{AgentTool, typed};

use crate::paths::PathPolicy;

pub mod allowlist;
pub mod approval;
pub mod approvals_file;
pub mod env;
pub mod orphans;
pub mod output;
pub mod process_tool;
pub mod pty;
pub mod registry;
pub mod sandboxed;
pub mod session;
pub mod tool;

pub use orphans::{ReapReport, reap_orphans};
pub use process_tool::{ProcessAction, ProcessArgs, ProcessTool};
pub use registry::{ExecExitNotice, ExitCallback, LookupError, ProcessRegistry};
pub use sandboxed::ExecSandbox;
pub use session::{SessionSnapshot, SessionStatus};
pub use tool::{ExecArgs, ExecTool};

/// What `exec` may run.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum ExecSecurity {
    /// Nothing: `exec_tools` returns no tools and `ExecTool` refuses every command.
    #[default]
    Deny,
    /// Only command lines whose every program is one of these names (see [`allowlist`]
    /// for what is refused regardless).
    Allowlist(Vec<String>),
    /// Anything the shell can do.
    Full,
}

/// `exec` and `process` for the agent `scope`, sharing `registry`. Empty when `security`
/// is `Deny`.
pub fn exec_tools(
    policy: PathPolicy,
    registry: ProcessRegistry,
    security: ExecSecurity,
    scope: &str,
) -> Vec<Arc<dyn AgentTool>> {
    exec_tools_notifying(policy, registry, security, scope, None)
}

/// [`exec_tools`] whose `exec` announces a backgrounded command's exit as `notify_on_exit`
/// says (the agent's `tools.exec.notifyOnExit`) unless a call says otherwise; `None`: the
/// registry's default.
pub fn exec_tools_notifying(
    policy: PathPolicy,
    registry: ProcessRegistry,
    security: ExecSecurity,
    scope: &str,
    notify_on_exit: Option<bool>,
) -> Vec<Arc<dyn AgentTool>> {
    exec_tools_approving(policy, registry, security, scope, notify_on_exit, None)
}

/// [`exec_tools_notifying`] whose `exec` asks before running as `approval` says
/// (`tools.exec.ask`, see [`approval`]).
pub fn exec_tools_approving(
    policy: PathPolicy,
    registry: ProcessRegistry,
    security: ExecSecurity,
    scope: &str,
    notify_on_exit: Option<bool>,
    approval: Option<approval::ExecApproval>,
) -> Vec<Arc<dyn AgentTool>> {
    exec_tools_sandboxed(
        policy,
        registry,
        security,
        scope,
        notify_on_exit,
        approval,
        None,
    )
}

/// [`exec_tools_approving`] whose `exec` runs commands in `sandbox` (see [`sandboxed`]).
pub fn exec_tools_sandboxed(
    policy: PathPolicy,
    registry: ProcessRegistry,
    security: ExecSecurity,
    scope: &str,
    notify_on_exit: Option<bool>,
    approval: Option<approval::ExecApproval>,
    sandbox: Option<ExecSandbox>,
) -> Vec<Arc<dyn AgentTool>> {
    if security == ExecSecurity::Deny {
        return Vec::new();
    }
    vec![
        typed(
            ExecTool::new(policy, registry.clone(), security, scope)
                .with_notify_on_exit(notify_on_exit)
                .with_approval(approval)
                .with_sandbox(sandbox),
        ),
        typed(ProcessTool::new(registry, scope)),
    ]
}

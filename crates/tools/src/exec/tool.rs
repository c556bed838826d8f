//! The `exec` tool (OpenClaw's `bash-tools.exec`): run a shell command, stream its output
//! as partial results, and either return when it exits or, after `yieldMs` (or at once
//! with `background: true`), hand it to the process registry and return
//! `status: "running"` with a session id for the `process` tool.
//!
//! Judgement calls: a non-zero exit code is a normal result (status `failed`, text ends
//! with `(exit code N)`) because it is information (`grep` finding nothing), not a tool
//! failure; a timeout is a tool error. `pty: true` runs the command on a pseudo-terminal
//! ([`super::pty`]) for programs that need one.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use pincer_agent::{ToolContext, ToolError, ToolOutput, TypedTool};
use serde::Deserialize;
use serde_json::json;

use super::ExecSecurity;
use super::output::{TAIL_CHARS, tail_lines};
use super::registry::ProcessRegistry;
use super::session::{KillReason, Session, SessionStatus, SpawnSpec};
use super::{allowlist, env};
use crate::files::truncate::{MAX_BYTES, MAX_LINES};
use crate::paths::PathPolicy;

/// Default wait before backgrounding.
pub const DEFAULT_YIELD_MS: u64 = 10_000;
/// Bounds for `yieldMs`.
pub const YIELD_MS_RANGE: (u64, u64) = (10, 120_000);
/// Default timeout in seconds.
pub const DEFAULT_TIMEOUT_SECS: u64 = 1800;
/// Longest timeout a model may ask for (a week); larger numbers are cut to it.
pub const MAX_TIMEOUT: Duration = Duration::from_secs(7 * 24 * 3600);
/// How long an abort waits for the group to die.
const ABORT_WAIT: Duration = Duration::from_secs(5);

/// Arguments of `exec`.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ExecArgs {
    /// Shell command to execute (run with `sh -c`).
    pub command: String,
    /// Working directory, inside the workspace (default: the workspace).
    pub workdir: Option<String>,
    /// Extra environment variables for the command.
    pub env: Option<BTreeMap<String, String>>,
    /// Milliseconds to wait before backgrounding (default 10000, 10 to 120000).
    pub yield_ms: Option<f64>,
    /// Run in background immediately.
    pub background: Option<bool>,
    /// Timeout in seconds (default 1800, at most a week); the whole process group is
    /// killed on expiry.
    pub timeout: Option<f64>,
    /// Run in a pseudo-terminal, for programs that need a TTY (colours, interactive
    /// prompts). Output is what the terminal shows; input sent with process write is echoed.
    pub pty: Option<bool>,
    /// Whether you are told when this command exits after it went to the background
    /// (default: the configured `tools.exec.notifyOnExit`, normally true). false: follow it
    /// with the process tool instead.
    pub notify_on_exit: Option<bool>,
}

/// Runs shell commands in the workspace.
pub struct ExecTool {
    policy: PathPolicy,
    registry: ProcessRegistry,
    security: ExecSecurity,
    scope: String,
    /// The agent's `tools.exec.notifyOnExit`; `None`: the registry's default.
    notify_on_exit: Option<bool>,
    /// `tools.exec.ask` and who answers (`None`: never asks).
    approval: Option<super::approval::ExecApproval>,
    /// The agent's sandbox (`None`: commands run with the user's rights).
    sandbox: Option<super::ExecSandbox>,
}

impl ExecTool {
    pub fn new(
        policy: PathPolicy,
        registry: ProcessRegistry,
        security: ExecSecurity,
        scope: impl Into<String>,
    ) -> Self {
        Self {
            policy,
            registry,
            security,
            scope: scope.into(),
            notify_on_exit: None,
            approval: None,
            sandbox: None,
        }
    }

    /// Runs commands in `sandbox` (see [`super::sandboxed`]).
    pub fn with_sandbox(mut self, sandbox: Option<super::ExecSandbox>) -> Self {
        self.sandbox = sandbox;
        self
    }

    /// Asks before running, as `approval` says (see [`super::approval`]).
    pub fn with_approval(mut self, approval: Option<super::approval::ExecApproval>) -> Self {
        self.approval = approval.filter(|a| a.asks());
        self
    }

    /// Whether this agent's backgrounded commands announce their exit when a call does not
    /// say (`None`: the registry's default, see [`ProcessRegistry::set_notify_on_exit`]).
    pub fn with_notify_on_exit(mut self, notify: Option<bool>) -> Self {
        self.notify_on_exit = notify;
        self
    }

    fn check_security(&self, command: &str) -> Result<(), ToolError> {
        match &self.security {
            ExecSecurity::Full => Ok(()),
            ExecSecurity::Deny => Err(ToolError::failed(
                "exec is disabled for this agent (security: deny)",
            )),
            ExecSecurity::Allowlist(allowed) => {
                allowlist::check(command, allowed).map(|_| ()).map_err(|e| {
                    ToolError::failed(format!(
                        "exec refused: {e}. Allowed programs: {}",
                        if allowed.is_empty() {
                            "none".to_owned()
                        } else {
                            allowed.join(", ")
                        }
                    ))
                })
            }
        }
    }
}

impl TypedTool for ExecTool {
    type Args = ExecArgs;

    const NAME: &'static str = "exec";
    const DESCRIPTION: &'static str = "Execute a shell command (sh -c) in the workspace. Output streams while it runs. \
         If it has not finished after yieldMs (default 10000) it keeps running in the \
         background and you get a sessionId; use the process tool (poll/log/write/kill) to \
         follow up. background: true returns at once. You are notified when a background \
         command exits (unless notifyOnExit is false). Processes a command leaves behind with `&` are killed when it \
         exits; run long-lived servers with background: true instead.";

    async fn run(&self, args: ExecArgs, ctx: ToolContext) -> Result<ToolOutput, ToolError> {
        if args.command.trim().is_empty() {
            return Err(ToolError::failed("command is empty"));
        }
        if self.approval.is_none() {
            self.check_security(&args.command)?;
        }
        let strict = !matches!(self.security, ExecSecurity::Full);
        let env =
            env::build(args.env.as_ref(), strict).map_err(|e| ToolError::failed(e.to_string()))?;
        let cwd = self
            .policy
            .resolve(args.workdir.as_deref().unwrap_or("."))
            .map_err(|e| ToolError::failed(format!("workdir: {e}")))?;
        if !cwd.is_dir() {
            return Err(ToolError::failed(format!(
                "workdir {} is not a directory",
                self.policy.display(&cwd)
            )));
        }
        if let Some(approval) = &self.approval {
            let caller = super::approval::Caller {
                agent_id: &self.scope,
                session_key: ctx.session_key(),
                tool_call_id: &ctx.call_id,
                cancel: &ctx.cancel,
            };
            approval
                .authorize(&self.security, &args.command, &cwd, caller)
                .await?;
        }
        let timeout = match args.timeout {
            Some(secs) if secs.is_finite() && secs > 0.0 => Duration::try_from_secs_f64(secs)
                .unwrap_or(Duration::MAX)
                .min(MAX_TIMEOUT),
            Some(_) => {
                return Err(ToolError::failed(
                    "timeout must be a positive number of seconds",
                ));
            }
            None => Duration::from_secs(DEFAULT_TIMEOUT_SECS),
        };
        let sandbox = self.sandbox.as_ref().and_then(|s| {
            s.policy_for(
                &self.scope,
                ctx.session_key(),
                self.policy.workspace_dir(),
                &cwd,
            )
        });
        let session = self
            .registry
            .spawn(SpawnSpec {
                id: String::new(),
                scope: self.scope.clone(),
                command: args.command.clone(),
                cwd,
                env: env.into_iter().collect(),
                timeout,
                notify_on_exit: args
                    .notify_on_exit
                    .or(self.notify_on_exit)
                    .unwrap_or_else(|| self.registry.notify_on_exit()),
                pty: args.pty == Some(true),
                record_dir: None,
                sandbox,
            })
            .map_err(|e| ToolError::failed(e.to_string()))?;

        if args.background == Some(true) && session.background() {
            return Ok(running(&session));
        }
        session.attach(ctx.clone());
        // Kills the command if this call is dropped while it waits in the foreground.
        let mut guard = ForegroundGuard {
            session: &session,
            registry: &self.registry,
            armed: true,
        };
        let window = Duration::from_millis(match args.yield_ms {
            // Saturating float-to-int cast; NaN becomes 0 and is clamped up.
            Some(ms) => (ms as u64).clamp(YIELD_MS_RANGE.0, YIELD_MS_RANGE.1),
            None => DEFAULT_YIELD_MS,
        });
        tokio::select! {
            _ = session.wait() => {}
            _ = tokio::time::sleep(window) => {
                if session.background() {
                    guard.armed = false;
                    return Ok(running(&session));
                }
                session.wait().await;
            }
            _ = ctx.cancel.cancelled() => {
                guard.armed = false;
                session.request_kill(KillReason::Aborted);
                let _ = tokio::time::timeout(ABORT_WAIT, session.wait()).await;
                self.registry.forget(&session.id);
                return Err(ToolError::Aborted);
            }
        }
        guard.armed = false;
        self.completed(&session)
    }
}

struct ForegroundGuard<'a> {
    session: &'a Arc<Session>,
    registry: &'a ProcessRegistry,
    armed: bool,
}

impl Drop for ForegroundGuard<'_> {
    fn drop(&mut self) {
        if self.armed && !self.session.is_backgrounded() {
            self.session.request_kill(KillReason::Aborted);
            self.registry.forget(&self.session.id);
        }
    }
}

impl ExecTool {
    /// The result of a command that ended while the call waited.
    fn completed(&self, session: &Arc<Session>) -> Result<ToolOutput, ToolError> {
        let status = session.status();
        let (output, _) = session.output();
        let (text, cut) = tail_lines(&output, MAX_LINES, MAX_BYTES);
        let mut text = if text.trim().is_empty() {
            "(no output)".to_owned()
        } else {
            text
        };
        if let Some((shown, total)) = cut {
            text = format!(
                "[Output truncated: showing the last {shown} of {total} lines. Page through \
                 all of it with process action \"log\", sessionId \"{}\".]\n{text}",
                session.id
            );
        } else {
            self.registry.forget(&session.id);
        }
        if session.kill_reason() == Some(KillReason::Timeout) {
            return Err(ToolError::failed(format!(
                "Command timed out and was killed ({}).\n\n{text}",
                describe(&status)
            )));
        }
        match &status {
            SessionStatus::Exited(0) => {}
            other => text.push_str(&format!("\n\n({})", describe(other))),
        }
        Ok(ToolOutput::text(text).with_details(json!({
            "status": status.label(),
            "exitCode": status.exit_code(),
            "signal": status.signal(),
            "sessionId": session.id,
            "pid": session.pid,
            "cwd": session.cwd.display().to_string(),
            "durationMs": u64::try_from(session.runtime().as_millis()).unwrap_or(u64::MAX),
        })))
    }
}

/// `exit code 2`, `killed by signal SIGKILL`.
pub fn describe(status: &SessionStatus) -> String {
    match status {
        SessionStatus::Running => "still running".to_owned(),
        SessionStatus::Exited(code) => format!("exit code {code}"),
        SessionStatus::Signaled(sig) => format!("killed by signal {sig}"),
        SessionStatus::Failed(why) => format!("failed: {why}"),
    }
}

/// The result for a session handed to the registry.
fn running(session: &Session) -> ToolOutput {
    // The model sees this output now, so the next poll starts after it.
    let tail = session.tail_and_mark_polled(TAIL_CHARS);
    let mut text = format!(
        "Command still running (session {}, pid {}). Use process (list/poll/log/write/kill/\
         clear/remove) with this sessionId for follow-up.",
        session.id, session.pid
    );
    if !tail.trim().is_empty() {
        text.push_str("\n\nOutput so far:\n");
        text.push_str(&tail);
    }
    ToolOutput::text(text).with_details(json!({
        "status": "running",
        "sessionId": session.id,
        "pid": session.pid,
        "cwd": session.cwd.display().to_string(),
        "tail": tail,
    }))
}

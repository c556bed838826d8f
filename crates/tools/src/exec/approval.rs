//! Exec approvals (OpenClaw's `tools.exec.ask`): before `exec` spawns a command that needs
//! the owner's consent, [`ExecApproval::authorize`] asks an [`ExecApprover`] (the port: the
//! gateway's approvals registry, which tells operator clients and the session's chat) and
//! waits for `allow-once`, `allow-always` or `deny`, or the timeout, which denies.
//!
//! `on-miss` asks when the command line is not matched by the allowlist: `tools.exec.allow`
//! plus the agent's program patterns in `exec-approvals.json` (every program of the line
//! listed, see [`super::allowlist`]), or the file's approval of this exact line. `always`
//! asks for every command, and then (as in OpenClaw) `allow-always` is not offered.
//! An approved command runs even where `security: "allowlist"` alone would refuse it.
//! `allow-always` records the exact line in the file ([`super::approvals_file`]).
//!
//! The model is told a refusal as a tool error that says not to retry the same command
//! without asking the user.

use std::future::Future;
use std::path::Path;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use pincer_agent::ToolError;
use tokio_util::sync::CancellationToken;

use super::ExecSecurity;
use super::allowlist;
use super::approvals_file::ApprovalsStore;

/// OpenClaw's default wait for a decision (30 minutes).
pub const DEFAULT_APPROVAL_TIMEOUT: Duration = Duration::from_millis(1_800_000);

/// `tools.exec.ask`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum AskMode {
    #[default]
    Off,
    OnMiss,
    Always,
}

impl AskMode {
    /// The wire name (`off`, `on-miss`, `always`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Off => "off",
            Self::OnMiss => "on-miss",
            Self::Always => "always",
        }
    }
}

/// What the owner decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    AllowOnce,
    AllowAlways,
    Deny,
}

impl Decision {
    /// The wire name (`allow-once`, `allow-always`, `deny`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::AllowOnce => "allow-once",
            Self::AllowAlways => "allow-always",
            Self::Deny => "deny",
        }
    }

    /// A wire name.
    pub fn parse(name: &str) -> Option<Self> {
        match name {
            "allow-once" => Some(Self::AllowOnce),
            "allow-always" => Some(Self::AllowAlways),
            "deny" => Some(Self::Deny),
            _ => None,
        }
    }

    /// A word a person types after `/approve` (OpenClaw's aliases, any case).
    pub fn from_alias(word: &str) -> Option<Self> {
        match word.to_ascii_lowercase().as_str() {
            "allow" | "once" | "allow-once" | "allowonce" => Some(Self::AllowOnce),
            "always" | "allow-always" | "allowalways" => Some(Self::AllowAlways),
            "deny" | "reject" | "block" => Some(Self::Deny),
            _ => None,
        }
    }
}

/// How `/approve` is used (OpenClaw's text).
pub const APPROVE_USAGE: &str =
    "Usage: /approve <id> <decision> (see the pending approval message for available decisions)";

/// Reads what follows `/approve`: `<id> <decision>` or `<decision> <id>`.
pub fn parse_approve_args(args: &str) -> Result<(String, Decision), &'static str> {
    let words: Vec<&str> = args.split_whitespace().collect();
    let [first, second] = words.as_slice() else {
        return Err(APPROVE_USAGE);
    };
    match (Decision::from_alias(first), Decision::from_alias(second)) {
        (_, Some(decision)) => Ok(((*first).to_owned(), decision)),
        (Some(decision), None) => Ok(((*second).to_owned(), decision)),
        (None, None) => Err(APPROVE_USAGE),
    }
}

/// A command waiting for approval, as the approver shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApprovalRequest {
    /// The exact command line that runs if approved.
    pub command: String,
    /// Where it runs.
    pub cwd: String,
    pub agent_id: String,
    pub session_key: Option<String>,
    /// The tool call waiting (for clients that show it beside the call).
    pub tool_call_id: String,
    pub ask: AskMode,
    /// The decisions offered (`always`: no `allow-always`).
    pub allowed: Vec<Decision>,
    /// How long to wait before the answer is [`Outcome::TimedOut`].
    pub timeout: Duration,
}

/// How an approval ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    Decided(Decision),
    TimedOut,
    /// Nobody can be asked here (no gateway); the text says why.
    Unavailable(String),
}

/// A boxed future, as ports return them (object safe).
pub type ApprovalFuture<'a> = Pin<Box<dyn Future<Output = Outcome> + Send + 'a>>;

/// The port `exec` asks through. The implementation waits at most `request.timeout`;
/// dropping the future withdraws the request.
pub trait ExecApprover: Send + Sync {
    fn request(&self, request: ApprovalRequest) -> ApprovalFuture<'_>;
}

/// The approval policy of one agent's `exec`.
#[derive(Clone)]
pub struct ExecApproval {
    pub ask: AskMode,
    pub timeout: Duration,
    pub store: ApprovalsStore,
    pub approver: Arc<dyn ExecApprover>,
}

impl std::fmt::Debug for ExecApproval {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ExecApproval")
            .field("ask", &self.ask)
            .field("timeout", &self.timeout)
            .field("store", &self.store)
            .finish_non_exhaustive()
    }
}

/// Who runs the command and for which call.
#[derive(Debug, Clone, Copy)]
pub struct Caller<'a> {
    pub agent_id: &'a str,
    pub session_key: Option<&'a str>,
    pub tool_call_id: &'a str,
    pub cancel: &'a CancellationToken,
}

impl ExecApproval {
    /// Whether this policy ever asks.
    pub fn asks(&self) -> bool {
        self.ask != AskMode::Off
    }

    /// `Ok` when `command` may run in `cwd` now (asking first if the policy says so).
    pub async fn authorize(
        &self,
        security: &ExecSecurity,
        command: &str,
        cwd: &Path,
        caller: Caller<'_>,
    ) -> Result<(), ToolError> {
        if *security == ExecSecurity::Deny {
            return Err(ToolError::failed(
                "exec is disabled for this agent (security: deny)",
            ));
        }
        if self.ask == AskMode::OnMiss && self.matched(security, command, caller.agent_id).await? {
            return Ok(());
        }
        let allowed = match self.ask {
            AskMode::Always => vec![Decision::AllowOnce, Decision::Deny],
            _ => vec![Decision::AllowOnce, Decision::AllowAlways, Decision::Deny],
        };
        let request = ApprovalRequest {
            command: command.to_owned(),
            cwd: cwd.display().to_string(),
            agent_id: caller.agent_id.to_owned(),
            session_key: caller.session_key.map(str::to_owned),
            tool_call_id: caller.tool_call_id.to_owned(),
            ask: self.ask,
            allowed,
            timeout: self.timeout,
        };
        let outcome = tokio::select! {
            outcome = self.approver.request(request) => outcome,
            () = caller.cancel.cancelled() => return Err(ToolError::Aborted),
        };
        match outcome {
            Outcome::Decided(Decision::AllowOnce) => Ok(()),
            Outcome::Decided(Decision::AllowAlways) => {
                self.remember(caller.agent_id, command).await;
                Ok(())
            }
            Outcome::Decided(Decision::Deny) => Err(ToolError::failed(format!(
                "exec denied: the owner denied running `{command}`. Do not retry this \
                 command without asking the user."
            ))),
            Outcome::TimedOut => Err(ToolError::failed(format!(
                "exec denied: nobody approved `{command}` within {} (approval timed out). \
                 Do not retry this command without asking the user.",
                shown(self.timeout)
            ))),
            Outcome::Unavailable(why) => Err(ToolError::failed(format!(
                "exec denied: `{command}` needs approval (tools.exec.ask: {}) but {why}. \
                 Do not retry this command without asking the user.",
                self.ask.as_str()
            ))),
        }
    }

    /// Whether the allowlist (config and file) matches `command` (`on-miss`).
    async fn matched(
        &self,
        security: &ExecSecurity,
        command: &str,
        agent_id: &str,
    ) -> Result<bool, ToolError> {
        let store = self.store.clone();
        let loaded = tokio::task::spawn_blocking(move || store.load())
            .await
            .map_err(|e| ToolError::failed(format!("reading the exec approvals failed: {e}")))?;
        let file = loaded.map_err(|e| {
            ToolError::failed(format!(
                "exec refused: the approvals file cannot be read ({e}); fix or remove it"
            ))
        })?;
        if file.approves_command(agent_id, command) {
            return Ok(true);
        }
        let mut programs = match security {
            ExecSecurity::Allowlist(allowed) => allowed.clone(),
            _ => Vec::new(),
        };
        programs.extend(file.programs(agent_id));
        Ok(allowlist::check(command, &programs).is_ok())
    }

    /// Records `allow-always`; a failure to save does not undo the owner's decision for
    /// this run, it is logged.
    async fn remember(&self, agent_id: &str, command: &str) {
        let (store, agent, line) = (self.store.clone(), agent_id.to_owned(), command.to_owned());
        let now = pincer_base::now_ms();
        let saved =
            tokio::task::spawn_blocking(move || store.approve_command(&agent, &line, now)).await;
        match saved {
            Ok(Ok(())) => {}
            Ok(Err(e)) => tracing::warn!(error = %e, "cannot record an allow-always approval"),
            Err(e) => tracing::warn!(error = %e, "recording an allow-always approval failed"),
        }
    }
}

/// `1800 s`, `300 ms`.
fn shown(d: Duration) -> String {
    match d.as_millis() {
        ms if ms % 1000 == 0 => format!("{} s", ms / 1000),
        ms => format!("{ms} ms"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn approve_args_take_either_order_and_aliases() {
        let ok = |s: &str| parse_approve_args(s).map_err(str::to_owned);
        assert_eq!(
            ok("abc allow-once"),
            Ok(("abc".into(), Decision::AllowOnce))
        );
        assert_eq!(ok("abc ALWAYS"), Ok(("abc".into(), Decision::AllowAlways)));
        assert_eq!(ok("deny abc"), Ok(("abc".into(), Decision::Deny)));
        assert_eq!(ok(" abc   reject "), Ok(("abc".into(), Decision::Deny)));
        // Both words decisions: the second is the decision (the id is whatever came first).
        assert_eq!(ok("deny allow"), Ok(("deny".into(), Decision::AllowOnce)));
        for bad in [
            "",
            "abc",
            "abc def",
            "abc allow-once extra",
            "allow-twice abc",
        ] {
            assert_eq!(parse_approve_args(bad), Err(APPROVE_USAGE), "{bad:?}");
        }
    }

    #[test]
    fn wire_names_round_trip() {
        for d in [Decision::AllowOnce, Decision::AllowAlways, Decision::Deny] {
            assert_eq!(Decision::parse(d.as_str()), Some(d));
        }
        assert_eq!(Decision::parse("allow"), None);
        assert_eq!(Decision::parse("Deny"), None);
    }
}

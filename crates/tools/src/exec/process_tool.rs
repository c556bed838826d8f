//! The `process` tool: manage the exec sessions of this agent (its scope) — `list`,
//! `poll` (output since the last poll, plus status), `log` (page through all kept output by
//! line), `write` (stdin, `eof` closes it), `kill` (the whole process group), `clear`
//! (forget finished sessions) and `remove` (kill if running, then forget).

use std::sync::Arc;
use std::time::Duration;

use pincer_agent::{ToolContext, ToolError, ToolOutput, TypedTool};
use serde::Deserialize;
use serde_json::json;

use super::output::{TAIL_CHARS, tail_chars};
use super::registry::ProcessRegistry;
use super::session::{KillReason, Session, SessionStatus};
use super::tool::describe;
use crate::files::truncate::{LineBudget, MAX_BYTES, MAX_LINES};

/// How long `kill`/`remove` wait for the group to die.
const KILL_WAIT: Duration = Duration::from_secs(5);
/// Lines `log` returns without a `limit`.
pub const DEFAULT_LOG_LIMIT: usize = 200;

/// What to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ProcessAction {
    List,
    Poll,
    Log,
    Write,
    Kill,
    Clear,
    Remove,
}

/// Arguments of `process`.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ProcessArgs {
    /// list | poll | log | write | kill | clear | remove
    pub action: ProcessAction,
    /// Session id from exec (the first 8 characters are enough). Needed for all but list
    /// and clear, unless you have exactly one session.
    pub session_id: Option<String>,
    /// log: first line to show (0-based; default: the last `limit` lines).
    pub offset: Option<usize>,
    /// log: how many lines (default 200).
    pub limit: Option<usize>,
    /// write: text to send to stdin.
    pub data: Option<String>,
    /// write: close stdin after writing.
    pub eof: Option<bool>,
}

/// Manages this agent's exec sessions.
pub struct ProcessTool {
    registry: ProcessRegistry,
    scope: String,
}

impl ProcessTool {
    pub fn new(registry: ProcessRegistry, scope: impl Into<String>) -> Self {
        Self {
            registry,
            scope: scope.into(),
        }
    }

    fn session(&self, args: &ProcessArgs) -> Result<Arc<Session>, ToolError> {
        // Without an id, the agent's only session is meant; with several, the model must say.
        let only;
        let id = match args.session_id.as_deref() {
            Some(id) => id,
            None => match self.registry.list(&self.scope).as_slice() {
                [one] => {
                    only = one.id.clone();
                    only.as_str()
                }
                _ => {
                    return Err(ToolError::failed(
                        "sessionId is required for this action; call process with action \"list\" \
                         to see session ids",
                    ));
                }
            },
        };
        self.registry
            .get(&self.scope, id)
            .map_err(|e| ToolError::failed(e.to_string()))
    }
}

impl TypedTool for ProcessTool {
    type Args = ProcessArgs;

    const NAME: &'static str = "process";
    const DESCRIPTION: &'static str = "Manage background exec sessions: list, poll (new output and exit status), log \
         (page through output with offset/limit lines), write (send data to stdin; eof \
         closes it, or sends Ctrl-D to a pty), kill, clear (forget finished sessions), \
         remove (kill and forget).";

    async fn run(&self, args: ProcessArgs, _ctx: ToolContext) -> Result<ToolOutput, ToolError> {
        match args.action {
            ProcessAction::List => Ok(self.list()),
            ProcessAction::Poll => {
                let session = self.session(&args)?;
                Ok(poll(&session))
            }
            ProcessAction::Log => {
                let session = self.session(&args)?;
                Ok(log(&session, args.offset, args.limit))
            }
            ProcessAction::Write => {
                let session = self.session(&args)?;
                let eof = args.eof.unwrap_or(false);
                let data = args.data.unwrap_or_default();
                if !session.status().is_running() {
                    return Err(ToolError::failed(format!(
                        "session {} has already exited; nothing reads its stdin",
                        id8(&session)
                    )));
                }
                session
                    .write_stdin(&data, eof)
                    .await
                    .map_err(|e| ToolError::failed(format!("session {}: {e}", id8(&session))))?;
                Ok(ToolOutput::text(format!(
                    "Wrote {} bytes to session {}{}.",
                    data.len(),
                    id8(&session),
                    if eof { " and closed stdin" } else { "" }
                ))
                .with_details(json!({"sessionId": session.id, "bytes": data.len(), "eof": eof})))
            }
            ProcessAction::Kill => {
                let session = self.session(&args)?;
                if !session.status().is_running() {
                    return Err(ToolError::failed(format!(
                        "session {} is not running ({})",
                        id8(&session),
                        describe(&session.status())
                    )));
                }
                session.request_kill(KillReason::Killed);
                let status = tokio::time::timeout(KILL_WAIT, session.wait())
                    .await
                    .unwrap_or(SessionStatus::Running);
                Ok(ToolOutput::text(format!(
                    "Killed session {} ({}).",
                    id8(&session),
                    describe(&status)
                ))
                .with_details(status_details(&session, &status)))
            }
            ProcessAction::Clear => {
                if args.session_id.is_some() {
                    let session = self.session(&args)?;
                    if session.status().is_running() {
                        return Err(ToolError::failed(format!(
                            "session {} is still running; use kill or remove",
                            id8(&session)
                        )));
                    }
                    self.registry.forget(&session.id);
                    return Ok(ToolOutput::text(format!(
                        "Cleared session {}.",
                        id8(&session)
                    )));
                }
                let finished: Vec<_> = self
                    .registry
                    .scoped(&self.scope)
                    .into_iter()
                    .filter(|s| !s.status().is_running())
                    .collect();
                for session in &finished {
                    self.registry.forget(&session.id);
                }
                Ok(ToolOutput::text(format!(
                    "Cleared {} finished session(s).",
                    finished.len()
                )))
            }
            ProcessAction::Remove => {
                let session = self.session(&args)?;
                let was_running = session.status().is_running();
                if was_running {
                    session.request_kill(KillReason::Removed);
                    let _ = tokio::time::timeout(KILL_WAIT, session.wait()).await;
                }
                self.registry.forget(&session.id);
                Ok(ToolOutput::text(format!(
                    "Removed session {}{}.",
                    id8(&session),
                    if was_running { " (killed)" } else { "" }
                )))
            }
        }
    }
}

impl ProcessTool {
    fn list(&self) -> ToolOutput {
        let sessions = self.registry.list(&self.scope);
        if sessions.is_empty() {
            return ToolOutput::text("No exec sessions.").with_details(json!({"sessions": []}));
        }
        let lines: Vec<String> = sessions
            .iter()
            .map(|s| {
                let status = match &s.status {
                    SessionStatus::Running => "running".to_owned(),
                    other => describe(other),
                };
                let command: String = s.command.chars().take(120).collect();
                format!(
                    "{} {:<22} {:>8} :: {}",
                    s.id.chars().take(8).collect::<String>(),
                    status,
                    runtime(s.runtime),
                    command.replace('\n', " ")
                )
            })
            .collect();
        let details: Vec<_> = sessions
            .iter()
            .map(|s| {
                json!({
                    "sessionId": s.id,
                    "pid": s.pid,
                    "command": s.command,
                    "cwd": s.cwd.display().to_string(),
                    "status": s.status.label(),
                    "exitCode": s.status.exit_code(),
                    "signal": s.status.signal(),
                    "runtimeMs": u64::try_from(s.runtime.as_millis()).unwrap_or(u64::MAX),
                })
            })
            .collect();
        ToolOutput::text(lines.join("\n")).with_details(json!({ "sessions": details }))
    }
}

fn id8(session: &Session) -> String {
    session.id.chars().take(8).collect()
}

fn runtime(d: Duration) -> String {
    let secs = d.as_secs();
    match secs {
        0..60 => format!("{}.{}s", secs, d.subsec_millis() / 100),
        60..3600 => format!("{}m{:02}s", secs / 60, secs % 60),
        _ => format!("{}h{:02}m", secs / 3600, (secs % 3600) / 60),
    }
}

fn status_details(session: &Session, status: &SessionStatus) -> serde_json::Value {
    json!({
        "sessionId": session.id,
        "status": status.label(),
        "exitCode": status.exit_code(),
        "signal": status.signal(),
    })
}

fn poll(session: &Session) -> ToolOutput {
    let (new, lost, status) = session.poll();
    let mut text = String::new();
    if lost > 0 {
        text.push_str(&format!("[{lost} bytes of output were dropped]\n"));
    }
    // A poll shows at most a tail's worth beyond the byte limit; log has the rest.
    let shown = if new.len() > MAX_BYTES {
        text.push_str("[output truncated; use log for all of it]\n");
        tail_chars(&new, MAX_BYTES / 4)
    } else {
        new.as_str()
    };
    let shown = shown.trim_end_matches('\n');
    text.push_str(if shown.is_empty() {
        "(no new output)"
    } else {
        shown
    });
    match &status {
        SessionStatus::Running => text.push_str("\n\nProcess still running."),
        other => text.push_str(&format!("\n\nProcess exited ({}).", describe(other))),
    }
    let mut details = status_details(session, &status);
    details["tail"] = json!(session.tail(TAIL_CHARS));
    ToolOutput::text(text).with_details(details)
}

fn log(session: &Session, offset: Option<usize>, limit: Option<usize>) -> ToolOutput {
    let (output, dropped) = session.output();
    let body = output.strip_suffix('\n').unwrap_or(&output);
    let lines: Vec<&str> = if body.is_empty() {
        Vec::new()
    } else {
        body.split('\n').collect()
    };
    let total = lines.len();
    let limit = limit.unwrap_or(DEFAULT_LOG_LIMIT).clamp(1, MAX_LINES);
    let start = offset
        .unwrap_or_else(|| total.saturating_sub(limit))
        .min(total);
    let mut budget = LineBudget::new(limit, MAX_BYTES);
    for line in &lines[start..] {
        if !budget.push((*line).to_owned()) {
            break;
        }
    }
    let end = start + budget.len();
    let mut text = String::new();
    if dropped > 0 {
        text.push_str(&format!(
            "[the first {dropped} bytes of output were dropped; line numbers count from what was kept]\n"
        ));
    }
    text.push_str(if budget.is_empty() { "(no output)" } else { "" });
    text.push_str(&budget.join());
    if start > 0 || end < total {
        text.push_str(&format!(
            "\n\n[Lines {}-{} of {total}.{}]",
            start + usize::from(end > start),
            end,
            if end < total {
                format!(" Use offset={end} to continue.")
            } else {
                String::new()
            }
        ));
    }
    let status = session.status();
    let mut details = status_details(session, &status);
    details["totalLines"] = json!(total);
    details["offset"] = json!(start);
    details["lines"] = json!(end - start);
    ToolOutput::text(text).with_details(details)
}

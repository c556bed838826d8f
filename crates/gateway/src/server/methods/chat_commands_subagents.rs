//! `/subagents [list|info|log|send|stop]`: a session's background sub-agents, answered
//! from the team's records (see [`pincer_team::subagents::control`]) for `chat.send` and
//! every channel alike.

use std::sync::Arc;

use pincer_team::subagents::control::{self, Scope};

use super::super::Gateway;

/// Messages `/subagents log` shows when it is not told how many.
const LOG_LINES: usize = 10;

const USAGE: &str =
    "Usage: /subagents [list] | info <#n> | log <#n> [count] | send <#n> <message> | stop <#n|all>";

/// The answer to `/subagents <args>` typed on session `key`.
pub(super) async fn subagents(
    gw: &Arc<Gateway>,
    key: &str,
    args: Option<String>,
) -> Result<String, String> {
    let Some(team) = gw.team.as_ref() else {
        return Err("Sub-agents are not available on this gateway.".into());
    };
    let args = args.unwrap_or_default();
    let mut words = args.split_whitespace();
    let verb = words.next().unwrap_or("list");
    let which = words.next();
    let rest: Vec<&str> = words.collect();
    let records = control::list(team, Scope::Session(key));
    let port = || {
        team.slot()
            .get()
            .ok_or_else(|| "The gateway is not running.".to_owned())
    };
    let picked = || {
        let which = which.ok_or_else(|| USAGE.to_owned())?;
        control::pick(&records, which)
    };
    match verb {
        "list" | "ls" => Ok(control::render_list(&records)),
        "info" => Ok(control::render_info(picked()?)),
        "log" => {
            let record = picked()?;
            let limit = rest
                .first()
                .and_then(|n| n.parse().ok())
                .unwrap_or(LOG_LINES)
                .clamp(1, 100);
            let messages = control::log(&port()?, record, limit).await?;
            Ok(control::render_log(record, &messages))
        }
        "send" | "steer" => {
            let record = picked()?;
            let run_id = control::send(&port()?, record, &rest.join(" "))?;
            Ok(format!("Sent to {} (run {run_id}).", record.title()))
        }
        "stop" | "kill" => {
            let port = port()?;
            if which == Some("all") {
                let stopped = records
                    .iter()
                    .filter(|r| control::stop(team, &port, r))
                    .count();
                return Ok(match stopped {
                    0 => "No sub-agent was running.".to_owned(),
                    1 => "Stopped 1 sub-agent.".to_owned(),
                    n => format!("Stopped {n} sub-agents."),
                });
            }
            let record = picked()?;
            Ok(if control::stop(team, &port, record) {
                format!("Stopped {}.", record.title())
            } else {
                format!(
                    "{} had already finished ({}).",
                    record.title(),
                    record.status.as_str()
                )
            })
        }
        _ => Err(USAGE.to_owned()),
    }
}

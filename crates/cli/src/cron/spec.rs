//! From `cron add|edit` flags to what the gateway takes: the `cron.add` params (OpenClaw's
//! `CronJobCreate`, camelCase, defaults left to the gateway) and the `cron.update` patch
//! (whole top-level fields: a changed payload, delivery or schedule is sent complete, built
//! from the job as it is now, so the patch never depends on how deeply the other side
//! merges).
//!
//! Times are resolved here, on the machine the gateway runs on: `--at 20m` becomes the ISO
//! time 20 minutes from now, so `edit --at` (which has no creation step to resolve it) and
//! `add --at` mean the same. `--every` takes compound durations (`1h30m`).

use anyhow::{Result, anyhow, bail};
use pincer_automation::cron::{
    AgentTurnPayload, CronJob, CronPayload, CronSchedule, DeliveryMode, SessionTarget,
    SystemEventPayload, resolve_at, resolve_time_zone,
};
use serde_json::{Map, Value, json};

use super::view::truncate;
use crate::cli::CronJobArgs;

/// How long a default name (the start of the job's text) may be.
const DEFAULT_NAME_CHARS: usize = 40;

/// The `cron.add` params for `args`. `agent` is the checked `--agent`.
pub fn add_params(
    args: &CronJobArgs,
    disabled: bool,
    agent: Option<String>,
    now_ms: i64,
) -> Result<Value> {
    // Said in flag words here; the gateway's refusal names JSON fields.
    match (args.session.as_deref(), args.message.is_some()) {
        (Some("main"), true) => bail!(
            "--session main takes a --system-event (seen by the main session's next turn); a \
             --message runs as a turn of its own, in --session isolated"
        ),
        (Some("isolated"), false) => bail!(
            "--session isolated runs a --message as a turn of its own; a --system-event goes \
             to --session main"
        ),
        _ => {}
    }
    let mut params = Map::new();
    let schedule = schedule(args, None, now_ms)?
        .ok_or_else(|| anyhow!("give a schedule: --at, --every or --cron"))?;
    let payload = payload(args, None)?
        .ok_or_else(|| anyhow!("give what to do: --message or --system-event"))?;
    let text = payload
        .get("message")
        .or_else(|| payload.get("text"))
        .and_then(Value::as_str)
        .unwrap_or("cron job");
    let name = match &args.name {
        Some(name) => name.clone(),
        None => truncate(text, DEFAULT_NAME_CHARS),
    };
    params.insert("name".into(), name.into());
    if let Some(agent) = agent {
        params.insert("agentId".into(), agent.into());
    }
    if disabled {
        params.insert("enabled".into(), false.into());
    }
    if let Some(delete) = delete_after_run(args) {
        params.insert("deleteAfterRun".into(), delete.into());
    }
    params.insert("schedule".into(), schedule);
    if let Some(target) = &args.session {
        params.insert("sessionTarget".into(), target.clone().into());
    }
    if let Some(wake) = &args.wake {
        params.insert("wakeMode".into(), wake.clone().into());
    }
    params.insert("payload".into(), payload);
    if let Some(delivery) = delivery(args, None)? {
        params.insert("delivery".into(), delivery);
    }
    Ok(Value::Object(params))
}

/// The `cron.update` patch for `args` on `current`; `enabled` from --enable/--disable.
/// An empty patch is an error: the user asked for nothing.
pub fn edit_patch(
    args: &CronJobArgs,
    enabled: Option<bool>,
    agent: Option<String>,
    current: &CronJob,
    now_ms: i64,
) -> Result<Value> {
    let mut patch = Map::new();
    if let Some(name) = &args.name {
        patch.insert("name".into(), name.clone().into());
    }
    if let Some(agent) = agent {
        patch.insert("agentId".into(), agent.into());
    }
    if let Some(enabled) = enabled {
        patch.insert("enabled".into(), enabled.into());
    }
    if let Some(delete) = delete_after_run(args) {
        patch.insert("deleteAfterRun".into(), delete.into());
    }
    if let Some(schedule) = schedule(args, Some(&current.schedule), now_ms)? {
        patch.insert("schedule".into(), schedule);
    }
    let new_payload = payload(args, Some(&current.payload))?;
    // A different kind of payload runs elsewhere: an agent turn in its own session, a
    // system event in the main one (the gateway refuses the other pairings).
    let new_kind = new_payload
        .as_ref()
        .and_then(|p| p["kind"].as_str())
        .filter(|kind| *kind != current.payload.kind());
    let target = match (&args.session, new_kind) {
        (Some(target), _) => Some(target.as_str()),
        (None, Some("agentTurn")) => Some("isolated"),
        (None, Some(_)) => Some("main"),
        (None, None) => None,
    };
    if let Some(target) = target {
        patch.insert("sessionTarget".into(), target.into());
    }
    if let Some(payload) = new_payload {
        patch.insert("payload".into(), payload);
    }
    if let Some(wake) = &args.wake {
        patch.insert("wakeMode".into(), wake.clone().into());
    }
    match delivery(args, current.delivery.as_ref())? {
        Some(delivery) => {
            patch.insert("delivery".into(), delivery);
        }
        None => {
            let new_target = match target {
                Some("main") => SessionTarget::Main,
                Some(_) => SessionTarget::Isolated,
                None => current.session_target,
            };
            let channel_delivery = current
                .delivery
                .as_ref()
                .is_some_and(|d| d.mode != DeliveryMode::Webhook);
            if new_target != current.session_target {
                if new_target == SessionTarget::Main && channel_delivery {
                    // Channel delivery is for isolated runs only: moving to main drops it.
                    patch.insert("delivery".into(), Value::Null);
                } else if new_target == SessionTarget::Isolated && current.delivery.is_none() {
                    // What a new isolated job gets.
                    patch.insert("delivery".into(), json!({ "mode": "announce" }));
                }
            }
        }
    }
    if patch.is_empty() {
        bail!(
            "nothing to change: give at least one setting (`pincer cron edit --help` lists them)"
        );
    }
    Ok(Value::Object(patch))
}

/// `--every` as milliseconds: a positive duration with units (`30s`, `1h30m`, `2d`).
pub fn every_ms(text: &str) -> Result<i64> {
    let bad = |reason: &str| {
        anyhow!("--every {text:?} is not a duration ({reason}): use e.g. 30s, 10m, 1h, 1h30m or 2d")
    };
    // A bare number would mean minutes to the heartbeat's parser; for a schedule that is
    // too easy to misread, so a unit is required.
    if text.trim().chars().all(|c| c.is_ascii_digit() || c == '.') {
        return Err(bad("a unit is missing"));
    }
    let duration = pincer_config::parse_heartbeat_every(text).map_err(|reason| bad(&reason))?;
    let ms = i64::try_from(duration.as_millis()).map_err(|_| bad("too large"))?;
    if ms <= 0 {
        return Err(bad("it must be longer than zero"));
    }
    Ok(ms)
}

/// The schedule the flags ask for; `current` lets `edit --tz` re-zone a cron schedule.
fn schedule(
    args: &CronJobArgs,
    current: Option<&CronSchedule>,
    now_ms: i64,
) -> Result<Option<Value>> {
    let zone = args
        .tz
        .as_deref()
        .map(|tz| resolve_time_zone(tz.trim()).map(|zone| (tz.trim().to_owned(), zone)))
        .transpose()?;
    if let Some(at) = &args.at {
        let at = resolve_at(at, now_ms, zone.as_ref().map(|(_, zone)| zone))?;
        return Ok(Some(json!({ "kind": "at", "at": at })));
    }
    if let Some(every) = &args.every {
        return Ok(Some(
            json!({ "kind": "every", "everyMs": every_ms(every)? }),
        ));
    }
    let tz = zone.map(|(name, _)| name);
    if let Some(expr) = &args.cron {
        let mut schedule = json!({ "kind": "cron", "expr": expr.trim() });
        if let Some(tz) = tz {
            schedule["tz"] = tz.into();
        }
        return Ok(Some(schedule));
    }
    match (tz, current) {
        (None, _) => Ok(None),
        (Some(tz), Some(CronSchedule::Cron(cron))) => {
            let mut cron = cron.clone();
            cron.tz = Some(tz);
            Ok(Some(serde_json::to_value(CronSchedule::Cron(cron))?))
        }
        (Some(_), _) => bail!(
            "--tz on its own re-zones a --cron schedule; for an --at time give --at again with \
             --tz"
        ),
    }
}

/// The payload the flags ask for. With `current`, a message/text change keeps the rest of
/// an agent turn (model, thinking, timeout), and --model etc. alone change just that.
fn payload(args: &CronJobArgs, current: Option<&CronPayload>) -> Result<Option<Value>> {
    let turn_options =
        args.model.is_some() || args.thinking.is_some() || args.timeout_seconds.is_some();
    let mut payload = if let Some(text) = &args.system_event {
        if turn_options {
            bail!("--model, --thinking and --timeout-seconds apply to --message jobs only");
        }
        match current {
            Some(CronPayload::SystemEvent(p)) => CronPayload::SystemEvent(SystemEventPayload {
                text: text.clone(),
                ..p.clone()
            }),
            _ => CronPayload::system_event(text.clone()),
        }
    } else if let Some(message) = &args.message {
        match current {
            Some(CronPayload::AgentTurn(p)) => CronPayload::AgentTurn(AgentTurnPayload {
                message: message.clone(),
                ..p.clone()
            }),
            _ => CronPayload::agent_turn(message.clone()),
        }
    } else if turn_options {
        match current {
            Some(payload @ CronPayload::AgentTurn(_)) => payload.clone(),
            _ => bail!(
                "--model, --thinking and --timeout-seconds apply to agent turns (--message jobs); \
                 this job sends a system event"
            ),
        }
    } else {
        return Ok(None);
    };
    if let CronPayload::AgentTurn(turn) = &mut payload {
        if let Some(model) = &args.model {
            turn.model = Some(model.clone());
        }
        if let Some(thinking) = &args.thinking {
            let level = pincer_gateway::server::parse_thinking(thinking)
                .map_err(|e| anyhow!("--thinking: {e}"))?;
            turn.thinking = Some(level.as_str().to_owned());
        }
        if let Some(seconds) = args.timeout_seconds {
            turn.timeout_seconds = Some(seconds);
        }
    }
    Ok(Some(serde_json::to_value(payload)?))
}

/// The delivery the flags ask for; `current` keeps what --channel/--to alone do not change.
fn delivery(
    args: &CronJobArgs,
    current: Option<&pincer_automation::cron::CronDelivery>,
) -> Result<Option<Value>> {
    if args.no_deliver {
        return Ok(Some(json!({ "mode": "none" })));
    }
    if let Some(url) = &args.webhook {
        return Ok(Some(json!({ "mode": "webhook", "to": url.trim() })));
    }
    if !(args.announce || args.channel.is_some() || args.to.is_some()) {
        return Ok(None);
    }
    let mut delivery = match current {
        Some(d) if d.mode == DeliveryMode::Announce => d.clone(),
        _ => pincer_automation::cron::CronDelivery::new(DeliveryMode::Announce),
    };
    if let Some(channel) = &args.channel {
        delivery.channel = Some(channel.trim().to_owned());
    }
    if let Some(to) = &args.to {
        delivery.to = Some(to.trim().to_owned());
    }
    Ok(Some(serde_json::to_value(delivery)?))
}

fn delete_after_run(args: &CronJobArgs) -> Option<bool> {
    if args.delete_after_run {
        Some(true)
    } else if args.keep_after_run {
        Some(false)
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn every_takes_compound_durations_with_units() {
        assert_eq!(every_ms("1h").unwrap(), 3_600_000);
        assert_eq!(every_ms("1h30m").unwrap(), 5_400_000);
        assert_eq!(every_ms("30s").unwrap(), 30_000);
        assert_eq!(every_ms("2d").unwrap(), 172_800_000);
        for bad in ["45", "0m", "often", ""] {
            assert!(every_ms(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn add_params_leave_defaults_to_the_gateway() {
        let args = CronJobArgs {
            every: Some("1h".into()),
            message: Some("Summarise my inbox and tell me what needs an answer today".into()),
            ..CronJobArgs::default()
        };
        let params = add_params(&args, false, None, 0).unwrap();
        assert_eq!(
            params,
            json!({
                "name": "Summarise my inbox and tell me what…",
                "schedule": {"kind": "every", "everyMs": 3_600_000},
                "payload": {"kind": "agentTurn", "message": "Summarise my inbox and tell me what needs an answer today"},
            })
        );
    }

    #[test]
    fn a_bad_zone_is_refused_here() {
        let args = CronJobArgs {
            cron: Some("0 9 * * *".into()),
            tz: Some("Mars/Olympus".into()),
            system_event: Some("x".into()),
            ..CronJobArgs::default()
        };
        let err = add_params(&args, false, None, 0).unwrap_err().to_string();
        assert!(err.contains("unknown time zone"), "{err}");
    }
}

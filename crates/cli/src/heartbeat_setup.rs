//! The heartbeat of each agent, from the configuration: `agents.defaults.heartbeat` with each
//! agent's own `agents.list[].heartbeat` winning field by field, onto the gateway's
//! [`HeartbeatSettings`] (OpenClaw's defaults where nothing is set).

use anyhow::{Context, Result};
use pincer_automation::heartbeat::{ActiveHours, HeartbeatSettings, HeartbeatTarget, parse_every};
use pincer_config::{HeartbeatConfig, PincerConfig};

/// Every known agent with its heartbeat (`every` 0 when turned off).
pub fn heartbeat_settings(config: &PincerConfig) -> Result<Vec<(String, HeartbeatSettings)>> {
    let defaults = config.agents.defaults.heartbeat.as_ref();
    pincer_turns::router::known_agent_ids(config)
        .into_iter()
        .map(|agent_id| {
            let own = config
                .agents
                .list
                .iter()
                .find(|a| a.id == agent_id)
                .and_then(|a| a.heartbeat.as_ref());
            let merged = merge(defaults, own);
            let settings = settings_of(&merged)
                .with_context(|| format!("the heartbeat of agent {agent_id}"))?;
            Ok((agent_id, settings))
        })
        .collect()
}

/// `own` over `defaults`, field by field.
fn merge(defaults: Option<&HeartbeatConfig>, own: Option<&HeartbeatConfig>) -> HeartbeatConfig {
    let base = defaults.cloned().unwrap_or_default();
    let Some(own) = own else { return base };
    HeartbeatConfig {
        every: own.every.clone().or(base.every),
        active_hours: own.active_hours.clone().or(base.active_hours),
        skip_when_busy: own.skip_when_busy.or(base.skip_when_busy),
        ack_max_chars: own.ack_max_chars.or(base.ack_max_chars),
        target: own.target.clone().or(base.target),
        to: own.to.clone().or(base.to),
        prompt: own.prompt.clone().or(base.prompt),
    }
}

fn settings_of(config: &HeartbeatConfig) -> Result<HeartbeatSettings> {
    let defaults = HeartbeatSettings::default();
    let every_ms = match &config.every {
        Some(every) => u64::try_from(parse_every(every)?.as_millis()).unwrap_or(u64::MAX),
        None => defaults.every_ms,
    };
    let active_hours = match &config.active_hours {
        Some(hours) => Some(ActiveHours::new(
            &hours.start,
            &hours.end,
            hours.timezone.as_deref(),
        )?),
        None => None,
    };
    Ok(HeartbeatSettings {
        every_ms,
        active_hours,
        skip_when_busy: config.skip_when_busy.unwrap_or(defaults.skip_when_busy),
        ack_max_chars: config.ack_max_chars.unwrap_or(defaults.ack_max_chars),
        target: HeartbeatTarget::parse(config.target.as_deref(), config.to.as_deref())?,
        prompt: config.prompt.clone().filter(|p| !p.trim().is_empty()),
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn config(text: &str) -> PincerConfig {
        pincer_config::parse_str(text, "pincer.json5", &pincer_ai::env::MapEnv::default())
            .unwrap()
            .config
    }

    #[test]
    fn defaults_apply_to_every_agent_and_an_agent_overrides_field_by_field() {
        let cfg = config(
            r#"{agents: {
                defaults: {heartbeat: {every: "1h", ackMaxChars: 50, target: "none"}},
                list: [{id: "main", default: true}, {id: "ops", heartbeat: {every: "0m", target: "telegram", to: "42"}}],
            }}"#,
        );
        let all = heartbeat_settings(&cfg).unwrap();
        let main = &all.iter().find(|(id, _)| id == "main").unwrap().1;
        assert_eq!(main.every_ms, 3_600_000);
        assert_eq!(main.ack_max_chars, 50);
        assert_eq!(main.target, HeartbeatTarget::None);
        let ops = &all.iter().find(|(id, _)| id == "ops").unwrap().1;
        assert_eq!(ops.every_ms, 0);
        assert_eq!(ops.ack_max_chars, 50);
        assert_eq!(
            ops.target,
            HeartbeatTarget::Channel {
                channel: "telegram".into(),
                to: Some("42".into())
            }
        );
    }

    #[test]
    fn nothing_configured_is_openclaws_default() {
        let all = heartbeat_settings(&config("{}")).unwrap();
        assert_eq!(all, vec![("main".to_owned(), HeartbeatSettings::default())]);
    }
}

//! The team tools' settings (`pincer_team::TeamSettings`) from the configuration:
//! `tools.sessions`, `tools.agentToAgent`, `session.agentToAgent`, and each agent's
//! `subagents` / `delegation` merged field by field over `agents.defaults`'.

use std::collections::HashMap;
use std::time::Duration;

use pincer_config::{DelegationConfig, PincerConfig, SessionToolsVisibility, SubagentsConfig};
use pincer_team::{AgentToAgent, DelegationSettings, SubagentSettings, TeamSettings, Visibility};

/// The settings `config` gives the team tools.
pub fn team_settings(config: &PincerConfig) -> TeamSettings {
    let tools = &config.tools;
    let visibility = match tools.sessions.as_ref().and_then(|s| s.visibility) {
        Some(SessionToolsVisibility::SelfOnly) => Visibility::SelfOnly,
        Some(SessionToolsVisibility::Tree) => Visibility::Tree,
        Some(SessionToolsVisibility::Agent) => Visibility::Agent,
        Some(SessionToolsVisibility::All) | None => Visibility::All,
    };
    let agent_to_agent = tools
        .agent_to_agent
        .as_ref()
        .map(|a| AgentToAgent {
            enabled: a.enabled.unwrap_or(false),
            allow: a.allow.clone(),
        })
        .unwrap_or_default();
    let defaults = &config.agents.defaults;
    let subagents = subagent_settings(SubagentSettings::default(), defaults.subagents.as_ref());
    let delegation =
        delegation_settings(DelegationSettings::default(), defaults.delegation.as_ref());
    let mut agent_subagents = HashMap::new();
    let mut agent_delegation = HashMap::new();
    for agent in &config.agents.list {
        if let Some(own) = &agent.subagents {
            let mut merged = subagent_settings(subagents.clone(), Some(own));
            // The slots are the gateway's, not an agent's.
            merged.max_concurrent = subagents.max_concurrent;
            agent_subagents.insert(agent.id.clone(), merged);
        }
        if let Some(own) = &agent.delegation {
            let mut merged = delegation_settings(delegation.clone(), Some(own));
            merged.max_concurrent = delegation.max_concurrent;
            agent_delegation.insert(agent.id.clone(), merged);
        }
    }
    TeamSettings {
        visibility,
        agent_to_agent,
        max_ping_pong_turns: config
            .session
            .agent_to_agent
            .as_ref()
            .and_then(|a| a.max_ping_pong_turns)
            .unwrap_or(5),
        subagents,
        agent_subagents,
        delegation,
        agent_delegation,
    }
}

fn subagent_settings(base: SubagentSettings, config: Option<&SubagentsConfig>) -> SubagentSettings {
    let Some(c) = config else { return base };
    SubagentSettings {
        max_concurrent: c.max_concurrent.unwrap_or(base.max_concurrent).max(1),
        model: c.model.clone().or(base.model),
        thinking: c.thinking.clone().or(base.thinking),
        archive_after: c.archive_after_minutes.map_or(base.archive_after, |m| {
            Duration::from_secs(m.saturating_mul(60))
        }),
        max_spawn_depth: c.max_spawn_depth.unwrap_or(base.max_spawn_depth),
        allow_agents: c.allow_agents.clone().unwrap_or(base.allow_agents),
        run_timeout: match c.run_timeout_seconds {
            Some(0) => None,
            Some(secs) => Some(Duration::from_secs(secs)),
            None => base.run_timeout,
        },
    }
}

fn delegation_settings(
    base: DelegationSettings,
    config: Option<&DelegationConfig>,
) -> DelegationSettings {
    let Some(c) = config else { return base };
    DelegationSettings {
        allow_agents: c.allow_agents.clone().unwrap_or(base.allow_agents),
        max_concurrent: c.max_concurrent.unwrap_or(base.max_concurrent).max(1),
        max_depth: c.max_depth.unwrap_or(base.max_depth),
        timeout: c.timeout_seconds.map_or(base.timeout, Duration::from_secs),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_agents_own_settings_win_field_by_field_but_slots_stay_the_gateways() {
        let config: PincerConfig = serde_json::from_value(serde_json::json!({
            "agents": {
                "defaults": {"subagents": {"maxConcurrent": 3, "archiveAfterMinutes": 5, "allowAgents": ["ops"]}},
                "list": [{"id": "main", "subagents": {"maxConcurrent": 9, "maxSpawnDepth": 2}}]
            },
            "tools": {"agentToAgent": {"enabled": true, "allow": ["main", "ops"]}, "sessions": {"visibility": "agent"}},
            "session": {"agentToAgent": {"maxPingPongTurns": 0}}
        }))
        .unwrap();
        let settings = team_settings(&config);
        assert_eq!(settings.visibility, Visibility::Agent);
        assert_eq!(
            settings.agent_to_agent,
            AgentToAgent {
                enabled: true,
                allow: vec!["main".into(), "ops".into()]
            }
        );
        assert_eq!(settings.max_ping_pong_turns, 0);
        assert_eq!(settings.subagents.max_concurrent, 3);
        let main = settings.subagents_of("main");
        assert_eq!(main.max_concurrent, 3);
        assert_eq!(main.max_spawn_depth, 2);
        assert_eq!(main.allow_agents, vec!["ops".to_owned()]);
        assert_eq!(main.archive_after, Duration::from_secs(300));
        assert_eq!(settings.subagents_of("other").max_spawn_depth, 1);
        assert!(settings.delegation.allow_agents.is_empty());
    }
}

//! `delegate_to_agent` against a scripted gateway: off until an allowlist names agents;
//! the answer comes back in pi-gateway's shape; the session is `delegate:<parent>:<agent>:<ts>`;
//! a delegate past `maxDepth` cannot delegate again; a slow one times out.

use std::time::Duration;

use pincer_team::{DelegationSettings, TeamSettings};
use serde_json::json;

use crate::fake_port::{FakePort, call, json_of, team};

fn allowing(agents: &[&str], timeout: Duration) -> TeamSettings {
    TeamSettings {
        delegation: DelegationSettings {
            allow_agents: agents.iter().map(|a| (*a).to_owned()).collect(),
            timeout,
            ..DelegationSettings::default()
        },
        ..TeamSettings::default()
    }
}

#[tokio::test]
async fn delegation_is_off_until_an_allowlist_names_the_agent() {
    let port = FakePort::new(&["main", "ops"], |_| Some("done".into()));
    let off = team(TeamSettings::default(), &port);
    let out = json_of(
        &call(
            &off,
            "main",
            "agent:main:main",
            "delegate_to_agent",
            json!({"agentId": "ops", "task": "x"}),
        )
        .await
        .unwrap(),
    );
    assert_eq!(
        out,
        json!({"status": "rejected", "response": "delegation is off: agents.defaults.delegation.allowAgents names no agent"})
    );
    let only_ops = team(allowing(&["ops"], Duration::from_secs(5)), &port);
    let out = json_of(
        &call(
            &only_ops,
            "main",
            "agent:main:main",
            "delegate_to_agent",
            json!({"agentId": "intern", "task": "x"}),
        )
        .await
        .unwrap(),
    );
    assert_eq!(
        out,
        json!({"status": "rejected", "response": "agent \"intern\" is not in the delegation allowlist"})
    );
    assert!(port.turns().is_empty());
}

#[tokio::test]
async fn a_delegated_task_runs_in_its_own_session_and_the_answer_comes_back() {
    let port = FakePort::new(&["main", "ops"], |turn| {
        Some(format!("ops did: {}", turn.message.lines().last().unwrap()))
    });
    let team = team(allowing(&["ops"], Duration::from_secs(5)), &port);
    let out = json_of(
        &call(
            &team,
            "main",
            "agent:main:main",
            "delegate_to_agent",
            json!({"agentId": "ops", "task": "check the disk", "mode": "sync"}),
        )
        .await
        .unwrap(),
    );
    assert_eq!(
        out,
        json!({"status": "completed", "response": "ops did: check the disk"})
    );
    let turn = &port.turns()[0];
    assert_eq!(turn.agent_id, "ops");
    assert!(
        turn.session_key
            .starts_with("delegate:agent:main:main:ops:"),
        "{}",
        turn.session_key
    );
    assert_eq!(
        turn.message,
        "[Delegated task from agent \"main\" (session agent:main:main)]\ncheck the disk"
    );
    // The delegate (depth 1 of maxDepth 1) cannot delegate again.
    let nested = json_of(
        &call(
            &team,
            "ops",
            &turn.session_key,
            "delegate_to_agent",
            json!({"agentId": "main", "task": "y"}),
        )
        .await
        .unwrap(),
    );
    assert_eq!(nested["status"], "rejected");
    let tools: Vec<String> = team
        .tools_for_session("ops", &turn.session_key, team.tools("ops"))
        .iter()
        .map(|t| t.name().to_owned())
        .collect();
    assert!(!tools.iter().any(|t| t == "delegate_to_agent"), "{tools:?}");
}

#[tokio::test]
async fn a_slow_delegate_times_out_and_is_stopped() {
    let port = FakePort::new(&["main", "ops"], |_| None);
    let team = team(allowing(&["*"], Duration::from_millis(300)), &port);
    let out = json_of(
        &call(
            &team,
            "main",
            "agent:main:main",
            "delegate_to_agent",
            json!({"agentId": "ops", "task": "slow"}),
        )
        .await
        .unwrap(),
    );
    assert_eq!(
        out,
        json!({"status": "timeout", "response": "no answer within 0 s"})
    );
    let key = port.turns()[0].session_key.clone();
    assert!(port.active_runs_of(&key).is_empty());
}

//! Sub-agents against a scripted gateway: a spawn returns at once and its result is
//! announced to the requester and relayed to its chat; spawns past `maxConcurrent` wait,
//! said so; a sub-agent that runs too long is stopped and announced as timed out; nesting
//! stops at `maxSpawnDepth`; `/subagents`-style control lists and stops them.

use std::sync::Arc;
use std::time::Duration;

use pincer_team::subagents::control::{self, Scope};
use pincer_team::{SubagentSettings, TeamSettings};
use serde_json::json;

use crate::fake_port::{FakePort, call, eventually, json_of, team};

fn with_subagents(subagents: SubagentSettings) -> TeamSettings {
    TeamSettings {
        subagents,
        ..TeamSettings::default()
    }
}

#[tokio::test]
async fn a_spawn_returns_at_once_and_its_result_is_announced_and_relayed() {
    let port = FakePort::new(&["main"], |turn| {
        Some(if turn.session_key.contains(":subagent:") {
            "three facts".into()
        } else {
            "Done: three facts.".into()
        })
    });
    let team = team(TeamSettings::default(), &port);
    let out = json_of(
        &call(
            &team,
            "main",
            "agent:main:main",
            "sessions_spawn",
            json!({"task": "Find three facts", "label": "facts"}),
        )
        .await
        .unwrap(),
    );
    assert_eq!(out["status"], "accepted", "{out}");
    let child = out["childSessionKey"].as_str().unwrap().to_owned();
    assert!(child.starts_with("agent:main:subagent:"));
    assert_eq!(
        out["runId"],
        format!("subagent-{}", child.rsplit(':').next().unwrap())
    );
    eventually(|| !port.delivered().is_empty()).await;
    let turns = port.turns();
    assert_eq!(turns[0].session_key, child);
    assert!(turns[0].message.starts_with(
        "[Sub-agent task from session agent:main:main (agent \"main\")]\nFind three facts\n"
    ));
    assert_eq!(turns[1].session_key, "agent:main:main");
    assert!(
        turns[1]
            .message
            .starts_with("[Sub-agent \"facts\" completed successfully after 0 s (session "),
        "{}",
        turns[1].message
    );
    assert!(
        turns[1]
            .message
            .contains("\nTask: Find three facts\nResult:\nthree facts\n"),
        "{}",
        turns[1].message
    );
    assert_eq!(
        port.delivered(),
        [(
            "main".to_owned(),
            "agent:main:main".to_owned(),
            "Done: three facts.".to_owned()
        )]
    );
    // The child session carries its label and parent.
    use pincer_team::SessionPort as _;
    let entry = port.store("main").entry(&child).unwrap().unwrap();
    assert_eq!(entry.label.as_deref(), Some("facts"));
    assert_eq!(entry.extra["spawnedBy"], "agent:main:main");
    let listed = control::list(&team, Scope::Session("agent:main:main"));
    assert_eq!(listed[0].status.as_str(), "done");
}

#[tokio::test]
async fn spawns_past_max_concurrent_wait_and_say_so() {
    // The sub-agents never finish on their own.
    let port = FakePort::new(&["main"], |turn| {
        (!turn.session_key.contains(":subagent:")).then(|| "noted".to_owned())
    });
    let team = team(
        with_subagents(SubagentSettings {
            max_concurrent: 1,
            ..SubagentSettings::default()
        }),
        &port,
    );
    let first = json_of(
        &call(
            &team,
            "main",
            "agent:main:main",
            "sessions_spawn",
            json!({"task": "one"}),
        )
        .await
        .unwrap(),
    );
    assert!(first.get("queued").is_none(), "{first}");
    eventually(|| port.turns().len() == 1).await;
    let second = json_of(
        &call(
            &team,
            "main",
            "agent:main:main",
            "sessions_spawn",
            json!({"task": "two"}),
        )
        .await
        .unwrap(),
    );
    assert_eq!(second["queued"], true, "{second}");
    assert_eq!(
        second["note"],
        "1 sub-agents are already running (maxConcurrent 1): this one starts when one finishes"
    );
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert_eq!(port.turns().len(), 1, "the second waits for a slot");
    // Stopping the first lets the second start; the stop is announced.
    let records = control::list(&team, Scope::Session("agent:main:main"));
    assert_eq!(
        control::render_list(&records)
            .lines()
            .nth(2)
            .unwrap()
            .split(" — ")
            .nth(1)
            .unwrap()
            .split(' ')
            .next()
            .unwrap(),
        "queued"
    );
    let port_dyn: Arc<dyn pincer_team::SessionPort> = port.clone();
    assert!(control::stop(&team, &port_dyn, &records[0]));
    eventually(|| port.turns().iter().any(|t| t.message.contains("\ntwo\n"))).await;
    eventually(|| {
        port.turns()
            .iter()
            .any(|t| t.message.starts_with("[Sub-agent \"one\" was stopped"))
    })
    .await;
}

#[tokio::test]
async fn a_sub_agent_that_runs_too_long_is_stopped_and_announced_as_timed_out() {
    let port = FakePort::new(&["main"], |turn| {
        (!turn.session_key.contains(":subagent:")).then(|| "It timed out.".to_owned())
    });
    let team = team(TeamSettings::default(), &port);
    call(
        &team,
        "main",
        "agent:main:main",
        "sessions_spawn",
        json!({"task": "forever", "runTimeoutSeconds": 1}),
    )
    .await
    .unwrap();
    eventually(|| port.turns().len() == 2).await;
    let announced = &port.turns()[1].message;
    assert!(
        announced.starts_with("[Sub-agent \"forever\" timed out after 1 s after "),
        "{announced}"
    );
    assert!(announced.contains("Result:\n(no output)"), "{announced}");
    let records = control::list(&team, Scope::All);
    assert_eq!(records[0].status.as_str(), "timeout");
    assert!(
        port.active_runs_of(&records[0].child_key).is_empty(),
        "the run was aborted"
    );
}

#[tokio::test]
async fn nesting_stops_at_max_spawn_depth_and_sub_agents_lose_the_session_tools() {
    let port = FakePort::new(&["main", "ops"], |_| None);
    let team = team(TeamSettings::default(), &port);
    let out = json_of(
        &call(
            &team,
            "main",
            "agent:main:main",
            "sessions_spawn",
            json!({"task": "dig"}),
        )
        .await
        .unwrap(),
    );
    let child = out["childSessionKey"].as_str().unwrap().to_owned();
    let nested = call(
        &team,
        "main",
        &child,
        "sessions_spawn",
        json!({"task": "dig deeper"}),
    )
    .await
    .unwrap_err();
    assert_eq!(
        nested.to_string(),
        "sessions_spawn is not allowed at this depth (maxSpawnDepth 1): do the task yourself"
    );
    let names = |key: &str| -> Vec<String> {
        team.tools_for_session("main", key, team.tools("main"))
            .iter()
            .map(|t| t.name().to_owned())
            .collect()
    };
    assert_eq!(names("agent:main:main").len(), 8);
    assert!(names(&child).is_empty(), "{:?}", names(&child));
    // Another agent needs allowAgents.
    let other = call(
        &team,
        "main",
        "agent:main:main",
        "sessions_spawn",
        json!({"task": "x", "agentId": "ops"}),
    )
    .await
    .unwrap_err();
    assert_eq!(
        other.to_string(),
        "agentId \"ops\" is not allowed for sessions_spawn: agents.defaults.subagents.allowAgents (or this agent's subagents.allowAgents) must name it"
    );
    let bad = call(
        &team,
        "main",
        "agent:main:main",
        "sessions_spawn",
        json!({"task": "x", "thinking": "huge"}),
    )
    .await
    .unwrap_err();
    assert_eq!(
        bad.to_string(),
        "unknown thinking level \"huge\": use one of off, minimal, low, medium, high, xhigh"
    );
}

#[tokio::test]
async fn a_restart_announces_the_sub_agents_the_last_gateway_left_unfinished() {
    let port = FakePort::new(&["main"], |turn| {
        (!turn.session_key.contains(":subagent:"))
            .then(|| "Sorry, that task was cut short.".to_owned())
    });
    let file = port.dir.path().join("subagents").join("runs.json");
    let before = pincer_team::Team::with_state(TeamSettings::default(), Some(file.clone()));
    assert!(
        before
            .slot()
            .bind(port.clone() as Arc<dyn pincer_team::SessionPort>)
    );
    call(
        &before,
        "main",
        "agent:main:main",
        "sessions_spawn",
        json!({"task": "long job", "label": "job"}),
    )
    .await
    .unwrap();
    eventually(|| {
        control::list(&before, Scope::All)
            .first()
            .is_some_and(|r| r.status.as_str() == "running")
    })
    .await;
    tokio::time::sleep(Duration::from_millis(50)).await;
    let saved: serde_json::Value = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
    assert_eq!(
        saved["runs"][0]["status"],
        json!({"state": "running"}),
        "{saved}"
    );
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(
            std::fs::metadata(&file).unwrap().permissions().mode() & 0o777,
            0o600
        );
    }

    // A new gateway (the old one died with the run).
    let after_port = FakePort::new(&["main"], |_| {
        Some("Sorry, that task was cut short.".to_owned())
    });
    let after = pincer_team::Team::with_state(TeamSettings::default(), Some(file.clone()));
    assert!(
        after
            .slot()
            .bind(after_port.clone() as Arc<dyn pincer_team::SessionPort>)
    );
    after.recover().await;
    let records = control::list(&after, Scope::All);
    assert_eq!(records[0].status.as_str(), "error");
    eventually(|| !after_port.delivered().is_empty()).await;
    let told = &after_port.turns()[0];
    assert_eq!(told.session_key, "agent:main:main");
    assert!(
        told.message.starts_with(
            "[Sub-agent \"job\" failed: interrupted: the gateway stopped while it ran after "
        ),
        "{}",
        told.message
    );
    assert_eq!(
        after_port.delivered()[0].2,
        "Sorry, that task was cut short."
    );
}

#[tokio::test]
async fn a_corrupt_record_file_is_set_aside_not_overwritten() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("runs.json");
    std::fs::write(&file, b"{ not json").unwrap();
    let err = pincer_team::subagents::persist::load(&file)
        .unwrap_err()
        .to_string();
    assert!(
        err.starts_with(&format!("{} is not a sub-agent list (", file.display())),
        "{err}"
    );
    assert!(!file.exists());
    let aside: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    assert_eq!(aside.len(), 1);
    assert!(aside[0].starts_with("runs.json.corrupt."), "{aside:?}");
    assert_eq!(
        std::fs::read(dir.path().join(&aside[0])).unwrap(),
        b"{ not json"
    );
}

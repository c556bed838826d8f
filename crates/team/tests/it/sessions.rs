//! The session tools against a scripted gateway: what each agent may see and reach, the
//! refusals (which never tell whether a session exists), `sessions_send`'s results and its
//! bounded ping-pong, `session_status`'s card and model switch.

use std::sync::Arc;
use std::time::Duration;

use pincer_team::{AgentToAgent, SessionPort as _, TeamSettings};
use serde_json::json;

use crate::fake_port::{FakePort, call, eventually, json_of, team};

fn a2a_on() -> TeamSettings {
    TeamSettings {
        agent_to_agent: AgentToAgent {
            enabled: true,
            allow: Vec::new(),
        },
        ..TeamSettings::default()
    }
}

#[tokio::test]
async fn by_default_an_agent_lists_only_its_own_sessions() {
    let port = FakePort::new(&["main", "ops"], |_| Some("ok".into()));
    port.seed("main", "agent:main:main", "hi", "hello");
    port.seed(
        "main",
        "agent:main:telegram:group:-5",
        "hey all",
        "hi group",
    );
    port.seed("ops", "agent:ops:main", "secret", "ops stuff");
    let team = team(TeamSettings::default(), &port);

    let listed = json_of(
        &call(&team, "main", "agent:main:main", "sessions_list", json!({}))
            .await
            .unwrap(),
    );
    let keys: Vec<&str> = listed["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["key"].as_str().unwrap())
        .collect();
    assert_eq!(listed["count"], 2, "{listed}");
    assert!(
        keys.contains(&"agent:main:main") && keys.contains(&"agent:main:telegram:group:-5"),
        "{keys:?}"
    );
    let group = listed["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["key"] == "agent:main:telegram:group:-5")
        .unwrap();
    assert_eq!(group["kind"], "group");
    assert_eq!(group["channel"], "telegram");

    let only_main = json_of(
        &call(
            &team,
            "main",
            "agent:main:main",
            "sessions_list",
            json!({"kinds": ["main"], "messageLimit": 1}),
        )
        .await
        .unwrap(),
    );
    assert_eq!(only_main["count"], 1);
    let messages = only_main["sessions"][0]["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 1, "{only_main}");
    assert_eq!(messages[0]["role"], "assistant");
    assert_eq!(
        messages[0]["content"],
        json!([{"type": "text", "text": "hello"}])
    );
    assert!(messages[0].get("usage").is_none(), "{only_main}");

    // With agent-to-agent on, ops's sessions are listed too.
    let open = crate::fake_port::team(a2a_on(), &port);
    let listed = json_of(
        &call(&open, "main", "agent:main:main", "sessions_list", json!({}))
            .await
            .unwrap(),
    );
    assert_eq!(listed["count"], 3, "{listed}");
}

#[tokio::test]
async fn another_agents_session_is_refused_alike_whether_it_exists_or_not() {
    let port = FakePort::new(&["main", "ops"], |_| Some("ok".into()));
    port.seed("ops", "agent:ops:main", "secret", "ops stuff");
    let team = team(TeamSettings::default(), &port);
    let refusal = |key: &'static str| {
        let team = Arc::clone(&team);
        async move {
            call(
                &team,
                "main",
                "agent:main:main",
                "sessions_history",
                json!({"sessionKey": key}),
            )
            .await
            .unwrap_err()
            .to_string()
        }
    };
    let existing = refusal("agent:ops:main").await;
    assert_eq!(
        existing,
        "Agent-to-agent history is disabled. Set tools.agentToAgent.enabled=true to allow cross-agent access."
    );
    assert_eq!(refusal("agent:ops:nothing-here").await, existing);
    // The caller's own missing session is simply not found.
    let missing = call(
        &team,
        "main",
        "agent:main:main",
        "sessions_history",
        json!({"sessionKey": "agent:main:nope"}),
    )
    .await
    .unwrap_err();
    assert_eq!(
        missing.to_string(),
        "Session not found: agent:main:nope. sessions_list shows the sessions you can reach."
    );
    // Allowed, the history comes without tool noise.
    let open = crate::fake_port::team(a2a_on(), &port);
    let history = json_of(
        &call(
            &open,
            "main",
            "agent:main:main",
            "sessions_history",
            json!({"sessionKey": "agent:ops:main"}),
        )
        .await
        .unwrap(),
    );
    assert_eq!(history["messages"][0]["content"], "secret");
    assert_eq!(history["messages"][1]["content"][0]["text"], "ops stuff");
}

#[tokio::test]
async fn an_allow_list_limits_which_agents_talk() {
    let port = FakePort::new(&["main", "ops", "intern"], |_| Some("ok".into()));
    let settings = TeamSettings {
        agent_to_agent: AgentToAgent {
            enabled: true,
            allow: vec!["main".into(), "ops".into()],
        },
        ..TeamSettings::default()
    };
    let team = team(settings, &port);
    let refused = call(
        &team,
        "main",
        "agent:main:main",
        "sessions_send",
        json!({"agentId": "intern", "message": "hi"}),
    )
    .await
    .unwrap_err();
    assert_eq!(
        refused.to_string(),
        "Agent-to-agent messaging denied by tools.agentToAgent.allow."
    );
    let agents = json_of(
        &call(&team, "main", "agent:main:main", "agents_list", json!({}))
            .await
            .unwrap(),
    );
    let ids: Vec<&str> = agents["agents"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["main", "ops"]);
    assert_eq!(agents["agents"][1]["reach"], json!(["send"]));
}

#[tokio::test]
async fn sessions_send_returns_the_reply_then_runs_a_bounded_ping_pong_and_an_announce_step() {
    // Nobody ever says REPLY_SKIP: the ping-pong stops at maxPingPongTurns.
    let port = FakePort::new(&["main", "ops"], |turn| {
        Some(if turn.message.contains("announce step") {
            "Posting: 4".into()
        } else {
            format!("reply from {}", turn.agent_id)
        })
    });
    let settings = TeamSettings {
        max_ping_pong_turns: 3,
        ..a2a_on()
    };
    let team = team(settings, &port);
    let out = json_of(
        &call(
            &team,
            "main",
            "agent:main:main",
            "sessions_send",
            json!({"agentId": "ops", "message": "what is 2+2?"}),
        )
        .await
        .unwrap(),
    );
    assert_eq!(out["status"], "ok", "{out}");
    assert_eq!(out["reply"], "reply from ops");
    assert_eq!(out["sessionKey"], "agent:ops:main");
    assert_eq!(
        out["delivery"],
        json!({"status": "pending", "mode": "announce"})
    );
    // 1 request + 3 ping-pong turns + 1 announce step.
    eventually(|| port.turns().len() == 5).await;
    let turns = port.turns();
    assert_eq!(
        turns[0].message,
        "[Agent-to-agent message from agent \"main\" (session agent:main:main)]\nwhat is 2+2?"
    );
    let sessions: Vec<&str> = turns.iter().map(|t| t.session_key.as_str()).collect();
    assert_eq!(
        sessions,
        [
            "agent:ops:main",
            "agent:main:main",
            "agent:ops:main",
            "agent:main:main",
            "agent:ops:main"
        ]
    );
    assert!(
        turns[1]
            .message
            .starts_with("[Agent-to-agent reply step 1 of 3. You are Agent 1 (requester)"),
        "{}",
        turns[1].message
    );
    assert!(
        turns[4]
            .message
            .starts_with("[Agent-to-agent announce step."),
        "{}",
        turns[4].message
    );
    eventually(|| !port.delivered().is_empty()).await;
    assert_eq!(
        port.delivered(),
        [(
            "ops".to_owned(),
            "agent:ops:main".to_owned(),
            "Posting: 4".to_owned()
        )]
    );
}

#[tokio::test]
async fn sessions_send_refuses_its_own_session_and_times_out_clearly() {
    let port = FakePort::new(&["main"], |turn| {
        (!turn.message.contains("never")).then(|| "ok".to_owned())
    });
    port.seed("main", "agent:main:work", "x", "y");
    let settings = TeamSettings {
        max_ping_pong_turns: 0,
        ..TeamSettings::default()
    };
    let team = team(settings, &port);
    let own = call(
        &team,
        "main",
        "agent:main:main",
        "sessions_send",
        json!({"sessionKey": "main", "message": "hi"}),
    )
    .await
    .unwrap_err();
    assert_eq!(
        own.to_string(),
        "sessions_send cannot target the calling session: answer here instead"
    );
    let out = json_of(
        &call(&team, "main", "agent:main:main", "sessions_send", json!({"sessionKey": "agent:main:work", "message": "never answer", "timeoutSeconds": 1}))
            .await
            .unwrap(),
    );
    assert_eq!(out["status"], "timeout", "{out}");
    assert_eq!(
        out["error"],
        "no reply within 1 s; the target is still working on it"
    );
    let fire = json_of(
        &call(
            &team,
            "main",
            "agent:main:main",
            "sessions_send",
            json!({"sessionKey": "agent:main:work", "message": "later", "timeoutSeconds": 0}),
        )
        .await
        .unwrap(),
    );
    assert_eq!(fire["status"], "accepted");
    let empty = call(
        &team,
        "main",
        "agent:main:main",
        "sessions_send",
        json!({"sessionKey": "agent:main:work", "message": "  "}),
    )
    .await
    .unwrap_err();
    assert_eq!(empty.to_string(), "message is empty: say what to send");
    tokio::time::sleep(Duration::from_millis(100)).await;
}

#[tokio::test]
async fn session_status_shows_the_card_and_switches_the_model() {
    let port = FakePort::new(&["main"], |_| Some("ok".into()));
    port.seed("main", "agent:main:main", "hi", "hello");
    let team = team(TeamSettings::default(), &port);
    let card = call(
        &team,
        "main",
        "agent:main:main",
        "session_status",
        json!({}),
    )
    .await
    .unwrap();
    assert_eq!(
        card.text_content(),
        "Session: agent:main:main (agent main)\nModel: mock/main · Thinking: default\nTokens: 0 in / 0 out (0 total) · Cost: $0.0000 · Compactions: 0\nQueue: idle"
    );
    let bad = call(
        &team,
        "main",
        "agent:main:main",
        "session_status",
        json!({"model": "nope/x"}),
    )
    .await
    .unwrap_err();
    assert_eq!(
        bad.to_string(),
        "Unknown model \"nope/x\": name one as provider/model (configured: mock/main)."
    );
    let switched = call(
        &team,
        "main",
        "agent:main:main",
        "session_status",
        json!({"model": "mock/other"}),
    )
    .await
    .unwrap();
    assert!(
        switched.text_content().contains("Model: mock/other"),
        "{}",
        switched.text_content()
    );
    assert!(
        switched
            .text_content()
            .ends_with("Model switched to mock/other.")
    );
    let entry = port
        .store("main")
        .entry("agent:main:main")
        .unwrap()
        .unwrap();
    assert_eq!(entry.model.as_deref(), Some("mock/other"));
}

#[tokio::test]
async fn session_status_tells_the_cost_and_the_last_error() {
    let port = FakePort::new(&["main"], |_| Some("ok".into()));
    let store = port.store("main");
    let mut session = store.get_or_create("agent:main:main").unwrap();
    let mut paid = pincer_ai::AssistantMessage {
        content: vec![pincer_ai::ContentBlock::text("hello")],
        ..Default::default()
    };
    paid.usage.cost.total = 0.0125;
    session
        .transcript
        .append_message(pincer_ai::Message::Assistant(paid))
        .unwrap();
    session
        .transcript
        .append_message(pincer_ai::Message::Assistant(pincer_ai::AssistantMessage {
            stop_reason: pincer_ai::StopReason::Error,
            error_message: Some("429 rate limited".into()),
            ..Default::default()
        }))
        .unwrap();
    let team = team(TeamSettings::default(), &port);
    let card = call(
        &team,
        "main",
        "agent:main:main",
        "session_status",
        json!({}),
    )
    .await
    .unwrap();
    let text = card.text_content();
    assert!(text.contains("· Cost: $0.0125 ·"), "{text}");
    assert!(text.ends_with("\nLast error: 429 rate limited"), "{text}");
    assert_eq!(card.details.unwrap()["lastError"], "429 rate limited");
}

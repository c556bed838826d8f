//! Agents working together, end to end through a real gateway, the mock LLM and the fake
//! Telegram: two agents with bindings (a bound peer reaches `ops`, the owner `main`), `main`
//! asking `ops` with `sessions_send` and getting its reply, the refusal when agent-to-agent
//! is off, and a sub-agent researching in the background while the parent keeps chatting,
//! its result arriving in the chat as a message of its own.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use crate::common::fake_channel::{FakeChannel, T};
use crate::common::gateway::{Foreground, WsClient, free_port};
use crate::common::{Home, mock};
use pincer_fakes::fake_telegram::{FakeTelegram, InjectMessage};
use pincer_testkit::{Match, MockLlm, Reply, Rule, Scenario};
use serde_json::{Value, json};

const OWNER: i64 = 1001;
/// A peer bound to agent `ops`.
const OPS_PEER: i64 = 1002;
const TOKEN: &str = "team-test-token";

/// A gateway with agents `main` (mock/primary) and `ops` (mock/backup), `OPS_PEER` bound to
/// `ops`, the fake Telegram open to both peers, and `tools` as the tools section.
fn gateway(
    llm: &MockLlm,
    fake: &FakeTelegram,
    tools: &str,
    defaults: &str,
) -> (Home, Foreground, u16) {
    let home = <FakeTelegram as FakeChannel>::home();
    let port = free_port();
    let telegram = fake.config(&format!(
        "dmPolicy: \"allowlist\", allowFrom: [\"{OWNER}\", \"{OPS_PEER}\"]"
    ));
    home.use_mock(
        llm,
        &format!(
            "agents: {{ defaults: {{ model: \"mock/primary\", heartbeat: {{ every: \"0m\" }}, {defaults} }},\n\
               list: [{{ id: \"main\", default: true }}, {{ id: \"ops\", model: \"mock/backup\" }}] }},\n\
             bindings: [{{ agentId: \"ops\", match: {{ channel: \"telegram\", peer: {{ kind: \"direct\", id: \"{OPS_PEER}\" }} }} }}],\n\
             gateway: {{ port: {port}, auth: {{ token: \"{TOKEN}\" }} }},\n\
             session: {{ agentToAgent: {{ maxPingPongTurns: 0 }} }},\n\
             tools: {{ {tools} }},\n\
             channels: {{ {telegram} }},"
        ),
    );
    let gateway = Foreground::start(&home, &["gateway", "run"]);
    (home, gateway, port)
}

/// The text of the last tool result in the model's requests for a call of `tool`.
fn tool_result_text(llm: &MockLlm, tool: &str) -> String {
    for request in llm.requests().iter().rev() {
        let messages = request.body["messages"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        if let Some(last) = messages.last()
            && last["role"] == "tool"
        {
            let called = messages.iter().rev().find_map(|m| {
                m["tool_calls"].as_array().and_then(|calls| {
                    calls
                        .iter()
                        .find(|c| c["id"] == last["tool_call_id"])
                        .map(|c| {
                            c["function"]["name"]
                                .as_str()
                                .unwrap_or_default()
                                .to_owned()
                        })
                })
            });
            if called.as_deref() == Some(tool) {
                return match &last["content"] {
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                };
            }
        }
    }
    panic!("no result of {tool} in the model's requests");
}

/// Whether some request to the model (for `model`) had a user message containing `text`.
fn asked(llm: &MockLlm, model: &str, text: &str) -> bool {
    let text_of = |content: &Value| match content {
        Value::String(s) => s.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter_map(|p| p["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    };
    llm.requests().iter().any(|r| {
        r.body["model"] == model
            && r.body["messages"].as_array().is_some_and(|ms| {
                ms.iter()
                    .any(|m| m["role"] == "user" && text_of(&m["content"]).contains(text))
            })
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bound_peer_reaches_ops_and_main_asks_ops_with_sessions_send() {
    let llm = mock(
        Scenario::new()
            // `main` asks `ops`, then passes its answer on.
            .rule(
                Rule::when(Match::last_user("ask ops what 2+2 is")).reply(Reply::tool_call(
                    "sessions_send",
                    json!({"agentId": "ops", "message": "what is 2+2?"}),
                )),
            )
            .rule(Rule::when(Match::tool_result("sessions_send")).reply(Reply::text("ops says 4")))
            // `ops` answers its peer, the question from `main`, and keeps the announce quiet.
            .rule(
                Rule::when(Match::last_user_contains("Agent-to-agent announce step"))
                    .reply(Reply::text("ANNOUNCE_SKIP")),
            )
            .rule(
                Rule::when(Match::last_user_contains("what is 2+2?").with_model("backup"))
                    .reply(Reply::text("4")),
            )
            .rule(
                Rule::when(Match::last_user("hello ops").with_model("backup"))
                    .reply(Reply::text("ops here")),
            )
            .rule(
                Rule::when(Match::last_user("hello main").with_model("primary"))
                    .reply(Reply::text("main here")),
            ),
    )
    .await;
    let fake = FakeTelegram::start().await;
    let (_home, gateway, _port) = gateway(&llm, &fake, "agentToAgent: { enabled: true }", "");

    fake.inject_message(InjectMessage::private(OPS_PEER, "hello ops"));
    fake.inject_message(InjectMessage::private(OWNER, "hello main"));
    let sent = fake.wait_for_messages(2, T).await;
    let to = |chat: i64| {
        sent.iter()
            .find(|m| m.chat_id == chat)
            .map(|m| m.text.clone())
    };
    assert_eq!(to(OPS_PEER).as_deref(), Some("ops here"));
    assert_eq!(to(OWNER).as_deref(), Some("main here"));

    fake.inject_message(InjectMessage::private(OWNER, "ask ops what 2+2 is"));
    let sent = fake.wait_for_messages(3, T).await;
    assert_eq!(sent[2].chat_id, OWNER);
    assert_eq!(sent[2].text, "ops says 4");
    let result: Value = serde_json::from_str(&tool_result_text(&llm, "sessions_send")).unwrap();
    assert_eq!(result["status"], "ok", "{result}");
    assert_eq!(result["reply"], "4");
    assert_eq!(result["sessionKey"], "agent:ops:main");
    // `ops` was told who asked, in its own session.
    assert!(asked(
        &llm,
        "backup",
        "[Agent-to-agent message from agent \"main\" (session agent:main:main)]\nwhat is 2+2?"
    ));
    // The announce step stayed silent: nothing more reached either chat.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert_eq!(fake.sent_messages().len(), 3, "{:?}", fake.sent_messages());
    drop(gateway);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_agent_to_agent_main_can_neither_list_nor_reach_ops() {
    let llm = mock(
        Scenario::new()
            .rule(
                Rule::when(Match::last_user("ask ops")).reply(Reply::tool_call(
                    "sessions_send",
                    json!({"sessionKey": "agent:ops:main", "message": "hi"}),
                )),
            )
            .rule(Rule::when(Match::tool_result("sessions_send")).reply(Reply::text("could not")))
            .rule(
                Rule::when(Match::last_user("list sessions"))
                    .reply(Reply::tool_call("sessions_list", json!({"agentId": "ops"}))),
            )
            .rule(Rule::when(Match::tool_result("sessions_list")).reply(Reply::text("listed")))
            .rule(
                Rule::when(Match::last_user("who can I reach"))
                    .reply(Reply::tool_call("agents_list", json!({}))),
            )
            .rule(Rule::when(Match::tool_result("agents_list")).reply(Reply::text("agents listed")))
            .rule(Rule::when(Match::last_user("hello ops")).reply(Reply::text("ops here"))),
    )
    .await;
    let fake = FakeTelegram::start().await;
    let (_home, gateway, _port) = gateway(&llm, &fake, "", "");
    // `ops` has a main session: the refusal must not depend on whether it exists.
    fake.inject_message(InjectMessage::private(OPS_PEER, "hello ops"));
    fake.wait_for_messages(1, T).await;

    fake.inject_message(InjectMessage::private(OWNER, "ask ops"));
    fake.wait_for_messages(2, T).await;
    assert_eq!(
        tool_result_text(&llm, "sessions_send"),
        "Agent-to-agent messaging is disabled. Set tools.agentToAgent.enabled=true to allow \
         cross-agent sends."
    );
    assert!(
        !asked(&llm, "backup", "Agent-to-agent message"),
        "ops was never asked"
    );

    fake.inject_message(InjectMessage::private(OWNER, "list sessions"));
    fake.wait_for_messages(3, T).await;
    assert_eq!(
        tool_result_text(&llm, "sessions_list"),
        "Agent-to-agent listing is disabled. Set tools.agentToAgent.enabled=true to allow \
         cross-agent visibility."
    );

    fake.inject_message(InjectMessage::private(OWNER, "who can I reach"));
    fake.wait_for_messages(4, T).await;
    let agents: Value = serde_json::from_str(&tool_result_text(&llm, "agents_list")).unwrap();
    assert_eq!(agents["requester"], "main");
    assert_eq!(agents["allowAny"], false);
    let ids: Vec<&str> = agents["agents"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["main"]);
    drop(gateway);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sub_agent_researches_in_the_background_and_its_result_arrives_as_its_own_message() {
    let task = "Find three facts about Rust async";
    let llm = mock(
        Scenario::new()
            // The announcement first: it quotes the task too.
            .rule(
                Rule::when(Match::last_user_contains("[Sub-agent \"rust async\" completed successfully"))
                    .reply(Reply::text("Your research is done: futures are lazy, tokio runs them, pinning keeps them still.")),
            )
            .rule(
                Rule::when(Match::last_user("research rust async in the background"))
                    .reply(Reply::tool_call("sessions_spawn", json!({"task": task, "label": "rust async"}))),
            )
            .rule(Rule::when(Match::tool_result("sessions_spawn")).reply(Reply::text("On it: a sub-agent is researching.")))
            // The sub-agent takes its time (11 chunks, 400 ms apart).
            .rule(
                Rule::when(Match::last_user_contains(task))
                    .reply(Reply::text("FACTS: lazy futures; the tokio runtime; Pin.").with_delay_ms(400)),
            )
            .rule(Rule::when(Match::last_user("what time is it?")).reply(Reply::text("Noon."))),
    )
    .await;
    let fake = FakeTelegram::start().await;
    let (home, gateway, port) = gateway(&llm, &fake, "", "");

    fake.inject_message(InjectMessage::private(
        OWNER,
        "research rust async in the background",
    ));
    let sent = fake.wait_for_messages(1, T).await;
    assert_eq!(sent[0].text, "On it: a sub-agent is researching.");
    let spawned: Value = serde_json::from_str(&tool_result_text(&llm, "sessions_spawn")).unwrap();
    assert_eq!(spawned["status"], "accepted", "{spawned}");
    let child = spawned["childSessionKey"].as_str().unwrap().to_owned();
    assert!(child.starts_with("agent:main:subagent:"), "{child}");

    // The parent keeps answering while the sub-agent works.
    fake.inject_message(InjectMessage::private(OWNER, "what time is it?"));
    let sent = fake.wait_for_messages(2, T).await;
    assert_eq!(sent[1].text, "Noon.");
    let mut client = WsClient::connect(port, TOKEN).await;
    let listed = client.call("subagents.list", json!({})).await;
    assert_eq!(
        listed["payload"]["subagents"][0]["sessionKey"],
        child.as_str(),
        "{listed}"
    );
    assert_eq!(
        listed["payload"]["subagents"][0]["status"], "running",
        "{listed}"
    );

    // Then the result arrives in the chat as a message of its own.
    let sent = fake.wait_for_messages(3, T).await;
    assert_eq!(sent[2].chat_id, OWNER);
    assert_eq!(
        sent[2].text,
        "Your research is done: futures are lazy, tokio runs them, pinning keeps them still."
    );
    // The sub-agent got only its task, in its own session, and the parent the result.
    assert!(asked(
        &llm,
        "primary",
        &format!("[Sub-agent task from session agent:main:main (agent \"main\")]\n{task}")
    ));
    assert!(asked(
        &llm,
        "primary",
        "Result:\nFACTS: lazy futures; the tokio runtime; Pin."
    ));
    let listed = client.call("subagents.list", json!({})).await;
    assert_eq!(
        listed["payload"]["subagents"][0]["status"], "done",
        "{listed}"
    );

    // `/subagents` in the chat lists it, answered by the gateway without the model.
    let requests = llm.requests().len();
    fake.inject_message(InjectMessage::private(OWNER, "/subagents"));
    let sent = fake.wait_for_messages(4, T).await;
    let lines: Vec<&str> = sent[3].plain_text.lines().collect();
    assert_eq!(lines[0], "Sub-agents (1):");
    assert!(
        lines[1].starts_with("#1 rust async — done ("),
        "{}",
        sent[3].plain_text
    );
    assert_eq!(llm.requests().len(), requests);
    drop(home);
    drop(gateway);
}

/// `delegate_to_agent` on an RPC pool: `main`'s turn runs on a `pincer rpc` worker, whose
/// stand-in tool runs the delegation in the gateway (`tools.invoke`), which takes a worker
/// of its own for the `delegate:…` session and brings `ops`'s answer back.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn delegate_to_agent_runs_on_an_rpc_pool() {
    let llm = mock(
        Scenario::new()
            .rule(
                Rule::when(Match::last_user("check the disk with ops")).reply(Reply::tool_call(
                    "delegate_to_agent",
                    json!({"agentId": "ops", "task": "check the disk", "mode": "sync"}),
                )),
            )
            .rule(
                Rule::when(Match::tool_result("delegate_to_agent"))
                    .reply(Reply::text("ops checked it")),
            )
            .rule(
                Rule::when(Match::last_user_contains("check the disk").with_model("backup"))
                    .reply(Reply::text("disk is 40% full")),
            ),
    )
    .await;
    let home = Home::new();
    let port = free_port();
    home.use_mock(
        &llm,
        &format!(
            "agents: {{ defaults: {{ model: \"mock/primary\", heartbeat: {{ every: \"0m\" }}, delegation: {{ allowAgents: [\"ops\"] }} }},\n\
               list: [{{ id: \"main\", default: true }}, {{ id: \"ops\", model: \"mock/backup\" }}] }},\n\
             gateway: {{ port: {port}, auth: {{ token: \"{TOKEN}\" }} }},\n\
             agent: {{ runner: \"rpc\", pool: {{ min: 0, max: 3 }} }},"
        ),
    );
    let gateway = Foreground::start(&home, &["gateway", "run"]);
    let mut client = WsClient::connect(port, TOKEN).await;
    let done = client
        .chat_until(
            "agent:main:main",
            "check the disk with ops",
            "run-delegate",
            "final",
        )
        .await;
    assert_eq!(
        crate::common::gateway::text_of(&done["payload"]["message"]),
        "ops checked it",
        "{done}"
    );
    let result: Value = serde_json::from_str(&tool_result_text(&llm, "delegate_to_agent")).unwrap();
    assert_eq!(
        result,
        json!({"status": "completed", "response": "disk is 40% full"})
    );
    assert!(asked(
        &llm,
        "backup",
        "[Delegated task from agent \"main\" (session agent:main:main)]\ncheck the disk"
    ));
    // The delegate ran on a worker of its own: the pool started two.
    let health = client.call("health", json!({})).await;
    assert_eq!(health["payload"]["agentRunner"]["kind"], "rpc", "{health}");
    assert_eq!(health["payload"]["agentRunner"]["spawned"], 2, "{health}");
    drop(gateway);
}

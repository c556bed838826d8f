//! Compaction wired into the agent: threshold after a turn, overflow retried once, manual.

#![allow(clippy::unwrap_used, clippy::expect_used)]
use std::sync::Arc;

use pincer_agent::compaction::{CompactionReason, CompactionSettings, summary_of};
use pincer_agent::{Agent, AgentConfig, AgentEvent, llm_stream_fn};
use pincer_ai::env::MapEnv;
use pincer_ai::{LlmClient, Message, ModelRegistry};
use pincer_testkit::{Fault, Match, MockLlm, Reply, Rule, Scenario};
use serde_json::json;

async fn agent(
    scenario: Scenario,
    window: u64,
    settings: CompactionSettings,
    history: Vec<Message>,
) -> (Agent, MockLlm) {
    let server = MockLlm::start(scenario).await.unwrap();
    let mut models = ModelRegistry::builtin().unwrap();
    models.set_base_url("anthropic", &server.url());
    let mut model = models
        .resolve("anthropic/claude-haiku-4-5")
        .unwrap()
        .clone();
    model.context_window = window;
    let client = LlmClient::with_env(Arc::new(MapEnv::new([("ANTHROPIC_API_KEY", "k")])));
    let mut config = AgentConfig::new(model, llm_stream_fn(client));
    config.compaction = settings;
    config.messages = history;
    (Agent::new(config), server)
}

fn history() -> Vec<Message> {
    vec![
        Message::user("first request"),
        Message::user("second request"),
    ]
}

fn kinds(rx: &mut tokio::sync::mpsc::UnboundedReceiver<Arc<AgentEvent>>) -> Vec<String> {
    let mut out = vec![];
    while let Ok(e) = rx.try_recv() {
        match &*e {
            AgentEvent::MessageUpdate { .. } => {}
            AgentEvent::CompactionStart { reason } => {
                out.push(format!("compaction_start:{reason:?}"))
            }
            AgentEvent::CompactionEnd(end) => out.push(format!(
                "compaction_end:{}",
                serde_json::to_string(end).unwrap()
            )),
            other => out.push(other.kind().to_owned()),
        }
    }
    out
}

/// Prompts `agent` with `text`: the kinds of the events it sent, then its messages.
async fn prompt(agent: &Agent, text: &str) -> (Vec<String>, Vec<Message>) {
    let mut rx = agent.subscribe();
    agent.prompt(text).await.unwrap();
    (kinds(&mut rx), agent.state().messages)
}

/// Automatic compaction reserving 10 tokens for the reply and keeping 1 recent token.
fn automatic() -> CompactionSettings {
    CompactionSettings {
        enabled: true,
        reserve_tokens: 10,
        keep_recent_tokens: 1,
    }
}

fn scenario() -> Scenario {
    Scenario::new()
        .rule(Rule::when(Match::last_user_contains("<conversation>")).reply(Reply::text("SUMMARY")))
        .rule(Rule::when(Match::last_user("boom")).times(1).fault(Fault::status(400).body(json!({
            "type": "error", "error": {"type": "invalid_request_error", "message": "prompt is too long: 300000 tokens > 200000 maximum"}}))))
        .default_reply(Reply::text("Hello"))
}

#[tokio::test]
async fn threshold() {
    let (agent, _s) = agent(scenario(), 20, automatic(), history()).await;
    let (k, msgs) = prompt(&agent, "hi").await;
    assert!(
        k.iter()
            .any(|e| e.starts_with("compaction_end") && e.contains("\"result\""))
    );
    assert!(summary_of(&msgs[0]).unwrap().starts_with("SUMMARY"));
    assert_eq!(k.last().unwrap(), "agent_end");
}

#[tokio::test]
async fn overflow_retries_once() {
    let (agent, server) = agent(scenario(), 200_000, automatic(), history()).await;
    let (k, msgs) = prompt(&agent, "boom").await;
    assert_eq!(server.requests().len(), 3);
    assert!(k.iter().any(|e| e.contains("\"willRetry\":true")));
    assert_eq!(msgs.len(), 3);
}

#[tokio::test]
async fn manual() {
    let (agent, server) = agent(
        scenario(),
        200_000,
        CompactionSettings {
            keep_recent_tokens: 1,
            ..Default::default()
        },
        history(),
    )
    .await;
    let mut rx = agent.subscribe();
    let result = agent.compact(Some("focus")).await.unwrap();
    assert_eq!(result.summary, "SUMMARY");
    let k = kinds(&mut rx);
    assert_eq!(
        k[0],
        format!("compaction_start:{:?}", CompactionReason::Manual)
    );
    assert_eq!(agent.state().messages.len(), 2);
    let body = &server.requests()[0].body;
    assert!(body.to_string().contains("Additional focus: focus"));
    assert!(!agent.state().is_streaming);
    // Nothing left to compact now.
    assert!(agent.compact(None).await.is_err());
}

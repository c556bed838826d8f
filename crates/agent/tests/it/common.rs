//! Helpers the agent's test modules share: an Anthropic model pointed at the mock LLM
//! server, and reading the outcome of a run from its messages.
#![allow(clippy::expect_used)]

use std::sync::Arc;

use pincer_ai::env::MapEnv;
use pincer_ai::{AssistantMessage, LlmClient, Message, Model, ModelRegistry, ToolResultMessage};
use pincer_testkit::{MockLlm, Scenario};

/// A mock server playing `scenario`, the catalog's Anthropic model pointed at it, and a
/// client with an Anthropic key.
pub async fn mock_anthropic(scenario: Scenario) -> (MockLlm, Model, LlmClient) {
    let server = MockLlm::start(scenario).await.expect("mock starts");
    let mut models = ModelRegistry::builtin().expect("catalog");
    models.set_base_url("anthropic", &server.url());
    let model = models
        .resolve("anthropic/claude-haiku-4-5")
        .expect("model")
        .clone();
    let client = LlmClient::with_env(Arc::new(MapEnv::new([("ANTHROPIC_API_KEY", "k")])));
    (server, model, client)
}

/// The last message, which must be the assistant's.
pub fn last_assistant(messages: &[Message]) -> &AssistantMessage {
    match messages.last() {
        Some(Message::Assistant(last)) => last,
        other => panic!("the last message is not the assistant's: {other:?}"),
    }
}

/// The first tool result.
pub fn first_tool_result(messages: &[Message]) -> ToolResultMessage {
    messages
        .iter()
        .find_map(|m| match m {
            Message::ToolResult(r) => Some(r.clone()),
            _ => None,
        })
        .expect("a tool result")
}

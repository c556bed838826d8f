//! Shared harness for pincer-ai's integration tests: a mock LLM server on 127.0.0.1, a
//! client whose environment points every built-in provider at it, and one model per API.

#![allow(dead_code, clippy::expect_used, clippy::unwrap_used)]

use std::sync::Arc;
use std::time::Duration;

use futures_util::StreamExt;
use pincer_ai::env::MapEnv;
use pincer_ai::{
    AssistantMessageEvent, Context, LlmClient, Message, Model, ModelRegistry, RetryPolicy,
    StreamOptions,
};
use pincer_testkit::{Api, MockLlm, Scenario};

/// The four wire APIs, each with the catalog model the tests use for it.
pub const APIS: [(&str, &str); 4] = [
    ("openai-completions", "deepseek/deepseek-chat"),
    ("openai-responses", "openai/gpt-4o-mini"),
    ("anthropic-messages", "anthropic/claude-haiku-4-5"),
    ("google-generative-ai", "google/gemini-2.5-flash"),
];

pub struct Harness {
    pub server: MockLlm,
    pub client: LlmClient,
    pub models: ModelRegistry,
}

impl Harness {
    pub async fn start(scenario: Scenario) -> Self {
        let server = MockLlm::start(scenario).await.expect("mock server starts");
        // Each provider's base URL as the mock serves its API.
        let env = MapEnv::new([
            ("OPENAI_BASE_URL", server.base_url(Api::OpenAiCompletions)),
            (
                "ANTHROPIC_BASE_URL",
                server.base_url(Api::AnthropicMessages),
            ),
            ("GEMINI_BASE_URL", server.base_url(Api::GoogleGenerativeAi)),
            ("OPENAI_API_KEY", "sk-openai-test".to_owned()),
            ("ANTHROPIC_API_KEY", "sk-ant-test".to_owned()),
            ("GEMINI_API_KEY", "gemini-test".to_owned()),
            ("DEEPSEEK_API_KEY", "sk-deepseek-test".to_owned()),
        ]);
        let mut models = ModelRegistry::builtin().expect("catalog loads");
        models.apply_env_overrides(&env);
        models.set_base_url("deepseek", &server.base_url(Api::OpenAiCompletions));
        let client = LlmClient::with_env(Arc::new(env));
        Self {
            server,
            client,
            models,
        }
    }

    /// The test model speaking `api`.
    pub fn model(&self, api: &str) -> Model {
        let reference = APIS.iter().find(|(a, _)| *a == api).expect("known api").1;
        self.models
            .resolve(reference)
            .expect("model in catalog")
            .clone()
    }

    /// Stream `prompt` through `api` and collect every event.
    pub async fn run(
        &self,
        api: &str,
        prompt: &str,
        options: StreamOptions,
    ) -> Vec<AssistantMessageEvent> {
        self.run_context(api, &user(prompt), options).await
    }

    pub async fn run_context(
        &self,
        api: &str,
        context: &Context,
        options: StreamOptions,
    ) -> Vec<AssistantMessageEvent> {
        let model = self.model(api);
        let stream = self.client.stream(&model, context, options);
        tokio::time::timeout(Duration::from_secs(30), stream.collect::<Vec<_>>())
            .await
            .expect("stream finishes")
    }
}

pub fn user(prompt: &str) -> Context {
    Context {
        system_prompt: Some("You are a test.".into()),
        messages: vec![Message::user(prompt)],
        tools: vec![],
    }
}

/// Options with fast retries so fault tests stay quick.
pub fn fast_retry() -> StreamOptions {
    retrying(3, Duration::from_millis(10), Duration::from_secs(60))
}

/// Options that retry `max_retries` times, waiting from `base_delay` up to `max_delay`.
pub fn retrying(max_retries: u32, base_delay: Duration, max_delay: Duration) -> StreamOptions {
    StreamOptions {
        retry: RetryPolicy {
            max_retries,
            base_delay,
            max_delay,
        },
        ..StreamOptions::default()
    }
}

/// The `type` names of the events, in order.
pub fn kinds(events: &[AssistantMessageEvent]) -> Vec<String> {
    events
        .iter()
        .map(|e| {
            serde_json::to_value(e).expect("serialises")["type"]
                .as_str()
                .expect("type")
                .to_owned()
        })
        .collect()
}

/// Exactly one terminal event, and it is the last.
pub fn assert_one_terminal(events: &[AssistantMessageEvent]) {
    assert_eq!(
        events.iter().filter(|e| e.is_terminal()).count(),
        1,
        "{events:#?}"
    );
    assert!(
        events.last().is_some_and(|e| e.is_terminal()),
        "{events:#?}"
    );
}

pub fn final_message(events: &[AssistantMessageEvent]) -> &pincer_ai::AssistantMessage {
    match events.last() {
        Some(AssistantMessageEvent::Done { message, .. }) => message,
        Some(AssistantMessageEvent::Error { error, .. }) => error,
        other => panic!("no terminal event: {other:?}"),
    }
}

/// The final message, which must have stopped for `reason` (`case` names the run when it
/// did not, beside the error it ended with).
pub fn stopped_with<'a>(
    events: &'a [AssistantMessageEvent],
    reason: pincer_ai::StopReason,
    case: &str,
) -> &'a pincer_ai::AssistantMessage {
    let message = final_message(events);
    assert_eq!(
        message.stop_reason, reason,
        "{case}: {:?}",
        message.error_message
    );
    message
}

pub fn error_of(events: &[AssistantMessageEvent]) -> (&pincer_ai::ErrorKind, String) {
    match events.last() {
        Some(AssistantMessageEvent::Error { kind, error, .. }) => {
            (kind, error.error_message.clone().unwrap_or_default())
        }
        other => panic!("expected an error event, got {other:?}"),
    }
}

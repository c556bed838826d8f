//! Test doubles for Pincer. The main one is [`MockLlm`], a mock LLM server that speaks the
//! streaming wire protocols of OpenAI Chat Completions, OpenAI Responses, Anthropic Messages,
//! Google Generative AI and pi's proxy over real HTTP on 127.0.0.1, scripted by a
//! [`Scenario`] (rules matching the last user message or tool result, replies with thinking /
//! text / tool calls, injected faults).
//!
//! ```no_run
//! # async fn demo() -> Result<(), pincer_testkit::MockError> {
//! use pincer_testkit::{Fault, Match, MockLlm, Reply, Rule, Scenario};
//! use serde_json::json;
//!
//! let scenario = Scenario::new()
//!     .rule(Rule::when(Match::last_user("hi")).reply(Reply::text("Hello!")))
//!     .rule(Rule::when(Match::last_user_contains("weather"))
//!         .reply(Reply::tool_call("get_weather", json!({"city": "Paris"})).with_thinking("need a tool")))
//!     .rule(Rule::when(Match::tool_result("get_weather")).reply(Reply::text("It is sunny.")))
//!     .rule(Rule::when(Match::last_user("flaky")).times(2).fault(Fault::status(429).retry_after("1")))
//!     .chunk_size(4);
//! let server = MockLlm::start(scenario).await?;
//! let openai_base = format!("{}/v1", server.url());
//! # let _ = openai_base;
//! server.shutdown().await?;
//! # Ok(()) }
//! ```
//!
//! The same server answers embedding requests (OpenAI-compatible `/v1/embeddings`, Gemini
//! `:batchEmbedContents`, Ollama `/api/embed`) with deterministic vectors from
//! [`mock_embedding`]: hashed words and character trigrams, so texts sharing words are close.
//! Rules match them like chat requests (their inputs stand in for the last user message), and
//! [`Fault::embed_count`], [`Fault::embed_dims`] and [`Fault::embed_ragged`] make wrong answers.
//!
//! [`FakeOAuthServer`] is a fake OAuth authorization server (the openai-codex sign-in:
//! authorize redirect, code exchange with PKCE, rotating refresh tokens, injected failures).
//!
//! The scenario JSON format, the endpoints and the `pincer-mock-llm` binary (with `curl`
//! examples) are described in the crate README.
//!
//! The fake chat platforms (Telegram, Discord, Slack, Feishu) are in `pincer-fakes`.
//!
//! [`mock_rpc`] is a scripted fake worker of pi's RPC protocol (the `pincer-mock-rpc`
//! binary); [`mock_rpc_path`] finds (or builds) it for other crates' tests.

mod api;
pub mod aws_credentials;
mod azure;
mod bedrock;
mod body;
mod embed;
mod engine;
pub mod files;
pub mod github_copilot;
pub mod google_cloud;
mod handlers;
pub mod mock_rpc;
pub mod oauth;
mod plan;
pub mod procfs;
mod request;
mod scenario;
mod server;
mod transcribe;
mod wire;

pub use api::Api;
pub use azure::ENTRA_TOKEN_SECONDS;
pub use embed::{DEFAULT_DIMS as DEFAULT_EMBEDDING_DIMS, mock_embedding};
pub use mock_rpc::mock_rpc_path;
pub use oauth::{FakeOAuthServer, RefreshFailure};
pub use scenario::{
    DEFAULT_CHUNK_SIZE, Fault, InstantMode, Match, Reply, Rule, Scenario, ScenarioError,
    StopReason, ToolCallSpec, UsageSpec,
};
pub use server::{MockError, MockLlm, RecordedRequest};

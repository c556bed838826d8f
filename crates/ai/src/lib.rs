//! pincer-ai: the LLM layer of Pincer.
//!
//! Speaks the wire protocols of LLM APIs (OpenAI Chat Completions, OpenAI Responses and
//! Codex, Azure OpenAI Responses, Anthropic Messages, Google Generative AI, Vertex AI, Cloud
//! Code Assist, Amazon Bedrock ConverseStream, pi's proxy stream, and an offline stub) and
//! turns each into one streaming event model ([`AssistantMessageEvent`]), with a model
//! catalog, costs, API keys from the environment, retry with backoff and cancellation.
//! It must never know about agents, sessions, channels or the gateway.

pub mod builder;
pub mod catalog;
pub mod client;
pub mod embeddings;
pub mod env;
pub mod error;
mod error_text;
pub mod event;
pub mod fetch;
pub mod framing;
pub mod http;
pub mod json_stream;
pub mod model;
pub mod options;
pub mod providers;
pub mod registry;
pub mod schema;
#[cfg(test)]
pub(crate) mod test_support;
pub mod transcription;
pub mod types;

pub use builder::MessageBuilder;
pub use catalog::{CatalogError, CustomModel, ModelRegistry, ModelsConfig, ProviderConfig};
pub use client::{LazyHttpClient, LlmClient};
pub use error::{AiError, ErrorKind};
pub use event::{AssistantMessageEvent, AssistantStream, PartialMessage};
pub use model::{Compat, InputKind, Model, ModelCost, apis};
pub use options::{CacheRetention, RetryPolicy, StreamOptions};
pub use registry::{ApiProvider, ApiRegistry};
pub use tokio_util::sync::CancellationToken;
pub use types::*;

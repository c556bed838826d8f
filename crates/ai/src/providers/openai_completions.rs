//! The `openai-completions` wire API: OpenAI Chat Completions (`POST …/chat/completions`
//! with `stream: true`), also spoken by most hosted and local LLM servers (OpenRouter,
//! Groq, DeepSeek, xAI, Mistral, Ollama, llama.cpp, vLLM, …). Their differences are
//! captured by [`ResolvedCompat`], detected from the provider and base URL and overridable
//! per model (pi's `OpenAICompletionsCompat`).
//!
//! `request` builds the body, `decoder` turns the SSE stream into builder calls.

mod decoder;
mod request;

#[cfg(test)]
mod decoder_tests;
#[cfg(test)]
mod request_tests;

pub use request::{ResolvedCompat, detect_compat, resolve_compat};

use crate::http::{Framing, HttpCall, StreamDecoder};
use crate::model::{Model, apis};
use crate::providers::openai_shared::request_headers;
use crate::providers::{RequestInput, WireApi, join_url};

/// The `openai-completions` wire API.
#[derive(Debug, Clone, Copy, Default)]
pub struct OpenAiCompletions;

impl WireApi for OpenAiCompletions {
    fn api(&self) -> &'static str {
        apis::OPENAI_COMPLETIONS
    }

    fn build_request(&self, input: RequestInput<'_>) -> Result<HttpCall, String> {
        let compat = resolve_compat(input.model);
        Ok(HttpCall {
            url: join_url(&input.model.base_url, "chat/completions"),
            headers: request_headers(input.model, input.context, input.options, input.api_key),
            body: request::build_body(input.model, input.context, input.options, &compat),
            framing: Framing::Sse,
        })
    }

    fn decoder(&self, model: &Model) -> Box<dyn StreamDecoder> {
        Box::new(decoder::Decoder::new(model))
    }
}

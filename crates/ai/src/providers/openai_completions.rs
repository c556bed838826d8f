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

use crate::http::HttpCall;
use crate::model::apis;
use crate::providers::openai_shared::request_headers;
use crate::providers::{RequestInput, join_url};

wire_api! {
    /// The `openai-completions` wire API.
    OpenAiCompletions: apis::OPENAI_COMPLETIONS => build_request, decoder::Decoder::new
}

fn build_request(input: RequestInput<'_>) -> Result<HttpCall, String> {
    let compat = resolve_compat(input.model);
    Ok(HttpCall::sse(
        join_url(&input.model.base_url, "chat/completions"),
        request_headers(input.model, input.context, input.options, input.api_key),
        request::build_body(input.model, input.context, input.options, &compat),
    ))
}

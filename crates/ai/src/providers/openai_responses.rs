//! The `openai-responses` wire API: OpenAI's Responses API (`POST …/responses` with
//! `stream: true`), used for OpenAI's reasoning models (and by Azure, Copilot and Codex
//! style endpoints). Reasoning, text and function calls arrive as typed output items;
//! tool-call ids are `call_id|item_id` so both halves survive a round trip.
//!
//! `request` builds the body, `decoder` turns the SSE stream into builder calls; `codex` is
//! the `openai-codex-responses` variant (ChatGPT's Codex backend) built on both, `azure` the
//! `azure-openai-responses` one (an Azure OpenAI resource; `entra` gets its Entra ID tokens).

pub mod azure;
mod codex;
mod decoder;
pub mod entra;
mod request;

#[cfg(test)]
mod decoder_tests;

pub use azure::AzureOpenAiResponses;
pub use codex::OpenAiCodexResponses;

use crate::http::HttpCall;
use crate::model::apis;
use crate::providers::openai_shared::request_headers;
use crate::providers::{RequestInput, join_url};

wire_api! {
    /// The `openai-responses` wire API.
    OpenAiResponses: apis::OPENAI_RESPONSES => build_request, decoder::Decoder::new
}

fn build_request(input: RequestInput<'_>) -> Result<HttpCall, String> {
    Ok(HttpCall::sse(
        join_url(&input.model.base_url, "responses"),
        request_headers(input.model, input.context, input.options, input.api_key),
        request::build_body(input.model, input.context, input.options),
    ))
}

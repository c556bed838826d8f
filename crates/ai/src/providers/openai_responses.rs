//! The `openai-responses` wire API: OpenAI's Responses API (`POST …/responses` with
//! `stream: true`), used for OpenAI's reasoning models (and by Azure, Copilot and Codex
//! style endpoints). Reasoning, text and function calls arrive as typed output items;
//! tool-call ids are `call_id|item_id` so both halves survive a round trip.
//!
//! `request` builds the body, `decoder` turns the SSE stream into builder calls; `codex` is
//! the `openai-codex-responses` variant (ChatGPT's Codex backend) built on both.

mod codex;
mod decoder;
mod request;

#[cfg(test)]
mod decoder_tests;

pub use codex::OpenAiCodexResponses;

use crate::http::{Framing, HttpCall, StreamDecoder};
use crate::model::{Model, apis};
use crate::providers::openai_shared::request_headers;
use crate::providers::{RequestInput, WireApi, join_url};

/// The `openai-responses` wire API.
#[derive(Debug, Clone, Copy, Default)]
pub struct OpenAiResponses;

impl WireApi for OpenAiResponses {
    fn api(&self) -> &'static str {
        apis::OPENAI_RESPONSES
    }

    fn build_request(&self, input: RequestInput<'_>) -> Result<HttpCall, String> {
        Ok(HttpCall {
            url: join_url(&input.model.base_url, "responses"),
            headers: request_headers(input.model, input.context, input.options, input.api_key),
            body: request::build_body(input.model, input.context, input.options),
            framing: Framing::Sse,
        })
    }

    fn decoder(&self, model: &Model) -> Box<dyn StreamDecoder> {
        Box::new(decoder::Decoder::new(model))
    }
}

//! The `anthropic-messages` wire API (Anthropic's Messages API, streamed over SSE), with
//! pi-ai's semantics: API-key, OAuth (Claude Code) and Copilot auth, prompt caching,
//! adaptive or budgeted thinking, and pi's message transformation for replay.
//!
//! - [`request`](self::request): headers and body.
//! - [`decode`](self::decode): the stream decoder.
//! - [`transform`]: pi's `transformMessages`, shared with the Google and OpenAI providers.

mod decode;
mod request;
pub(crate) mod transform;

#[cfg(test)]
mod tests;

use crate::http::{Framing, HttpCall, StreamDecoder};
use crate::model::{Model, apis};
use crate::providers::{RequestInput, WireApi};

pub(crate) use request::f32_to_json;

/// The `anthropic-messages` wire API.
#[derive(Debug, Clone, Copy, Default)]
pub struct AnthropicMessages;

impl WireApi for AnthropicMessages {
    fn api(&self) -> &'static str {
        apis::ANTHROPIC_MESSAGES
    }

    fn build_request(&self, input: RequestInput<'_>) -> Result<HttpCall, String> {
        let auth = request::Auth::detect(input.model, input.api_key);
        Ok(HttpCall {
            url: request::url(input.model),
            headers: request::headers(input.model, input.options, input.api_key, auth),
            body: request::body(input.model, input.context, input.options, auth),
            framing: Framing::Sse,
        })
    }

    fn decoder(&self, model: &Model) -> Box<dyn StreamDecoder> {
        Box::new(decode::AnthropicDecoder::new(model.reference()))
    }
}

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

use crate::http::{HttpCall, StreamDecoder};
use crate::model::{Model, apis};
use crate::providers::{RequestInput, WireApi};

pub(crate) use request::f32_to_json;

/// The `anthropic-messages` wire API. Written out rather than by `wire_api!`: in OAuth
/// mode the decoder needs the request's tool names to map Claude Code's spelling back.
#[derive(Debug, Clone, Copy, Default)]
pub struct AnthropicMessages;

impl WireApi for AnthropicMessages {
    fn api(&self) -> &'static str {
        apis::ANTHROPIC_MESSAGES
    }

    fn build_request(&self, input: RequestInput<'_>) -> Result<HttpCall, String> {
        build_request(input)
    }

    fn decoder(&self, model: &Model) -> Box<dyn StreamDecoder> {
        Box::new(decode::AnthropicDecoder::new(model))
    }

    fn decoder_for(&self, input: &RequestInput<'_>) -> Box<dyn StreamDecoder> {
        match request::Auth::detect(input.model, input.api_key) {
            request::Auth::OauthToken => Box::new(decode::AnthropicDecoder::with_oauth_tools(
                input.model,
                input.context.tools.iter().map(|t| t.name.clone()).collect(),
            )),
            _ => self.decoder(input.model),
        }
    }
}

/// The auth kind shapes both the headers and the body, so it is detected once.
fn build_request(input: RequestInput<'_>) -> Result<HttpCall, String> {
    let auth = request::Auth::detect(input.model, input.api_key);
    Ok(HttpCall::sse(
        request::url(input.model),
        request::headers(
            input.model,
            input.context,
            input.options,
            input.api_key,
            auth,
        ),
        request::body(input.model, input.context, input.options, auth),
    ))
}

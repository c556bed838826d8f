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

use crate::http::HttpCall;
use crate::model::apis;
use crate::providers::RequestInput;

pub(crate) use request::f32_to_json;

wire_api! {
    /// The `anthropic-messages` wire API.
    AnthropicMessages: apis::ANTHROPIC_MESSAGES => build_request, decode::AnthropicDecoder::new
}

/// The auth kind shapes both the headers and the body, so it is detected once.
fn build_request(input: RequestInput<'_>) -> Result<HttpCall, String> {
    let auth = request::Auth::detect(input.model, input.api_key);
    Ok(HttpCall::sse(
        request::url(input.model),
        request::headers(input.model, input.options, input.api_key, auth),
        request::body(input.model, input.context, input.options, auth),
    ))
}

//! The `google-generative-ai` wire API (Gemini's `streamGenerateContent`, SSE), with
//! pi-ai's semantics: message conversion with thought-signature replay, tool schemas in
//! Gemini's OpenAPI subset, and thinking levels (Gemini 3) or budgets (Gemini 2.5).
//!
//! - [`request`](self::request): URL, headers and body.
//! - [`decode`](self::decode): the stream decoder.
//! - [`schema`](self::schema): JSON Schema → Gemini schema ([`gemini_schema`]).
//! - [`vertex`] (`google-vertex`) and [`gemini_cli`] (`google-gemini-cli`): the same body and
//!   stream on Vertex AI and on Cloud Code Assist; [`adc`]: Vertex's credentials.

pub mod adc;
mod decode;
pub mod gemini_cli;
mod request;
mod schema;
pub mod vertex;

pub use gemini_cli::GoogleGeminiCli;
pub use vertex::{GoogleVertex, VertexSettings};

#[cfg(test)]
mod tests;

pub(crate) use schema::gemini_schema;

use crate::http::HttpCall;
use crate::model::apis;
use crate::providers::RequestInput;

wire_api! {
    /// The `google-generative-ai` wire API.
    GoogleGenerativeAi: apis::GOOGLE_GENERATIVE_AI => build_request, decode::GoogleDecoder::new
}

fn build_request(input: RequestInput<'_>) -> Result<HttpCall, String> {
    Ok(HttpCall::sse(
        request::url(input.model),
        request::headers(input.model, input.options, input.api_key),
        request::body(input.model, input.context, input.options),
    ))
}

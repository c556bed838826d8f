//! The `google-generative-ai` wire API (Gemini's `streamGenerateContent`, SSE), with
//! pi-ai's semantics: message conversion with thought-signature replay, tool schemas in
//! Gemini's OpenAPI subset, and thinking levels (Gemini 3) or budgets (Gemini 2.5).
//!
//! - [`request`](self::request): URL, headers and body.
//! - [`decode`](self::decode): the stream decoder.
//! - [`schema`](self::schema): JSON Schema → Gemini schema ([`gemini_schema`]).

mod decode;
mod request;
mod schema;

#[cfg(test)]
mod tests;

pub(crate) use schema::gemini_schema;

use crate::http::{Framing, HttpCall, StreamDecoder};
use crate::model::{Model, apis};
use crate::providers::{RequestInput, WireApi};

/// The `google-generative-ai` wire API.
#[derive(Debug, Clone, Copy, Default)]
pub struct GoogleGenerativeAi;

impl WireApi for GoogleGenerativeAi {
    fn api(&self) -> &'static str {
        apis::GOOGLE_GENERATIVE_AI
    }

    fn build_request(&self, input: RequestInput<'_>) -> Result<HttpCall, String> {
        Ok(HttpCall {
            url: request::url(input.model),
            headers: request::headers(input.model, input.options, input.api_key),
            body: request::body(input.model, input.context, input.options),
            framing: Framing::Sse,
        })
    }

    fn decoder(&self, model: &Model) -> Box<dyn StreamDecoder> {
        Box::new(decode::GoogleDecoder::new(model.reference()))
    }
}

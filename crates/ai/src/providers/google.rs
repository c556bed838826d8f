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
use crate::options::StreamOptions;
use crate::providers::WireApi;
use crate::types::Context;

/// The `google-generative-ai` wire API.
#[derive(Debug, Clone, Copy, Default)]
pub struct GoogleGenerativeAi;

impl WireApi for GoogleGenerativeAi {
    fn api(&self) -> &'static str {
        apis::GOOGLE_GENERATIVE_AI
    }

    fn build_request(
        &self,
        model: &Model,
        context: &Context,
        options: &StreamOptions,
        api_key: Option<&str>,
    ) -> Result<HttpCall, String> {
        Ok(HttpCall {
            url: request::url(model),
            headers: request::headers(model, options, api_key),
            body: request::body(model, context, options),
            framing: Framing::Sse,
        })
    }

    fn decoder(&self, model: &Model) -> Box<dyn StreamDecoder> {
        Box::new(decode::GoogleDecoder::new(model.reference()))
    }
}

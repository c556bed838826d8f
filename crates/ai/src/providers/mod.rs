//! Built-in wire APIs. Each HTTP API is a [`WireApi`]: it builds the request and makes a
//! decoder; [`HttpProvider`] adds key checks and runs it on the shared driver.

use std::sync::Arc;

use crate::client::LazyHttpClient;

use crate::error::ErrorKind;
use crate::event::AssistantStream;
use crate::http::{HttpCall, StreamDecoder, failed_stream, spawn_http_stream};
use crate::model::Model;
use crate::options::StreamOptions;
use crate::registry::ApiProvider;
use crate::types::Context;

/// Declares a built-in HTTP wire API: the unit struct `$wire` whose [`WireApi`] impl
/// answers to `$api`, builds each request with `$build` (a
/// `fn(RequestInput) -> Result<HttpCall, String>`) and decodes every response with a fresh
/// `$decoder(model)` (a `fn(&Model) -> impl StreamDecoder`). The built-in APIs differ in
/// exactly these three choices, so each module states them once here.
macro_rules! wire_api {
    ($(#[$doc:meta])* $wire:ident: $api:expr => $build:path, $decoder:path) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, Default)]
        pub struct $wire;

        impl $crate::providers::WireApi for $wire {
            fn api(&self) -> &'static str {
                $api
            }

            fn build_request(
                &self,
                input: $crate::providers::RequestInput<'_>,
            ) -> Result<$crate::http::HttpCall, String> {
                $build(input)
            }

            fn decoder(
                &self,
                model: &$crate::model::Model,
            ) -> Box<dyn $crate::http::StreamDecoder> {
                Box::new($decoder(model))
            }
        }
    };
}

pub mod anthropic;
pub mod bedrock;
mod borrowed_str;
pub mod copilot;
pub mod google;
pub mod openai_completions;
pub mod openai_responses;
mod openai_shared;
pub mod proxy;
pub mod stub;

/// One HTTP wire protocol: how to build a request and how to decode its stream.
pub trait WireApi: Send + Sync + 'static {
    /// The API name (`model.api`).
    fn api(&self) -> &'static str;

    /// Build the request. `api_key` is the resolved key (None for keyless local servers).
    /// An `Err` is a configuration problem reported to the user as-is.
    fn build_request(&self, input: RequestInput<'_>) -> Result<HttpCall, String>;

    /// A fresh decoder for one response.
    fn decoder(&self, model: &Model) -> Box<dyn StreamDecoder>;

    /// A fresh decoder for the response to the request built from `input` (an API whose
    /// decoding depends on the request — Anthropic's OAuth tool names — overrides this).
    fn decoder_for(&self, input: &RequestInput<'_>) -> Box<dyn StreamDecoder> {
        self.decoder(input.model)
    }
}

/// What [`WireApi::build_request`] builds one request from.
#[derive(Clone, Copy)]
pub struct RequestInput<'a> {
    pub model: &'a Model,
    pub context: &'a Context,
    pub options: &'a StreamOptions,
    /// The resolved key (None for keyless local servers).
    pub api_key: Option<&'a str>,
}

/// Runs a [`WireApi`] over HTTP.
pub struct HttpProvider<W> {
    wire: W,
    client: LazyHttpClient,
}

impl<W: WireApi> HttpProvider<W> {
    pub fn new(wire: W, client: impl Into<LazyHttpClient>) -> Self {
        Self {
            wire,
            client: client.into(),
        }
    }
}

impl<W: WireApi> ApiProvider for HttpProvider<W> {
    fn api(&self) -> &str {
        self.wire.api()
    }

    fn stream(&self, model: &Model, context: &Context, options: StreamOptions) -> AssistantStream {
        let key = options.api_key.clone();
        let vars = crate::env::api_key_vars(&model.provider);
        if key.is_none() && !vars.is_empty() {
            return failed_stream(
                model,
                ErrorKind::Auth,
                format!(
                    "no API key for provider {}: set {} (or configure a key for it), or use the offline model stub/echo",
                    model.provider,
                    vars.join(" or ")
                ),
            );
        }
        if model.base_url.trim().is_empty() {
            return failed_stream(
                model,
                ErrorKind::Config,
                format!(
                    "{}: the model has no baseUrl; set one in the models configuration",
                    model.reference()
                ),
            );
        }
        // GitHub Copilot: the token names the API host to use (its `proxy-ep`).
        let copilot_model = copilot::with_token_base_url(model, key.as_deref());
        let model = copilot_model.as_ref().unwrap_or(model);
        let input = RequestInput {
            model,
            context,
            options: &options,
            api_key: key.as_deref(),
        };
        match self.wire.build_request(input) {
            Ok(call) => spawn_http_stream(
                self.client.get().clone(),
                model.clone(),
                call,
                self.wire.decoder_for(&input),
                options,
            ),
            Err(message) => failed_stream(
                model,
                ErrorKind::Config,
                format!("{}: cannot build request: {message}", model.reference()),
            ),
        }
    }
}

/// Every built-in API.
pub fn builtins(client: impl Into<LazyHttpClient>) -> Vec<Arc<dyn ApiProvider>> {
    let client = client.into();
    vec![
        http(openai_completions::OpenAiCompletions, &client),
        http(openai_responses::OpenAiResponses, &client),
        http(openai_responses::OpenAiCodexResponses, &client),
        Arc::new(openai_responses::AzureOpenAiResponses::from_process_env(
            client.clone(),
        )),
        http(anthropic::AnthropicMessages, &client),
        http(google::GoogleGenerativeAi, &client),
        http(google::GoogleGeminiCli, &client),
        Arc::new(google::GoogleVertex::new(client.clone())),
        // Credentials from the process environment; `LlmClient::with_env` swaps in its own.
        Arc::new(bedrock::BedrockProvider::new(
            client.clone(),
            Arc::new(crate::env::ProcessEnv),
        )),
        Arc::new(stub::StubProvider),
    ]
}

/// `wire` run over HTTP with `client`.
fn http<W: WireApi>(wire: W, client: &LazyHttpClient) -> Arc<dyn ApiProvider> {
    Arc::new(HttpProvider::new(wire, client.clone()))
}

/// Join a base URL and a path without doubling or losing the slash.
pub(crate) fn join_url(base: &str, path: &str) -> String {
    format!(
        "{}/{}",
        base.trim_end_matches('/'),
        path.trim_start_matches('/')
    )
}

/// Headers every request carries: JSON body, the model's headers, then the caller's.
pub(crate) fn common_headers(model: &Model, options: &StreamOptions) -> Vec<(String, String)> {
    let mut headers = vec![
        ("content-type".to_owned(), "application/json".to_owned()),
        ("accept".to_owned(), "text/event-stream".to_owned()),
    ];
    let extra = model.headers.iter().flatten().chain(options.headers.iter());
    for (name, value) in extra {
        headers.retain(|(n, _)| !n.eq_ignore_ascii_case(name));
        headers.push((name.clone(), value.clone()));
    }
    headers
}

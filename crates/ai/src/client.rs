//! `LlmClient`: the front door. Resolves the API implementation and the API key for a
//! model, then streams (pi's `stream` / `complete`).

use std::collections::HashMap;
use std::sync::{Arc, OnceLock, RwLock};

use crate::env::{EnvSource, ProcessEnv, env_api_key};
use crate::error::{AiError, ErrorKind};
use crate::event::AssistantStream;
use crate::http::failed_stream;
use crate::model::Model;
use crate::options::StreamOptions;
use crate::registry::ApiRegistry;
use crate::types::{AssistantMessage, Context};

/// Streams replies from any registered API, with keys from options, configuration or env.
#[derive(Clone)]
pub struct LlmClient {
    apis: Arc<ApiRegistry>,
    env: Arc<dyn EnvSource>,
    /// Keys configured per provider (auth profiles, custom providers), which win over env.
    keys: Arc<RwLock<HashMap<String, String>>>,
}

impl std::fmt::Debug for LlmClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LlmClient")
            .field("apis", &self.apis)
            .finish_non_exhaustive()
    }
}

impl Default for LlmClient {
    fn default() -> Self {
        Self::new()
    }
}

impl LlmClient {
    /// Built-in APIs and the process environment.
    pub fn new() -> Self {
        Self::with_env(Arc::new(ProcessEnv))
    }

    /// Built-in APIs and the given environment. The HTTP client is built on first use.
    pub fn with_env(env: Arc<dyn EnvSource>) -> Self {
        let http = LazyHttpClient::new();
        let apis = ApiRegistry::with_builtins(http.clone());
        // Azure reads its endpoint, version and Entra settings from the same environment.
        apis.register(
            Arc::new(
                crate::providers::openai_responses::AzureOpenAiResponses::new(
                    Arc::clone(&env),
                    http.clone(),
                ),
            ),
            None,
        );
        // Bedrock's credential chain reads the same environment (AWS_PROFILE, …).
        apis.register(
            Arc::new(crate::providers::bedrock::BedrockProvider::new(
                http,
                Arc::clone(&env),
            )),
            None,
        );
        Self::from_parts(Arc::new(apis), env)
    }

    pub fn from_parts(apis: Arc<ApiRegistry>, env: Arc<dyn EnvSource>) -> Self {
        Self {
            apis,
            env,
            keys: Arc::default(),
        }
    }

    pub fn apis(&self) -> &ApiRegistry {
        &self.apis
    }

    /// Configure the key for a provider (wins over the environment).
    pub fn set_api_key(&self, provider: &str, key: impl Into<String>) {
        self.keys
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .insert(provider.to_owned(), key.into());
    }

    /// The key that would be used for `provider`: configured, then environment.
    pub fn api_key(&self, provider: &str) -> Option<String> {
        let configured = self
            .keys
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .get(provider)
            .cloned();
        configured.or_else(|| env_api_key(self.env.as_ref(), provider))
    }

    /// Stream a reply. Never fails synchronously: problems arrive as the `error` event.
    pub fn stream(
        &self,
        model: &Model,
        context: &Context,
        mut options: StreamOptions,
    ) -> AssistantStream {
        let Some(api) = self.apis.get(&model.api) else {
            return failed_stream(
                model,
                ErrorKind::Config,
                format!(
                    "model {} uses API \"{}\", which Pincer does not know; known APIs: {}",
                    model.reference(),
                    model.api,
                    self.apis.apis().join(", ")
                ),
            );
        };
        if options.api_key.is_none() {
            options.api_key = self.api_key(&model.provider);
        }
        api.stream(model, context, options)
    }

    /// Stream to the end and return the reply (or the failure, with the partial reply).
    pub async fn complete(
        &self,
        model: &Model,
        context: &Context,
        options: StreamOptions,
    ) -> Result<AssistantMessage, AiError> {
        self.stream(model, context, options).complete().await
    }
}

/// The HTTP client the built-in providers share, built on first use: building one sets up
/// TLS and reads the system's CA certificates (milliseconds), which a run answered by the
/// offline stub — or any command that never calls a model — should not pay for.
#[derive(Debug, Clone, Default)]
pub struct LazyHttpClient(Arc<OnceLock<reqwest::Client>>);

impl LazyHttpClient {
    /// [`default_http_client`], when first needed.
    pub fn new() -> Self {
        Self::default()
    }

    /// The client, building it now if this is the first use.
    pub fn get(&self) -> &reqwest::Client {
        self.0.get_or_init(default_http_client)
    }
}

impl From<reqwest::Client> for LazyHttpClient {
    fn from(client: reqwest::Client) -> Self {
        Self(Arc::new(OnceLock::from(client)))
    }
}

/// The HTTP client built-in providers share: rustls, no cookies, HTTP/2 when offered.
pub fn default_http_client() -> reqwest::Client {
    reqwest::Client::builder()
        .user_agent(concat!("pincer/", env!("CARGO_PKG_VERSION")))
        .connect_timeout(std::time::Duration::from_secs(30))
        .build()
        // Building only fails when the TLS backend cannot initialise; a default client is
        // the best remaining option and reports the same problem on first use.
        .unwrap_or_default()
}

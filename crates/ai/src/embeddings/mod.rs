//! Embedding providers over pincer-ai's HTTP conventions: an [`EmbeddingClient`] that turns
//! texts into vectors through an OpenAI-compatible `POST {baseUrl}/embeddings`, Gemini's
//! `POST {baseUrl}/models/{model}:batchEmbedContents` or Ollama's `POST {baseUrl}/api/embed`.
//! It owns batching (each provider's limit), retries with `Retry-After` (like the chat
//! driver), error classification ([`ErrorKind`]) and checking the answer's shape: one finite
//! vector per text, all of one length. It never panics on server input and never shows an
//! API key, in errors or in `Debug` output.

mod transport;
pub mod wire;

use pincer_base::Secret;
use std::collections::BTreeMap;
use std::fmt;
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use crate::error::ErrorKind;
use crate::options::RetryPolicy;

/// The wire protocol of an embedding provider.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EmbeddingProvider {
    /// OpenAI and compatible servers (`/embeddings`, bearer key).
    OpenAi,
    /// Google Gemini (`:batchEmbedContents`, `x-goog-api-key`).
    Gemini,
    /// Ollama (`/api/embed`, no key).
    Ollama,
}

impl EmbeddingProvider {
    /// Short name used in ids, labels and logs.
    pub fn name(self) -> &'static str {
        match self {
            Self::OpenAi => "openai",
            Self::Gemini => "gemini",
            Self::Ollama => "ollama",
        }
    }

    /// The catalog provider whose key it uses (for [`crate::env::env_api_key`]).
    pub fn key_provider(self) -> &'static str {
        match self {
            Self::OpenAi => "openai",
            Self::Gemini => "google",
            Self::Ollama => "ollama",
        }
    }

    /// The base URL when none is configured.
    pub fn default_base_url(self) -> &'static str {
        match self {
            Self::OpenAi => "https://api.openai.com/v1",
            Self::Gemini => "https://generativelanguage.googleapis.com/v1beta",
            Self::Ollama => "http://127.0.0.1:11434",
        }
    }

    /// Most texts one request may carry (OpenAI: 2048 inputs; Gemini: 100 requests per
    /// batch; Ollama documents no limit, so a size that keeps one answer reasonable).
    pub fn max_batch(self) -> usize {
        match self {
            Self::OpenAi => 2048,
            Self::Gemini => 100,
            Self::Ollama => 256,
        }
    }

    /// Whether a call without an API key cannot succeed.
    pub fn needs_key(self) -> bool {
        !matches!(self, Self::Ollama)
    }
}

/// Settings of one embedding model. `Debug` is derived: the key and the header values
/// (which may carry credentials) are [`Secret`]s and print as `Secret(***)`.
#[derive(Debug, Clone, PartialEq)]
pub struct EmbeddingConfig {
    pub provider: EmbeddingProvider,
    /// The model name (`text-embedding-3-small`, `gemini-embedding-001`, `nomic-embed-text`).
    pub model: String,
    /// Overrides [`EmbeddingProvider::default_base_url`]; a trailing `/` is ignored.
    pub base_url: Option<String>,
    /// Sent as `Authorization: Bearer` (OpenAI, Ollama) or `x-goog-api-key` (Gemini).
    pub api_key: Option<Secret>,
    /// Asked-for vector length (`dimensions` / `outputDimensionality`); answers must match.
    pub dimensions: Option<u32>,
    /// Gemini's `taskType` (e.g. `RETRIEVAL_DOCUMENT`).
    pub task_type: Option<String>,
    /// Extra HTTP headers.
    pub headers: BTreeMap<String, Secret>,
    /// Texts per request; capped at the provider's [`EmbeddingProvider::max_batch`].
    pub batch_size: Option<usize>,
    pub retry: RetryPolicy,
    /// Limit on one HTTP request, answer included (default 60 s).
    pub timeout: Option<Duration>,
}

impl EmbeddingConfig {
    pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);

    /// A configuration with defaults for everything but the provider and model.
    pub fn new(provider: EmbeddingProvider, model: impl Into<String>) -> Self {
        Self {
            provider,
            model: model.into(),
            base_url: None,
            api_key: None,
            dimensions: None,
            task_type: None,
            headers: BTreeMap::new(),
            batch_size: None,
            retry: RetryPolicy::default(),
            timeout: None,
        }
    }

    /// The base URL in use, without a trailing `/`.
    pub fn base_url(&self) -> &str {
        self.base_url
            .as_deref()
            .unwrap_or(self.provider.default_base_url())
            .trim_end_matches('/')
    }

    fn batch_size(&self) -> usize {
        self.batch_size
            .unwrap_or(usize::MAX)
            .clamp(1, self.provider.max_batch())
    }
}

/// A failed embedding call: what kind of failure (as for chat calls) and a message a user can
/// act on. A server answer of the wrong shape is [`ErrorKind::Protocol`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct EmbeddingError {
    pub kind: ErrorKind,
    pub message: String,
}

impl EmbeddingError {
    pub(crate) fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        Self {
            kind,
            message: message.into(),
        }
    }

    /// The server answered, but not one vector of the right size per text.
    pub fn is_wrong_answer(&self) -> bool {
        self.kind == ErrorKind::Protocol
    }
}

/// Turns texts into vectors with one configured model.
#[derive(Clone)]
pub struct EmbeddingClient {
    http: reqwest::Client,
    config: EmbeddingConfig,
    id: String,
}

impl fmt::Debug for EmbeddingClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("EmbeddingClient")
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

impl EmbeddingClient {
    /// Checks the configuration (a model name, a key where one is needed, a usable base URL).
    pub fn new(http: reqwest::Client, config: EmbeddingConfig) -> Result<Self, EmbeddingError> {
        let label = format!("{}/{}", config.provider.name(), config.model);
        let config_error = |what: String| EmbeddingError::new(ErrorKind::Config, what);
        if config.model.trim().is_empty() {
            return Err(config_error(format!(
                "embeddings via {}: no model configured",
                config.provider.name()
            )));
        }
        if config.provider.needs_key() && config.api_key.as_ref().is_none_or(Secret::is_empty) {
            return Err(config_error(format!(
                "{label}: no API key for embeddings; set {} or configure one",
                crate::env::api_key_vars(config.provider.key_provider()).join(" or ")
            )));
        }
        let base = config.base_url();
        if !(base.starts_with("http://") || base.starts_with("https://")) {
            return Err(config_error(format!(
                "{label}: the base URL {base:?} is not an http(s) URL"
            )));
        }
        if config.dimensions == Some(0) {
            return Err(config_error(format!(
                "{label}: dimensions must be at least 1"
            )));
        }
        let mut id = label;
        if let Some(dims) = config.dimensions {
            id.push_str(&format!("@{dims}"));
        }
        Ok(Self { http, config, id })
    }

    /// A stable identity of the model and its settings: `{provider}/{model}` plus
    /// `@{dimensions}` when set. When it changes, stored vectors are stale.
    pub fn id(&self) -> &str {
        &self.id
    }

    pub fn config(&self) -> &EmbeddingConfig {
        &self.config
    }

    /// One vector per text, in order, all of one length. Texts are sent in batches of the
    /// provider's limit, one batch after another.
    pub async fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, EmbeddingError> {
        self.embed_with_cancel(texts, &CancellationToken::new())
            .await
    }

    /// [`Self::embed`], ending promptly with [`ErrorKind::Aborted`] when `cancel` fires.
    pub async fn embed_with_cancel(
        &self,
        texts: &[String],
        cancel: &CancellationToken,
    ) -> Result<Vec<Vec<f32>>, EmbeddingError> {
        let mut out: Vec<Vec<f32>> = Vec::with_capacity(texts.len());
        let expected_dims = self.config.dimensions.map(|d| d as usize);
        for batch in texts.chunks(self.config.batch_size()) {
            let call = wire::request(&self.config, batch);
            let body = transport::send(&self.http, &self.config, &self.id, call, cancel).await?;
            // Later batches must match the first one's length even when none was asked for.
            let dims = expected_dims.or_else(|| out.first().map(Vec::len));
            let vectors = wire::decode(self.config.provider, &body, batch.len(), dims)
                .map_err(|e| EmbeddingError::new(e.kind, format!("{}: {}", self.id, e.message)))?;
            out.extend(vectors);
        }
        Ok(out)
    }
}

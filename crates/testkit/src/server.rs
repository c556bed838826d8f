//! `MockLlm`: binding, serving and shutting down the mock server, and the log of requests it
//! received.

use std::net::{Ipv4Addr, SocketAddr};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::api::Api;
use crate::engine::Script;
use crate::handlers;
use crate::scenario::{Scenario, ScenarioError};

/// How long `shutdown` waits for open connections before dropping them.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(5);

/// One request the server received (protocol endpoints only).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RecordedRequest {
    /// HTTP method.
    pub method: String,
    /// URL path.
    pub path: String,
    /// Raw query string.
    pub query: Option<String>,
    /// Headers in arrival order, names lowercased.
    pub headers: Vec<(String, String)>,
    /// The JSON body; a string when it was not JSON, null when empty.
    pub body: Value,
    /// The protocol of the endpoint.
    pub api: Api,
}

impl RecordedRequest {
    /// The first value of header `name` (case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(key, _)| key.eq_ignore_ascii_case(name))
            .map(|(_, value)| value.as_str())
    }
}

/// Why the server could not start or stopped badly.
#[derive(Debug, thiserror::Error)]
pub enum MockError {
    /// The scenario failed validation.
    #[error(transparent)]
    Scenario(#[from] ScenarioError),
    /// The address could not be bound.
    #[error("cannot bind {addr}: {source}")]
    Bind {
        /// The address.
        addr: SocketAddr,
        /// The I/O error.
        source: std::io::Error,
    },
    /// Serving failed.
    #[error("mock server failed: {0}")]
    Serve(std::io::Error),
}

/// State shared by all handlers.
pub(crate) struct AppState {
    pub script: Script,
    pub cancel: CancellationToken,
    recorded: Mutex<Vec<RecordedRequest>>,
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl AppState {
    pub fn record(&self, request: RecordedRequest) {
        lock(&self.recorded).push(request);
    }

    pub fn requests(&self) -> Vec<RecordedRequest> {
        lock(&self.recorded).clone()
    }

    pub fn clear_requests(&self) {
        lock(&self.recorded).clear();
    }
}

/// A running mock LLM server on a loopback port. Shuts down on drop.
pub struct MockLlm {
    addr: SocketAddr,
    state: Arc<AppState>,
    task: Option<JoinHandle<std::io::Result<()>>>,
}

/// Binds `addr` (port 0 picks a free port): the listener and the address it got.
pub(crate) async fn bind(
    addr: SocketAddr,
) -> std::io::Result<(tokio::net::TcpListener, SocketAddr)> {
    let listener = tokio::net::TcpListener::bind(addr).await?;
    let bound = listener.local_addr()?;
    Ok((listener, bound))
}

impl MockLlm {
    /// Validates `scenario` and serves it on `127.0.0.1` with a free port.
    pub async fn start(scenario: Scenario) -> Result<Self, MockError> {
        Self::start_on(scenario, SocketAddr::from((Ipv4Addr::LOCALHOST, 0))).await
    }

    /// Validates `scenario` and serves it on `addr` (port 0 picks a free port).
    pub async fn start_on(scenario: Scenario, addr: SocketAddr) -> Result<Self, MockError> {
        scenario.validate()?;
        let (listener, addr) = crate::server::bind(addr)
            .await
            .map_err(|source| MockError::Bind { addr, source })?;
        let cancel = CancellationToken::new();
        let state = Arc::new(AppState {
            script: Script::new(scenario),
            cancel: cancel.clone(),
            recorded: Mutex::new(Vec::new()),
        });
        let app = handlers::router(state.clone());
        let task = tokio::spawn(async move {
            axum::serve(listener, app)
                .with_graceful_shutdown(cancel.cancelled_owned())
                .await
        });
        Ok(Self {
            addr,
            state,
            task: Some(task),
        })
    }

    /// `http://127.0.0.1:PORT`, the base of every endpoint.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The base URL a client of `api` is configured with: `{url}/v1` for both OpenAI APIs,
    /// `{url}` for Anthropic and the proxy, `{url}/v1beta` for Google; the embedding
    /// endpoints likewise (`{url}/v1`, `{url}/v1beta`, and `{url}` for Ollama).
    pub fn base_url(&self, api: Api) -> String {
        match api {
            Api::OpenAiCompletions
            | Api::OpenAiResponses
            | Api::OpenAiEmbeddings
            | Api::OpenAiTranscriptions => {
                format!("{}/v1", self.url())
            }
            Api::GoogleGenerativeAi | Api::GoogleEmbeddings => format!("{}/v1beta", self.url()),
            Api::AnthropicMessages
            | Api::Proxy
            | Api::OllamaEmbeddings
            | Api::BedrockConverseStream => self.url(),
        }
    }

    /// The base URL of an Azure OpenAI resource on this server (`{url}/openai/v1`); its
    /// Entra ID token endpoint's authority is [`MockLlm::url`].
    pub fn azure_base_url(&self) -> String {
        format!("{}/openai/v1", self.url())
    }

    /// The bound address.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The requests received so far, oldest first.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        self.state.requests()
    }

    /// Forgets the recorded requests.
    pub fn clear_requests(&self) {
        self.state.clear_requests();
    }

    /// Stops accepting, ends open streams and waits (up to 5 s) for connections to close.
    pub async fn shutdown(mut self) -> Result<(), MockError> {
        self.state.cancel.cancel();
        let Some(mut task) = self.task.take() else {
            return Ok(());
        };
        match tokio::time::timeout(SHUTDOWN_GRACE, &mut task).await {
            Ok(Ok(result)) => result.map_err(MockError::Serve),
            Ok(Err(join)) => Err(MockError::Serve(std::io::Error::other(join))),
            Err(_) => {
                task.abort();
                Ok(())
            }
        }
    }
}

impl Drop for MockLlm {
    fn drop(&mut self) {
        self.state.cancel.cancel();
    }
}

impl std::fmt::Debug for MockLlm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MockLlm").field("addr", &self.addr).finish()
    }
}

//! A fake of the four web search APIs `web_search` speaks, on one server on 127.0.0.1,
//! answering with their real shapes: Brave (`GET /res/v1/web/search`, key in
//! `X-Subscription-Token`), Tavily (`POST /search`, `Authorization: Bearer`), Perplexity
//! Sonar (`POST /chat/completions`, `Authorization: Bearer`) and SearXNG
//! (`GET /search?format=json`, no key). Tavily and SearXNG share `/search`: the method tells
//! them apart, as their real hosts never collide.
//!
//! Every request is recorded (method, path, query string, headers, body). Results are
//! canned (`Result 1 for <query>`, …) unless scripted per query; faults (a status with an
//! optional `Retry-After`, a garbage body, a slow answer) can be queued for the next
//! requests. A missing or wrong key gets the provider's real 401 answer.

mod shapes;

use std::collections::{HashMap, VecDeque};
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, Method, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use serde_json::Value;
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

pub use shapes::FakeProvider;

/// The keys the fake accepts.
#[derive(Debug, Clone)]
pub struct FakeSearchConfig {
    pub brave_key: String,
    pub tavily_key: String,
    pub perplexity_key: String,
}

impl Default for FakeSearchConfig {
    fn default() -> Self {
        Self {
            brave_key: "brave-test-key".to_owned(),
            tavily_key: "tvly-test-key".to_owned(),
            perplexity_key: "pplx-test-key".to_owned(),
        }
    }
}

/// One result a script returns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FakeHit {
    pub title: String,
    pub url: String,
    pub snippet: String,
    /// Brave's `age`, Tavily's `published_date`, SearXNG's `publishedDate`, Perplexity's `date`.
    pub age: Option<String>,
}

impl FakeHit {
    pub fn new(title: &str, url: &str, snippet: &str) -> Self {
        Self {
            title: title.to_owned(),
            url: url.to_owned(),
            snippet: snippet.to_owned(),
            age: None,
        }
    }

    pub fn with_age(mut self, age: &str) -> Self {
        self.age = Some(age.to_owned());
        self
    }
}

/// What a query returns instead of the canned results.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Script {
    /// The results (empty: the provider's "nothing found" answer).
    pub results: Vec<FakeHit>,
    /// Tavily's `answer` / Perplexity's message (canned when `None`).
    pub answer: Option<String>,
}

/// A fault for the next request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fault {
    /// This status, with `Retry-After: retry_after` when given, and `body`.
    Status {
        status: u16,
        retry_after: Option<String>,
        body: String,
    },
    /// 200 with this body as `application/json`.
    Garbage(String),
    /// The real answer, after this long.
    Slow(Duration),
}

impl Fault {
    /// `status` with an empty JSON object as its body.
    pub fn status(status: u16) -> Self {
        Self::Status {
            status,
            retry_after: None,
            body: "{}".to_owned(),
        }
    }

    /// 429 with `Retry-After: seconds`.
    pub fn rate_limited(seconds: u64) -> Self {
        Self::Status {
            status: 429,
            retry_after: Some(seconds.to_string()),
            body: "{}".to_owned(),
        }
    }
}

/// A request the fake received.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordedRequest {
    pub method: String,
    pub path: String,
    /// The raw query string ("" when none).
    pub query: String,
    /// Header names in lower case, in arrival order.
    pub headers: Vec<(String, String)>,
    pub body: String,
}

impl RecordedRequest {
    /// The first header `name` (any case).
    pub fn header(&self, name: &str) -> Option<&str> {
        let name = name.to_ascii_lowercase();
        self.headers
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| v.as_str())
    }

    /// The query string decoded, in order.
    pub fn query_pairs(&self) -> Vec<(String, String)> {
        form_urlencoded::parse(self.query.as_bytes())
            .into_owned()
            .collect()
    }

    /// The body as JSON (`Value::Null` when it is not).
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or(Value::Null)
    }
}

#[derive(Default)]
struct Inner {
    scripts: HashMap<String, Script>,
    requests: Vec<RecordedRequest>,
    faults: VecDeque<Fault>,
}

struct Shared {
    config: FakeSearchConfig,
    inner: Mutex<Inner>,
    stop: CancellationToken,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// Why the fake could not start.
#[derive(Debug, thiserror::Error)]
#[error("cannot bind 127.0.0.1 for the fake search server: {0}")]
pub struct FakeSearchError(#[from] std::io::Error);

/// The fake search server; stops when dropped (or on [`FakeSearch::shutdown`]).
pub struct FakeSearch {
    addr: SocketAddr,
    shared: Arc<Shared>,
}

impl std::fmt::Debug for FakeSearch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FakeSearch")
            .field("addr", &self.addr)
            .finish_non_exhaustive()
    }
}

impl FakeSearch {
    /// Serves the default keys on a free loopback port.
    ///
    /// # Panics
    /// If no loopback port can be bound (`try_start_with` says why instead).
    pub async fn start() -> Self {
        Self::start_with(FakeSearchConfig::default()).await
    }

    /// Serves `config`.
    ///
    /// # Panics
    /// If no loopback port can be bound.
    pub async fn start_with(config: FakeSearchConfig) -> Self {
        match Self::try_start_with(config).await {
            Ok(fake) => fake,
            Err(err) => panic!("{err}"),
        }
    }

    pub async fn try_start_with(config: FakeSearchConfig) -> Result<Self, FakeSearchError> {
        let listener = TcpListener::bind(("127.0.0.1", 0)).await?;
        let addr = listener.local_addr()?;
        let shared = Arc::new(Shared {
            config,
            inner: Mutex::new(Inner::default()),
            stop: CancellationToken::new(),
        });
        let app = Router::new().fallback(handle).with_state(shared.clone());
        let stop = shared.stop.clone();
        tokio::spawn(async move {
            let _ = axum::serve(listener, app)
                .with_graceful_shutdown(stop.cancelled_owned())
                .await;
        });
        Ok(Self { addr, shared })
    }

    /// `http://127.0.0.1:PORT`: every provider's base URL.
    pub fn base_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The configured keys.
    pub fn config(&self) -> &FakeSearchConfig {
        &self.shared.config
    }

    /// Stops serving; requests in flight end.
    pub fn shutdown(&self) {
        self.shared.stop.cancel();
    }

    /// `query` returns `results` (empty: nothing found) from every provider.
    pub fn script(&self, query: &str, results: Vec<FakeHit>) {
        self.shared
            .lock()
            .scripts
            .entry(query.to_owned())
            .or_default()
            .results = results;
    }

    /// `query` returns `results` and Tavily's / Perplexity's answer `answer`.
    pub fn script_answer(&self, query: &str, answer: &str, results: Vec<FakeHit>) {
        self.shared.lock().scripts.insert(
            query.to_owned(),
            Script {
                results,
                answer: Some(answer.to_owned()),
            },
        );
    }

    /// The next `n` requests get `fault` (queued after any already waiting).
    pub fn fail_next(&self, n: usize, fault: Fault) {
        let mut inner = self.shared.lock();
        inner.faults.extend(std::iter::repeat_n(fault, n));
    }

    /// Every request so far, oldest first.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        self.shared.lock().requests.clone()
    }

    /// How many requests arrived.
    pub fn request_count(&self) -> usize {
        self.shared.lock().requests.len()
    }
}

impl Drop for FakeSearch {
    fn drop(&mut self) {
        self.shared.stop.cancel();
    }
}

async fn handle(
    State(shared): State<Arc<Shared>>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let recorded = RecordedRequest {
        method: method.to_string(),
        path: uri.path().to_owned(),
        query: uri.query().unwrap_or_default().to_owned(),
        headers: headers
            .iter()
            .map(|(n, v)| {
                (
                    n.as_str().to_owned(),
                    String::from_utf8_lossy(v.as_bytes()).into_owned(),
                )
            })
            .collect(),
        body: String::from_utf8_lossy(&body).into_owned(),
    };
    let fault = {
        let mut inner = shared.lock();
        inner.requests.push(recorded.clone());
        inner.faults.pop_front()
    };
    match fault {
        Some(Fault::Status {
            status,
            retry_after,
            body,
        }) => {
            let status = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
            let mut response =
                (status, [(header::CONTENT_TYPE, "application/json")], body).into_response();
            if let Some(after) = retry_after.and_then(|a| a.parse().ok()) {
                response.headers_mut().insert(header::RETRY_AFTER, after);
            }
            return response;
        }
        Some(Fault::Garbage(body)) => {
            return (
                StatusCode::OK,
                [(header::CONTENT_TYPE, "application/json")],
                body,
            )
                .into_response();
        }
        Some(Fault::Slow(wait)) => {
            tokio::select! {
                () = tokio::time::sleep(wait) => {}
                () = shared.stop.cancelled() => {
                    return StatusCode::SERVICE_UNAVAILABLE.into_response();
                }
            }
        }
        None => {}
    }
    let Some(provider) = FakeProvider::route(&method, uri.path()) else {
        return (StatusCode::NOT_FOUND, "no such fake search endpoint").into_response();
    };
    if let Some(refusal) = provider.check_key(&shared.config, &recorded) {
        return refusal;
    }
    let Some(query) = provider.query_of(&recorded) else {
        return (
            StatusCode::BAD_REQUEST,
            [(header::CONTENT_TYPE, "application/json")],
            provider.bad_request_body(),
        )
            .into_response();
    };
    let script = shared.lock().scripts.get(&query).cloned();
    provider.answer(&recorded, &query, script)
}

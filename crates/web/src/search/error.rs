//! Why a search failed, said so the model (and the person reading along) knows what to do
//! next. No message ever holds a key: the details quoted from a provider's error body are
//! cut short and have the key replaced before they get here (see `http::provider_detail`).

use std::time::Duration;

use super::ProviderKind;

/// A failed search.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SearchError {
    /// No provider is configured.
    #[error(
        "web_search is not set up: set tools.web.search.provider (brave, tavily, perplexity or \
         searxng) and its key (BRAVE_API_KEY, TAVILY_API_KEY or PERPLEXITY_API_KEY; SearXNG \
         needs tools.web.search.baseUrl instead)"
    )]
    NotConfigured,
    /// The provider needs a key and has none.
    #[error(
        "web_search uses {} but has no API key: set {}",
        .provider.label(), .provider.key_hint()
    )]
    MissingKey { provider: ProviderKind },
    /// SearXNG without the address of the instance.
    #[error(
        "web_search uses SearXNG but has no instance address: set tools.web.search.baseUrl \
         (or SEARXNG_BASE_URL) to it, e.g. http://localhost:8888"
    )]
    MissingBaseUrl,
    /// The configured base URL cannot be used.
    #[error("tools.web.search.baseUrl {url:?} is not an http or https URL")]
    BadBaseUrl { url: String },
    /// The HTTP client could not be built (TLS roots).
    #[error("web_search cannot start its HTTP client: {0}")]
    Client(String),
    /// The call asked for a filter this provider cannot apply.
    #[error("{what} is not supported by the {} provider: {hint}", .provider.label())]
    Unsupported {
        provider: ProviderKind,
        what: &'static str,
        hint: &'static str,
    },
    /// 401 or 403: the key is wrong, revoked or lacks the plan.
    #[error(
        "the {} API key was refused ({status}{detail}): check {}",
        .provider.label(), .provider.key_hint()
    )]
    KeyRefused {
        provider: ProviderKind,
        status: u16,
        detail: String,
    },
    /// 429 that is not worth waiting for here.
    #[error("{} is limiting the request rate (429{detail}): {}", .provider.label(), retry_hint(*.retry_after))]
    RateLimited {
        provider: ProviderKind,
        retry_after: Option<Duration>,
        detail: String,
    },
    /// 402, Tavily's 432/433, a quota code in a 429: the plan's limit is spent.
    #[error(
        "the {} account is out of quota or credit ({status}{detail}): check its plan and usage \
         limits, or search again later",
        .provider.label()
    )]
    Quota {
        provider: ProviderKind,
        status: u16,
        detail: String,
    },
    /// 5xx, after the retry.
    #[error("{} failed with a server error ({status}{detail}); try again in a minute", .provider.label())]
    Server {
        provider: ProviderKind,
        status: u16,
        detail: String,
    },
    /// Any other refusal (400, 404, 422, a redirect).
    #[error("{} refused the search ({status}{detail})", .provider.label())]
    Rejected {
        provider: ProviderKind,
        status: u16,
        detail: String,
    },
    /// No answer in time.
    #[error("{} did not answer within {} s; try again, or a shorter query", .provider.label(), .timeout.as_secs_f32())]
    Timeout {
        provider: ProviderKind,
        timeout: Duration,
    },
    /// The connection failed.
    #[error("cannot reach {}: {reason}", .provider.label())]
    Unreachable {
        provider: ProviderKind,
        reason: String,
    },
    /// The answer is larger than web_search reads.
    #[error("the {} answer is larger than {limit} bytes, more than web_search reads", .provider.label())]
    TooLarge {
        provider: ProviderKind,
        limit: usize,
    },
    /// Not JSON, or not the provider's shape.
    #[error("{} sent an answer web_search cannot read: {reason}", .provider.label())]
    BadAnswer {
        provider: ProviderKind,
        reason: String,
    },
    /// The search found nothing.
    #[error("no results for {query:?} from {}{note}", .provider.label())]
    NoResults {
        provider: ProviderKind,
        query: String,
        /// Extra context after the sentence, e.g. SearXNG's unresponsive engines.
        note: String,
    },
}

impl SearchError {
    pub(crate) fn bad_answer(provider: ProviderKind, reason: impl Into<String>) -> Self {
        Self::BadAnswer {
            provider,
            reason: reason.into(),
        }
    }

    pub(crate) fn no_results(provider: ProviderKind, query: &str) -> Self {
        Self::NoResults {
            provider,
            query: query.to_owned(),
            note: String::new(),
        }
    }
}

/// When to try again after a 429.
fn retry_hint(after: Option<Duration>) -> String {
    match after.map(|d| d.as_secs()) {
        None => "try again in a minute".to_owned(),
        Some(s) if s < 120 => format!("try again in {s} s"),
        Some(s) if s < 2 * 3600 => format!("try again in {} min", s.div_ceil(60)),
        Some(s) => format!("try again in {} h", s.div_ceil(3600)),
    }
}

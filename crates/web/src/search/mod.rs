//! `web_search`: one [`SearchProvider`] trait and four providers speaking their real APIs —
//! Brave Search (`/res/v1/web/search`), Tavily (`POST /search`), Perplexity Sonar
//! (`POST /chat/completions`) and a self-hosted SearXNG (`/search?format=json`) — plus the
//! tool that asks the configured one ([`web_search_tool`]), a per-session result cache and
//! the one-line status for `pincer doctor` ([`describe_status`]).
//!
//! There is no keyless fallback on purpose: the keyless "search APIs" that exist are HTML
//! result pages (DuckDuckGo's among them) whose terms do not allow automated querying, and
//! scraping them breaks whenever their markup changes. An operator who wants search without
//! a commercial key runs SearXNG, which offers a JSON API meant for programs.

mod brave;
mod error;
mod http;
mod memo;
mod perplexity;
mod render;
mod searxng;
mod tavily;
mod tool;

use std::sync::Arc;
use std::time::Duration;

use futures_util::future::BoxFuture;
use serde::{Deserialize, Serialize};

pub use error::SearchError;
pub use render::{UNTRUSTED_BEGIN, UNTRUSTED_END};
pub use tool::{WebSearchArgs, describe_status, web_search_tool};

/// The search APIs `web_search` speaks (`tools.web.search.provider`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ProviderKind {
    /// Brave Search API: ranked results with snippets.
    Brave,
    /// Tavily: results with extracted content and a short answer.
    Tavily,
    /// Perplexity Sonar: a written answer with numbered sources.
    Perplexity,
    /// A self-hosted SearXNG instance (no key; its `baseUrl` is required).
    Searxng,
}

impl ProviderKind {
    /// Every provider, in the order the docs list them.
    pub const ALL: [ProviderKind; 4] = [Self::Brave, Self::Tavily, Self::Perplexity, Self::Searxng];

    /// The config and serde name: `brave`, `tavily`, `perplexity`, `searxng`.
    pub fn name(self) -> &'static str {
        match self {
            Self::Brave => "brave",
            Self::Tavily => "tavily",
            Self::Perplexity => "perplexity",
            Self::Searxng => "searxng",
        }
    }

    /// The name people know it by.
    pub fn label(self) -> &'static str {
        match self {
            Self::Brave => "Brave",
            Self::Tavily => "Tavily",
            Self::Perplexity => "Perplexity",
            Self::Searxng => "SearXNG",
        }
    }

    /// Environment variables holding the key, first match wins (OpenClaw's names; an
    /// OpenRouter key reaches Perplexity's Sonar models through OpenRouter).
    pub fn env_keys(self) -> &'static [&'static str] {
        match self {
            Self::Brave => &["BRAVE_API_KEY"],
            Self::Tavily => &["TAVILY_API_KEY"],
            Self::Perplexity => &["PERPLEXITY_API_KEY", "OPENROUTER_API_KEY"],
            Self::Searxng => &[],
        }
    }

    /// Environment variable holding the endpoint base when the config names none
    /// (OpenClaw's `SEARXNG_BASE_URL` and `TAVILY_BASE_URL`).
    pub fn env_base_url(self) -> Option<&'static str> {
        match self {
            Self::Tavily => Some("TAVILY_BASE_URL"),
            Self::Searxng => Some("SEARXNG_BASE_URL"),
            Self::Brave | Self::Perplexity => None,
        }
    }

    /// Whether a call needs an API key (all but SearXNG).
    pub fn needs_key(self) -> bool {
        !matches!(self, Self::Searxng)
    }

    /// The public endpoint base (SearXNG has none: it is always self-hosted).
    pub fn default_base_url(self) -> Option<&'static str> {
        match self {
            Self::Brave => Some("https://api.search.brave.com"),
            Self::Tavily => Some("https://api.tavily.com"),
            Self::Perplexity => Some(perplexity::PERPLEXITY_BASE),
            Self::Searxng => None,
        }
    }

    fn key_hint(self) -> String {
        let mut names: Vec<&str> = self.env_keys().to_vec();
        names.push("tools.web.search.apiKey");
        names.join(" or ")
    }
}

impl std::fmt::Display for ProviderKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// How `web_search` reaches its provider (built by the binary from `tools.web.search`).
#[derive(Clone, PartialEq)]
pub struct SearchOptions {
    pub provider: ProviderKind,
    /// The provider's key (the binary resolves the config value, then [`ProviderKind::env_keys`]).
    pub api_key: Option<String>,
    /// Replaces the provider's public endpoint base (`https://api.search.brave.com`, …); the
    /// API paths are appended to it. Required for SearXNG.
    pub base_url: Option<String>,
    /// Perplexity's model (default `sonar`; `perplexity/sonar` with an OpenRouter key).
    pub model: Option<String>,
    /// One HTTP attempt, the body read included.
    pub timeout: Duration,
    /// How long a session reuses the results of the same search (zero: no cache).
    pub cache_ttl: Duration,
    /// Results when the call names no `count` (kept within 1..=10).
    pub default_count: usize,
    /// Retries after a short 429 wait or a 5xx (a 5xx is retried once).
    pub max_retries: u32,
}

impl SearchOptions {
    pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);
    pub const DEFAULT_CACHE_TTL: Duration = Duration::from_secs(15 * 60);
    pub const DEFAULT_COUNT: usize = 5;
    pub const DEFAULT_MAX_RETRIES: u32 = 2;

    /// `provider` with no key, its public endpoint and the defaults above.
    pub fn new(provider: ProviderKind) -> Self {
        Self {
            provider,
            api_key: None,
            base_url: None,
            model: None,
            timeout: Self::DEFAULT_TIMEOUT,
            cache_ttl: Self::DEFAULT_CACHE_TTL,
            default_count: Self::DEFAULT_COUNT,
            max_retries: Self::DEFAULT_MAX_RETRIES,
        }
    }

    /// The key, unless it is missing or blank.
    fn key(&self) -> Option<&str> {
        self.api_key
            .as_deref()
            .map(str::trim)
            .filter(|k| !k.is_empty())
    }

    fn base(&self) -> Option<&str> {
        self.base_url
            .as_deref()
            .map(str::trim)
            .filter(|b| !b.is_empty())
    }
}

// By hand: the key must not reach a log through `{:?}`.
impl std::fmt::Debug for SearchOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SearchOptions")
            .field("provider", &self.provider)
            .field("api_key", &self.key().map(|_| "<set>"))
            .field("base_url", &self.base_url)
            .field("model", &self.model)
            .field("timeout", &self.timeout)
            .field("cache_ttl", &self.cache_ttl)
            .field("default_count", &self.default_count)
            .field("max_retries", &self.max_retries)
            .finish()
    }
}

/// A time filter: the last day/week/month/year, or published between two dates.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Freshness {
    Day,
    Week,
    Month,
    Year,
    /// Inclusive `YYYY-MM-DD` dates, `from <= to`.
    Range {
        from: String,
        to: String,
    },
}

impl Freshness {
    /// `day`/`week`/`month`/`year`, Brave's `pd`/`pw`/`pm`/`py`, or `YYYY-MM-DDtoYYYY-MM-DD`.
    pub fn parse(value: &str) -> Option<Self> {
        let value = value.trim();
        match value.to_ascii_lowercase().as_str() {
            "day" | "pd" => return Some(Self::Day),
            "week" | "pw" => return Some(Self::Week),
            "month" | "pm" => return Some(Self::Month),
            "year" | "py" => return Some(Self::Year),
            _ => {}
        }
        let (from, to) = value.split_once("to")?;
        (valid_date(from) && valid_date(to) && from <= to).then(|| Self::Range {
            from: from.to_owned(),
            to: to.to_owned(),
        })
    }

    /// The word for day/week/month/year (Tavily's `time_range`, Perplexity's recency,
    /// SearXNG's `time_range`); `None` for a range.
    fn word(&self) -> Option<&'static str> {
        match self {
            Self::Day => Some("day"),
            Self::Week => Some("week"),
            Self::Month => Some("month"),
            Self::Year => Some("year"),
            Self::Range { .. } => None,
        }
    }
}

impl std::fmt::Display for Freshness {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Range { from, to } => write!(f, "{from}to{to}"),
            other => f.write_str(other.word().unwrap_or_default()),
        }
    }
}

/// `YYYY-MM-DD` naming a real day.
fn valid_date(date: &str) -> bool {
    let bytes = date.as_bytes();
    if bytes.len() != 10 || bytes[4] != b'-' || bytes[7] != b'-' {
        return false;
    }
    let num = |s: &str| {
        s.parse::<u32>()
            .ok()
            .filter(|_| s.bytes().all(|b| b.is_ascii_digit()))
    };
    let (Some(year), Some(month), Some(day)) = (num(&date[..4]), num(&date[5..7]), num(&date[8..]))
    else {
        return false;
    };
    let leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
    let days = match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap => 29,
        2 => 28,
        _ => return false,
    };
    (1..=days).contains(&day)
}

/// One search, checked: what a provider is asked.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct SearchRequest {
    pub query: String,
    /// Results wanted, 1..=10.
    pub count: usize,
    pub freshness: Option<Freshness>,
    /// ISO 3166-1 alpha-2, upper case (`US`, `DE`).
    pub country: Option<String>,
    /// ISO 639-1, lower case, maybe with a region (`en`, `de`, `pt-br`).
    pub language: Option<String>,
}

/// One result: what a page is and where.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SearchHit {
    pub title: String,
    pub url: String,
    pub snippet: String,
    /// When it was published, as the provider says it ("2 days ago", "2026-05-01").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub age: Option<String>,
}

/// What a provider found: results, and its written answer when it gives one (Perplexity
/// always, Tavily when asked); for an answer the results are its numbered sources.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct SearchResults {
    pub results: Vec<SearchHit>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answer: Option<String>,
}

/// A search API: asks it one [`SearchRequest`].
pub trait SearchProvider: Send + Sync + 'static {
    fn kind(&self) -> ProviderKind;

    /// The results (never empty: no results is [`SearchError::NoResults`]) or why not.
    fn search<'a>(
        &'a self,
        request: &'a SearchRequest,
    ) -> BoxFuture<'a, Result<SearchResults, SearchError>>;
}

/// The provider `options` name, or why it cannot be used (no key, no SearXNG address, a
/// base URL that is not http(s)).
pub fn build_provider(options: &SearchOptions) -> Result<Arc<dyn SearchProvider>, SearchError> {
    let kind = options.provider;
    let key = options.key().map(str::to_owned);
    if kind.needs_key() && key.is_none() {
        return Err(SearchError::MissingKey { provider: kind });
    }
    let key = key.unwrap_or_default();
    let transport = http::Transport::new(options, &key)?;
    let base =
        |default: Option<&str>| http::parse_base(options.base().or(default).unwrap_or_default());
    Ok(match kind {
        ProviderKind::Brave => Arc::new(brave::Brave::new(
            transport,
            base(kind.default_base_url())?,
            key,
        )),
        ProviderKind::Tavily => Arc::new(tavily::Tavily::new(
            transport,
            base(kind.default_base_url())?,
            key,
        )),
        ProviderKind::Perplexity => {
            let (default_base, default_model) = perplexity::defaults_for(&key);
            let model = options
                .model
                .as_deref()
                .map(str::trim)
                .filter(|m| !m.is_empty())
                .unwrap_or(default_model);
            Arc::new(perplexity::Perplexity::new(
                transport,
                base(Some(default_base))?,
                key,
                model.to_owned(),
            ))
        }
        ProviderKind::Searxng => {
            let Some(raw) = options.base() else {
                return Err(SearchError::MissingBaseUrl);
            };
            Arc::new(searxng::Searxng::new(transport, http::parse_base(raw)?))
        }
    })
}

/// Reads a provider's answer body as `web_search` does (the fuzz target's entry point):
/// the results, or a [`SearchError`] saying what was wrong with it.
pub fn parse_answer(
    provider: ProviderKind,
    body: &[u8],
    request: &SearchRequest,
) -> Result<SearchResults, SearchError> {
    match provider {
        ProviderKind::Brave => brave::parse(body, request),
        ProviderKind::Tavily => tavily::parse(body, request),
        ProviderKind::Perplexity => perplexity::parse(body, request),
        ProviderKind::Searxng => searxng::parse(body, request),
    }
}

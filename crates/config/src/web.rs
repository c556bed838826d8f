//! `tools.web` (what `web_fetch` may reach and how `web_search` asks a provider) and
//! `browser` (the dedicated Chromium the `browser` tool drives). Names follow OpenClaw's
//! sections where it has them (`maxChars`, `cacheTtlMinutes`, `timeoutSeconds`,
//! `executablePath`, `headless`, `noSandbox`); the SSRF opt-outs are Pincer's own flat
//! `allowPrivateNetwork` / `allowHosts`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// `tools.web`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct WebToolsConfig {
    /// `web_fetch`: GET a page and read it as Markdown.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fetch: Option<WebFetchConfig>,
    /// `web_search`: ask a search provider.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub search: Option<WebSearchConfig>,
}

/// `tools.web.fetch`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct WebFetchConfig {
    /// Offer `web_fetch` (default true).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enabled: Option<bool>,
    /// Characters of extracted text returned when the call names no `maxChars`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_chars: Option<usize>,
    /// Most bytes downloaded; a longer body is cut there and marked truncated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_response_bytes: Option<u64>,
    /// The whole request, redirects included.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_seconds: Option<u64>,
    /// How long a fetched page is reused from `$PINCER_HOME/cache/web/` (0: no cache).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_ttl_minutes: Option<u64>,
    /// Sent instead of Pincer's own User-Agent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user_agent: Option<String>,
    /// Let `web_fetch` reach loopback, private, link-local and metadata addresses
    /// (refused by default: a page or a prompt must not turn the agent against your network).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allow_private_network: Option<bool>,
    /// Hosts reachable whatever address they resolve to (`nas.local`, `*.lan`, `10.0.0.5`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub allow_hosts: Vec<String>,
}

/// `tools.web.search.provider`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum WebSearchProviderName {
    /// Brave Search API (`BRAVE_API_KEY`).
    Brave,
    /// Tavily (`TAVILY_API_KEY`).
    Tavily,
    /// Perplexity Sonar: an answer with citations (`PERPLEXITY_API_KEY`).
    Perplexity,
    /// A self-hosted SearXNG (`baseUrl`, no key).
    Searxng,
}

/// `tools.web.search`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct WebSearchConfig {
    /// Offer `web_search` (default true; without a provider it says how to set one up).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enabled: Option<bool>,
    /// Which search API answers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider: Option<WebSearchProviderName>,
    /// The provider's key; else its environment variable (`BRAVE_API_KEY`, …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_key: Option<String>,
    /// The provider's endpoint base instead of its public one (SearXNG: required).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_url: Option<String>,
    /// Perplexity's model (default `sonar`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Results when the call names no `count`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_results: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_seconds: Option<u64>,
    /// How long a session reuses the results of the same query.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_ttl_minutes: Option<u64>,
}

/// `browser`: the dedicated Chromium of the `browser` tool.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct BrowserConfig {
    /// Offer the `browser` tool (default true; it starts Chromium only when first used).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enabled: Option<bool>,
    /// Chromium or Chrome to run; else `chromium`, `google-chrome`, … found on PATH.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub executable_path: Option<String>,
    /// Run without a window (default true).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub headless: Option<bool>,
    /// Pass `--no-sandbox` to Chromium (containers; always when running as root).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub no_sandbox: Option<bool>,
    /// The profile under `$PINCER_HOME/browser/` (default `default`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default_profile: Option<String>,
    /// Let the agent run its own JavaScript in pages (`evaluate`; off by default).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allow_evaluate: Option<bool>,
    /// The browser ends after this long unused (default 10).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idle_timeout_minutes: Option<u64>,
    /// Longest one action (navigate, click, snapshot, …) may take (default 30).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub action_timeout_seconds: Option<u64>,
    /// Let pages at loopback, private and metadata addresses be opened (refused by default).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allow_private_network: Option<bool>,
    /// Hosts the browser may open whatever address they resolve to.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub allow_hosts: Vec<String>,
}

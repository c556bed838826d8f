//! The binary's side of the web tools: `web_fetch` and `web_search` options from
//! `tools.web` (keys from the environment as OpenClaw reads them, the cache under
//! `$PINCER_HOME/cache/web/`, PDFs through the turns' text extraction), and the `browser`
//! tool on the profile's shared Chromium (`browser` section). One browser runtime per process
//! ([`App::browser_runtime`]): the gateway stops it when it shuts down.

use std::ffi::OsString;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context as _;

use pincer_agent::AgentTool;
use pincer_browser::runtime::{ProfileRuntime, RuntimeOptions};
use pincer_browser::tool::{BrowserToolOptions, browser_tool};
use pincer_config::{
    BrowserConfig, WebFetchConfig, WebSearchConfig, WebSearchProviderName, WebToolsConfig,
};
use pincer_web::fetch::{WebFetchOptions, web_fetch_tool};
use pincer_web::search::{ProviderKind, SearchOptions, web_search_tool};
use pincer_web::ssrf::{BROWSER_SETTINGS, NetworkPolicy};

use crate::app::App;

/// `web_fetch` and `web_search` for an agent whose tools section has `web` (unless switched
/// off there).
pub fn web_tools(app: &App, web: Option<&WebToolsConfig>) -> Vec<Arc<dyn AgentTool>> {
    let mut tools = Vec::new();
    let fetch = web.and_then(|w| w.fetch.as_ref());
    if fetch.and_then(|f| f.enabled) != Some(false) {
        tools.push(web_fetch_tool(fetch_options(app, fetch)));
    }
    let search = web.and_then(|w| w.search.as_ref());
    if search.and_then(|s| s.enabled) != Some(false) {
        tools.push(web_search_tool(search_options(app, search)));
    }
    tools
}

/// What `web_fetch` may reach and how much it reads.
pub fn fetch_options(app: &App, config: Option<&WebFetchConfig>) -> WebFetchOptions {
    let mut options = WebFetchOptions {
        cache_dir: Some(app.home.join("cache").join("web")),
        pdf_text: pdf_text(),
        ..WebFetchOptions::default()
    };
    options.policy = fetch_policy(config);
    let Some(config) = config else {
        return options;
    };
    if let Some(chars) = config.max_chars {
        options.max_chars = chars;
    }
    if let Some(bytes) = config.max_response_bytes {
        options.max_response_bytes = bytes;
    }
    if let Some(seconds) = config.timeout_seconds {
        options.timeout = Duration::from_secs(seconds.max(1));
    }
    if let Some(minutes) = config.cache_ttl_minutes {
        options.cache_ttl = Duration::from_secs(minutes.saturating_mul(60));
        if minutes == 0 {
            options.cache_dir = None;
        }
    }
    if let Some(agent) = &config.user_agent {
        options.user_agent = agent.clone();
    }
    options
}

/// What `web_fetch` (and the `image` tool's downloads) may reach: `tools.web.fetch`'s
/// `allowPrivateNetwork` and `allowHosts`.
pub fn fetch_policy(config: Option<&WebFetchConfig>) -> NetworkPolicy {
    NetworkPolicy {
        allow_private_network: config
            .and_then(|c| c.allow_private_network)
            .unwrap_or(false),
        allow_hosts: config.map(|c| c.allow_hosts.clone()).unwrap_or_default(),
        ..NetworkPolicy::default()
    }
}

/// The configured search provider with its key (from the config, else its environment
/// variable); `None` when no provider is configured (the tool then says how to set one up).
pub fn search_options(app: &App, config: Option<&WebSearchConfig>) -> Option<SearchOptions> {
    let config = config?;
    let provider = match config.provider? {
        WebSearchProviderName::Brave => ProviderKind::Brave,
        WebSearchProviderName::Tavily => ProviderKind::Tavily,
        WebSearchProviderName::Perplexity => ProviderKind::Perplexity,
        WebSearchProviderName::Searxng => ProviderKind::Searxng,
    };
    let from_env = |names: &[&str]| {
        names
            .iter()
            .find_map(|name| app.env.var(name).filter(|v| !v.trim().is_empty()))
    };
    let api_key = config
        .api_key
        .clone()
        .filter(|k| !k.trim().is_empty())
        .or_else(|| from_env(provider.env_keys()));
    let mut options = SearchOptions::new(provider);
    options.api_key = api_key;
    options.base_url = config.base_url.clone().or_else(|| {
        provider
            .env_base_url()
            .and_then(|name| app.env.var(name))
            .filter(|v| !v.trim().is_empty())
    });
    options.model = config.model.clone();
    if let Some(count) = config.max_results {
        options.default_count = count;
    }
    if let Some(seconds) = config.timeout_seconds {
        options.timeout = Duration::from_secs(seconds.max(1));
    }
    if let Some(minutes) = config.cache_ttl_minutes {
        options.cache_ttl = Duration::from_secs(minutes.saturating_mul(60));
    }
    Some(options)
}

/// The `browser` tool on the process's shared browser runtime; none when
/// `browser.enabled` is false.
pub fn browser_tools(app: &App, workspace: &Path) -> anyhow::Result<Vec<Arc<dyn AgentTool>>> {
    let config = &app.config.browser;
    if config.enabled == Some(false) {
        return Ok(Vec::new());
    }
    let options = BrowserToolOptions {
        allow_evaluate: config.allow_evaluate.unwrap_or(false),
        action_timeout: Duration::from_secs(config.action_timeout_seconds.unwrap_or(30).max(1)),
        navigation_policy: browser_policy(config),
        ..BrowserToolOptions::new(workspace)
    };
    Ok(vec![browser_tool(app.browser_runtime()?, options)])
}

/// The runtime options of the configured profile: Chromium under a `pincer browser
/// supervise` process, so the browser outlives a short `pincer tools invoke` and still ends
/// when idle.
pub fn runtime_options(app: &App) -> RuntimeOptions {
    let config: &BrowserConfig = &app.config.browser;
    let mut options = RuntimeOptions::new(app.home.clone());
    if let Some(profile) = &config.default_profile {
        options.profile = profile.clone();
    }
    options.executable = config
        .executable_path
        .as_deref()
        .map(|p| crate::app::expand_home(p, app.env.as_ref()));
    options.headless = config.headless.unwrap_or(true);
    if let Some(no_sandbox) = config.no_sandbox {
        options.no_sandbox = no_sandbox;
    }
    if let Some(minutes) = config.idle_timeout_minutes {
        options.idle_timeout = Duration::from_secs(minutes.max(1).saturating_mul(60));
    }
    // The supervisor checks every navigation too, so a page left open by a finished
    // `pincer tools invoke` cannot wander somewhere the policy refuses.
    options.navigation_guard = Some(browser_policy(config));
    options.supervisor = std::env::current_exe().ok().map(|exe| {
        vec![
            exe.into_os_string(),
            OsString::from("browser"),
            OsString::from("supervise"),
        ]
    });
    options
}

/// What the browser may open (`browser.allowPrivateNetwork`, `browser.allowHosts`).
fn browser_policy(config: &BrowserConfig) -> NetworkPolicy {
    NetworkPolicy {
        allow_private_network: config.allow_private_network.unwrap_or(false),
        allow_hosts: config.allow_hosts.clone(),
        settings: BROWSER_SETTINGS,
    }
}

impl App {
    /// The `tools.web` section that applies to `agent_id`: its own tools section's, else
    /// the global one.
    pub fn web_config(&self, agent_id: &str) -> Option<&WebToolsConfig> {
        self.agent_entry(agent_id)
            .and_then(|a| a.tools.as_ref())
            .and_then(|t| t.web.as_ref())
            .or(self.config.tools.web.as_ref())
    }

    /// The profile's browser as this process sees it, made on first use; an error when
    /// `browser.defaultProfile` cannot be a directory name.
    pub fn browser_runtime(&self) -> anyhow::Result<Arc<dyn pincer_browser::BrowserRuntime>> {
        if let Some(runtime) = self.browser.get() {
            return Ok(Arc::clone(runtime) as Arc<dyn pincer_browser::BrowserRuntime>);
        }
        let made =
            Arc::new(ProfileRuntime::new(runtime_options(self)).context("browser.defaultProfile")?);
        // Another thread may have made one meanwhile: theirs is kept, this one dropped
        // before it started anything.
        let runtime = self.browser.get_or_init(|| made);
        Ok(Arc::clone(runtime) as Arc<dyn pincer_browser::BrowserRuntime>)
    }

    /// The browser runtime if this process made one (the gateway stops it on shutdown).
    pub fn browser_runtime_if_started(&self) -> Option<Arc<ProfileRuntime>> {
        self.browser.get().cloned()
    }
}

/// PDFs fetched by `web_fetch` read by the same extraction as received files.
#[cfg(feature = "pdf")]
fn pdf_text() -> Option<pincer_web::fetch::PdfText> {
    /// Characters of a PDF's text read at most (the call's `maxChars` cuts further).
    const PDF_MAX_CHARS: usize = 200_000;
    Some(Arc::new(|bytes: Vec<u8>| {
        pincer_turns::media_text::pdf_text(&bytes, PDF_MAX_CHARS)
            .map(|doc| doc.text)
            .map_err(|e| e.to_string())
    }))
}

#[cfg(not(feature = "pdf"))]
fn pdf_text() -> Option<pincer_web::fetch::PdfText> {
    None
}

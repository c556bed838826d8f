//! `pincer auth login github-copilot` (GitHub's device flow, then the Copilot token
//! exchange) and `pincer auth login anthropic` (Claude Pro/Max: PKCE with the browser's
//! redirect to localhost:53692, or the `code#state` the page shows pasted at the prompt).
//! Where each signs in can be moved for tests and proxies: `PINCER_GITHUB_URL` (GitHub and
//! its API, e.g. a fake server) and `PINCER_ANTHROPIC_AUTH_URL`.

use std::io::Write as _;
use std::process::ExitCode;

use anyhow::{Result, bail};
use pincer_auth::oauth::copilot::normalize_domain;
use pincer_auth::oauth::{ANTHROPIC_PROVIDER, COPILOT_PROVIDER};
use pincer_auth::{
    AnthropicOAuth, AnthropicOAuthConfig, AuthStore, CopilotOAuth, CopilotOAuthConfig,
    OAuthCredential, now_ms,
};

use crate::app::App;
use crate::auth_browser::{LoginTexts, finish_browser_login};

/// Where github-copilot signs in: github.com (or the enterprise `domain`), unless
/// `PINCER_GITHUB_URL` names another server for GitHub and its API alike.
pub fn copilot_config(app: &App, domain: Option<&str>) -> CopilotOAuthConfig {
    match app.env.var("PINCER_GITHUB_URL") {
        Some(url) => {
            let mut config = CopilotOAuthConfig::with_urls(&url, &url);
            config.enterprise_domain = domain.map(str::to_owned);
            config
        }
        None => CopilotOAuthConfig::for_domain(domain),
    }
}

/// Where anthropic signs in: Anthropic's service unless `PINCER_ANTHROPIC_AUTH_URL` says.
pub fn anthropic_config(app: &App) -> AnthropicOAuthConfig {
    match app.env.var("PINCER_ANTHROPIC_AUTH_URL") {
        Some(base) => AnthropicOAuthConfig::with_base(&base),
        None => AnthropicOAuthConfig::default(),
    }
}

/// The device flow: show the URL and code, wait for GitHub, exchange for a Copilot token.
pub async fn copilot_login(
    app: &App,
    store: &AuthStore,
    name: Option<&str>,
    enterprise: Option<&str>,
) -> Result<ExitCode> {
    let domain = match enterprise {
        Some(input) => normalize_domain(input)?,
        None => None,
    };
    let oauth = CopilotOAuth::new(copilot_config(app, domain.as_deref()));
    let device = oauth.start_device_flow().await?;
    println!(
        "Open {} in your browser and enter the code: {}",
        device.verification_uri, device.user_code
    );
    println!("Waiting for GitHub…");
    let _ = std::io::stdout().flush();
    let github_token = oauth.poll_for_github_token(&device).await?;
    let credential = oauth.exchange(&github_token, now_ms()).await?;
    save(store, COPILOT_PROVIDER, name, credential)
}

/// The PKCE login: the browser's redirect, or a pasted `code#state` / redirect URL.
pub async fn anthropic_login(
    app: &App,
    store: &AuthStore,
    name: Option<&str>,
    paste_only: bool,
) -> Result<ExitCode> {
    let mut config = anthropic_config(app);
    if let Some(port) = crate::auth_browser::callback_port_override(app, paste_only) {
        config = config.callback_port(port);
    }
    let login = AnthropicOAuth::new(config).begin().await?;
    let texts = LoginTexts {
        provider: ANTHROPIC_PROVIDER,
        service: "Claude (Pro/Max)",
        paste: "the code shown (code#state) or the redirect URL",
        paste_late: "the code (code#state)",
    };
    let credential = finish_browser_login(login, paste_only, &texts).await?;
    save(store, ANTHROPIC_PROVIDER, name, credential)
}

fn save(
    store: &AuthStore,
    provider: &str,
    name: Option<&str>,
    credential: OAuthCredential,
) -> Result<ExitCode> {
    let expires = credential.expires;
    if name.is_some() {
        bail!("--name is for API keys; a sign-in is named after its account");
    }
    let id = store.add_oauth(provider, credential)?;
    println!("Auth profile created: {id}");
    println!(
        "Credential expires: {}",
        pincer_base::time::iso_from_ms(expires as i64)
    );
    Ok(ExitCode::SUCCESS)
}

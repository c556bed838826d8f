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
use crate::auth_cmd::{CALLBACK_WAIT, next_paste, paste_reader};

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
    if paste_only {
        config = config.callback_port(0);
    }
    if let Some(port) = app
        .env
        .var("PINCER_OAUTH_CALLBACK_PORT")
        .and_then(|p| p.parse().ok())
    {
        config = config.callback_port(port);
    }
    let mut login = AnthropicOAuth::new(config).begin().await?;
    println!(
        "Open this URL in your browser to sign in to Claude (Pro/Max):\n\n{}\n",
        login.url()
    );
    if let Some(why) = &login.start().listener_error {
        println!("(No callback listener: {why}.)");
    }
    println!(
        "Waiting for the browser… or paste the code shown (code#state) or the redirect URL here and press Enter."
    );
    let _ = std::io::stdout().flush();
    let pasted = paste_reader();
    let required = || async {
        next_paste(&pasted).await?.ok_or_else(|| {
            anyhow::anyhow!("nothing was pasted; run `pincer auth login anthropic` again")
        })
    };
    let credential = if paste_only || login.start().listening_on.is_none() {
        login
            .finish_with_pasted(&required().await?, now_ms())
            .await?
    } else {
        tokio::select! {
            code = login.wait_for_callback(CALLBACK_WAIT) => match code? {
                Some(code) => login.exchange(&code, now_ms()).await?,
                None => {
                    println!("No answer from the browser; paste the code (code#state):");
                    login.finish_with_pasted(&required().await?, now_ms()).await?
                }
            },
            input = async {
                match next_paste(&pasted).await {
                    Ok(Some(line)) => Ok(line),
                    Ok(None) => std::future::pending().await,
                    Err(e) => Err(e),
                }
            } => login.finish_with_pasted(&input?, now_ms()).await?,
        }
    };
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

//! `pincer auth login google-gemini-cli`: Google sign-in for Cloud Code Assist (PKCE with
//! the browser's redirect to localhost:8085, or the redirect URL pasted), then the Code
//! Assist project found or provisioned. `GOOGLE_CLOUD_PROJECT` / `GOOGLE_CLOUD_PROJECT_ID`
//! name the project of paid tiers. For tests and proxies, `PINCER_GOOGLE_AUTH_URL` moves the
//! authorization server (`<url>/oauth/authorize`, `<url>/oauth/token`) and
//! `PINCER_CODE_ASSIST_URL` Cloud Code Assist.

use std::process::ExitCode;

use anyhow::{Result, bail};
use pincer_auth::AuthStore;
use pincer_auth::oauth::gemini_cli::{GEMINI_CLI_PROVIDER, GeminiCliOAuth, GeminiCliOAuthConfig};

use crate::app::App;
use crate::auth_browser::{LoginTexts, finish_browser_login};

/// Where google-gemini-cli signs in and finds its project (see the module docs).
pub fn gemini_cli_config(app: &App) -> GeminiCliOAuthConfig {
    let mut config = match (
        app.env.var("PINCER_GOOGLE_AUTH_URL"),
        app.env.var("PINCER_CODE_ASSIST_URL"),
    ) {
        (None, None) => GeminiCliOAuthConfig::default(),
        (auth, code_assist) => {
            let defaults = GeminiCliOAuthConfig::default();
            let mut config = GeminiCliOAuthConfig::with_urls(
                auth.as_deref().unwrap_or("https://accounts.google.com"),
                code_assist
                    .as_deref()
                    .unwrap_or(defaults.code_assist_url.as_str()),
            );
            if auth.is_none() {
                config.authorize_url = defaults.authorize_url;
                config.token_url = defaults.token_url;
            }
            config
        }
    };
    config.env_project = app
        .env
        .var("GOOGLE_CLOUD_PROJECT")
        .or_else(|| app.env.var("GOOGLE_CLOUD_PROJECT_ID"));
    config
}

/// The PKCE login, then project discovery; stores the profile.
pub async fn gemini_cli_login(
    app: &App,
    store: &AuthStore,
    name: Option<&str>,
    paste_only: bool,
) -> Result<ExitCode> {
    if name.is_some() {
        bail!("--name is for API keys; a sign-in is named after its project");
    }
    let mut config = gemini_cli_config(app);
    if let Some(port) = crate::auth_browser::callback_port_override(app, paste_only) {
        config = config.callback_port(port);
    }
    let login = GeminiCliOAuth::new(config).begin().await?;
    let texts = LoginTexts {
        provider: GEMINI_CLI_PROVIDER,
        service: "Google (Gemini CLI / Cloud Code Assist)",
        paste: "the redirect URL",
        paste_late: "the redirect URL",
    };
    let credential = finish_browser_login(login, paste_only, &texts).await?;
    let expires = credential.expires;
    let project = credential.account_id.clone().unwrap_or_default();
    let id = store.add_oauth(GEMINI_CLI_PROVIDER, credential)?;
    println!("Auth profile created: {id}");
    println!("Cloud Code Assist project: {project}");
    println!(
        "Credential expires: {}",
        pincer_base::time::iso_from_ms(expires as i64)
    );
    Ok(ExitCode::SUCCESS)
}

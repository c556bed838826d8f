//! openai-codex sign-in (ChatGPT OAuth with PKCE), as pi-ai's `openai-codex.ts` and the
//! Codex CLI do it: the Codex CLI's public client id, `redirect_uri` on
//! `http://localhost:1455/auth/callback`, a loopback listener that waits for the browser
//! (60 s by default) and a paste fallback (the bare code, `code#state`, a query string or
//! the whole redirect URL). The code is exchanged at the token endpoint; refreshes rotate
//! the refresh token; the ChatGPT account id comes from the access token's claims.
//!
//! The CLI drives a [`CodexLogin`]: `begin` → show [`LoginStart::url`] → `wait_for_callback`
//! → (timed out) read a line → `parse_pasted` → `exchange`. Every endpoint is configurable
//! ([`CodexOAuthConfig`]) so tests run against a fake server on 127.0.0.1.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use super::OAuthError;
use super::jwt::chatgpt_account_id;
use super::pending::PendingLogin;
use super::pkce::{Pkce, random_state};
use super::token::{TokenAnswer, TokenGrant, parse_token_response, post_form};
use crate::file::OAuthCredential;
use crate::secret::Secret;

/// The provider id of ChatGPT sign-in profiles.
pub const CODEX_PROVIDER: &str = "openai-codex";
/// The Codex CLI's public OAuth client id (public by design: PKCE, no client secret).
pub const CODEX_CLIENT_ID: &str = "app_EMoamEEZ73f0CkXaXp7hrann";
const AUTH_ISSUER: &str = "https://auth.openai.com";
const SCOPE: &str = "openid profile email offline_access";
const ORIGINATOR: &str = "codex_cli_rs";
const CALLBACK_PORT: u16 = 1455;
const CALLBACK_PATH: &str = "/auth/callback";

/// Where and how to sign in. `Default` is the real service.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CodexOAuthConfig {
    pub authorize_url: String,
    pub token_url: String,
    pub client_id: String,
    pub scope: String,
    pub originator: String,
    /// The listener's address; the redirect URI says `localhost` with the bound port.
    pub callback_ip: IpAddr,
    /// 1455 (the only port the real client id accepts); 0 picks a free one (tests).
    pub callback_port: u16,
    pub callback_path: String,
    /// How long each call to the token endpoint may take.
    pub http_timeout: Duration,
}

impl Default for CodexOAuthConfig {
    fn default() -> Self {
        Self::with_issuer(AUTH_ISSUER)
    }
}

impl CodexOAuthConfig {
    /// The defaults with `<issuer>/oauth/authorize` and `<issuer>/oauth/token`.
    pub fn with_issuer(issuer: &str) -> Self {
        let issuer = issuer.trim_end_matches('/');
        Self {
            authorize_url: format!("{issuer}/oauth/authorize"),
            token_url: format!("{issuer}/oauth/token"),
            client_id: CODEX_CLIENT_ID.to_owned(),
            scope: SCOPE.to_owned(),
            originator: ORIGINATOR.to_owned(),
            callback_ip: IpAddr::V4(Ipv4Addr::LOCALHOST),
            callback_port: CALLBACK_PORT,
            callback_path: CALLBACK_PATH.to_owned(),
            http_timeout: Duration::from_secs(30),
        }
    }

    /// The same with another callback port.
    pub fn callback_port(mut self, port: u16) -> Self {
        self.callback_port = port;
        self
    }

    fn redirect_uri(&self, port: u16) -> String {
        format!("http://localhost:{port}{}", self.callback_path)
    }
}

/// The openai-codex OAuth client: starts logins and refreshes tokens. Cheap to clone.
///
/// Its HTTP client is built on first use: every `pincer ask` holds one in case a token
/// needs refreshing, and most never do, so they should not pay for TLS set-up.
#[derive(Debug, Clone)]
pub struct CodexOAuth {
    config: CodexOAuthConfig,
    http: Arc<OnceLock<Result<reqwest::Client, String>>>,
}

impl CodexOAuth {
    pub fn new(config: CodexOAuthConfig) -> Result<Self, OAuthError> {
        Ok(Self {
            config,
            http: Arc::default(),
        })
    }

    fn http(&self) -> Result<&reqwest::Client, OAuthError> {
        self.http
            .get_or_init(|| {
                reqwest::Client::builder()
                    // Token endpoints do not redirect; following one could leak a code.
                    .redirect(reqwest::redirect::Policy::none())
                    .build()
                    .map_err(|e| e.to_string())
            })
            .as_ref()
            .map_err(|e| OAuthError::Config(e.clone()))
    }

    pub fn config(&self) -> &CodexOAuthConfig {
        &self.config
    }

    /// Starts a login: a fresh PKCE pair and `state`, and the callback listener. If the
    /// port is taken the login still starts, without a listener ([`LoginStart::listener_error`]
    /// says why), and the user pastes the redirect URL instead.
    pub async fn begin(&self) -> Result<CodexLogin, OAuthError> {
        let addr = SocketAddr::new(self.config.callback_ip, self.config.callback_port);
        let login = PendingLogin::open(
            Pkce::generate()?,
            random_state()?,
            addr,
            &self.config.callback_path,
            |port| self.config.redirect_uri(port),
            |challenge, state, redirect_uri| self.authorize_url(challenge, state, redirect_uri),
        )
        .await;
        Ok(CodexLogin {
            oauth: self.clone(),
            login,
        })
    }

    /// The browser URL of a login (pi-ai's parameters, in its order).
    pub fn authorize_url(&self, challenge: &str, state: &str, redirect_uri: &str) -> String {
        let query = url::form_urlencoded::Serializer::new(String::new())
            .extend_pairs([
                ("response_type", "code"),
                ("client_id", self.config.client_id.as_str()),
                ("redirect_uri", redirect_uri),
                ("scope", self.config.scope.as_str()),
                ("code_challenge", challenge),
                ("code_challenge_method", "S256"),
                ("state", state),
                ("id_token_add_organizations", "true"),
                ("codex_cli_simplified_flow", "true"),
                ("originator", self.config.originator.as_str()),
            ])
            .finish();
        format!("{}?{query}", self.config.authorize_url)
    }

    /// Trades a refresh token for new tokens (`grant_type=refresh_token`). A refused
    /// refresh token is [`OAuthError::LoginRequired`].
    pub async fn refresh(
        &self,
        refresh_token: &Secret,
        now_ms: u64,
    ) -> Result<OAuthCredential, OAuthError> {
        let answer = self
            .post_token(&[
                ("grant_type", "refresh_token"),
                ("refresh_token", refresh_token.expose()),
                ("client_id", &self.config.client_id),
            ])
            .await?;
        if !(200..300).contains(&answer.status) {
            return Err(OAuthError::from_refresh_answer(
                CODEX_PROVIDER,
                answer.status,
                &answer.body,
            ));
        }
        let grant = parse_token_response(&answer.body, now_ms)?;
        credential_from(grant, refresh_token)
    }

    /// Posts `form` to the token endpoint.
    async fn post_token(&self, form: &[(&str, &str)]) -> Result<TokenAnswer, OAuthError> {
        let http = self.http()?;
        post_form(http, &self.config.token_url, form, self.config.http_timeout).await
    }

    async fn exchange_code(
        &self,
        code: &Secret,
        verifier: &Secret,
        redirect_uri: &str,
        now_ms: u64,
    ) -> Result<OAuthCredential, OAuthError> {
        let answer = self
            .post_token(&[
                ("grant_type", "authorization_code"),
                ("client_id", &self.config.client_id),
                ("code", code.expose()),
                ("code_verifier", verifier.expose()),
                ("redirect_uri", redirect_uri),
            ])
            .await?;
        if !(200..300).contains(&answer.status) {
            let (code, description) = super::token::parse_token_error(&answer.body);
            return Err(OAuthError::TokenEndpoint {
                status: answer.status,
                code,
                description,
            });
        }
        let grant = parse_token_response(&answer.body, now_ms)?;
        if grant.refresh.is_none() {
            return Err(OAuthError::MalformedTokenResponse(
                "refresh_token is missing".into(),
            ));
        }
        credential_from(grant, &Secret::new(""))
    }
}

/// Builds the stored credential; `previous_refresh` stays when the server kept it.
fn credential_from(
    grant: TokenGrant,
    previous_refresh: &Secret,
) -> Result<OAuthCredential, OAuthError> {
    let account_id = chatgpt_account_id(grant.access.expose())?;
    Ok(OAuthCredential {
        refresh: grant.refresh.unwrap_or_else(|| previous_refresh.clone()),
        access: grant.access,
        expires: grant.expires,
        account_id: Some(account_id),
    })
}

/// What the CLI shows when a login starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoginStart {
    /// Open this in a browser.
    pub url: String,
    pub redirect_uri: String,
    /// Where the callback listener runs, if it could bind.
    pub listening_on: Option<SocketAddr>,
    /// Why there is no listener (the user must paste the redirect URL).
    pub listener_error: Option<String>,
}

/// A login in progress. Dropping it stops the callback listener.
pub struct CodexLogin {
    oauth: CodexOAuth,
    login: PendingLogin,
}

impl std::fmt::Debug for CodexLogin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CodexLogin")
            .field("start", self.login.start())
            .finish_non_exhaustive()
    }
}

impl CodexLogin {
    pub fn start(&self) -> &LoginStart {
        self.login.start()
    }

    /// The browser URL.
    pub fn url(&self) -> &str {
        &self.login.start().url
    }

    /// Waits up to `timeout` for the browser's redirect. `Ok(None)`: it did not come (or
    /// there is no listener); ask the user to paste. An error: the server refused sign-in.
    pub async fn wait_for_callback(
        &mut self,
        timeout: Duration,
    ) -> Result<Option<Secret>, OAuthError> {
        self.login.wait_for_callback(timeout).await
    }

    /// The code in what the user pasted; a `state` in it must be this login's.
    pub fn parse_pasted(&self, input: &str) -> Result<Secret, OAuthError> {
        self.login.parse_pasted(input)
    }

    /// Exchanges the code for tokens (`grant_type=authorization_code`) and ends the login.
    pub async fn exchange(self, code: &Secret, now_ms: u64) -> Result<OAuthCredential, OAuthError> {
        let closed = self.login.close();
        self.oauth
            .exchange_code(
                code,
                closed.pkce.verifier(),
                &closed.start.redirect_uri,
                now_ms,
            )
            .await
    }

    /// [`Self::parse_pasted`] then [`Self::exchange`].
    pub async fn finish_with_pasted(
        self,
        input: &str,
        now_ms: u64,
    ) -> Result<OAuthCredential, OAuthError> {
        let code = self.parse_pasted(input)?;
        self.exchange(&code, now_ms).await
    }
}

/// What a pasted sign-in answer holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PastedAuthorization {
    pub code: Option<Secret>,
    pub state: Option<String>,
}

/// Reads a pasted answer as pi-ai does: a URL with `code`/`state` query parameters,
/// `code#state`, a query string containing `code=`, or else the bare code.
pub fn parse_authorization_input(input: &str) -> PastedAuthorization {
    let value = input.trim();
    let non_empty = |s: &str| (!s.is_empty()).then(|| s.to_owned());
    if value.is_empty() {
        return PastedAuthorization {
            code: None,
            state: None,
        };
    }
    if let Ok(url) = url::Url::parse(value)
        && url.has_host()
    {
        return from_pairs(url.query_pairs());
    }
    if let Some((code, state)) = value.split_once('#') {
        return PastedAuthorization {
            code: non_empty(code).map(Secret::new),
            state: non_empty(state),
        };
    }
    if value.contains("code=") {
        let query = value.trim_start_matches('?');
        return from_pairs(url::form_urlencoded::parse(query.as_bytes()));
    }
    PastedAuthorization {
        code: Some(Secret::new(value)),
        state: None,
    }
}

fn from_pairs<'a>(
    pairs: impl Iterator<Item = (std::borrow::Cow<'a, str>, std::borrow::Cow<'a, str>)>,
) -> PastedAuthorization {
    let mut pasted = PastedAuthorization {
        code: None,
        state: None,
    };
    for (key, value) in pairs {
        match key.as_ref() {
            "code" if pasted.code.is_none() && !value.is_empty() => {
                pasted.code = Some(Secret::new(value.into_owned()));
            }
            "state" if pasted.state.is_none() && !value.is_empty() => {
                pasted.state = Some(value.into_owned());
            }
            _ => {}
        }
    }
    pasted
}

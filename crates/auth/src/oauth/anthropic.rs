//! anthropic sign-in (Claude Pro/Max), as pi-ai's `anthropic.ts` does it: authorization
//! code with PKCE at `claude.ai/oauth/authorize` (Claude Code's public client id, `code=true`
//! so the page also shows a `code#state` to paste), the PKCE verifier doubling as `state`,
//! the redirect to `http://localhost:53692/callback` caught by a loopback listener — or the
//! pasted `code#state` / redirect URL — and the tokens from the token endpoint, which takes
//! JSON (not a form). Refresh tokens rotate; expiries are kept five minutes early, as pi
//! does. The access tokens (`sk-ant-oat…`) switch pincer-ai's Anthropic requests into OAuth
//! mode (Claude Code identity).

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use serde_json::json;

use super::OAuthError;
use super::codex::LoginStart;
use super::pending::{ClosedLogin, PendingLogin};
use super::pkce::Pkce;
use super::token::{parse_token_error, parse_token_response};
use crate::file::OAuthCredential;
use crate::secret::Secret;

/// The provider id of Claude sign-in profiles.
pub const ANTHROPIC_PROVIDER: &str = "anthropic";
/// Claude Code's public OAuth client id (PKCE, no secret).
pub const ANTHROPIC_CLIENT_ID: &str = "9d1c250a-e61b-44d9-88ed-5944d1962f5e";
const AUTHORIZE_URL: &str = "https://claude.ai/oauth/authorize";
const TOKEN_URL: &str = "https://platform.claude.com/v1/oauth/token";
const SCOPES: &str = "org:create_api_key user:profile user:inference user:sessions:claude_code user:mcp_servers user:file_upload";
const CALLBACK_PORT: u16 = 53692;
const CALLBACK_PATH: &str = "/callback";
/// Access tokens are treated as expired this long before they are.
const EXPIRY_MARGIN_MS: u64 = 5 * 60 * 1000;

/// Where and how to sign in. `Default` is the real service.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AnthropicOAuthConfig {
    pub authorize_url: String,
    pub token_url: String,
    pub client_id: String,
    pub scope: String,
    pub callback_ip: IpAddr,
    /// 53692 (the port the client id is registered with); 0 picks a free one (tests).
    pub callback_port: u16,
    pub http_timeout: Duration,
}

impl Default for AnthropicOAuthConfig {
    fn default() -> Self {
        Self {
            authorize_url: AUTHORIZE_URL.to_owned(),
            token_url: TOKEN_URL.to_owned(),
            client_id: ANTHROPIC_CLIENT_ID.to_owned(),
            scope: SCOPES.to_owned(),
            callback_ip: IpAddr::V4(Ipv4Addr::LOCALHOST),
            callback_port: CALLBACK_PORT,
            http_timeout: Duration::from_secs(30),
        }
    }
}

impl AnthropicOAuthConfig {
    /// The defaults with `<base>/oauth/authorize` and `<base>/v1/oauth/token` (a test's
    /// fake server).
    pub fn with_base(base: &str) -> Self {
        let base = base.trim_end_matches('/');
        Self {
            authorize_url: format!("{base}/oauth/authorize"),
            token_url: format!("{base}/v1/oauth/token"),
            ..Self::default()
        }
    }

    pub fn callback_port(mut self, port: u16) -> Self {
        self.callback_port = port;
        self
    }

    fn redirect_uri(&self, port: u16) -> String {
        format!("http://localhost:{port}{CALLBACK_PATH}")
    }
}

/// The Claude OAuth client: starts logins and refreshes tokens. Cheap to clone.
#[derive(Debug, Clone)]
pub struct AnthropicOAuth {
    config: AnthropicOAuthConfig,
    http: Arc<OnceLock<Result<reqwest::Client, String>>>,
}

impl AnthropicOAuth {
    pub fn new(config: AnthropicOAuthConfig) -> Self {
        Self {
            config,
            http: Arc::default(),
        }
    }

    pub fn config(&self) -> &AnthropicOAuthConfig {
        &self.config
    }

    fn http(&self) -> Result<&reqwest::Client, OAuthError> {
        self.http
            .get_or_init(|| {
                reqwest::Client::builder()
                    .redirect(reqwest::redirect::Policy::none())
                    .build()
                    .map_err(|e| e.to_string())
            })
            .as_ref()
            .map_err(|e| OAuthError::Config(e.clone()))
    }

    /// Starts a login: a PKCE pair (its verifier is also the `state`, as pi sends it) and
    /// the callback listener, if the port is free.
    pub async fn begin(&self) -> Result<AnthropicLogin, OAuthError> {
        let pkce = Pkce::generate()?;
        let state = pkce.verifier().expose().to_owned();
        let addr = SocketAddr::new(self.config.callback_ip, self.config.callback_port);
        let login = PendingLogin::open(
            pkce,
            state,
            addr,
            CALLBACK_PATH,
            |port| self.config.redirect_uri(port),
            |challenge, state, redirect_uri| self.authorize_url(challenge, state, redirect_uri),
        )
        .await;
        Ok(AnthropicLogin {
            oauth: self.clone(),
            login,
        })
    }

    /// The browser URL (pi's parameters, in its order).
    pub fn authorize_url(&self, challenge: &str, state: &str, redirect_uri: &str) -> String {
        let query = url::form_urlencoded::Serializer::new(String::new())
            .extend_pairs([
                ("code", "true"),
                ("client_id", self.config.client_id.as_str()),
                ("response_type", "code"),
                ("redirect_uri", redirect_uri),
                ("scope", self.config.scope.as_str()),
                ("code_challenge", challenge),
                ("code_challenge_method", "S256"),
                ("state", state),
            ])
            .finish();
        format!("{}?{query}", self.config.authorize_url)
    }

    /// Posts `body` as JSON to the token endpoint; returns the granted tokens.
    async fn post_token(
        &self,
        body: serde_json::Value,
        previous_refresh: Option<&Secret>,
        now_ms: u64,
    ) -> Result<OAuthCredential, OAuthError> {
        let url = &self.config.token_url;
        let request = self
            .http()?
            .post(url)
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .header(reqwest::header::ACCEPT, "application/json")
            .body(body.to_string());
        let (status, answer) = super::copilot::send(request, url, self.config.http_timeout).await?;
        if !(200..300).contains(&status) {
            if previous_refresh.is_some() {
                return Err(OAuthError::from_refresh_answer(
                    ANTHROPIC_PROVIDER,
                    status,
                    &answer,
                ));
            }
            let (code, description) = parse_token_error(&answer);
            return Err(OAuthError::TokenEndpoint {
                status,
                code,
                description,
            });
        }
        let grant = parse_token_response(&answer, now_ms)?;
        let refresh = match (grant.refresh, previous_refresh) {
            (Some(fresh), _) => fresh,
            (None, Some(old)) => old.clone(),
            (None, None) => {
                return Err(OAuthError::MalformedTokenResponse(
                    "refresh_token is missing".into(),
                ));
            }
        };
        Ok(OAuthCredential {
            access: grant.access,
            refresh,
            expires: grant.expires.saturating_sub(EXPIRY_MARGIN_MS),
            account_id: None,
        })
    }

    /// Trades a refresh token for new tokens; a refused one is [`OAuthError::LoginRequired`].
    pub async fn refresh(
        &self,
        refresh_token: &Secret,
        now_ms: u64,
    ) -> Result<OAuthCredential, OAuthError> {
        let body = json!({
            "grant_type": "refresh_token",
            "client_id": self.config.client_id,
            "refresh_token": refresh_token.expose(),
        });
        self.post_token(body, Some(refresh_token), now_ms).await
    }
}

/// A login in progress. Dropping it stops the callback listener.
pub struct AnthropicLogin {
    oauth: AnthropicOAuth,
    login: PendingLogin,
}

impl std::fmt::Debug for AnthropicLogin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AnthropicLogin")
            .field("start", self.login.start())
            .finish_non_exhaustive()
    }
}

impl AnthropicLogin {
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

    /// The code in a paste (`code#state`, the redirect URL, or the bare code); a `state`
    /// in it must be this login's.
    pub fn parse_pasted(&self, input: &str) -> Result<Secret, OAuthError> {
        self.login.parse_pasted(input)
    }

    /// Exchanges the code (`grant_type=authorization_code`, with `state` and the verifier).
    pub async fn exchange(self, code: &Secret, now_ms: u64) -> Result<OAuthCredential, OAuthError> {
        let ClosedLogin { pkce, state, start } = self.login.close();
        let oauth = self.oauth;
        let body = json!({
            "grant_type": "authorization_code",
            "client_id": oauth.config.client_id,
            "code": code.expose(),
            "state": state,
            "redirect_uri": start.redirect_uri,
            "code_verifier": pkce.verifier().expose(),
        });
        oauth.post_token(body, None, now_ms).await
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

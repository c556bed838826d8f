//! google-gemini-cli sign-in (Google OAuth with PKCE for Cloud Code Assist), as pi-ai's
//! `utils/oauth/google-gemini-cli.ts` does it: the Gemini CLI's installed-app client id and
//! secret (public by design), the cloud-platform and userinfo scopes, `access_type=offline`
//! and `prompt=consent` (so Google returns a refresh token), a loopback redirect to
//! `http://localhost:8085/oauth2callback` (or a pasted redirect URL). After the code exchange
//! the Cloud Code Assist project is found (`loadCodeAssist`) or provisioned (`onboardUser`,
//! polled until done); it is stored as the profile's account id, and calls present
//! `{"token", "projectId"}` as pi's `getApiKey` does ([`api_key`]).
//!
//! Pincer's `state` is a fresh random value, not the PKCE verifier pi reuses for it, so the
//! verifier never travels through the browser.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use serde::Deserialize;
use serde_json::{Value, json};

use super::OAuthError;
use super::codex::LoginStart;
use super::pending::PendingLogin;
use super::pkce::{Pkce, random_state};
use super::token::{TokenGrant, parse_token_error, parse_token_response, post_form};
use crate::file::OAuthCredential;
use crate::secret::Secret;

/// The provider id of Cloud Code Assist sign-in profiles.
pub const GEMINI_CLI_PROVIDER: &str = "google-gemini-cli";
/// The Gemini CLI's installed-app OAuth client (Google documents such secrets as public).
pub const GEMINI_CLI_CLIENT_ID: &str =
    "681255809395-oo8ft2oprdrnp9e3aqf6av3hmdib135j.apps.googleusercontent.com";
pub const GEMINI_CLI_CLIENT_SECRET: &str = "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";
/// pi's scopes, in its order.
pub const GEMINI_CLI_SCOPES: [&str; 3] = [
    "https://www.googleapis.com/auth/cloud-platform",
    "https://www.googleapis.com/auth/userinfo.email",
    "https://www.googleapis.com/auth/userinfo.profile",
];
const AUTH_URL: &str = "https://accounts.google.com/o/oauth2/v2/auth";
const TOKEN_URL: &str = "https://oauth2.googleapis.com/token";
const CODE_ASSIST_URL: &str = "https://cloudcode-pa.googleapis.com";
const CALLBACK_PORT: u16 = 8085;
const CALLBACK_PATH: &str = "/oauth2callback";
const TIER_FREE: &str = "free-tier";
const TIER_LEGACY: &str = "legacy-tier";
const TIER_STANDARD: &str = "standard-tier";
/// Code Assist answers larger than this are refused.
const MAX_ANSWER_BYTES: usize = 256 * 1024;
const PROJECT_HINT: &str = "set GOOGLE_CLOUD_PROJECT (or GOOGLE_CLOUD_PROJECT_ID) to your Google Cloud project; see https://goo.gle/gemini-cli-auth-docs#workspace-gca";

/// Where and how to sign in. `Default` is Google's real service.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GeminiCliOAuthConfig {
    pub authorize_url: String,
    pub token_url: String,
    /// Cloud Code Assist's base URL (`loadCodeAssist`, `onboardUser`, operations).
    pub code_assist_url: String,
    pub client_id: String,
    pub client_secret: String,
    pub callback_ip: IpAddr,
    /// 8085 (the port pi's redirect names); 0 picks a free one (tests).
    pub callback_port: u16,
    pub callback_path: String,
    /// `GOOGLE_CLOUD_PROJECT` / `GOOGLE_CLOUD_PROJECT_ID`: the project of paid tiers.
    pub env_project: Option<String>,
    pub http_timeout: Duration,
    /// Between polls of a provisioning operation (pi: 5 s), and how many polls at most.
    pub poll_interval: Duration,
    pub max_polls: u32,
}

impl Default for GeminiCliOAuthConfig {
    fn default() -> Self {
        Self {
            authorize_url: AUTH_URL.to_owned(),
            token_url: TOKEN_URL.to_owned(),
            code_assist_url: CODE_ASSIST_URL.to_owned(),
            client_id: GEMINI_CLI_CLIENT_ID.to_owned(),
            client_secret: GEMINI_CLI_CLIENT_SECRET.to_owned(),
            callback_ip: IpAddr::V4(Ipv4Addr::LOCALHOST),
            callback_port: CALLBACK_PORT,
            callback_path: CALLBACK_PATH.to_owned(),
            env_project: None,
            http_timeout: Duration::from_secs(30),
            poll_interval: Duration::from_secs(5),
            max_polls: 60,
        }
    }
}

impl GeminiCliOAuthConfig {
    /// The defaults with `<issuer>/oauth/authorize`, `<issuer>/oauth/token` and Code Assist
    /// at `code_assist` (a proxy, or a test's fakes).
    pub fn with_urls(issuer: &str, code_assist: &str) -> Self {
        let issuer = issuer.trim_end_matches('/');
        Self {
            authorize_url: format!("{issuer}/oauth/authorize"),
            token_url: format!("{issuer}/oauth/token"),
            code_assist_url: code_assist.trim_end_matches('/').to_owned(),
            ..Self::default()
        }
    }

    pub fn callback_port(mut self, port: u16) -> Self {
        self.callback_port = port;
        self
    }
}

/// What a sign-in's calls present as their key: pi's `{"token", "projectId"}`.
pub fn api_key(access: &str, project_id: &str) -> String {
    json!({"token": access, "projectId": project_id}).to_string()
}

/// The access token inside a key [`api_key`] made; `None` for anything else.
pub fn access_of_key(key: &str) -> Option<String> {
    serde_json::from_str::<Value>(key)
        .ok()?
        .get("token")?
        .as_str()
        .map(str::to_owned)
}

/// The Cloud Code Assist OAuth client. Cheap to clone; its HTTP client is built on first use.
#[derive(Debug, Clone)]
pub struct GeminiCliOAuth {
    config: GeminiCliOAuthConfig,
    http: Arc<OnceLock<Result<reqwest::Client, String>>>,
}

impl GeminiCliOAuth {
    pub fn new(config: GeminiCliOAuthConfig) -> Self {
        Self {
            config,
            http: Arc::default(),
        }
    }

    pub fn config(&self) -> &GeminiCliOAuthConfig {
        &self.config
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

    /// Starts a login: PKCE pair, `state`, and the callback listener (if the port is taken,
    /// the user pastes the redirect URL instead).
    pub async fn begin(&self) -> Result<GeminiCliLogin, OAuthError> {
        let addr = SocketAddr::new(self.config.callback_ip, self.config.callback_port);
        let path = &self.config.callback_path;
        let login = PendingLogin::open(
            Pkce::generate()?,
            random_state()?,
            addr,
            path,
            |port| format!("http://localhost:{port}{path}"),
            |challenge, state, redirect_uri| self.authorize_url(challenge, state, redirect_uri),
        )
        .await;
        Ok(GeminiCliLogin {
            oauth: self.clone(),
            login,
        })
    }

    /// The browser URL (pi's parameters, in its order).
    pub fn authorize_url(&self, challenge: &str, state: &str, redirect_uri: &str) -> String {
        let scope = GEMINI_CLI_SCOPES.join(" ");
        let query = url::form_urlencoded::Serializer::new(String::new())
            .extend_pairs([
                ("client_id", self.config.client_id.as_str()),
                ("response_type", "code"),
                ("redirect_uri", redirect_uri),
                ("scope", scope.as_str()),
                ("code_challenge", challenge),
                ("code_challenge_method", "S256"),
                ("state", state),
                ("access_type", "offline"),
                ("prompt", "consent"),
            ])
            .finish();
        format!("{}?{query}", self.config.authorize_url)
    }

    /// New tokens for a stored sign-in; the project stays. Google usually keeps the
    /// refresh token, and a refused one is [`OAuthError::LoginRequired`].
    pub async fn refresh(
        &self,
        current: &OAuthCredential,
        now_ms: u64,
    ) -> Result<OAuthCredential, OAuthError> {
        let answer = post_form(
            self.http()?,
            &self.config.token_url,
            &[
                ("client_id", self.config.client_id.as_str()),
                ("client_secret", self.config.client_secret.as_str()),
                ("refresh_token", current.refresh.expose()),
                ("grant_type", "refresh_token"),
            ],
            self.config.http_timeout,
        )
        .await?;
        if !(200..300).contains(&answer.status) {
            return Err(OAuthError::from_refresh_answer(
                GEMINI_CLI_PROVIDER,
                answer.status,
                &answer.body,
            ));
        }
        let grant = parse_token_response(&answer.body, now_ms)?;
        Ok(OAuthCredential {
            refresh: grant.refresh.unwrap_or_else(|| current.refresh.clone()),
            access: grant.access,
            expires: grant.expires,
            account_id: current.account_id.clone(),
        })
    }

    async fn exchange_code(
        &self,
        code: &Secret,
        verifier: &Secret,
        redirect_uri: &str,
        now_ms: u64,
    ) -> Result<TokenGrant, OAuthError> {
        let answer = post_form(
            self.http()?,
            &self.config.token_url,
            &[
                ("client_id", self.config.client_id.as_str()),
                ("client_secret", self.config.client_secret.as_str()),
                ("code", code.expose()),
                ("grant_type", "authorization_code"),
                ("redirect_uri", redirect_uri),
                ("code_verifier", verifier.expose()),
            ],
            self.config.http_timeout,
        )
        .await?;
        if !(200..300).contains(&answer.status) {
            let (code, description) = parse_token_error(&answer.body);
            return Err(OAuthError::TokenEndpoint {
                status: answer.status,
                code,
                description,
            });
        }
        let grant = parse_token_response(&answer.body, now_ms)?;
        if grant.refresh.is_none() {
            return Err(OAuthError::MalformedTokenResponse(
                "refresh_token is missing; sign in again".into(),
            ));
        }
        Ok(grant)
    }

    /// POSTs (or GETs, without `body`) JSON to Code Assist; the status and bounded body.
    async fn code_assist(
        &self,
        access: &Secret,
        path: &str,
        body: Option<&Value>,
    ) -> Result<(u16, Vec<u8>), OAuthError> {
        let url = format!("{}/{path}", self.config.code_assist_url);
        let http = self.http()?;
        let request = match body {
            Some(body) => http.post(&url).json(body),
            None => http.get(&url),
        };
        let network = |source: reqwest::Error| OAuthError::Network {
            url: url.clone(),
            source: source.without_url(),
        };
        let mut response = request
            .bearer_auth(access.expose())
            .header("user-agent", "google-api-nodejs-client/9.15.1")
            .header("x-goog-api-client", "gl-node/22.17.0")
            .timeout(self.config.http_timeout)
            .send()
            .await
            .map_err(network)?;
        let status = response.status().as_u16();
        let mut bytes = Vec::new();
        while let Some(chunk) = response.chunk().await.map_err(network)? {
            if bytes.len() + chunk.len() > MAX_ANSWER_BYTES {
                return Err(OAuthError::CodeAssist(format!(
                    "{path} answered more than {MAX_ANSWER_BYTES} bytes"
                )));
            }
            bytes.extend_from_slice(&chunk);
        }
        Ok((status, bytes))
    }

    /// The user's Cloud Code Assist project: the one `loadCodeAssist` names, else one
    /// `onboardUser` provisions (pi's `discoverProject`).
    pub async fn discover_project(&self, access: &Secret) -> Result<String, OAuthError> {
        let env = self.config.env_project.as_deref();
        let (status, body) = self
            .code_assist(
                access,
                "v1internal:loadCodeAssist",
                Some(&load_request(env)),
            )
            .await?;
        let onboard = match plan_after_load(status, &body, env)? {
            NextStep::Project(project) => return Ok(project),
            NextStep::Onboard(request) => request,
        };
        let (status, body) = self
            .code_assist(access, "v1internal:onboardUser", Some(&onboard))
            .await?;
        if !(200..300).contains(&status) {
            return Err(OAuthError::CodeAssist(format!(
                "onboardUser failed: HTTP {status}{}",
                error_suffix(&body)
            )));
        }
        let mut operation = parse_operation(&body)?;
        let mut polls = 0;
        while !operation.done {
            let Some(name) = operation.name.clone() else {
                break;
            };
            if polls >= self.config.max_polls {
                return Err(OAuthError::CodeAssist(
                    "provisioning the project is taking too long; try again later".into(),
                ));
            }
            polls += 1;
            tokio::time::sleep(self.config.poll_interval).await;
            let (status, body) = self
                .code_assist(access, &format!("v1internal/{name}"), None)
                .await?;
            if !(200..300).contains(&status) {
                return Err(OAuthError::CodeAssist(format!(
                    "polling the provisioning failed: HTTP {status}"
                )));
            }
            operation = parse_operation(&body)?;
        }
        operation
            .project
            .or_else(|| env.map(str::to_owned))
            .ok_or_else(|| {
                OAuthError::CodeAssist(format!(
                    "could not discover or provision a Google Cloud project; {PROJECT_HINT}"
                ))
            })
    }
}

/// `loadCodeAssist`'s request (fields without a value are left out, as JSON.stringify does).
fn load_request(env_project: Option<&str>) -> Value {
    let mut metadata = json!({
        "ideType": "IDE_UNSPECIFIED",
        "platform": "PLATFORM_UNSPECIFIED",
        "pluginType": "GEMINI",
    });
    let mut body = json!({});
    if let Some(project) = env_project {
        body["cloudaicompanionProject"] = json!(project);
        metadata["duetProject"] = json!(project);
    }
    body["metadata"] = metadata;
    body
}

/// What follows `loadCodeAssist`.
#[derive(Debug, Clone, PartialEq)]
pub enum NextStep {
    /// The user's project is known.
    Project(String),
    /// Onboard with this `onboardUser` request.
    Onboard(Value),
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", default)]
struct LoadAnswer {
    cloudaicompanion_project: Option<Value>,
    current_tier: Option<Value>,
    allowed_tiers: Option<Vec<Value>>,
}

/// Decides from `loadCodeAssist`'s answer (`status`, `body`) as pi does: a current tier
/// with a project → that project; a current tier without → the environment's project or
/// an error; no tier → onboard to the default allowed tier (legacy when none is marked),
/// which needs the environment's project unless it is the free tier. A refusal for a VPC
/// Service Controls policy counts as the standard tier.
pub fn plan_after_load(
    status: u16,
    body: &[u8],
    env_project: Option<&str>,
) -> Result<NextStep, OAuthError> {
    let needs_project =
        || OAuthError::CodeAssist(format!("this account needs a project: {PROJECT_HINT}"));
    let answer: LoadAnswer = if (200..300).contains(&status) {
        serde_json::from_slice(body).map_err(|_| {
            OAuthError::CodeAssist("loadCodeAssist answered something that is not JSON".into())
        })?
    } else if vpc_sc_affected(body) {
        LoadAnswer {
            current_tier: Some(json!({"id": TIER_STANDARD})),
            ..LoadAnswer::default()
        }
    } else {
        return Err(OAuthError::CodeAssist(format!(
            "loadCodeAssist failed: HTTP {status}{}",
            error_suffix(body)
        )));
    };
    if answer.current_tier.is_some() {
        let project = answer
            .cloudaicompanion_project
            .as_ref()
            .and_then(Value::as_str)
            .filter(|p| !p.is_empty())
            .or(env_project);
        return project
            .map(|p| NextStep::Project(p.to_owned()))
            .ok_or_else(needs_project);
    }
    let tier_id = answer
        .allowed_tiers
        .iter()
        .flatten()
        .find(|t| t.get("isDefault").and_then(Value::as_bool) == Some(true))
        .map_or(Some(TIER_LEGACY), |t| t.get("id").and_then(Value::as_str))
        .unwrap_or(TIER_FREE)
        .to_owned();
    if tier_id != TIER_FREE && env_project.is_none() {
        return Err(needs_project());
    }
    let mut metadata = json!({
        "ideType": "IDE_UNSPECIFIED",
        "platform": "PLATFORM_UNSPECIFIED",
        "pluginType": "GEMINI",
    });
    let mut request = json!({"tierId": tier_id});
    if let Some(project) = env_project.filter(|_| tier_id != TIER_FREE) {
        request["cloudaicompanionProject"] = json!(project);
        metadata["duetProject"] = json!(project);
    }
    request["metadata"] = metadata;
    Ok(NextStep::Onboard(request))
}

fn vpc_sc_affected(body: &[u8]) -> bool {
    serde_json::from_slice::<Value>(body)
        .ok()
        .and_then(|v| v.pointer("/error/details").cloned())
        .and_then(|d| d.as_array().cloned())
        .is_some_and(|details| {
            details.iter().any(|d| {
                d.get("reason").and_then(Value::as_str) == Some("SECURITY_POLICY_VIOLATED")
            })
        })
}

/// `: <message>` of a Google error body (never the raw body).
fn error_suffix(body: &[u8]) -> String {
    serde_json::from_slice::<Value>(body)
        .ok()
        .and_then(|v| {
            v.pointer("/error/message")
                .and_then(Value::as_str)
                .map(str::to_owned)
        })
        .map(|m| format!(": {}", m.chars().take(200).collect::<String>()))
        .unwrap_or_default()
}

/// A provisioning operation as `onboardUser` and its polls answer it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Operation {
    pub name: Option<String>,
    pub done: bool,
    pub project: Option<String>,
}

/// Reads an operation (`{name, done, response: {cloudaicompanionProject: {id}}}`).
pub fn parse_operation(body: &[u8]) -> Result<Operation, OAuthError> {
    let value: Value = serde_json::from_slice(body).map_err(|_| {
        OAuthError::CodeAssist("onboardUser answered something that is not JSON".into())
    })?;
    if !value.is_object() {
        return Err(OAuthError::CodeAssist(
            "onboardUser answered something that is not an operation".into(),
        ));
    }
    let text = |pointer: &str| {
        value
            .pointer(pointer)
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .map(str::to_owned)
    };
    Ok(Operation {
        name: text("/name"),
        done: value.get("done").and_then(Value::as_bool).unwrap_or(false),
        project: text("/response/cloudaicompanionProject/id"),
    })
}

/// A login in progress. Dropping it stops the callback listener.
pub struct GeminiCliLogin {
    oauth: GeminiCliOAuth,
    login: PendingLogin,
}

impl std::fmt::Debug for GeminiCliLogin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GeminiCliLogin")
            .field("start", self.login.start())
            .finish_non_exhaustive()
    }
}

impl GeminiCliLogin {
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

    /// The code in a pasted redirect URL (or bare code); a `state` in it must be this login's.
    pub fn parse_pasted(&self, input: &str) -> Result<Secret, OAuthError> {
        self.login.parse_pasted(input)
    }

    /// Exchanges the code, then finds the Cloud Code Assist project: the stored credential
    /// (its account id is the project).
    pub async fn exchange(self, code: &Secret, now_ms: u64) -> Result<OAuthCredential, OAuthError> {
        let closed = self.login.close();
        let grant = self
            .oauth
            .exchange_code(
                code,
                closed.pkce.verifier(),
                &closed.start.redirect_uri,
                now_ms,
            )
            .await?;
        let project = self.oauth.discover_project(&grant.access).await?;
        Ok(OAuthCredential {
            refresh: grant.refresh.unwrap_or_else(|| Secret::new("")),
            access: grant.access,
            expires: grant.expires,
            account_id: Some(project),
        })
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

#[cfg(test)]
#[path = "gemini_cli_tests.rs"]
mod tests;

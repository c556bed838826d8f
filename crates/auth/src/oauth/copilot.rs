//! github-copilot sign-in, as pi-ai's `github-copilot.ts` does it: GitHub's OAuth device
//! flow with the Copilot Chat client id (`POST /login/device/code`, show the verification
//! URL and user code, poll `POST /login/oauth/access_token` at the server's interval,
//! slower after `slow_down`, until the code expires), then the Copilot token exchange
//! (`GET api.<domain>/copilot_internal/v2/token` with the GitHub token) that yields a
//! short-lived Copilot token and its expiry. GitHub Enterprise domains work the same way.
//!
//! Stored as an OAuth profile: `refresh` is the long-lived GitHub token, `access` the
//! Copilot token (expiry five minutes early, as pi does), `accountId` the enterprise domain
//! (absent for github.com). "Refreshing" is the exchange again. GitHub tokens from the
//! environment (`COPILOT_GITHUB_TOKEN`, `GH_TOKEN`, `GITHUB_TOKEN`) go through the same
//! exchange ([`CopilotOAuth::exchange_cached`]). The API base URL comes from the token's
//! `proxy-ep` field (pincer-ai's `copilot_base_url`).

use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use serde_json::Value;

use super::OAuthError;
use crate::file::OAuthCredential;
use crate::secret::Secret;

/// The provider id of Copilot profiles.
pub const COPILOT_PROVIDER: &str = "github-copilot";
/// The Copilot Chat extension's public OAuth client id (device flow: no secret).
pub const COPILOT_CLIENT_ID: &str = "Iv1.b507a08c87ecfe98";
const USER_AGENT: &str = "GitHubCopilotChat/0.35.0";
/// The editor identity Copilot's token endpoint expects (pi's `COPILOT_HEADERS`).
const COPILOT_HEADERS: [(&str, &str); 4] = [
    ("User-Agent", USER_AGENT),
    ("Editor-Version", "vscode/1.107.0"),
    ("Editor-Plugin-Version", "copilot-chat/0.35.0"),
    ("Copilot-Integration-Id", "vscode-chat"),
];
const DEVICE_GRANT: &str = "urn:ietf:params:oauth:grant-type:device_code";
/// pi waits a little longer than the server asks, and more so after a `slow_down`.
const INITIAL_POLL_FACTOR: f64 = 1.2;
const SLOW_DOWN_POLL_FACTOR: f64 = 1.4;
/// Copilot tokens are treated as expired this long before they are.
const EXPIRY_MARGIN_MS: u64 = 5 * 60 * 1000;
const MAX_ANSWER_BYTES: usize = 64 * 1024;
const MAX_TEXT_CHARS: usize = 200;

/// Where to sign in. `Default` is github.com.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CopilotOAuthConfig {
    pub device_code_url: String,
    pub access_token_url: String,
    pub copilot_token_url: String,
    pub client_id: String,
    /// The GitHub Enterprise domain, `None` for github.com.
    pub enterprise_domain: Option<String>,
    /// The shortest wait between polls (GitHub's minimum is 1 s; tests use less).
    pub min_poll_interval: Duration,
    pub http_timeout: Duration,
}

impl Default for CopilotOAuthConfig {
    fn default() -> Self {
        Self::for_domain(None)
    }
}

impl CopilotOAuthConfig {
    /// github.com, or the GitHub Enterprise `domain` (`company.ghe.com`).
    pub fn for_domain(domain: Option<&str>) -> Self {
        let host = domain.unwrap_or("github.com");
        let mut config =
            Self::with_urls(&format!("https://{host}"), &format!("https://api.{host}"));
        config.enterprise_domain = domain.map(str::to_owned);
        config
    }

    /// `<github>/login/device/code`, `<github>/login/oauth/access_token` and
    /// `<api>/copilot_internal/v2/token` (a proxy, or a test's fake server).
    pub fn with_urls(github: &str, api: &str) -> Self {
        let (github, api) = (github.trim_end_matches('/'), api.trim_end_matches('/'));
        Self {
            device_code_url: format!("{github}/login/device/code"),
            access_token_url: format!("{github}/login/oauth/access_token"),
            copilot_token_url: format!("{api}/copilot_internal/v2/token"),
            client_id: COPILOT_CLIENT_ID.to_owned(),
            enterprise_domain: None,
            min_poll_interval: Duration::from_secs(1),
            http_timeout: Duration::from_secs(30),
        }
    }
}

/// The host name of what the user typed for a GitHub Enterprise server (`company.ghe.com`,
/// `https://company.ghe.com/…`); `Ok(None)` for blank input (github.com).
pub fn normalize_domain(input: &str) -> Result<Option<String>, OAuthError> {
    let trimmed = input.trim();
    if trimmed.is_empty() {
        return Ok(None);
    }
    let candidate = if trimmed.contains("://") {
        trimmed.to_owned()
    } else {
        format!("https://{trimmed}")
    };
    url::Url::parse(&candidate)
        .ok()
        .and_then(|u| u.host_str().map(str::to_owned))
        .filter(|h| !h.is_empty())
        .map(Some)
        .ok_or_else(|| OAuthError::Config(format!("invalid GitHub Enterprise domain {trimmed:?}")))
}

/// GitHub's answer to the device-code request.
#[derive(Debug, Clone, PartialEq)]
pub struct DeviceCode {
    pub device_code: Secret,
    /// What the user types at [`Self::verification_uri`].
    pub user_code: String,
    pub verification_uri: String,
    /// Seconds between polls.
    pub interval: f64,
    /// Seconds until the code expires.
    pub expires_in: f64,
}

/// One answer to a poll of the access-token endpoint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DevicePoll {
    /// Signed in: the GitHub token.
    Token(Secret),
    /// The user has not finished yet.
    Pending,
    /// Poll slower: at `interval` seconds when given.
    SlowDown { interval: Option<u64> },
    /// Any other error (`expired_token`, `access_denied`, …): the login is over.
    Failed {
        error: String,
        description: Option<String>,
    },
}

/// A Copilot token and when to stop using it (epoch ms, five minutes early).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CopilotToken {
    pub token: Secret,
    pub expires: u64,
}

fn malformed(what: &str) -> OAuthError {
    OAuthError::MalformedTokenResponse(what.to_owned())
}

fn object(body: &[u8]) -> Result<serde_json::Map<String, Value>, OAuthError> {
    match serde_json::from_slice(body) {
        Ok(Value::Object(fields)) => Ok(fields),
        Ok(_) => Err(malformed("not a JSON object")),
        Err(_) => Err(malformed("not JSON")),
    }
}

fn short(text: &str) -> String {
    text.chars().take(MAX_TEXT_CHARS).collect()
}

fn positive(fields: &serde_json::Map<String, Value>, name: &str) -> Result<f64, OAuthError> {
    fields
        .get(name)
        .and_then(Value::as_f64)
        .filter(|n| n.is_finite() && *n >= 0.0)
        .ok_or_else(|| malformed(&format!("{name} is not a non-negative number")))
}

fn non_empty(fields: &serde_json::Map<String, Value>, name: &str) -> Result<String, OAuthError> {
    match fields.get(name) {
        Some(Value::String(s)) if !s.is_empty() => Ok(s.clone()),
        Some(_) => Err(malformed(&format!("{name} is not a non-empty string"))),
        None => Err(malformed(&format!("{name} is missing"))),
    }
}

/// Parses the device-code answer: every field pi checks must be there with its type.
pub fn parse_device_code(body: &[u8]) -> Result<DeviceCode, OAuthError> {
    let fields = object(body)?;
    Ok(DeviceCode {
        device_code: Secret::new(non_empty(&fields, "device_code")?),
        user_code: short(&non_empty(&fields, "user_code")?),
        verification_uri: non_empty(&fields, "verification_uri")?,
        interval: positive(&fields, "interval")?,
        expires_in: positive(&fields, "expires_in")?,
    })
}

/// Parses an answer of the access-token endpoint while polling.
pub fn parse_device_poll(body: &[u8]) -> Result<DevicePoll, OAuthError> {
    let fields = object(body)?;
    if let Some(Value::String(token)) = fields.get("access_token") {
        if token.is_empty() {
            return Err(malformed("access_token is empty"));
        }
        return Ok(DevicePoll::Token(Secret::new(token.clone())));
    }
    let Some(Value::String(error)) = fields.get("error") else {
        return Err(malformed("neither access_token nor error"));
    };
    Ok(match error.as_str() {
        "authorization_pending" => DevicePoll::Pending,
        "slow_down" => DevicePoll::SlowDown {
            interval: fields
                .get("interval")
                .and_then(Value::as_u64)
                .filter(|n| *n > 0),
        },
        other => DevicePoll::Failed {
            error: short(other),
            description: fields
                .get("error_description")
                .and_then(Value::as_str)
                .filter(|d| !d.is_empty())
                .map(short),
        },
    })
}

/// Parses the Copilot token answer: `token` (string) and `expires_at` (epoch seconds).
pub fn parse_copilot_token(body: &[u8]) -> Result<CopilotToken, OAuthError> {
    let fields = object(body)?;
    let token = non_empty(&fields, "token")?;
    let expires_at = fields
        .get("expires_at")
        .and_then(Value::as_f64)
        .filter(|n| n.is_finite() && *n > 0.0)
        .ok_or_else(|| malformed("expires_at is not a positive number"))?;
    // Bounded so the product cannot overflow (year ~2286 is far enough).
    let expires_ms = (expires_at.min(1e10) * 1000.0) as u64;
    Ok(CopilotToken {
        token: Secret::new(token),
        expires: expires_ms.saturating_sub(EXPIRY_MARGIN_MS),
    })
}

/// The Copilot OAuth client: device-flow logins and token exchanges. Cheap to clone.
#[derive(Debug, Clone)]
pub struct CopilotOAuth {
    config: CopilotOAuthConfig,
    http: Arc<OnceLock<Result<reqwest::Client, String>>>,
    /// The last exchange of an environment GitHub token, reused until it expires.
    cached: Arc<Mutex<Option<(Secret, OAuthCredential)>>>,
}

impl CopilotOAuth {
    pub fn new(config: CopilotOAuthConfig) -> Self {
        Self {
            config,
            http: Arc::default(),
            cached: Arc::default(),
        }
    }

    pub fn config(&self) -> &CopilotOAuthConfig {
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

    async fn post_device(&self, url: &str, form: &[(&str, &str)]) -> Result<Vec<u8>, OAuthError> {
        let body = url::form_urlencoded::Serializer::new(String::new())
            .extend_pairs(form)
            .finish();
        let request = self
            .http()?
            .post(url)
            .header(reqwest::header::ACCEPT, "application/json")
            .header(
                reqwest::header::CONTENT_TYPE,
                "application/x-www-form-urlencoded",
            )
            .header(reqwest::header::USER_AGENT, USER_AGENT)
            .body(body);
        let (status, body) = send(request, url, self.config.http_timeout).await?;
        if !(200..300).contains(&status) {
            let (code, description) = super::token::parse_token_error(&body);
            return Err(OAuthError::TokenEndpoint {
                status,
                code,
                description,
            });
        }
        Ok(body)
    }

    /// Asks GitHub for a device code (scope `read:user`).
    pub async fn start_device_flow(&self) -> Result<DeviceCode, OAuthError> {
        let body = self
            .post_device(
                &self.config.device_code_url,
                &[
                    ("client_id", &self.config.client_id),
                    ("scope", "read:user"),
                ],
            )
            .await?;
        parse_device_code(&body)
    }

    /// Polls until the user has entered the code; returns the GitHub token. Waits the
    /// server's interval (×1.2; after `slow_down` its new interval, or 5 s more, ×1.4) and
    /// gives up when the code expires.
    pub async fn poll_for_github_token(&self, device: &DeviceCode) -> Result<Secret, OAuthError> {
        let started = tokio::time::Instant::now();
        let deadline = started + Duration::from_secs_f64(device.expires_in.min(86_400.0));
        let min = self.config.min_poll_interval;
        let mut interval = Duration::from_secs_f64(device.interval.min(3600.0)).max(min);
        let mut factor = INITIAL_POLL_FACTOR;
        let mut slowed_down = false;
        loop {
            let now = tokio::time::Instant::now();
            if now >= deadline {
                return Err(OAuthError::DeviceCodeExpired { slowed_down });
            }
            let wait = interval.mul_f64(factor).min(deadline - now);
            tokio::time::sleep(wait).await;
            let body = self
                .post_device(
                    &self.config.access_token_url,
                    &[
                        ("client_id", &self.config.client_id),
                        ("device_code", device.device_code.expose()),
                        ("grant_type", DEVICE_GRANT),
                    ],
                )
                .await?;
            match parse_device_poll(&body)? {
                DevicePoll::Token(token) => return Ok(token),
                DevicePoll::Pending => {}
                DevicePoll::SlowDown { interval: next } => {
                    slowed_down = true;
                    interval = match next {
                        Some(secs) => Duration::from_secs(secs.min(3600)),
                        None => (interval + Duration::from_secs(5)).max(min),
                    };
                    factor = SLOW_DOWN_POLL_FACTOR;
                }
                DevicePoll::Failed { error, description } => {
                    return Err(OAuthError::Denied { error, description });
                }
            }
        }
    }

    /// Exchanges a GitHub token for a Copilot token. A refused GitHub token (401/403) is
    /// [`OAuthError::LoginRequired`].
    pub async fn exchange(
        &self,
        github_token: &Secret,
        _now_ms: u64,
    ) -> Result<OAuthCredential, OAuthError> {
        let url = &self.config.copilot_token_url;
        let mut request = self
            .http()?
            .get(url)
            .header(reqwest::header::ACCEPT, "application/json")
            .header(
                reqwest::header::AUTHORIZATION,
                format!("Bearer {}", github_token.expose()),
            );
        for (name, value) in COPILOT_HEADERS {
            request = request.header(name, value);
        }
        let (status, body) = send(request, url, self.config.http_timeout).await?;
        if status == 401 || status == 403 {
            return Err(OAuthError::LoginRequired {
                provider: COPILOT_PROVIDER.to_owned(),
                code: format!("HTTP {status} from the Copilot token endpoint"),
            });
        }
        if !(200..300).contains(&status) {
            let (code, description) = super::token::parse_token_error(&body);
            return Err(OAuthError::TokenEndpoint {
                status,
                code,
                description,
            });
        }
        let copilot = parse_copilot_token(&body)?;
        Ok(OAuthCredential {
            access: copilot.token,
            refresh: github_token.clone(),
            expires: copilot.expires,
            account_id: self.config.enterprise_domain.clone(),
        })
    }

    /// [`Self::exchange`] for a profile's stored GitHub token (its `refresh`); `domain` is
    /// the profile's enterprise domain.
    pub async fn refresh(
        &self,
        github_token: &Secret,
        domain: Option<&str>,
        now_ms: u64,
    ) -> Result<OAuthCredential, OAuthError> {
        match domain {
            Some(domain) if self.config.enterprise_domain.as_deref() != Some(domain) => {
                Self::new(CopilotOAuthConfig::for_domain(Some(domain)))
                    .exchange(github_token, now_ms)
                    .await
            }
            _ => self.exchange(github_token, now_ms).await,
        }
    }

    /// The Copilot token for an environment GitHub token: the last exchange while it is
    /// fresh (`margin_ms` before expiry), else a new one.
    pub async fn exchange_cached(
        &self,
        github_token: &Secret,
        now_ms: u64,
        margin_ms: u64,
    ) -> Result<OAuthCredential, OAuthError> {
        if let Some((cached_for, credential)) = self.lock_cache().clone()
            && cached_for == *github_token
            && now_ms.saturating_add(margin_ms) < credential.expires
        {
            return Ok(credential);
        }
        let fresh = self.exchange(github_token, now_ms).await?;
        *self.lock_cache() = Some((github_token.clone(), fresh.clone()));
        Ok(fresh)
    }

    /// Forgets a cached exchange whose Copilot token was refused (a 401 mid-use).
    pub fn forget_cached(&self, rejected_access: &str) {
        let mut cache = self.lock_cache();
        if cache
            .as_ref()
            .is_some_and(|(_, c)| c.access.expose() == rejected_access)
        {
            *cache = None;
        }
    }

    fn lock_cache(&self) -> std::sync::MutexGuard<'_, Option<(Secret, OAuthCredential)>> {
        self.cached.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// Sends `request` and reads at most 64 KiB of its answer.
pub(super) async fn send(
    request: reqwest::RequestBuilder,
    url: &str,
    timeout: Duration,
) -> Result<(u16, Vec<u8>), OAuthError> {
    let network = |source: reqwest::Error| OAuthError::Network {
        url: url.to_owned(),
        source: source.without_url(),
    };
    let mut response = request.timeout(timeout).send().await.map_err(network)?;
    let status = response.status().as_u16();
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(network)? {
        if body.len() + chunk.len() > MAX_ANSWER_BYTES {
            return Err(malformed("the answer is larger than 64 KiB"));
        }
        body.extend_from_slice(&chunk);
    }
    Ok((status, body))
}

#[cfg(test)]
#[path = "copilot_tests.rs"]
mod tests;

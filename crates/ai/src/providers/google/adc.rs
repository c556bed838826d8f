//! Google Application Default Credentials for Vertex AI: the credential file
//! (`GOOGLE_APPLICATION_CREDENTIALS`, else gcloud's
//! `~/.config/gcloud/application_default_credentials.json`), and access tokens from it.
//!
//! - `service_account`: an RS256 JWT assertion (`iss` = the account's email, `scope` =
//!   cloud-platform, `aud` = the token URI, one hour) signed with the file's PKCS#8 key and
//!   traded at `token_uri` (`grant_type=urn:ietf:params:oauth:grant-type:jwt-bearer`).
//! - `authorized_user` (`gcloud auth application-default login`): a `refresh_token` grant
//!   with the file's client id and secret.
//!
//! Tokens are cached until a minute before they expire; [`TokenSource::invalidate`] drops
//! one the server refused so the next call fetches a new one.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use serde::Deserialize;
use serde_json::json;

/// Google's token endpoint, where files without a `token_uri` send their grants.
pub const DEFAULT_TOKEN_URI: &str = "https://oauth2.googleapis.com/token";
/// The scope Vertex AI needs.
pub const CLOUD_PLATFORM_SCOPE: &str = "https://www.googleapis.com/auth/cloud-platform";
/// Tokens this close to expiry are replaced first, so they do not expire mid-call.
const REFRESH_MARGIN: Duration = Duration::from_secs(60);
/// How long one call to the token endpoint may take.
const TOKEN_TIMEOUT: Duration = Duration::from_secs(30);
/// Credential files are small; anything bigger is not one.
const MAX_FILE_BYTES: u64 = 256 * 1024;

/// Why no access token could be had. No variant carries a secret.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AdcError {
    #[error(
        "no Google credentials: set GOOGLE_APPLICATION_CREDENTIALS to a service-account key file, or run `gcloud auth application-default login` (looked for {0})"
    )]
    NotFound(String),
    #[error("cannot read the Google credential file {path}: {message}")]
    Read { path: String, message: String },
    #[error("the Google credential file is malformed: {0}")]
    Malformed(String),
    #[error(
        "Google credentials of type {0:?} are not supported (use service_account or authorized_user)"
    )]
    UnsupportedType(String),
    #[error("the service account's private_key is unusable: {0}")]
    PrivateKey(String),
    #[error("cannot reach the Google token endpoint {url}: {message}")]
    Network { url: String, message: String },
    #[error("the Google token endpoint refused the credentials (HTTP {status}){}", .detail.as_ref().map(|d| format!(": {d}")).unwrap_or_default())]
    Refused { status: u16, detail: Option<String> },
    #[error("the Google token endpoint sent a malformed answer: {0}")]
    MalformedToken(String),
}

/// A parsed credential file.
#[derive(Clone, PartialEq, Eq)]
pub enum AdcCredentials {
    ServiceAccount {
        client_email: String,
        private_key: String,
        private_key_id: Option<String>,
        token_uri: String,
    },
    AuthorizedUser {
        client_id: String,
        client_secret: String,
        refresh_token: String,
        token_uri: String,
    },
}

impl std::fmt::Debug for AdcCredentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::ServiceAccount {
                client_email,
                token_uri,
                ..
            } => f
                .debug_struct("ServiceAccount")
                .field("client_email", client_email)
                .field("token_uri", token_uri)
                .finish_non_exhaustive(),
            Self::AuthorizedUser {
                client_id,
                token_uri,
                ..
            } => f
                .debug_struct("AuthorizedUser")
                .field("client_id", client_id)
                .field("token_uri", token_uri)
                .finish_non_exhaustive(),
        }
    }
}

#[derive(Deserialize)]
struct RawFile {
    #[serde(rename = "type")]
    kind: Option<String>,
    client_email: Option<String>,
    private_key: Option<String>,
    private_key_id: Option<String>,
    client_id: Option<String>,
    client_secret: Option<String>,
    refresh_token: Option<String>,
    token_uri: Option<String>,
}

/// Parses a credential file's bytes.
pub fn parse_credentials(bytes: &[u8]) -> Result<AdcCredentials, AdcError> {
    let raw: RawFile = serde_json::from_slice(bytes).map_err(|e| {
        // The error's position is enough; its text could quote a key.
        AdcError::Malformed(format!(
            "not a JSON object (line {}, column {})",
            e.line(),
            e.column()
        ))
    })?;
    let field = |value: Option<String>, name: &str| {
        value
            .filter(|v| !v.trim().is_empty())
            .ok_or_else(|| AdcError::Malformed(format!("{name} is missing")))
    };
    let token_uri = match raw.token_uri.filter(|u| !u.trim().is_empty()) {
        Some(uri) if uri.starts_with("https://") || uri.starts_with("http://") => uri,
        Some(_) => {
            return Err(AdcError::Malformed(
                "token_uri is not an http(s) URL".into(),
            ));
        }
        None => DEFAULT_TOKEN_URI.to_owned(),
    };
    match raw.kind.as_deref() {
        Some("service_account") => Ok(AdcCredentials::ServiceAccount {
            client_email: field(raw.client_email, "client_email")?,
            private_key: field(raw.private_key, "private_key")?,
            private_key_id: raw.private_key_id.filter(|k| !k.is_empty()),
            token_uri,
        }),
        Some("authorized_user") => Ok(AdcCredentials::AuthorizedUser {
            client_id: field(raw.client_id, "client_id")?,
            client_secret: field(raw.client_secret, "client_secret")?,
            refresh_token: field(raw.refresh_token, "refresh_token")?,
            token_uri,
        }),
        Some(other) => Err(AdcError::UnsupportedType(other.to_owned())),
        None => Err(AdcError::Malformed("type is missing".into())),
    }
}

/// The DER bytes of a PEM `PRIVATE KEY` block (PKCS#8).
pub fn pem_to_der(pem: &str) -> Result<Vec<u8>, AdcError> {
    let begin = "-----BEGIN PRIVATE KEY-----";
    let end = "-----END PRIVATE KEY-----";
    let start = pem
        .find(begin)
        .ok_or_else(|| AdcError::PrivateKey("no PKCS#8 PEM block (BEGIN PRIVATE KEY)".into()))?;
    let rest = &pem[start + begin.len()..];
    let stop = rest
        .find(end)
        .ok_or_else(|| AdcError::PrivateKey("the PEM block does not end".into()))?;
    let body: String = rest[..stop]
        .chars()
        .filter(|c| !c.is_ascii_whitespace())
        .collect();
    STANDARD
        .decode(body)
        .map_err(|_| AdcError::PrivateKey("the PEM block is not base64".into()))
}

/// A signed RS256 assertion for `client_email` at `now_s` (Unix seconds).
pub fn service_account_assertion(
    client_email: &str,
    private_key: &str,
    private_key_id: Option<&str>,
    token_uri: &str,
    now_s: u64,
) -> Result<String, AdcError> {
    let der = pem_to_der(private_key)?;
    let key = ring::signature::RsaKeyPair::from_pkcs8(&der)
        .map_err(|e| AdcError::PrivateKey(format!("not an RSA PKCS#8 key ({e})")))?;
    let mut header = json!({"alg": "RS256", "typ": "JWT"});
    if let Some(kid) = private_key_id {
        header["kid"] = json!(kid);
    }
    let claims = json!({
        "iss": client_email,
        "scope": CLOUD_PLATFORM_SCOPE,
        "aud": token_uri,
        "iat": now_s,
        "exp": now_s + 3600,
    });
    let signing_input = format!(
        "{}.{}",
        URL_SAFE_NO_PAD.encode(header.to_string()),
        URL_SAFE_NO_PAD.encode(claims.to_string())
    );
    let mut signature = vec![0; key.public().modulus_len()];
    key.sign(
        &ring::signature::RSA_PKCS1_SHA256,
        &ring::rand::SystemRandom::new(),
        signing_input.as_bytes(),
        &mut signature,
    )
    .map_err(|_| AdcError::PrivateKey("signing failed".into()))?;
    Ok(format!(
        "{signing_input}.{}",
        URL_SAFE_NO_PAD.encode(signature)
    ))
}

#[derive(Deserialize)]
struct TokenAnswer {
    access_token: Option<String>,
    expires_in: Option<u64>,
}

/// An access token and when it stops working.
#[derive(Clone)]
pub struct AccessToken {
    pub token: String,
    pub expires_at: Instant,
}

/// Reads a token endpoint's success answer.
pub fn parse_token_answer(body: &[u8], now: Instant) -> Result<AccessToken, AdcError> {
    let answer: TokenAnswer = serde_json::from_slice(body)
        .map_err(|_| AdcError::MalformedToken("not a JSON object".into()))?;
    let token = answer
        .access_token
        .filter(|t| !t.is_empty())
        .ok_or_else(|| AdcError::MalformedToken("access_token is missing".into()))?;
    // Google always says; an hour is its lifetime when a proxy drops the field.
    let lifetime = Duration::from_secs(answer.expires_in.unwrap_or(3600).min(86_400));
    Ok(AccessToken {
        token,
        expires_at: now + lifetime,
    })
}

/// Where the credential file is: `explicit`, else `GOOGLE_APPLICATION_CREDENTIALS`, else
/// gcloud's default under `home`.
pub fn credential_path(
    explicit: Option<&Path>,
    env_var: Option<String>,
    home: Option<PathBuf>,
) -> Option<PathBuf> {
    explicit
        .map(Path::to_path_buf)
        .or_else(|| env_var.map(PathBuf::from))
        .or_else(|| home.map(|h| h.join(".config/gcloud/application_default_credentials.json")))
}

/// Access tokens from one credential file, cached; one fetch at a time.
#[derive(Default)]
pub struct TokenSource {
    cached: tokio::sync::Mutex<Option<(PathBuf, AccessToken)>>,
}

impl TokenSource {
    /// A token for the credentials at `path`: the cached one while it is fresh, else a new one.
    pub async fn token(&self, http: &reqwest::Client, path: &Path) -> Result<String, AdcError> {
        let mut cached = self.cached.lock().await;
        if let Some((p, token)) = cached.as_ref()
            && p == path
            && token.expires_at > Instant::now() + REFRESH_MARGIN
        {
            return Ok(token.token.clone());
        }
        let credentials = read_credentials(path).await?;
        let fresh = fetch_token(http, &credentials).await?;
        let token = fresh.token.clone();
        *cached = Some((path.to_path_buf(), fresh));
        Ok(token)
    }

    /// Forgets `token` if it is the cached one (the server refused it).
    pub async fn invalidate(&self, token: &str) {
        let mut cached = self.cached.lock().await;
        if cached.as_ref().is_some_and(|(_, t)| t.token == token) {
            *cached = None;
        }
    }
}

async fn read_credentials(path: &Path) -> Result<AdcCredentials, AdcError> {
    let shown = path.display().to_string();
    let meta = match tokio::fs::metadata(path).await {
        Ok(meta) => meta,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(AdcError::NotFound(shown));
        }
        Err(e) => {
            return Err(AdcError::Read {
                path: shown,
                message: e.to_string(),
            });
        }
    };
    if meta.len() > MAX_FILE_BYTES {
        return Err(AdcError::Malformed(format!(
            "{shown} is larger than {MAX_FILE_BYTES} bytes"
        )));
    }
    let bytes = tokio::fs::read(path).await.map_err(|e| AdcError::Read {
        path: shown,
        message: e.to_string(),
    })?;
    parse_credentials(&bytes)
}

/// Trades the credentials for an access token at their token URI.
pub async fn fetch_token(
    http: &reqwest::Client,
    credentials: &AdcCredentials,
) -> Result<AccessToken, AdcError> {
    let (url, form): (&str, Vec<(&str, String)>) = match credentials {
        AdcCredentials::ServiceAccount {
            client_email,
            private_key,
            private_key_id,
            token_uri,
        } => {
            let now_s = SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(0, |d| d.as_secs());
            let assertion = service_account_assertion(
                client_email,
                private_key,
                private_key_id.as_deref(),
                token_uri,
                now_s,
            )?;
            (
                token_uri,
                vec![
                    (
                        "grant_type",
                        "urn:ietf:params:oauth:grant-type:jwt-bearer".to_owned(),
                    ),
                    ("assertion", assertion),
                ],
            )
        }
        AdcCredentials::AuthorizedUser {
            client_id,
            client_secret,
            refresh_token,
            token_uri,
        } => (
            token_uri,
            vec![
                ("grant_type", "refresh_token".to_owned()),
                ("client_id", client_id.clone()),
                ("client_secret", client_secret.clone()),
                ("refresh_token", refresh_token.clone()),
            ],
        ),
    };
    let network = |e: reqwest::Error| AdcError::Network {
        url: url.to_owned(),
        message: crate::error_text::error_chain(&e),
    };
    let response = http
        .post(url)
        .header("content-type", "application/x-www-form-urlencoded")
        .body(form_encode(&form))
        .timeout(TOKEN_TIMEOUT)
        .send()
        .await
        .map_err(network)?;
    let status = response.status().as_u16();
    let body = response.bytes().await.map_err(network)?;
    if !(200..300).contains(&status) {
        return Err(AdcError::Refused {
            status,
            detail: token_error_detail(&body),
        });
    }
    parse_token_answer(&body, Instant::now())
}

/// `application/x-www-form-urlencoded` (RFC 3986 unreserved characters pass as they are).
fn form_encode(pairs: &[(&str, String)]) -> String {
    let encode = |text: &str| {
        let mut out = String::with_capacity(text.len());
        for b in text.bytes() {
            if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
                out.push(char::from(b));
            } else {
                out.push_str(&format!("%{b:02X}"));
            }
        }
        out
    };
    pairs
        .iter()
        .map(|(k, v)| format!("{}={}", encode(k), encode(v)))
        .collect::<Vec<_>>()
        .join("&")
}

/// `error: error_description` of an OAuth error answer (never the raw body: it is not ours).
fn token_error_detail(body: &[u8]) -> Option<String> {
    let value: serde_json::Value = serde_json::from_slice(body).ok()?;
    let code = value.get("error")?.as_str()?;
    let text: String = code.chars().take(80).collect();
    match value.get("error_description").and_then(|d| d.as_str()) {
        Some(d) => Some(format!(
            "{text} ({})",
            d.chars().take(200).collect::<String>()
        )),
        None => Some(text),
    }
}

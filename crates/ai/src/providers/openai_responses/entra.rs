//! Microsoft Entra ID tokens for Azure OpenAI by the OAuth 2.0 client-credentials grant:
//! `POST {authority}/{tenant}/oauth2/v2.0/token` (form: `grant_type=client_credentials`,
//! `client_id`, `client_secret`, `scope=https://cognitiveservices.azure.com/.default`),
//! configured by the variables Azure's SDKs read (`AZURE_TENANT_ID`, `AZURE_CLIENT_ID`,
//! `AZURE_CLIENT_SECRET`, and `AZURE_AUTHORITY_HOST` for other clouds — and for tests).
//! Tokens are cached per tenant and client and fetched again shortly before they expire.

use std::time::{Duration, Instant};

use serde::Deserialize;
use serde_json::Value;

use crate::env::EnvSource;

pub const TENANT_VAR: &str = "AZURE_TENANT_ID";
pub const CLIENT_ID_VAR: &str = "AZURE_CLIENT_ID";
pub const CLIENT_SECRET_VAR: &str = "AZURE_CLIENT_SECRET";
pub const AUTHORITY_VAR: &str = "AZURE_AUTHORITY_HOST";
const DEFAULT_AUTHORITY: &str = "https://login.microsoftonline.com";
/// The scope of Azure AI services (Azure OpenAI included).
pub const SCOPE: &str = "https://cognitiveservices.azure.com/.default";
/// A cached token is replaced this long before it expires, so no request carries a token
/// that lapses on the way.
const REFRESH_MARGIN: Duration = Duration::from_secs(60);
const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);
/// Token responses are small; more than this is not one.
const MAX_RESPONSE_BYTES: usize = 64 * 1024;

/// Why no token could be had.
#[derive(Debug, thiserror::Error)]
pub enum EntraError {
    #[error("Microsoft Entra ID token request to {url} failed: {message}")]
    Transport { url: String, message: String },
    #[error("Microsoft Entra ID refused the token request (HTTP {status}): {message}")]
    Refused { status: u16, message: String },
    #[error("Microsoft Entra ID token response is malformed: {0}")]
    Malformed(String),
    #[error("{TENANT_VAR} \"{0}\" is not a tenant id or domain")]
    BadTenant(String),
}

/// A service principal's credentials and where to redeem them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EntraCredentials {
    pub authority: String,
    pub tenant: String,
    pub client_id: String,
    pub client_secret: String,
}

impl EntraCredentials {
    /// From the environment when all three of tenant, client id and secret are set.
    pub fn from_env(env: &dyn EnvSource) -> Option<Self> {
        Some(Self {
            authority: env
                .var(AUTHORITY_VAR)
                .unwrap_or_else(|| DEFAULT_AUTHORITY.to_owned()),
            tenant: env.var(TENANT_VAR)?,
            client_id: env.var(CLIENT_ID_VAR)?,
            client_secret: env.var(CLIENT_SECRET_VAR)?,
        })
    }

    /// The token endpoint. The tenant becomes a path segment, so it must be one.
    pub fn token_url(&self) -> Result<String, EntraError> {
        let tenant = self.tenant.trim();
        if tenant.is_empty()
            || !tenant
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '.' | '_'))
        {
            return Err(EntraError::BadTenant(self.tenant.clone()));
        }
        Ok(format!(
            "{}/{tenant}/oauth2/v2.0/token",
            self.authority.trim_end_matches('/')
        ))
    }

    /// The form-encoded body of the client-credentials request.
    pub fn form(&self) -> String {
        [
            ("grant_type", "client_credentials"),
            ("client_id", self.client_id.as_str()),
            ("client_secret", self.client_secret.as_str()),
            ("scope", SCOPE),
        ]
        .iter()
        .map(|(k, v)| format!("{k}={}", form_encode(v)))
        .collect::<Vec<_>>()
        .join("&")
    }
}

/// `application/x-www-form-urlencoded` escaping: unreserved characters stay, the rest is
/// `%XX` per UTF-8 byte.
fn form_encode(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for byte in text.bytes() {
        if byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'.' | b'_' | b'~') {
            out.push(char::from(byte));
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

/// A token and how long it lives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IssuedToken {
    pub access_token: String,
    pub expires_in: Duration,
}

#[derive(Deserialize)]
struct TokenResponse {
    access_token: String,
    #[serde(default)]
    token_type: Option<String>,
    // The v2 endpoint sends a number, the v1 endpoint a string.
    expires_in: Value,
}

/// Read a token endpoint's answer: a token (`status` 2xx) or Entra's error.
pub fn parse_token_response(status: u16, body: &[u8]) -> Result<IssuedToken, EntraError> {
    if !(200..300).contains(&status) {
        let value: Value = serde_json::from_slice(body).unwrap_or(Value::Null);
        let message = value
            .get("error_description")
            .and_then(Value::as_str)
            .or_else(|| value.get("error").and_then(Value::as_str))
            .map_or_else(
                || String::from_utf8_lossy(&body[..body.len().min(300)]).into_owned(),
                |m| m.lines().next().unwrap_or_default().to_owned(),
            );
        return Err(EntraError::Refused { status, message });
    }
    let parsed: TokenResponse =
        serde_json::from_slice(body).map_err(|e| EntraError::Malformed(e.to_string()))?;
    if parsed.access_token.trim().is_empty() {
        return Err(EntraError::Malformed("empty access_token".into()));
    }
    if let Some(kind) = parsed.token_type.as_deref()
        && !kind.eq_ignore_ascii_case("bearer")
    {
        return Err(EntraError::Malformed(format!(
            "token_type \"{kind}\" is not Bearer"
        )));
    }
    let seconds = match &parsed.expires_in {
        Value::Number(n) => n.as_u64(),
        Value::String(s) => s.trim().parse::<u64>().ok(),
        _ => None,
    }
    .ok_or_else(|| {
        EntraError::Malformed(format!(
            "expires_in {} is not a number of seconds",
            parsed.expires_in
        ))
    })?;
    Ok(IssuedToken {
        access_token: parsed.access_token,
        expires_in: Duration::from_secs(seconds),
    })
}

struct Cached {
    tenant: String,
    client_id: String,
    token: String,
    refresh_at: Instant,
}

/// The last token, shared by every request of one provider; one fetch at a time.
#[derive(Default)]
pub struct TokenCache {
    slot: tokio::sync::Mutex<Option<Cached>>,
}

impl TokenCache {
    /// A token for `credentials`: the cached one while it is fresh, else a new one.
    pub async fn token(
        &self,
        client: &reqwest::Client,
        credentials: &EntraCredentials,
    ) -> Result<String, EntraError> {
        let mut slot = self.slot.lock().await;
        if let Some(cached) = slot.as_ref()
            && cached.tenant == credentials.tenant
            && cached.client_id == credentials.client_id
            && Instant::now() < cached.refresh_at
        {
            return Ok(cached.token.clone());
        }
        let issued = fetch(client, credentials).await?;
        let refresh_at = Instant::now() + issued.expires_in.saturating_sub(REFRESH_MARGIN);
        *slot = Some(Cached {
            tenant: credentials.tenant.clone(),
            client_id: credentials.client_id.clone(),
            token: issued.access_token.clone(),
            refresh_at,
        });
        Ok(issued.access_token)
    }
}

async fn fetch(
    client: &reqwest::Client,
    credentials: &EntraCredentials,
) -> Result<IssuedToken, EntraError> {
    let url = credentials.token_url()?;
    let transport = |e: reqwest::Error| EntraError::Transport {
        url: url.clone(),
        message: e.to_string(),
    };
    let mut response = client
        .post(&url)
        .header("content-type", "application/x-www-form-urlencoded")
        .header("accept", "application/json")
        .body(credentials.form())
        .timeout(REQUEST_TIMEOUT)
        .send()
        .await
        .map_err(transport)?;
    let status = response.status().as_u16();
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(transport)? {
        if body.len() + chunk.len() > MAX_RESPONSE_BYTES {
            return Err(EntraError::Malformed(format!(
                "the response is larger than {MAX_RESPONSE_BYTES} bytes"
            )));
        }
        body.extend_from_slice(&chunk);
    }
    parse_token_response(status, &body)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_response_is_read_with_either_expiry_form() {
        let token = parse_token_response(
            200,
            br#"{"token_type":"Bearer","expires_in":3599,"ext_expires_in":3599,"access_token":"eyJ0"}"#,
        )
        .unwrap();
        assert_eq!(
            token,
            IssuedToken {
                access_token: "eyJ0".into(),
                expires_in: Duration::from_secs(3599)
            }
        );
        let token =
            parse_token_response(200, br#"{"access_token":"t","expires_in":"60"}"#).unwrap();
        assert_eq!(token.expires_in, Duration::from_secs(60));
    }

    #[test]
    fn malformed_and_refused_responses_are_typed_errors() {
        let cases: [(u16, &[u8], &str); 7] = [
            (200, b"", "malformed: EOF while parsing a value at line 1 column 0"),
            (200, b"{\"access_token\":\"\",\"expires_in\":1}", "malformed: empty access_token"),
            (200, b"{\"access_token\":\"t\"}", "malformed: missing field `expires_in` at line 1 column 20"),
            (200, b"{\"access_token\":\"t\",\"expires_in\":-5}", "malformed: expires_in -5 is not a number of seconds"),
            (200, b"{\"access_token\":\"t\",\"expires_in\":1,\"token_type\":\"pop\"}", "malformed: token_type \"pop\" is not Bearer"),
            (401, b"{\"error\":\"invalid_client\",\"error_description\":\"AADSTS7000215: Invalid client secret provided.\\r\\nTrace ID: x\"}", "refused 401: AADSTS7000215: Invalid client secret provided."),
            (502, b"<html>bad gateway</html>", "refused 502: <html>bad gateway</html>"),
        ];
        for (status, body, want) in cases {
            let got = match parse_token_response(status, body).unwrap_err() {
                EntraError::Malformed(m) => format!("malformed: {m}"),
                EntraError::Refused { status, message } => format!("refused {status}: {message}"),
                other => format!("other: {other}"),
            };
            assert_eq!(got, want, "{}", String::from_utf8_lossy(body));
        }
    }

    #[test]
    fn the_request_names_the_tenant_and_form_encodes_the_secret() {
        let credentials = EntraCredentials {
            authority: "https://login.example/".into(),
            tenant: "contoso.onmicrosoft.com".into(),
            client_id: "app-1".into(),
            client_secret: "s3cr3t/+=&~x".into(),
        };
        assert_eq!(
            credentials.token_url().unwrap(),
            "https://login.example/contoso.onmicrosoft.com/oauth2/v2.0/token"
        );
        assert_eq!(
            credentials.form(),
            "grant_type=client_credentials&client_id=app-1&client_secret=s3cr3t%2F%2B%3D%26~x\
             &scope=https%3A%2F%2Fcognitiveservices.azure.com%2F.default"
        );
        let bad = EntraCredentials {
            tenant: "../evil".into(),
            ..credentials
        };
        assert_eq!(
            bad.token_url().unwrap_err().to_string(),
            "AZURE_TENANT_ID \"../evil\" is not a tenant id or domain"
        );
    }
}

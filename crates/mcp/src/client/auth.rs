//! OAuth for Streamable HTTP servers, on rmcp's own client (`rmcp::transport::auth`):
//! the credentials of one server in `<auth dir>/<server>.json` (0600, replaced
//! atomically), the transport that sends its bearer token and refreshes it as rmcp does,
//! and the authorization-code flow (`pincer mcp login`): discovery, registration (dynamic
//! or the configured `oauth.clientId`), the PKCE authorization URL, the code exchange.
use std::path::{Path, PathBuf};

use pincer_config::McpServerConfig;
use rmcp::transport::auth::{
    AuthClient, AuthError, AuthorizationManager, AuthorizationRequest, AuthorizationSession,
    CredentialStore, OAuthClientConfig, StoredCredentials,
};

use super::McpError;

/// Largest credentials file read (a token response is a few KiB).
const MAX_CREDENTIALS_FILE: u64 = 1 << 20;

/// Where the credentials of `server` are kept under `dir` (`$PINCER_HOME/mcp-auth`).
pub fn credentials_path(dir: &Path, server: &str) -> PathBuf {
    dir.join(format!("{server}.json"))
}

/// One server's credentials in one file: written whole (atomic rename, 0600), read whole.
#[derive(Debug, Clone)]
pub struct FileCredentialStore {
    path: PathBuf,
}

impl FileCredentialStore {
    pub fn new(path: PathBuf) -> Self {
        Self { path }
    }
}

/// A credentials file's content (rmcp's [`StoredCredentials`] as JSON).
pub fn parse_credentials(bytes: &[u8]) -> Result<StoredCredentials, serde_json::Error> {
    serde_json::from_slice(bytes)
}

fn store_error(path: &Path, e: impl std::fmt::Display) -> AuthError {
    AuthError::CredentialStoreError(format!("{}: {e}", path.display()))
}

#[async_trait::async_trait]
impl CredentialStore for FileCredentialStore {
    async fn load(&self) -> Result<Option<StoredCredentials>, AuthError> {
        let path = self.path.clone();
        let bytes = tokio::task::spawn_blocking(move || {
            use std::io::Read;
            let file = match std::fs::File::open(&path) {
                Ok(f) => f,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
                Err(e) => return Err(store_error(&path, e)),
            };
            let mut bytes = Vec::new();
            file.take(MAX_CREDENTIALS_FILE + 1)
                .read_to_end(&mut bytes)
                .map_err(|e| store_error(&path, e))?;
            if bytes.len() as u64 > MAX_CREDENTIALS_FILE {
                return Err(store_error(&path, "the file is too large"));
            }
            Ok(Some(bytes))
        })
        .await
        .map_err(|e| store_error(&self.path, e))??;
        match bytes {
            None => Ok(None),
            Some(bytes) => parse_credentials(&bytes)
                .map(Some)
                .map_err(|e| store_error(&self.path, format!("not valid credentials: {e}"))),
        }
    }

    async fn save(&self, credentials: StoredCredentials) -> Result<(), AuthError> {
        let bytes =
            serde_json::to_vec_pretty(&credentials).map_err(|e| store_error(&self.path, e))?;
        let path = self.path.clone();
        tokio::task::spawn_blocking(move || {
            pincer_base::write_atomic(&path, &bytes).map_err(|e| store_error(&path, e))
        })
        .await
        .map_err(|e| store_error(&self.path, e))?
    }

    async fn clear(&self) -> Result<(), AuthError> {
        match tokio::fs::remove_file(&self.path).await {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(store_error(&self.path, e)),
        }
    }
}

/// The HTTP client of a server that has credentials: rmcp's [`AuthClient`], which adds
/// the bearer token and refreshes it when it is about to expire or the server rejects
/// it. `None` when there are no credentials (the plain transport is used).
pub async fn auth_client(
    url: &str,
    config: &McpServerConfig,
    path: PathBuf,
) -> Result<Option<AuthClient<reqwest::Client>>, McpError> {
    if !tokio::fs::try_exists(&path).await.unwrap_or(false) {
        return Ok(None);
    }
    let oauth = |e: AuthError| McpError::OAuth(e.to_string());
    let mut manager = AuthorizationManager::new(url).await.map_err(oauth)?;
    manager.set_credential_store(FileCredentialStore::new(path));
    if !manager.initialize_from_store().await.map_err(oauth)? {
        return Ok(None);
    }
    // A confidential client needs its secret to refresh; the stored file has only the id.
    if let Some(o) = &config.oauth
        && let Some(secret) = &o.client_secret
    {
        manager
            .configure_client(
                OAuthClientConfig::new(o.client_id.clone(), "http://127.0.0.1/callback")
                    .with_client_secret(secret.clone()),
            )
            .map_err(oauth)?;
    }
    Ok(Some(AuthClient::new(reqwest::Client::new(), manager)))
}

/// Whether `initialize` failed because the server answered 401.
pub fn is_auth_required(error: &rmcp::service::ClientInitializeError) -> bool {
    use rmcp::service::ClientInitializeError as E;
    match error {
        // The transport's error is a field, not a `source`: walk it by hand.
        E::TransportError { error, .. } => wraps_auth_required(error),
        E::LegacyFallbackFailed { discover, fallback } => {
            is_auth_required(discover) || is_auth_required(fallback)
        }
        other => wraps_auth_required(other),
    }
}

/// Whether `error` (or an error it wraps) is a server's 401 answer.
fn wraps_auth_required(error: &(dyn std::error::Error + 'static)) -> bool {
    let mut current = Some(error);
    while let Some(e) = current {
        if e.is::<rmcp::transport::streamable_http_client::AuthRequiredError>()
            || matches!(
                e.downcast_ref::<AuthError>(),
                Some(AuthError::AuthorizationRequired)
            )
        {
            return true;
        }
        current = e.source();
    }
    false
}

/// An authorization in progress (`pincer mcp login`): the URL the user opens, then the
/// redirect it comes back with.
pub struct Login {
    session: AuthorizationSession,
}

impl std::fmt::Debug for Login {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Login")
            .field("auth_url", &self.session.auth_url)
            .finish()
    }
}

impl Login {
    /// Discovers the server's authorization server, registers Pincer (or uses the
    /// configured `oauth.clientId`) for `redirect_uri`, and builds the PKCE authorization
    /// URL. The credentials will be saved in `path`.
    pub async fn begin(
        url: &str,
        config: &McpServerConfig,
        redirect_uri: &str,
        path: PathBuf,
    ) -> Result<Self, McpError> {
        let oauth = |e: AuthError| McpError::OAuth(e.to_string());
        let mut manager = AuthorizationManager::new(url).await.map_err(oauth)?;
        let resolution = manager.resolve_metadata().await.map_err(oauth)?;
        if !resolution.source.is_discovered() {
            return Err(McpError::OAuth(format!(
                "{url} publishes no OAuth metadata (/.well-known/oauth-protected-resource, \
                 /.well-known/oauth-authorization-server)"
            )));
        }
        manager.set_metadata(resolution.metadata);
        manager.set_credential_store(FileCredentialStore::new(path));
        let mut request = AuthorizationRequest::new(redirect_uri).with_client_name("Pincer");
        if let Some(o) = &config.oauth {
            request = request.with_preregistered_client(o.client_id.clone());
            if let Some(secret) = &o.client_secret {
                request = request.with_client_secret(secret.clone());
            }
            if !o.scopes.is_empty() {
                request = request.with_scopes(o.scopes.iter().map(String::as_str));
            }
        }
        let session = AuthorizationSession::new(manager, request)
            .await
            .map_err(|(_, e)| oauth(e))?;
        Ok(Self { session })
    }

    /// The URL the user opens in a browser.
    pub fn authorization_url(&self) -> &str {
        self.session.get_authorization_url()
    }

    /// Exchanges the code of the redirect (`callback_url`, with `code` and `state`) for
    /// tokens and saves them.
    pub async fn finish(&self, callback_url: &str) -> Result<(), McpError> {
        self.session
            .handle_callback_url(callback_url)
            .await
            .map(|_| ())
            .map_err(|e| McpError::OAuth(e.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_malformed_credentials_file_is_an_error_not_a_panic() {
        let dir = tempfile::tempdir().unwrap();
        let path = credentials_path(dir.path(), "x");
        let store = FileCredentialStore::new(path.clone());
        assert!(store.load().await.unwrap().is_none());
        std::fs::write(&path, b"{not json").unwrap();
        let err = store.load().await.unwrap_err().to_string();
        assert!(err.contains("not valid credentials"), "{err}");
        store.clear().await.unwrap();
        assert!(!path.exists());
        store.clear().await.unwrap();
    }
}

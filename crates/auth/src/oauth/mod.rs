//! OAuth logins. The building blocks (PKCE, the loopback callback listener, the token
//! endpoint, JWT claims) and the providers that use them: openai-codex ([`codex`]: ChatGPT
//! sign-in, exactly as pi-ai and the Codex CLI do it), anthropic ([`anthropic`]: Claude
//! Pro/Max), github-copilot ([`copilot`]: device flow, then the Copilot token exchange) and
//! google-gemini-cli ([`gemini_cli`]).

pub mod anthropic;
pub mod callback;
pub mod codex;
pub mod copilot;
pub mod gemini_cli;
pub mod jwt;
mod pending;
pub mod pkce;
pub mod token;

use std::net::SocketAddr;

pub use anthropic::{ANTHROPIC_PROVIDER, AnthropicLogin, AnthropicOAuth, AnthropicOAuthConfig};
pub use callback::CallbackListener;
pub use codex::{
    CODEX_CLIENT_ID, CODEX_PROVIDER, CodexLogin, CodexOAuth, CodexOAuthConfig, LoginStart,
    PastedAuthorization, parse_authorization_input,
};
pub use copilot::{COPILOT_PROVIDER, CopilotOAuth, CopilotOAuthConfig, DeviceCode};
pub use jwt::{JwtError, OPENAI_AUTH_CLAIM, chatgpt_account_id, decode_jwt_payload};
pub use pkce::{Pkce, random_state};
pub use token::{TokenGrant, parse_token_error, parse_token_response};

/// Error codes of a token endpoint that mean the refresh token is dead: only a new login
/// helps (`invalid_grant` is RFC 6749's; the rest are OpenAI's).
const LOGIN_REQUIRED_CODES: &[&str] = &[
    "invalid_grant",
    "token_expired",
    "refresh_token_expired",
    "refresh_token_reused",
    "refresh_token_invalidated",
];

/// What can go wrong in an OAuth login or refresh. No variant carries a token or code.
#[derive(Debug, thiserror::Error)]
pub enum OAuthError {
    /// The token endpoint could not be reached or did not answer in time.
    #[error("cannot reach {url}: {source}")]
    Network {
        url: String,
        #[source]
        source: reqwest::Error,
    },
    /// The token endpoint refused a refresh token that only a new login can replace.
    #[error(
        "the sign-in has expired or was revoked ({code}); run `pincer auth login {provider}` again"
    )]
    LoginRequired { provider: String, code: String },
    /// The token endpoint answered with an error status.
    #[error("the token endpoint answered HTTP {status}{}{}",
        .code.as_ref().map(|c| format!(": {c}")).unwrap_or_default(),
        .description.as_ref().map(|d| format!(" ({d})")).unwrap_or_default())]
    TokenEndpoint {
        status: u16,
        code: Option<String>,
        description: Option<String>,
    },
    /// The token endpoint's success response is not what OAuth promises.
    #[error("the token endpoint sent a malformed response: {0}")]
    MalformedTokenResponse(String),
    /// The access token does not carry what the provider needs.
    #[error("the access token is unusable: {0}")]
    Jwt(#[from] JwtError),
    /// The redirect carried another login's `state`: possibly a forged request.
    #[error("the sign-in response does not belong to this login (state mismatch); start again")]
    StateMismatch,
    /// The pasted text or redirect held no authorization code.
    #[error("no authorization code found; paste the code or the whole redirect URL")]
    MissingCode,
    /// The authorization server redirected back with an error (the user said no).
    #[error("sign-in was refused: {error}{}", .description.as_ref().map(|d| format!(" ({d})")).unwrap_or_default())]
    Denied {
        error: String,
        description: Option<String>,
    },
    /// The callback listener could not be bound (the caller falls back to pasting).
    #[error("cannot listen on {addr} for the sign-in redirect: {source}")]
    Bind {
        addr: SocketAddr,
        #[source]
        source: std::io::Error,
    },
    /// The OS gave no random bytes for PKCE and `state`.
    #[error("no secure randomness available: {0}")]
    Random(String),
    /// No refresher is configured for this provider's OAuth profiles.
    #[error(
        "refreshing {provider} sign-ins is not supported; run `pincer auth login {provider}` again"
    )]
    RefreshUnsupported { provider: String },
    /// A client could not be built from the configuration.
    #[error("invalid OAuth configuration: {0}")]
    Config(String),
    /// Cloud Code Assist would not name or provision the user's project (google-gemini-cli).
    #[error("Cloud Code Assist: {0}")]
    CodeAssist(String),
    /// The device code expired before the user entered it (github-copilot).
    #[error("the device code expired before sign-in finished{}; run the login again",
        if *.slowed_down { " (after slow_down answers: often clock drift in a VM or WSL; sync the clock)" } else { "" })]
    DeviceCodeExpired { slowed_down: bool },
}

impl OAuthError {
    /// True when only `pincer auth login <provider>` can fix this.
    pub fn needs_login(&self) -> bool {
        matches!(
            self,
            Self::LoginRequired { .. } | Self::RefreshUnsupported { .. }
        )
    }

    /// Classifies a token-endpoint error answer to a refresh of `provider`'s tokens.
    pub(crate) fn from_refresh_answer(provider: &str, status: u16, body: &[u8]) -> Self {
        let (code, description) = parse_token_error(body);
        match code {
            Some(code) if LOGIN_REQUIRED_CODES.contains(&code.as_str()) => Self::LoginRequired {
                provider: provider.to_owned(),
                code,
            },
            code => Self::TokenEndpoint {
                status,
                code,
                description,
            },
        }
    }
}

//! pincer-auth: credentials. `auth-profiles.json` (API-key, token and OAuth profiles, 0600,
//! atomic, locked read-modify-write: [`AuthStore`]), which profile a provider uses next and
//! what a failure costs it ([`rotation`]), which credential a call uses, with OAuth refresh
//! done once per profile at a time ([`KeyResolver`]), the sign-ins (openai-codex and
//! anthropic with PKCE, github-copilot's device flow and Copilot token exchange: [`oauth`]),
//! and masking secrets for display ([`mask_secret`]).

pub mod edit;
pub mod error;
pub mod file;
pub mod oauth;
pub mod resolve;
pub mod rotation;
pub mod secret;
pub mod store;
pub mod time;

pub use edit::{DEFAULT_PROFILE_NAME, ProfileStatus};
pub use error::AuthError;
pub use file::{
    AuthProfiles, Credential, CredentialKind, OAuthCredential, PROFILES_FILE_NAME,
    PROFILES_FILE_VERSION, Profile, ProfileId, UsageStats,
};
pub use oauth::{
    AnthropicOAuth, AnthropicOAuthConfig, CodexLogin, CodexOAuth, CodexOAuthConfig, CopilotOAuth,
    CopilotOAuthConfig, LoginStart, OAuthError,
};
pub use resolve::{KeyResolver, REFRESH_MARGIN_MS, ResolvedCredential};
pub use rotation::{
    CooldownPolicy, Failure, FailureKind, Resting, Rotation, failure_from_error, failure_kind,
};
pub use secret::{Secret, mask_secret};
pub use store::AuthStore;
pub use time::{format_duration_ms, now_ms};

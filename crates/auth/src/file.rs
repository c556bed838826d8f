//! The shape of `auth-profiles.json` (OpenClaw's): profiles keyed by id, the per-provider
//! active pin and per-profile usage statistics. Unknown fields at every level are kept so a
//! file written by a newer Pincer or by OpenClaw survives a round trip; a profile of an
//! unknown `type` is kept verbatim and never used.
//!
//! ```json
//! {"version":1,
//!  "profiles":{"openai:default":{"type":"api_key","provider":"openai","key":"sk-…"},
//!              "openai-codex:acct":{"type":"oauth","provider":"openai-codex","access":"…",
//!                                   "refresh":"…","expires":1736160000000,"accountId":"acct"}},
//!  "active":{"openai":"openai:default"},
//!  "usageStats":{"openai:default":{"lastUsed":1736160000000,"errorCount":0}}}
//! ```

use std::collections::BTreeMap;

use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};

use crate::secret::Secret;

/// The file name under `$PINCER_HOME`.
pub const PROFILES_FILE_NAME: &str = "auth-profiles.json";
/// The only file version this crate reads and writes.
pub const PROFILES_FILE_VERSION: u32 = 1;

/// A profile id, `<provider>:<name>` for the profiles Pincer creates (`openai:default`,
/// `openai-codex:<accountId>`, `openai:work#2`). Ids from other writers are opaque strings.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct ProfileId(String);

impl ProfileId {
    /// `<provider>:<name>`.
    pub fn new(provider: &str, name: &str) -> Self {
        Self(format!("{provider}:{name}"))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Display for ProfileId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl From<&str> for ProfileId {
    fn from(value: &str) -> Self {
        Self(value.to_owned())
    }
}

impl From<String> for ProfileId {
    fn from(value: String) -> Self {
        Self(value)
    }
}

/// The loaded `auth-profiles.json`.
#[derive(Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AuthProfiles {
    #[serde(default = "current_version")]
    pub version: u32,
    #[serde(default)]
    pub profiles: BTreeMap<ProfileId, Profile>,
    /// The pinned profile per provider (`pincer auth use`): tried before any other.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub active: BTreeMap<String, ProfileId>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub usage_stats: BTreeMap<ProfileId, UsageStats>,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// By hand: unknown top-level fields may hold anything, so only their names are shown.
impl std::fmt::Debug for AuthProfiles {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AuthProfiles")
            .field("version", &self.version)
            .field("profiles", &self.profiles)
            .field("active", &self.active)
            .field("usage_stats", &self.usage_stats)
            .field("extra_fields", &self.extra.keys().collect::<Vec<_>>())
            .finish()
    }
}

fn current_version() -> u32 {
    PROFILES_FILE_VERSION
}

impl Default for AuthProfiles {
    fn default() -> Self {
        Self {
            version: PROFILES_FILE_VERSION,
            profiles: BTreeMap::new(),
            active: BTreeMap::new(),
            usage_stats: BTreeMap::new(),
            extra: Map::new(),
        }
    }
}

/// One stored credential and the provider it is for.
#[derive(Clone, PartialEq)]
pub struct Profile {
    pub provider: String,
    pub credential: Credential,
    /// Fields this crate does not know (`email`, `metadata`, …), written back unchanged.
    pub extra: Map<String, Value>,
}

/// By hand: `extra` may hold secrets of credential types this crate does not know, so only
/// its field names are shown.
impl std::fmt::Debug for Profile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Profile")
            .field("provider", &self.provider)
            .field("credential", &self.credential)
            .field("extra_fields", &self.extra.keys().collect::<Vec<_>>())
            .finish()
    }
}

impl Profile {
    pub fn new(provider: impl Into<String>, credential: Credential) -> Self {
        Self {
            provider: provider.into(),
            credential,
            extra: Map::new(),
        }
    }

    pub fn kind(&self) -> CredentialKind {
        self.credential.kind()
    }
}

/// What a profile holds.
#[derive(Debug, Clone, PartialEq)]
pub enum Credential {
    /// `{"type":"api_key","key":…}`.
    ApiKey { key: Secret },
    /// `{"type":"token","token":…,"expires"?:ms}`: a static bearer token nobody refreshes.
    Token { token: Secret, expires: Option<u64> },
    /// `{"type":"oauth","access":…,"refresh":…,"expires":ms,"accountId"?:…}`.
    OAuth(OAuthCredential),
    /// A `type` this crate does not know; the whole object is kept in `Profile::extra`.
    Unknown { kind: String },
}

impl Credential {
    pub fn kind(&self) -> CredentialKind {
        match self {
            Self::ApiKey { .. } => CredentialKind::ApiKey,
            Self::Token { .. } => CredentialKind::Token,
            Self::OAuth(_) => CredentialKind::OAuth,
            Self::Unknown { .. } => CredentialKind::Unknown,
        }
    }
}

/// The tokens of an OAuth login.
#[derive(Debug, Clone, PartialEq)]
pub struct OAuthCredential {
    pub access: Secret,
    pub refresh: Secret,
    /// When `access` expires, epoch milliseconds.
    pub expires: u64,
    /// The account the tokens belong to (openai-codex: the ChatGPT account id).
    pub account_id: Option<String>,
}

/// The kind of a credential, as the file spells it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum CredentialKind {
    OAuth,
    Token,
    ApiKey,
    Unknown,
}

impl CredentialKind {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::OAuth => "oauth",
            Self::Token => "token",
            Self::ApiKey => "api_key",
            Self::Unknown => "unknown",
        }
    }
}

/// Usage statistics of one profile (OpenClaw's `usageStats` entry), all times epoch ms.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UsageStats {
    /// The last time a call with this profile succeeded; rotation prefers the oldest.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_used: Option<u64>,
    /// Rate limited / overloaded / failing until then.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cooldown_until: Option<u64>,
    /// Disabled (billing, auth) until then.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub disabled_until: Option<u64>,
    /// Why it is disabled (`billing`, `auth`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub disabled_reason: Option<String>,
    /// Consecutive failures since the last success (drives the cooldown ladder).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub error_count: u32,
    /// The kind of the last failure (`rate_limit`, `overloaded`, `auth`, `billing`, `other`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_failure: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_failure_at: Option<u64>,
    /// Failures per kind since the last success (drives the billing backoff).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub failure_counts: BTreeMap<String, u32>,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

impl UsageStats {
    /// Until when the profile may not be used, if that is after `now_ms`.
    pub fn unusable_until(&self, now_ms: u64) -> Option<u64> {
        [self.cooldown_until, self.disabled_until]
            .into_iter()
            .flatten()
            .filter(|until| *until > now_ms)
            .max()
    }
}

// ---- (de)serialising a profile: `type` picks the fields, everything else is kept ----

impl Serialize for Profile {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = self.extra.clone();
        map.insert("provider".into(), Value::String(self.provider.clone()));
        let text = |s: &Secret| Value::String(s.expose().to_owned());
        match &self.credential {
            Credential::ApiKey { key } => {
                map.insert("type".into(), "api_key".into());
                map.insert("key".into(), text(key));
            }
            Credential::Token { token, expires } => {
                map.insert("type".into(), "token".into());
                map.insert("token".into(), text(token));
                if let Some(expires) = expires {
                    map.insert("expires".into(), (*expires).into());
                }
            }
            Credential::OAuth(oauth) => {
                map.insert("type".into(), "oauth".into());
                map.insert("access".into(), text(&oauth.access));
                map.insert("refresh".into(), text(&oauth.refresh));
                map.insert("expires".into(), oauth.expires.into());
                if let Some(account) = &oauth.account_id {
                    map.insert("accountId".into(), account.clone().into());
                }
            }
            Credential::Unknown { kind } => {
                map.insert("type".into(), kind.clone().into());
            }
        }
        map.serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for Profile {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let mut map = Map::<String, Value>::deserialize(deserializer)?;
        let kind = take_string(&mut map, "type")?;
        let provider = take_string(&mut map, "provider")?;
        let credential = match kind.as_str() {
            "api_key" => Credential::ApiKey {
                key: take_string(&mut map, "key")?.into(),
            },
            "token" => Credential::Token {
                token: take_string(&mut map, "token")?.into(),
                expires: take_optional_ms(&mut map, "expires")?,
            },
            "oauth" => Credential::OAuth(OAuthCredential {
                access: take_string(&mut map, "access")?.into(),
                refresh: take_string(&mut map, "refresh")?.into(),
                expires: take_optional_ms(&mut map, "expires")?
                    .ok_or_else(|| D::Error::custom("an oauth profile needs \"expires\""))?,
                account_id: take_optional_string(&mut map, "accountId")?,
            }),
            _ => {
                // Keep the type so the profile is written back as it came.
                map.insert("type".into(), Value::String(kind.clone()));
                Credential::Unknown { kind }
            }
        };
        Ok(Self {
            provider,
            credential,
            extra: map,
        })
    }
}

// The messages below name the field, never its value: values may be secrets.

fn take_string<E: serde::de::Error>(
    map: &mut Map<String, Value>,
    field: &str,
) -> Result<String, E> {
    match map.remove(field) {
        Some(value) => string_value(value, field),
        None => Err(E::custom(format!("profile field \"{field}\" is missing"))),
    }
}

fn take_optional_string<E: serde::de::Error>(
    map: &mut Map<String, Value>,
    field: &str,
) -> Result<Option<String>, E> {
    match map.remove(field) {
        None | Some(Value::Null) => Ok(None),
        Some(value) => string_value(value, field).map(Some),
    }
}

/// The string `value` of `field`; anything else is an error.
fn string_value<E: serde::de::Error>(value: Value, field: &str) -> Result<String, E> {
    match value {
        Value::String(s) => Ok(s),
        _ => Err(E::custom(format!(
            "profile field \"{field}\" must be a string"
        ))),
    }
}

fn take_optional_ms<E: serde::de::Error>(
    map: &mut Map<String, Value>,
    field: &str,
) -> Result<Option<u64>, E> {
    match map.remove(field) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Number(n)) => n
            .as_u64()
            // JavaScript writers may store whole milliseconds as floats (`1.7e12`).
            .or_else(|| {
                n.as_f64()
                    .filter(|f| f.is_finite() && *f >= 0.0)
                    .map(|f| f as u64)
            })
            .map(Some)
            .ok_or_else(|| {
                E::custom(format!(
                    "profile field \"{field}\" must be epoch milliseconds"
                ))
            }),
        Some(_) => Err(E::custom(format!(
            "profile field \"{field}\" must be epoch milliseconds"
        ))),
    }
}

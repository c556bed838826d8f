//! Which profile a provider uses next, and what a failure costs a profile (OpenClaw's
//! model-failover rules). Pure functions over [`AuthProfiles`] and a `now_ms`.
//!
//! **Order:** the pinned profile (`active`), then `auth.order[provider]` from the config,
//! then the rest: OAuth before static tokens before API keys, least recently used first.
//! Profiles cooling down or disabled are left out of the ready list and reported with when
//! they free up, so a caller whose every profile is resting can say how long to wait.
//!
//! **Costs** ([`CooldownPolicy`]): rate limits, overload and other transient failures cool a
//! profile down for 1 m, 5 m, 25 m, then 1 h per consecutive failure (a server's
//! `Retry-After` lengthens it, never shortens it). Billing failures disable it for 5 h,
//! doubling per billing failure up to 24 h. An auth failure (HTTP 401/403, a refresh token
//! the server refuses) disables it for 24 h or until the user adds the key or logs in again,
//! whichever comes first: a revoked key will not heal by itself, but a 24 h bound keeps a
//! provider's bad hour from locking a profile out for good. Failure counters forget
//! failures older than 24 h; a success clears everything.

use std::collections::BTreeMap;

use pincer_ai::ErrorKind;

use crate::error::AuthError;
use crate::file::{AuthProfiles, Credential, CredentialKind, ProfileId, UsageStats};

const MINUTE_MS: u64 = 60_000;
const HOUR_MS: u64 = 60 * MINUTE_MS;

/// Why a call with a profile failed, as far as rotation cares.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FailureKind {
    /// HTTP 429.
    RateLimit,
    /// The provider is overloaded (529, 503 overloaded).
    Overloaded,
    /// The credential was refused (401/403, refresh token invalid).
    Auth,
    /// Out of credit / quota / payment required.
    Billing,
    /// Server errors, timeouts, dropped connections.
    Other,
}

impl FailureKind {
    /// The name stored in `usageStats` (`lastFailure`, `disabledReason`, `failureCounts`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::RateLimit => "rate_limit",
            Self::Overloaded => "overloaded",
            Self::Auth => "auth",
            Self::Billing => "billing",
            Self::Other => "other",
        }
    }
}

/// A failure to record: its kind and, for rate limits, how long the server asked to wait.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Failure {
    pub kind: FailureKind,
    pub retry_after_ms: Option<u64>,
}

impl From<FailureKind> for Failure {
    fn from(kind: FailureKind) -> Self {
        Self {
            kind,
            retry_after_ms: None,
        }
    }
}

/// Whether an LLM failure is a reason to rest the profile and try the next one; `None` for
/// failures another credential would not fix (bad request, context overflow, abort, …).
pub fn failure_kind(kind: &ErrorKind) -> Option<FailureKind> {
    match kind {
        ErrorKind::RateLimited { .. } => Some(FailureKind::RateLimit),
        ErrorKind::Overloaded => Some(FailureKind::Overloaded),
        ErrorKind::Auth => Some(FailureKind::Auth),
        ErrorKind::Server | ErrorKind::Timeout | ErrorKind::Network => Some(FailureKind::Other),
        ErrorKind::BadRequest
        | ErrorKind::ContextOverflow
        | ErrorKind::Protocol
        | ErrorKind::Aborted
        | ErrorKind::Refused
        | ErrorKind::Config => None,
    }
}

/// [`failure_kind`] refined by the error message: pincer-ai has no billing kind (a 402 is a
/// `BadRequest`, OpenAI's `insufficient_quota` a 429), so billing is recognised by the
/// phrases providers use. Carries the server's `Retry-After`.
pub fn failure_from_error(kind: &ErrorKind, message: &str) -> Option<Failure> {
    const BILLING_PHRASES: &[&str] = &[
        "insufficient_quota",
        "insufficient quota",
        "insufficient credits",
        "insufficient balance",
        "credit balance",
        "payment required",
        "billing",
        "402",
    ];
    let lower = message.to_ascii_lowercase();
    let billing = BILLING_PHRASES.iter().any(|phrase| lower.contains(phrase));
    let kind_of_failure = match kind {
        ErrorKind::RateLimited { .. } | ErrorKind::BadRequest | ErrorKind::Auth if billing => {
            Some(FailureKind::Billing)
        }
        other => failure_kind(other),
    }?;
    let retry_after_ms = match kind {
        ErrorKind::RateLimited {
            retry_after: Some(wait),
        } => Some(u64::try_from(wait.as_millis()).unwrap_or(u64::MAX)),
        _ => None,
    };
    Some(Failure {
        kind: kind_of_failure,
        retry_after_ms,
    })
}

/// How long failures rest a profile (see the module docs).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CooldownPolicy {
    /// Cooldown after the 1st, 2nd, … consecutive transient failure; the last repeats.
    /// Config `auth.cooldownsMs`.
    pub cooldowns_ms: Vec<u64>,
    /// First billing disable; doubles per billing failure.
    pub billing_base_ms: u64,
    pub billing_max_ms: u64,
    /// How long an auth failure disables a profile (unless the user logs in again).
    pub auth_disable_ms: u64,
    /// Failures older than this are forgotten when the next one is counted.
    pub failure_window_ms: u64,
}

impl Default for CooldownPolicy {
    fn default() -> Self {
        Self {
            cooldowns_ms: vec![MINUTE_MS, 5 * MINUTE_MS, 25 * MINUTE_MS, HOUR_MS],
            billing_base_ms: 5 * HOUR_MS,
            billing_max_ms: 24 * HOUR_MS,
            auth_disable_ms: 24 * HOUR_MS,
            failure_window_ms: 24 * HOUR_MS,
        }
    }
}

impl CooldownPolicy {
    /// The default policy with the config's cooldown ladder (an empty list keeps the default).
    pub fn with_cooldowns_ms(mut self, cooldowns_ms: Option<Vec<u64>>) -> Self {
        if let Some(ladder) = cooldowns_ms.filter(|l| !l.is_empty()) {
            self.cooldowns_ms = ladder;
        }
        self
    }

    fn cooldown_for(&self, consecutive_failures: u32) -> u64 {
        let step = usize::try_from(consecutive_failures.saturating_sub(1)).unwrap_or(usize::MAX);
        self.cooldowns_ms
            .get(step)
            .or(self.cooldowns_ms.last())
            .copied()
            .unwrap_or(MINUTE_MS)
    }

    fn billing_disable_for(&self, billing_failures: u32) -> u64 {
        let doublings = billing_failures.saturating_sub(1).min(32);
        self.billing_base_ms
            .saturating_mul(1u64 << doublings)
            .min(self.billing_max_ms)
    }
}

/// A profile that may not be used yet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resting {
    pub id: ProfileId,
    /// When it is usable again, epoch ms.
    pub until_ms: u64,
    /// `disabledReason` when disabled, else the last failure kind.
    pub reason: Option<String>,
}

/// The profiles of one provider in the order to try them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rotation {
    pub provider: String,
    /// Usable now, best first.
    pub ready: Vec<ProfileId>,
    /// Cooling down or disabled, soonest free first.
    pub resting: Vec<Resting>,
}

impl Rotation {
    /// The profile to use now.
    pub fn first(&self) -> Option<&ProfileId> {
        self.ready.first()
    }

    /// The provider has no usable profile at all (none stored, or only unknown types).
    pub fn is_empty(&self) -> bool {
        self.ready.is_empty() && self.resting.is_empty()
    }

    /// When the first resting profile frees up, if nothing is ready now.
    pub fn all_resting_until(&self) -> Option<u64> {
        if self.ready.is_empty() {
            self.resting.first().map(|r| r.until_ms)
        } else {
            None
        }
    }
}

impl AuthProfiles {
    /// The profiles of `provider` in the order to try them (see the module docs). `order` is
    /// the config's `auth.order`; ids in it that do not exist or are for another provider
    /// are ignored. Profiles of unknown type and expired static tokens are left out.
    pub fn rotation(
        &self,
        provider: &str,
        order: &BTreeMap<String, Vec<String>>,
        now_ms: u64,
    ) -> Rotation {
        let usable = |id: &ProfileId| {
            self.profiles.get(id).is_some_and(|p| {
                p.provider == provider
                    && match &p.credential {
                        Credential::Unknown { .. } => false,
                        Credential::Token {
                            expires: Some(at), ..
                        } => *at > now_ms,
                        _ => true,
                    }
            })
        };
        let mut ordered: Vec<ProfileId> = Vec::new();
        let mut push = |id: ProfileId| {
            if usable(&id) && !ordered.contains(&id) {
                ordered.push(id);
            }
        };
        if let Some(pinned) = self.active.get(provider) {
            push(pinned.clone());
        }
        for id in order.get(provider).into_iter().flatten() {
            push(ProfileId::from(id.as_str()));
        }
        let mut rest: Vec<(&ProfileId, CredentialKind, u64)> = self
            .profiles
            .iter()
            .map(|(id, p)| (id, p.kind(), self.last_used(id)))
            .collect();
        // OAuth < Token < ApiKey by the enum's order; never used (0) counts as oldest.
        rest.sort_by(|a, b| (a.1, a.2, a.0).cmp(&(b.1, b.2, b.0)));
        for (id, _, _) in rest {
            push(id.clone());
        }

        let mut ready = Vec::new();
        let mut resting = Vec::new();
        for id in ordered {
            let stats = self.usage_stats.get(&id);
            match stats.and_then(|s| s.unusable_until(now_ms)) {
                None => ready.push(id),
                Some(until_ms) => resting.push(Resting {
                    reason: stats.and_then(|s| {
                        let disabled = s.disabled_until.is_some_and(|d| d > now_ms);
                        if disabled {
                            s.disabled_reason.clone()
                        } else {
                            s.last_failure.clone()
                        }
                    }),
                    id,
                    until_ms,
                }),
            }
        }
        resting.sort_by(|a, b| (a.until_ms, &a.id).cmp(&(b.until_ms, &b.id)));
        Rotation {
            provider: provider.to_owned(),
            ready,
            resting,
        }
    }

    fn last_used(&self, id: &ProfileId) -> u64 {
        self.usage_stats
            .get(id)
            .and_then(|s| s.last_used)
            .unwrap_or(0)
    }

    /// Records a successful call: `lastUsed = now`, every failure counter and rest cleared.
    pub fn mark_success(&mut self, id: &ProfileId, now_ms: u64) -> Result<(), AuthError> {
        self.profile(id)?;
        let stats = self.usage_stats.entry(id.clone()).or_default();
        stats.last_used = Some(now_ms);
        stats.clear_failures();
        Ok(())
    }

    /// Records a failed call and rests the profile per `policy`; returns until when it rests.
    pub fn mark_failure(
        &mut self,
        id: &ProfileId,
        failure: impl Into<Failure>,
        policy: &CooldownPolicy,
        now_ms: u64,
    ) -> Result<u64, AuthError> {
        let failure = failure.into();
        self.profile(id)?;
        let stats = self.usage_stats.entry(id.clone()).or_default();
        let stale = stats
            .last_failure_at
            .is_some_and(|at| now_ms.saturating_sub(at) > policy.failure_window_ms);
        if stale {
            stats.error_count = 0;
            stats.failure_counts.clear();
        }
        stats.error_count = stats.error_count.saturating_add(1);
        let kind_name = failure.kind.as_str();
        let of_kind = stats
            .failure_counts
            .entry(kind_name.to_owned())
            .or_insert(0);
        *of_kind = of_kind.saturating_add(1);
        let of_kind = *of_kind;
        stats.last_failure = Some(kind_name.to_owned());
        stats.last_failure_at = Some(now_ms);

        let until = match failure.kind {
            FailureKind::RateLimit | FailureKind::Overloaded | FailureKind::Other => {
                let wait = policy.cooldown_for(stats.error_count).max(
                    failure
                        .retry_after_ms
                        .unwrap_or(0)
                        .min(policy.billing_max_ms),
                );
                let until = now_ms
                    .saturating_add(wait)
                    .max(stats.cooldown_until.unwrap_or(0));
                stats.cooldown_until = Some(until);
                until
            }
            FailureKind::Billing | FailureKind::Auth => {
                let wait = if failure.kind == FailureKind::Billing {
                    policy.billing_disable_for(of_kind)
                } else {
                    policy.auth_disable_ms
                };
                let until = now_ms
                    .saturating_add(wait)
                    .max(stats.disabled_until.unwrap_or(0));
                stats.disabled_until = Some(until);
                stats.disabled_reason = Some(kind_name.to_owned());
                until
            }
        };
        Ok(until)
    }
}

impl UsageStats {
    /// Forgets failures, cooldowns and disables (after a success or a fresh credential).
    pub fn clear_failures(&mut self) {
        self.cooldown_until = None;
        self.disabled_until = None;
        self.disabled_reason = None;
        self.error_count = 0;
        self.last_failure = None;
        self.last_failure_at = None;
        self.failure_counts.clear();
    }
}

//! Per-call options (pi's `SimpleStreamOptions`) plus the transport knobs Pincer adds:
//! retries, idle timeout and cancellation.

use std::collections::BTreeMap;
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use crate::error::ErrorKind;
use crate::types::ThinkingLevel;

/// How long a provider may keep a prompt cached.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CacheRetention {
    None,
    #[default]
    Short,
    Long,
}

/// Retry policy for failures before any output streamed (429, 5xx, connection errors).
#[derive(Debug, Clone, PartialEq)]
pub struct RetryPolicy {
    /// Retries after the first attempt.
    pub max_retries: u32,
    /// First backoff; doubles each retry.
    pub base_delay: Duration,
    /// A server asking to wait longer than this fails at once with the wait in the message
    /// (pi's `maxRetryDelayMs`), so a caller can show it instead of hanging. Zero: no cap.
    pub max_delay: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        Self {
            max_retries: 3,
            base_delay: Duration::from_millis(1000),
            max_delay: Duration::from_secs(60),
        }
    }
}

impl RetryPolicy {
    /// After failed attempt `attempt` (0-based) with `message`: how long to wait before
    /// the next one (the server's `retry_after`, else exponential backoff), or — not
    /// retryable, retries used up, or a wait over `max_delay` — the message to give up with
    /// (`hint` is appended when giving up for good).
    pub(crate) fn after_failure(
        &self,
        attempt: u32,
        retryable: bool,
        retry_after: Option<Duration>,
        message: &str,
        hint: impl FnOnce() -> String,
    ) -> Result<Duration, String> {
        if !retryable || attempt >= self.max_retries {
            let tries = if attempt > 0 {
                format!(" (after {} attempts)", attempt + 1)
            } else {
                String::new()
            };
            return Err(format!("{message}{tries}{}", hint()));
        }
        let backoff = self.base_delay.saturating_mul(2u32.saturating_pow(attempt));
        let delay = retry_after.unwrap_or(backoff);
        if !self.max_delay.is_zero() && delay > self.max_delay {
            return Err(format!(
                "{message}; the server asked to retry after {} s, longer than the {} s limit; try again later",
                delay.as_secs_f64(),
                self.max_delay.as_secs_f64()
            ));
        }
        Ok(delay)
    }

    /// After failed attempt `attempt`: logs the failure and waits before the next one, or
    /// says why not — the policy gives up ([`Self::after_failure`]) or `cancel` fires.
    #[allow(clippy::too_many_arguments)]
    pub(crate) async fn wait_after_failure(
        &self,
        attempt: u32,
        kind: &ErrorKind,
        retry_after: Option<Duration>,
        message: &str,
        hint: impl FnOnce() -> String,
        label: &str,
        cancel: &CancellationToken,
    ) -> Result<(), NoRetry> {
        let delay = self
            .after_failure(attempt, kind.is_retryable(), retry_after, message, hint)
            .map_err(NoRetry::GiveUp)?;
        tracing::warn!(target: "pincer_ai", %label, attempt, delay_ms = delay.as_millis() as u64, "{message}; retrying");
        tokio::select! {
            biased;
            () = cancel.cancelled() => Err(NoRetry::Cancelled),
            () = tokio::time::sleep(delay) => Ok(()),
        }
    }
}

/// Why [`RetryPolicy::wait_after_failure`] does not retry.
#[derive(Debug)]
pub(crate) enum NoRetry {
    /// The message to fail with (the hint appended where it gives up for good).
    GiveUp(String),
    /// The caller cancelled while waiting.
    Cancelled,
}

/// Options for one streamed call.
#[derive(Debug, Clone, Default)]
pub struct StreamOptions {
    pub temperature: Option<f32>,
    pub max_tokens: Option<u64>,
    /// Overrides the key from configuration and environment.
    pub api_key: Option<String>,
    /// Extra HTTP headers (win over the model's and the provider's).
    pub headers: BTreeMap<String, String>,
    pub reasoning: Option<ThinkingLevel>,
    /// Custom budgets per thinking level for token-budget providers.
    pub thinking_budgets: BTreeMap<ThinkingLevel, u64>,
    pub cache_retention: CacheRetention,
    pub session_id: Option<String>,
    pub retry: RetryPolicy,
    /// Fail when no byte arrives for this long (default 120 s).
    pub idle_timeout: Option<Duration>,
    /// Cancels the request; the stream ends with an `aborted` error promptly.
    pub cancel: Option<CancellationToken>,
}

impl StreamOptions {
    pub const DEFAULT_IDLE_TIMEOUT: Duration = Duration::from_secs(120);

    pub fn idle_timeout(&self) -> Duration {
        self.idle_timeout.unwrap_or(Self::DEFAULT_IDLE_TIMEOUT)
    }

    /// Thinking budget for the requested level, honouring custom budgets.
    pub fn thinking_budget(&self) -> Option<u64> {
        let level = self.reasoning?;
        self.thinking_budgets
            .get(&level)
            .copied()
            .or_else(|| level.budget_tokens())
    }
}

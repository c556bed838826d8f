//! Keeps an adapter connected: runs it, and when its connection ends or fails, runs it
//! again — forever, until the gateway stops — after a delay that doubles from `initial` up
//! to `max`, with ±`jitter` so many adapters (or many gateways) do not reconnect in step. A
//! connection that held for [`Backoff::stable_after`] starts the delays over; a platform's
//! `retry_after` is honoured; refused credentials wait at least `max` (the config must change
//! first, and hammering the platform would get the bot banned).

use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio_util::sync::CancellationToken;

use crate::{ChannelAdapter, ChannelError, InboundSink};

/// The reconnect delays.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Backoff {
    pub initial: Duration,
    pub max: Duration,
    /// The fraction a delay may be off either way (0.2: 80 %–120 %).
    pub jitter: f64,
    /// A connection that lasted this long was a good one: the next delay is `initial`.
    pub stable_after: Duration,
}

impl Default for Backoff {
    fn default() -> Self {
        Self {
            initial: Duration::from_secs(1),
            max: Duration::from_secs(60),
            jitter: 0.2,
            stable_after: Duration::from_secs(60),
        }
    }
}

/// Runs `adapter` until `stop`, reconnecting as the module doc says. Its health is kept in
/// `sink`'s [`super::ChannelHealth`].
pub async fn supervise(
    adapter: Arc<dyn ChannelAdapter>,
    sink: InboundSink,
    backoff: Backoff,
    stop: CancellationToken,
) {
    let health = sink.health().clone();
    let mut delay = backoff.initial;
    let mut rng = Jitter::seeded();
    let mut first = true;
    while !stop.is_cancelled() {
        if !first {
            health.reconnecting();
        }
        first = false;
        let started = Instant::now();
        let result = tokio::select! {
            result = adapter.run(&sink, &stop) => result,
            () = stop.cancelled() => Ok(()),
        };
        if stop.is_cancelled() {
            health.disconnected(None);
            return;
        }
        if started.elapsed() >= backoff.stable_after {
            delay = backoff.initial;
        }
        let wait = match &result {
            Ok(()) => {
                tracing::info!(
                    channel = adapter.channel(),
                    account = adapter.account_id(),
                    "channel connection ended; reconnecting"
                );
                health.disconnected(Some("the connection ended"));
                delay
            }
            Err(error) => {
                tracing::warn!(channel = adapter.channel(), account = adapter.account_id(), %error, "channel connection failed; reconnecting");
                health.disconnected(Some(&error.to_string()));
                match error {
                    ChannelError::RateLimited {
                        retry_after_secs, ..
                    } => Duration::from_secs(*retry_after_secs).max(delay),
                    ChannelError::Unauthorized { .. } => backoff.max,
                    _ => delay,
                }
            }
        };
        let wait = rng.spread(wait, backoff.jitter);
        tokio::select! {
            () = tokio::time::sleep(wait) => {}
            () = stop.cancelled() => return,
        }
        delay = (delay * 2).min(backoff.max);
    }
}

/// A small xorshift generator for the jitter: reconnect timing needs spread, not secrecy,
/// so no CSPRNG (or crate) is needed for it.
struct Jitter(u64);

impl Jitter {
    fn seeded() -> Self {
        Self(pincer_base::id::random_u64() | 1)
    }

    fn next_unit(&mut self) -> f64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        (x >> 11) as f64 / (1u64 << 53) as f64
    }

    /// `base` moved by up to ±`fraction` of itself.
    fn spread(&mut self, base: Duration, fraction: f64) -> Duration {
        let fraction = fraction.clamp(0.0, 1.0);
        let factor = 1.0 + fraction * (2.0 * self.next_unit() - 1.0);
        base.mul_f64(factor.max(0.0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jitter_stays_within_its_bounds() {
        let mut rng = Jitter(42);
        let base = Duration::from_secs(10);
        let (mut low, mut high) = (Duration::MAX, Duration::ZERO);
        for _ in 0..1000 {
            let d = rng.spread(base, 0.2);
            assert!(
                d >= Duration::from_secs(8) && d <= Duration::from_secs(12),
                "{d:?}"
            );
            low = low.min(d);
            high = high.max(d);
        }
        assert!(low < Duration::from_millis(8500) && high > Duration::from_millis(11500));
        assert_eq!(rng.spread(base, 0.0), base);
    }
}

//! The system events queue (OpenClaw's `src/infra/system-events.ts`): short human-readable
//! lines ("Exec completed …", "[CRON:id] …", a webhook's text) waiting, per session key, to be
//! put in front of that session's next prompt as `System: [<time>] <text>` lines.
//!
//! Owns the rules: at most [`MAX_EVENTS`] per session (the oldest goes), a text equal to the
//! newest queued one is dropped, events older than [`EVENT_TTL`] are never delivered and `gc`
//! frees them. In memory by design (OpenClaw does not persist them either). Every operation
//! takes one lock, so an event injected while a turn drains the queue lands either in that
//! turn's prompt or in the queue for the next one, never in neither.

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use tokio_util::sync::CancellationToken;

/// Most events queued per session key (OpenClaw's `MAX_EVENTS`).
pub const MAX_EVENTS: usize = 20;
/// How long an event waits for a turn before it is dropped unseen.
pub const EVENT_TTL: Duration = Duration::from_secs(3600);
/// How often the server sweeps expired events out of memory.
pub const GC_INTERVAL: Duration = Duration::from_secs(300);

/// Wall-clock time in milliseconds since the Unix epoch. Injected so tests move time by
/// hand: tokio's paused clock moves `Instant`s, not wall time, and event times are wall time.
pub trait Clock: Send + Sync + 'static {
    fn now_ms(&self) -> i64;
}

/// The system's wall clock.
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now_ms(&self) -> i64 {
        pincer_ai::now_ms()
    }
}

/// A clock that only moves when told to (tests). Clones share the same time.
#[derive(Debug, Clone, Default)]
pub struct ManualClock(Arc<AtomicI64>);

impl ManualClock {
    /// A clock reading `ms`.
    pub fn at(ms: i64) -> Self {
        Self(Arc::new(AtomicI64::new(ms)))
    }

    pub fn set(&self, ms: i64) {
        self.0.store(ms, Ordering::SeqCst);
    }

    pub fn advance(&self, by: Duration) {
        let ms = i64::try_from(by.as_millis()).unwrap_or(i64::MAX);
        self.0.fetch_add(ms, Ordering::SeqCst);
    }
}

impl Clock for ManualClock {
    fn now_ms(&self) -> i64 {
        self.0.load(Ordering::SeqCst)
    }
}

/// One queued event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SystemEvent {
    /// The line, trimmed.
    pub text: String,
    /// When it happened (wall-clock ms).
    pub ts: i64,
    /// `false` for text from outside the operator's control (webhooks): the prompt labels it
    /// `System (untrusted):` so the model does not take it as the gateway speaking.
    pub trusted: bool,
}

/// What `inject` did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Injected {
    /// `false` when the text equals the newest queued event's and was dropped.
    pub queued: bool,
    /// Events now waiting for the session.
    pub pending: usize,
}

/// Why an event was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SystemEventError {
    #[error("system events need a session key")]
    MissingSessionKey,
    #[error("a system event needs non-empty text")]
    EmptyText,
}

struct Inner {
    clock: Arc<dyn Clock>,
    queues: Mutex<HashMap<String, VecDeque<SystemEvent>>>,
}

/// The queues of every session. Cheap to clone: clones share the queues.
#[derive(Clone)]
pub struct SystemEvents {
    inner: Arc<Inner>,
}

impl Default for SystemEvents {
    fn default() -> Self {
        Self::new(Arc::new(SystemClock))
    }
}

impl std::fmt::Debug for SystemEvents {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SystemEvents")
            .field("sessions", &self.queues().len())
            .finish_non_exhaustive()
    }
}

impl SystemEvents {
    /// Empty queues that tell time by `clock`.
    pub fn new(clock: Arc<dyn Clock>) -> Self {
        Self {
            inner: Arc::new(Inner {
                clock,
                queues: Mutex::default(),
            }),
        }
    }

    /// The queues' clock, for callers stamping an event "now".
    pub fn now_ms(&self) -> i64 {
        self.inner.clock.now_ms()
    }

    fn queues(&self) -> MutexGuard<'_, HashMap<String, VecDeque<SystemEvent>>> {
        // A panic while holding the lock cannot leave a queue half-changed (each change is
        // one push or pop), so a poisoned lock is still usable.
        self.inner.queues.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Queues `text` (trimmed) for session `key`, stamped `ts`, from a trusted source.
    pub fn inject(&self, key: &str, text: &str, ts: i64) -> Result<Injected, SystemEventError> {
        self.push(key, text, ts, true)
    }

    /// Like [`Self::inject`], for text from outside (webhooks): labelled untrusted.
    pub fn inject_untrusted(
        &self,
        key: &str,
        text: &str,
        ts: i64,
    ) -> Result<Injected, SystemEventError> {
        self.push(key, text, ts, false)
    }

    fn push(
        &self,
        key: &str,
        text: &str,
        ts: i64,
        trusted: bool,
    ) -> Result<Injected, SystemEventError> {
        let key = key.trim();
        if key.is_empty() {
            return Err(SystemEventError::MissingSessionKey);
        }
        let text = text.trim();
        if text.is_empty() {
            return Err(SystemEventError::EmptyText);
        }
        let now = self.now_ms();
        let mut queues = self.queues();
        let queue = queues.entry(key.to_owned()).or_default();
        prune(queue, now);
        // Pruned first: a text repeated after its twin expired is news again.
        if queue.back().is_some_and(|last| last.text == text) {
            return Ok(Injected {
                queued: false,
                pending: queue.len(),
            });
        }
        queue.push_back(SystemEvent {
            text: text.to_owned(),
            ts,
            trusted,
        });
        while queue.len() > MAX_EVENTS {
            queue.pop_front();
        }
        Ok(Injected {
            queued: true,
            pending: queue.len(),
        })
    }

    /// The events waiting for `key`, oldest first, left in place.
    pub fn peek(&self, key: &str) -> Vec<SystemEvent> {
        let now = self.now_ms();
        let mut queues = self.queues();
        let Some(queue) = queues.get_mut(key.trim()) else {
            return Vec::new();
        };
        prune(queue, now);
        queue.iter().cloned().collect()
    }

    /// The texts of [`Self::peek`] (OpenClaw's `peekSystemEvents`, shown by `status`).
    pub fn peek_texts(&self, key: &str) -> Vec<String> {
        self.peek(key).into_iter().map(|e| e.text).collect()
    }

    /// Takes every event waiting for `key`, oldest first; the queue is empty afterwards.
    pub fn consume(&self, key: &str) -> Vec<SystemEvent> {
        let now = self.now_ms();
        let Some(mut queue) = self.queues().remove(key.trim()) else {
            return Vec::new();
        };
        prune(&mut queue, now);
        queue.into()
    }

    /// Puts `events` (taken by [`Self::consume`] for a turn that then could not start)
    /// back in front of whatever arrived meanwhile, so they reach the next turn; the
    /// newest [`MAX_EVENTS`] stay.
    pub fn restore(&self, key: &str, events: Vec<SystemEvent>) {
        if events.is_empty() {
            return;
        }
        let mut queues = self.queues();
        let queue = queues.entry(key.trim().to_owned()).or_default();
        for event in events.into_iter().rev() {
            queue.push_front(event);
        }
        while queue.len() > MAX_EVENTS {
            queue.pop_front();
        }
    }

    /// Whether an event is waiting for `key`.
    pub fn has_pending(&self, key: &str) -> bool {
        let now = self.now_ms();
        self.queues()
            .get(key.trim())
            .is_some_and(|queue| queue.iter().any(|e| !expired(e, now)))
    }

    /// Drops the events of `key` unseen (a session reset: OpenClaw discards them).
    pub fn clear(&self, key: &str) {
        self.queues().remove(key.trim());
    }

    /// Frees expired events and empty queues; returns how many events went.
    pub fn gc(&self) -> usize {
        let now = self.now_ms();
        let mut removed = 0;
        self.queues().retain(|_, queue| {
            let before = queue.len();
            prune(queue, now);
            removed += before - queue.len();
            !queue.is_empty()
        });
        removed
    }

    /// Drains `key` and renders its events as the block that goes before the user's
    /// message; `None` when nothing waits. The hook a turn calls when it starts.
    pub fn take_prompt_prefix(&self, key: &str) -> Option<String> {
        let events = self.consume(key);
        (!events.is_empty()).then(|| format_for_prompt(&events))
    }

    /// `message` with the pending events of `key` in front (OpenClaw's
    /// `System: …` block, a blank line, then the message); drains them. Unchanged when
    /// nothing waits.
    pub fn prepend_pending(&self, key: &str, message: &str) -> String {
        match self.take_prompt_prefix(key) {
            Some(prefix) => format!("{prefix}\n\n{message}"),
            None => message.to_owned(),
        }
    }

    /// Runs `gc` every `every` until `stop` is cancelled.
    pub async fn run_gc(self, every: Duration, stop: CancellationToken) {
        let mut tick = tokio::time::interval(every);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                () = stop.cancelled() => return,
                _ = tick.tick() => {
                    let removed = self.gc();
                    if removed > 0 {
                        tracing::debug!(removed, "expired system events dropped");
                    }
                }
            }
        }
    }
}

fn expired(event: &SystemEvent, now: i64) -> bool {
    let ttl = i64::try_from(EVENT_TTL.as_millis()).unwrap_or(i64::MAX);
    now.saturating_sub(event.ts) > ttl
}

fn prune(queue: &mut VecDeque<SystemEvent>, now: i64) {
    queue.retain(|e| !expired(e, now));
}

/// The events as prompt lines, OpenClaw's format: `System: [<time>] <text>`, one line per
/// line of text (only the first carries the time) so a multi-line event cannot pass its
/// later lines off as the user's; untrusted events say `System (untrusted):`.
///
/// The time is OpenClaw's default rendering (`YYYY-MM-DD HH:MM:SS <zone>`) in UTC: Pincer
/// has no time-zone database yet, and on a UTC host OpenClaw prints exactly this.
pub fn format_for_prompt(events: &[SystemEvent]) -> String {
    let mut lines = Vec::new();
    for event in events {
        let prefix = if event.trusted {
            "System"
        } else {
            "System (untrusted)"
        };
        let stamp = format_timestamp(event.ts);
        for (i, line) in event.text.lines().enumerate() {
            if i == 0 {
                lines.push(format!("{prefix}: [{stamp}] {line}"));
            } else {
                lines.push(format!("{prefix}: {line}"));
            }
        }
    }
    lines.join("\n")
}

/// `YYYY-MM-DD HH:MM:SS UTC` for a wall-clock time in ms.
pub fn format_timestamp(ms: i64) -> String {
    // `iso_from_ms` gives `YYYY-MM-DDTHH:MM:SS.mmmZ`; keep date and time to the second.
    let iso = pincer_store::ids::iso_from_ms(ms);
    match (iso.get(..10), iso.get(11..19)) {
        (Some(date), Some(time)) => format!("{date} {time} UTC"),
        _ => "unknown-time".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    const T0: i64 = 1_736_950_205_000; // 2025-01-15 14:10:05 UTC

    fn queue() -> (SystemEvents, ManualClock) {
        let clock = ManualClock::at(T0);
        (SystemEvents::new(Arc::new(clock.clone())), clock)
    }

    /// `inject`'s answer: whether the text was queued and how many events now wait.
    fn injected(queued: bool, pending: usize) -> Injected {
        Injected { queued, pending }
    }

    fn texts(events: &[SystemEvent]) -> Vec<&str> {
        events.iter().map(|e| e.text.as_str()).collect()
    }

    #[test]
    fn events_queue_per_session_in_order() {
        let (q, _) = queue();
        q.inject("a", "one", T0).unwrap();
        q.inject("b", "other", T0).unwrap();
        let two = q.inject("a", "  two\n", T0 + 1).unwrap();
        assert_eq!(two, injected(true, 2));
        assert_eq!(texts(&q.peek("a")), ["one", "two"]);
        assert_eq!(q.peek_texts("b"), ["other"]);
        assert!(q.peek("c").is_empty());
    }

    #[test]
    fn the_oldest_goes_past_the_cap() {
        let (q, _) = queue();
        for i in 0..MAX_EVENTS + 3 {
            let n = q.inject("k", &format!("e{i}"), T0).unwrap();
            assert_eq!(n.pending, (i + 1).min(MAX_EVENTS));
        }
        let events = q.peek("k");
        assert_eq!(events.len(), MAX_EVENTS);
        assert_eq!(events[0].text, "e3");
        assert_eq!(events[MAX_EVENTS - 1].text, format!("e{}", MAX_EVENTS + 2));
    }

    #[test]
    fn consecutive_duplicates_are_dropped_others_are_not() {
        let (q, _) = queue();
        q.inject("k", "ping", T0).unwrap();
        let again = q.inject("k", " ping ", T0 + 5).unwrap();
        assert_eq!(again, injected(false, 1));
        q.inject("k", "pong", T0).unwrap();
        q.inject("k", "ping", T0).unwrap();
        assert_eq!(texts(&q.peek("k")), ["ping", "pong", "ping"]);
        // The same text on another session is not a duplicate.
        assert!(q.inject("other", "ping", T0).unwrap().queued);
        // After a drain the text is news again.
        q.consume("k");
        assert!(q.inject("k", "ping", T0).unwrap().queued);
    }

    #[test]
    fn empty_text_and_missing_keys_are_refused() {
        let (q, _) = queue();
        assert_eq!(q.inject("k", " \n\t", T0), Err(SystemEventError::EmptyText));
        assert_eq!(
            q.inject("  ", "x", T0),
            Err(SystemEventError::MissingSessionKey)
        );
        assert!(!q.has_pending("k"));
    }

    #[test]
    fn consume_drains_and_has_pending_follows() {
        let (q, _) = queue();
        assert!(!q.has_pending("k"));
        q.inject("k", "one", T0).unwrap();
        q.inject("k", "two", T0).unwrap();
        assert!(q.has_pending("k"));
        assert_eq!(q.peek("k").len(), 2, "peek leaves events in place");
        assert_eq!(texts(&q.consume("k")), ["one", "two"]);
        assert!(!q.has_pending("k"));
        assert!(q.consume("k").is_empty());
        assert!(q.peek("k").is_empty());
    }

    #[test]
    fn events_expire_after_the_ttl() {
        let (q, clock) = queue();
        q.inject("k", "old", T0).unwrap();
        clock.advance(Duration::from_secs(1800));
        q.inject("k", "new", clock.now_ms()).unwrap();
        clock.advance(EVENT_TTL - Duration::from_secs(1800));
        // Exactly one TTL old: still delivered.
        assert_eq!(q.peek_texts("k"), ["old", "new"]);
        clock.advance(Duration::from_millis(1));
        assert_eq!(q.peek_texts("k"), ["new"]);
        assert!(q.has_pending("k"));
        clock.advance(Duration::from_secs(1800));
        assert!(!q.has_pending("k"));
        assert!(q.consume("k").is_empty());
    }

    #[test]
    fn a_duplicate_of_an_expired_event_is_queued() {
        let (q, clock) = queue();
        q.inject("k", "tick", T0).unwrap();
        clock.advance(EVENT_TTL + Duration::from_secs(1));
        let again = q.inject("k", "tick", clock.now_ms()).unwrap();
        assert_eq!(again, injected(true, 1));
    }

    #[test]
    fn gc_frees_expired_events_and_empty_sessions() {
        let (q, clock) = queue();
        q.inject("stale", "a", T0).unwrap();
        q.inject("stale", "b", T0).unwrap();
        q.inject("mixed", "old", T0).unwrap();
        clock.advance(EVENT_TTL);
        q.inject("mixed", "fresh", clock.now_ms()).unwrap();
        assert_eq!(q.gc(), 0, "nothing is older than the TTL yet");
        clock.advance(Duration::from_secs(1));
        assert_eq!(q.gc(), 3);
        assert_eq!(q.queues().len(), 1, "the emptied session is gone");
        assert_eq!(q.peek_texts("mixed"), ["fresh"]);
    }

    #[test]
    fn clear_discards_a_session() {
        let (q, _) = queue();
        q.inject("k", "x", T0).unwrap();
        q.inject("j", "y", T0).unwrap();
        q.clear("k");
        assert!(!q.has_pending("k"));
        assert!(q.has_pending("j"));
    }

    #[test]
    fn clones_share_the_queues_across_threads() {
        let (q, _) = queue();
        let handles: Vec<_> = (0..4)
            .map(|t| {
                let q = q.clone();
                std::thread::spawn(move || {
                    for i in 0..5 {
                        q.inject("k", &format!("{t}-{i}"), T0).unwrap();
                    }
                })
            })
            .collect();
        for h in handles {
            h.join().unwrap();
        }
        assert_eq!(q.consume("k").len(), MAX_EVENTS);
    }

    #[test]
    fn prompt_lines_have_openclaws_shape() {
        let events = [
            SystemEvent {
                text: "Exec completed (abcd1234, code 0) :: done".into(),
                ts: T0,
                trusted: true,
            },
            SystemEvent {
                text: "New mail\nFrom: someone".into(),
                ts: T0 + 61_000,
                trusted: false,
            },
        ];
        assert_eq!(
            format_for_prompt(&events),
            "System: [2025-01-15 14:10:05 UTC] Exec completed (abcd1234, code 0) :: done\n\
             System (untrusted): [2025-01-15 14:11:06 UTC] New mail\n\
             System (untrusted): From: someone"
        );
        assert_eq!(format_for_prompt(&[]), "");
    }

    #[test]
    fn timestamps_render_in_utc_to_the_second() {
        assert_eq!(format_timestamp(0), "1970-01-01 00:00:00 UTC");
        assert_eq!(format_timestamp(T0 + 999), "2025-01-15 14:10:05 UTC");
        assert_eq!(format_timestamp(951_782_400_000), "2000-02-29 00:00:00 UTC");
    }

    #[test]
    fn the_turn_hook_drains_into_a_prefix() {
        let (q, _) = queue();
        assert_eq!(q.take_prompt_prefix("k"), None);
        assert_eq!(q.prepend_pending("k", "hi"), "hi");
        q.inject("k", "Reminder: stand up", T0).unwrap();
        assert_eq!(
            q.prepend_pending("k", "hi"),
            "System: [2025-01-15 14:10:05 UTC] Reminder: stand up\n\nhi"
        );
        assert!(!q.has_pending("k"), "the prefix drained the queue");
        assert_eq!(q.prepend_pending("k", "again"), "again");
    }

    #[test]
    fn restored_events_go_back_in_front_of_newer_ones() {
        let (q, _) = queue();
        q.inject("k", "first", T0).unwrap();
        q.inject("k", "second", T0).unwrap();
        let taken = q.consume("k");
        q.inject("k", "third", T0).unwrap();
        q.restore("k", taken);
        assert_eq!(q.peek_texts("k"), ["first", "second", "third"]);
        // Still bounded: the oldest go first.
        let many: Vec<SystemEvent> = (0..MAX_EVENTS)
            .map(|i| SystemEvent {
                text: format!("e{i}"),
                ts: T0,
                trusted: true,
            })
            .collect();
        q.restore("k", many);
        let texts = q.peek_texts("k");
        assert_eq!(texts.len(), MAX_EVENTS);
        assert_eq!(texts.last().unwrap(), "third");
        assert_eq!(texts[0], "e3");
    }

    #[tokio::test]
    async fn the_gc_task_sweeps_until_stopped() {
        let (q, clock) = queue();
        q.inject("k", "x", T0).unwrap();
        clock.advance(EVENT_TTL + Duration::from_secs(1));
        let stop = CancellationToken::new();
        let task = tokio::spawn(q.clone().run_gc(Duration::from_millis(5), stop.clone()));
        let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
        while !q.queues().is_empty() && tokio::time::Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        assert!(q.queues().is_empty(), "a tick swept");
        stop.cancel();
        tokio::time::timeout(Duration::from_secs(1), task)
            .await
            .unwrap()
            .unwrap();
    }
}

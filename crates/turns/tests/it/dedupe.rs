//! Inbound dedupe through its public API: repeats within the TTL, expiry, keys that differ
//! in any part, refresh on repeat, and the capacity bound.

use std::time::{Duration, Instant};

use pincer_turns::dedupe::{DEFAULT_DEDUPE_CAPACITY, DEFAULT_DEDUPE_TTL, Dedupe, DedupeKey};
use proptest::prelude::*;

const MIN: Duration = Duration::from_secs(60);

fn key(id: &str) -> DedupeKey {
    DedupeKey::new("telegram", "default", "chat-1", id)
}

#[test]
fn first_time_is_new_and_a_repeat_within_the_ttl_is_not() {
    let t0 = Instant::now();
    let mut dedupe = Dedupe::new(100, 10 * MIN);
    assert!(dedupe.first_seen(&key("1"), t0));
    assert!(!dedupe.first_seen(&key("1"), t0));
    assert!(!dedupe.first_seen(&key("1"), t0 + 5 * MIN));
    assert!(dedupe.first_seen(&key("2"), t0 + 5 * MIN));
    assert_eq!(dedupe.len(), 2);
}

#[test]
fn a_key_is_new_again_once_the_ttl_has_passed() {
    let t0 = Instant::now();
    let mut dedupe = Dedupe::new(100, 10 * MIN);
    assert!(dedupe.first_seen(&key("1"), t0));
    assert!(!dedupe.first_seen(&key("1"), t0 + 10 * MIN - Duration::from_millis(1)));
    // That repeat refreshed the entry: it lives 10 minutes from then.
    assert!(!dedupe.first_seen(&key("1"), t0 + 19 * MIN));
    assert!(dedupe.first_seen(&key("1"), t0 + 29 * MIN));
}

#[test]
fn expired_keys_are_forgotten() {
    let t0 = Instant::now();
    let mut dedupe = Dedupe::new(100, MIN);
    for id in ["1", "2", "3"] {
        assert!(dedupe.first_seen(&key(id), t0));
    }
    assert_eq!(dedupe.len(), 3);
    assert!(dedupe.first_seen(&key("4"), t0 + MIN));
    assert_eq!(dedupe.len(), 1);
}

#[test]
fn every_part_of_the_key_counts() {
    let t0 = Instant::now();
    let mut dedupe = Dedupe::default();
    let keys = [
        DedupeKey::new("telegram", "default", "chat-1", "7"),
        DedupeKey::new("discord", "default", "chat-1", "7"),
        DedupeKey::new("telegram", "work", "chat-1", "7"),
        DedupeKey::new("telegram", "default", "chat-2", "7"),
        DedupeKey::new("telegram", "default", "chat-1", "8"),
    ];
    for k in &keys {
        assert!(dedupe.first_seen(k, t0), "{k:?}");
    }
    for k in &keys {
        assert!(!dedupe.first_seen(k, t0), "{k:?}");
    }
}

#[test]
fn past_capacity_the_least_recently_seen_key_goes() {
    let t0 = Instant::now();
    let mut dedupe = Dedupe::new(2, 10 * MIN);
    assert!(dedupe.first_seen(&key("a"), t0));
    assert!(dedupe.first_seen(&key("b"), t0));
    // Seeing "a" again makes "b" the least recently seen.
    assert!(!dedupe.first_seen(&key("a"), t0));
    assert!(dedupe.first_seen(&key("c"), t0));
    assert_eq!(dedupe.len(), 2);
    assert!(!dedupe.first_seen(&key("a"), t0));
    assert!(!dedupe.first_seen(&key("c"), t0));
    assert!(dedupe.first_seen(&key("b"), t0));
    assert_eq!(dedupe.len(), 2);
}

#[test]
fn a_time_before_the_entry_counts_as_a_repeat() {
    let t0 = Instant::now() + 10 * MIN;
    let mut dedupe = Dedupe::new(10, MIN);
    assert!(dedupe.first_seen(&key("1"), t0));
    assert!(!dedupe.first_seen(&key("1"), t0 - 5 * MIN));
}

#[test]
fn zero_capacity_still_remembers_one_key() {
    let t0 = Instant::now();
    let mut dedupe = Dedupe::new(0, MIN);
    assert!(dedupe.first_seen(&key("1"), t0));
    assert!(!dedupe.first_seen(&key("1"), t0));
    assert!(dedupe.first_seen(&key("2"), t0));
    assert!(dedupe.first_seen(&key("1"), t0));
    assert_eq!(dedupe.len(), 1);
}

#[test]
fn defaults_are_openclaws() {
    assert_eq!(DEFAULT_DEDUPE_TTL, 20 * MIN);
    assert_eq!(DEFAULT_DEDUPE_CAPACITY, 5000);
    assert!(Dedupe::default().is_empty());
}

/// The cache against a plain list of (key, last seen) with the same rules.
fn model_first_seen(
    model: &mut Vec<(u8, Instant)>,
    capacity: usize,
    ttl: Duration,
    k: u8,
    now: Instant,
) -> bool {
    model.retain(|(_, at)| now.saturating_duration_since(*at) < ttl);
    let repeat = model.iter().any(|(key, _)| *key == k);
    model.retain(|(key, _)| *key != k);
    model.push((k, now));
    if model.len() > capacity {
        model.remove(0);
    }
    !repeat
}

proptest! {
    #[test]
    fn behaves_like_a_simple_model(
        capacity in 1usize..6,
        ttl_secs in 1u64..50,
        steps in prop::collection::vec((0u8..8, 0u64..20), 0..200),
    ) {
        let ttl = Duration::from_secs(ttl_secs);
        let mut now = Instant::now();
        let mut dedupe = Dedupe::new(capacity, ttl);
        let mut model = Vec::new();
        for (k, advance) in steps {
            now += Duration::from_secs(advance);
            let key = key(&k.to_string());
            let expected = model_first_seen(&mut model, capacity, ttl, k, now);
            prop_assert_eq!(dedupe.first_seen(&key, now), expected);
            prop_assert!(dedupe.len() <= capacity);
        }
    }
}

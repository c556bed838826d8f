//! Rotation order and the price of failures, as pure functions over a loaded file.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::time::Duration;

use pincer_ai::ErrorKind;
use pincer_auth::{
    AuthProfiles, CooldownPolicy, Failure, FailureKind, OAuthCredential, ProfileId, Resting,
    Secret, failure_from_error, failure_kind,
};

const NOW: u64 = 1_750_000_000_000;
const MIN: u64 = 60_000;
const HOUR: u64 = 60 * MIN;

fn ids(list: &[ProfileId]) -> Vec<&str> {
    list.iter().map(ProfileId::as_str).collect()
}

fn oauth(account: &str) -> OAuthCredential {
    OAuthCredential {
        access: Secret::new("at"),
        refresh: Secret::new("rt"),
        expires: NOW + HOUR,
        account_id: Some(account.into()),
    }
}

/// openai: keys a, b, c and an OAuth login; anthropic: one key.
fn file() -> AuthProfiles {
    let mut file = AuthProfiles::default();
    for name in ["a", "b", "c"] {
        file.add_api_key("openai", Some(name), &format!("sk-{name}-000000000"))
            .unwrap();
    }
    file.add_oauth("openai", oauth("acct")).unwrap();
    file.add_api_key("anthropic", None, "sk-ant-000000000")
        .unwrap();
    file
}

fn no_order() -> BTreeMap<String, Vec<String>> {
    BTreeMap::new()
}

#[test]
fn oauth_first_then_least_recently_used() {
    let mut file = file();
    file.mark_success(&"openai:a".into(), NOW - 10).unwrap();
    file.mark_success(&"openai:c".into(), NOW - 20).unwrap();
    let rotation = file.rotation("openai", &no_order(), NOW);
    assert_eq!(
        ids(&rotation.ready),
        ["openai:acct", "openai:b", "openai:c", "openai:a"]
    );
    assert!(rotation.resting.is_empty());
    assert_eq!(
        ids(&file.rotation("anthropic", &no_order(), NOW).ready),
        ["anthropic:default"]
    );
    assert!(file.rotation("google", &no_order(), NOW).is_empty());
}

#[test]
fn the_pin_comes_first_then_the_configured_order() {
    let mut file = file();
    file.set_active(&"openai:c".into()).unwrap();
    let order = BTreeMap::from([(
        "openai".to_owned(),
        vec![
            "openai:b".to_owned(),
            "openai:missing".to_owned(),
            "anthropic:default".to_owned(),
            "openai:c".to_owned(),
        ],
    )]);
    let rotation = file.rotation("openai", &order, NOW);
    assert_eq!(
        ids(&rotation.ready),
        ["openai:c", "openai:b", "openai:acct", "openai:a"]
    );
    assert_eq!(rotation.first().map(ProfileId::as_str), Some("openai:c"));
}

#[test]
fn rate_limits_climb_the_cooldown_ladder_and_success_resets_it() {
    let mut file = file();
    let id = ProfileId::from("openai:a");
    let policy = CooldownPolicy::default();
    let mut untils = Vec::new();
    for step in 0..5 {
        // Spaced inside the 24 h window, so each counts as the next consecutive failure.
        let now = NOW + step * 2 * HOUR;
        untils.push(
            file.mark_failure(&id, FailureKind::RateLimit, &policy, now)
                .unwrap()
                - now,
        );
    }
    assert_eq!(untils, [MIN, 5 * MIN, 25 * MIN, HOUR, HOUR]);
    let stats = &file.usage_stats[&id];
    assert_eq!(stats.error_count, 5);
    assert_eq!(stats.last_failure.as_deref(), Some("rate_limit"));
    assert_eq!(stats.failure_counts["rate_limit"], 5);

    file.mark_success(&id, NOW + 10 * HOUR).unwrap();
    let stats = &file.usage_stats[&id];
    assert_eq!(
        (stats.error_count, stats.cooldown_until, stats.last_used),
        (0, None, Some(NOW + 10 * HOUR))
    );
    assert_eq!(
        file.mark_failure(&id, FailureKind::Overloaded, &policy, NOW + 11 * HOUR)
            .unwrap(),
        NOW + 11 * HOUR + MIN
    );
}

#[test]
fn the_ladder_is_configurable_and_retry_after_lengthens_a_cooldown() {
    let mut file = file();
    let id = ProfileId::from("openai:a");
    let policy = CooldownPolicy::default().with_cooldowns_ms(Some(vec![1_000, 2_000]));
    let failure = Failure {
        kind: FailureKind::RateLimit,
        retry_after_ms: Some(30_000),
    };
    assert_eq!(
        file.mark_failure(&id, failure, &policy, NOW).unwrap(),
        NOW + 30_000
    );
    assert_eq!(
        file.mark_failure(&id, FailureKind::RateLimit, &policy, NOW)
            .unwrap(),
        NOW + 30_000,
        "a shorter new cooldown never shortens the one running"
    );
    assert_eq!(
        file.mark_failure(&id, FailureKind::Other, &policy, NOW + 40_000)
            .unwrap(),
        NOW + 42_000
    );
    assert_eq!(
        CooldownPolicy::default().with_cooldowns_ms(Some(vec![])),
        CooldownPolicy::default()
    );
}

#[test]
fn old_failures_are_forgotten_after_the_window() {
    let mut file = file();
    let id = ProfileId::from("openai:a");
    let policy = CooldownPolicy::default();
    file.mark_failure(&id, FailureKind::RateLimit, &policy, NOW)
        .unwrap();
    file.mark_failure(&id, FailureKind::RateLimit, &policy, NOW)
        .unwrap();
    let later = NOW + 25 * HOUR;
    assert_eq!(
        file.mark_failure(&id, FailureKind::RateLimit, &policy, later)
            .unwrap(),
        later + MIN
    );
    assert_eq!(file.usage_stats[&id].error_count, 1);
}

#[test]
fn billing_disables_for_hours_doubling_to_a_day() {
    let mut file = file();
    let id = ProfileId::from("openai:b");
    let policy = CooldownPolicy::default();
    let waits: Vec<u64> = (0..5)
        .map(|i| {
            let now = NOW + i * MIN;
            file.mark_failure(&id, FailureKind::Billing, &policy, now)
                .unwrap()
                - now
        })
        .collect();
    assert_eq!(
        waits,
        [5 * HOUR, 10 * HOUR, 20 * HOUR, 24 * HOUR, 24 * HOUR]
    );
    let stats = &file.usage_stats[&id];
    assert_eq!(stats.disabled_reason.as_deref(), Some("billing"));
    assert_eq!(stats.cooldown_until, None);
}

#[test]
fn auth_failures_disable_for_a_day_or_until_the_key_is_added_again() {
    let mut file = file();
    let id = ProfileId::from("openai:b");
    let until = file
        .mark_failure(&id, FailureKind::Auth, &CooldownPolicy::default(), NOW)
        .unwrap();
    assert_eq!(until, NOW + 24 * HOUR);
    let rotation = file.rotation("openai", &no_order(), NOW + HOUR);
    assert_eq!(
        rotation.resting,
        [Resting {
            id: id.clone(),
            until_ms: NOW + 24 * HOUR,
            reason: Some("auth".into())
        }]
    );
    file.add_api_key("openai", Some("b"), "sk-b-000000000")
        .unwrap();
    assert!(
        file.rotation("openai", &no_order(), NOW + HOUR)
            .resting
            .is_empty()
    );
}

#[test]
fn resting_profiles_are_skipped_and_reported_soonest_first() {
    let mut file = file();
    let policy = CooldownPolicy::default();
    for (name, kind) in [
        ("acct", FailureKind::Billing),
        ("a", FailureKind::RateLimit),
        ("b", FailureKind::Overloaded),
    ] {
        file.mark_failure(
            &format!("openai:{name}").as_str().into(),
            kind,
            &policy,
            NOW,
        )
        .unwrap();
    }
    let rotation = file.rotation("openai", &no_order(), NOW + 1);
    assert_eq!(ids(&rotation.ready), ["openai:c"]);
    assert_eq!(rotation.all_resting_until(), None);

    file.mark_failure(
        &"openai:c".into(),
        FailureKind::RateLimit,
        &policy,
        NOW + 30_000,
    )
    .unwrap();
    let rotation = file.rotation("openai", &no_order(), NOW + 30_001);
    assert!(rotation.ready.is_empty());
    let resting: Vec<(&str, u64, Option<&str>)> = rotation
        .resting
        .iter()
        .map(|r| (r.id.as_str(), r.until_ms - NOW, r.reason.as_deref()))
        .collect();
    assert_eq!(
        resting,
        [
            ("openai:a", MIN, Some("rate_limit")),
            ("openai:b", MIN, Some("overloaded")),
            ("openai:c", 30_000 + MIN, Some("rate_limit")),
            ("openai:acct", 5 * HOUR, Some("billing")),
        ]
    );
    assert_eq!(rotation.all_resting_until(), Some(NOW + MIN));
    // Cooldowns end by themselves.
    assert_eq!(
        ids(&file.rotation("openai", &no_order(), NOW + MIN).ready),
        ["openai:a", "openai:b"]
    );
}

#[test]
fn marking_an_unknown_profile_is_an_error() {
    let mut file = file();
    assert!(file.mark_success(&"nope:x".into(), NOW).is_err());
    assert!(
        file.mark_failure(
            &"nope:x".into(),
            FailureKind::Other,
            &CooldownPolicy::default(),
            NOW
        )
        .is_err()
    );
    assert!(file.usage_stats.is_empty());
}

#[test]
fn llm_errors_map_to_failure_kinds() {
    let cases = [
        (
            ErrorKind::RateLimited { retry_after: None },
            Some(FailureKind::RateLimit),
        ),
        (ErrorKind::Overloaded, Some(FailureKind::Overloaded)),
        (ErrorKind::Auth, Some(FailureKind::Auth)),
        (ErrorKind::Server, Some(FailureKind::Other)),
        (ErrorKind::Timeout, Some(FailureKind::Other)),
        (ErrorKind::Network, Some(FailureKind::Other)),
        (ErrorKind::BadRequest, None),
        (ErrorKind::ContextOverflow, None),
        (ErrorKind::Protocol, None),
        (ErrorKind::Aborted, None),
        (ErrorKind::Refused, None),
        (ErrorKind::Config, None),
    ];
    for (kind, expected) in cases {
        assert_eq!(failure_kind(&kind), expected, "{kind:?}");
    }
    let limited = ErrorKind::RateLimited {
        retry_after: Some(Duration::from_secs(7)),
    };
    assert_eq!(
        failure_from_error(&limited, "429 Too Many Requests"),
        Some(Failure {
            kind: FailureKind::RateLimit,
            retry_after_ms: Some(7_000)
        })
    );
    assert_eq!(
        failure_from_error(
            &limited,
            "You exceeded your current quota (insufficient_quota)"
        ),
        Some(Failure {
            kind: FailureKind::Billing,
            retry_after_ms: Some(7_000)
        })
    );
    assert_eq!(
        failure_from_error(
            &ErrorKind::BadRequest,
            "HTTP 400: Your credit balance is too low"
        ),
        Some(FailureKind::Billing.into())
    );
    assert_eq!(
        failure_from_error(&ErrorKind::BadRequest, "bad field"),
        None
    );
    assert_eq!(
        failure_from_error(&ErrorKind::Server, "billing service down"),
        Some(FailureKind::Other.into())
    );
}

#[test]
fn unknown_types_and_expired_tokens_are_never_candidates() {
    let file: AuthProfiles = serde_json::from_value(serde_json::json!({
        "profiles": {
            "x:svc": {"type": "service_account", "provider": "x"},
            "x:old": {"type": "token", "provider": "x", "token": "t-old", "expires": NOW - 1},
            "x:new": {"type": "token", "provider": "x", "token": "t-new", "expires": NOW + 1},
            "x:forever": {"type": "token", "provider": "x", "token": "t-forever"}
        }
    }))
    .unwrap();
    assert_eq!(
        ids(&file.rotation("x", &no_order(), NOW).ready),
        ["x:forever", "x:new"]
    );
}

//! The profiles file through `AuthStore`: reading (missing, corrupt, foreign fields),
//! editing (names, clashes, re-login, removal, pins), status lines and secret hygiene.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::fs;
use std::sync::Arc;

use pincer_auth::{
    AuthError, AuthStore, CredentialKind, OAuthCredential, ProfileId, ProfileStatus, Secret,
    format_duration_ms, mask_secret,
};
use serde_json::{Value, json};

const NOW: u64 = 1_750_000_000_000;

fn store() -> (tempfile::TempDir, AuthStore) {
    let dir = tempfile::tempdir().unwrap();
    let store = AuthStore::in_home(dir.path());
    (dir, store)
}

fn oauth(account: Option<&str>, access: &str) -> OAuthCredential {
    OAuthCredential {
        access: Secret::new(access),
        refresh: Secret::new(format!("refresh-of-{access}")),
        expires: NOW + 3_600_000,
        account_id: account.map(str::to_owned),
    }
}

fn read(store: &AuthStore) -> Value {
    serde_json::from_slice(&fs::read(store.path()).unwrap()).unwrap()
}

#[test]
fn a_missing_file_is_an_empty_store() {
    let (_dir, store) = store();
    let file = store.load().unwrap();
    assert!(file.profiles.is_empty());
    assert_eq!(file.version, 1);
    assert_eq!(store.status(NOW).unwrap(), Vec::<ProfileStatus>::new());
}

#[test]
fn writes_openclaw_shape_with_mode_0600() {
    let (_dir, store) = store();
    let key_id = store
        .add_api_key("openai", None, "  sk-test-1234567890  ")
        .unwrap();
    let oauth_id = store
        .add_oauth("openai-codex", oauth(Some("acct-1"), "at-1"))
        .unwrap();
    assert_eq!(key_id, ProfileId::from("openai:default"));
    assert_eq!(oauth_id, ProfileId::from("openai-codex:acct-1"));
    assert_eq!(
        read(&store),
        json!({
            "version": 1,
            "profiles": {
                "openai:default": {"type": "api_key", "provider": "openai", "key": "sk-test-1234567890"},
                "openai-codex:acct-1": {
                    "type": "oauth", "provider": "openai-codex", "access": "at-1",
                    "refresh": "refresh-of-at-1", "expires": NOW + 3_600_000, "accountId": "acct-1"
                }
            }
        })
    );
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = fs::metadata(store.path()).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
    }
}

#[test]
fn unknown_fields_and_types_survive_a_rewrite() {
    let (_dir, store) = store();
    let original = json!({
        "version": 1,
        "profiles": {
            "anthropic:default": {"type": "api_key", "provider": "anthropic", "key": "sk-ant-xxxxxxxxxxxx", "email": "a@b.c"},
            "google:cloud": {"type": "service_account", "provider": "google", "json": {"k": 1}},
            "gh:tok": {"type": "token", "provider": "github-copilot", "token": "ghu_xxxxxxxxxxxx", "expires": 1.7e12}
        },
        "lastGood": {"anthropic": "anthropic:default"},
        "usageStats": {"anthropic:default": {"lastUsed": 5, "modelStats": {"m": 1}}}
    });
    fs::write(store.path(), original.to_string()).unwrap();
    store
        .add_api_key("openai", None, "sk-new-000000000")
        .unwrap();
    let mut expected = original.clone();
    expected["profiles"]["openai:default"] =
        json!({"type": "api_key", "provider": "openai", "key": "sk-new-000000000"});
    expected["profiles"]["gh:tok"]["expires"] = json!(1_700_000_000_000u64);
    assert_eq!(read(&store), expected);
    let kinds: Vec<CredentialKind> = store.status(NOW).unwrap().iter().map(|s| s.kind).collect();
    assert_eq!(
        kinds,
        [
            CredentialKind::ApiKey,
            CredentialKind::Token,
            CredentialKind::Unknown,
            CredentialKind::ApiKey
        ]
    );
}

#[test]
fn corrupt_files_are_errors_naming_the_file_and_are_never_overwritten() {
    let cases: &[(&str, &str)] = &[
        ("{oops", "invalid JSON"),
        ("[]", "invalid JSON"),
        (r#"{"profiles": []}"#, "invalid JSON"),
        (
            r#"{"profiles": {"a:b": {"provider": "openai", "key": "k"}}}"#,
            "\"type\" is missing",
        ),
        (
            r#"{"profiles": {"a:b": {"type": "api_key", "provider": "openai"}}}"#,
            "\"key\" is missing",
        ),
        (
            r#"{"profiles": {"a:b": {"type": "api_key", "provider": "openai", "key": 42}}}"#,
            "\"key\" must be a string",
        ),
        (
            r#"{"profiles": {"a:b": {"type": "api_key", "provider": 7, "key": "k"}}}"#,
            "\"provider\" must be a string",
        ),
        (
            r#"{"profiles": {"a:b": {"type": "oauth", "provider": "p", "access": "a", "refresh": "r"}}}"#,
            "needs \"expires\"",
        ),
        (
            r#"{"profiles": {"a:b": {"type": "oauth", "provider": "p", "access": "a", "refresh": "r", "expires": "soon"}}}"#,
            "\"expires\" must be epoch milliseconds",
        ),
        (
            r#"{"profiles": {"a:b": {"type": "oauth", "provider": "p", "access": "a", "refresh": "r", "expires": -1}}}"#,
            "\"expires\" must be epoch milliseconds",
        ),
        (
            r#"{"profiles": {"a:b": {"type": "oauth", "provider": "p", "access": "a", "refresh": "r", "expires": 1, "accountId": 3}}}"#,
            "\"accountId\" must be a string",
        ),
        (
            r#"{"profiles": {}, "usageStats": {"a:b": {"errorCount": "many"}}}"#,
            "invalid JSON",
        ),
        (r#"{"version": 2, "profiles": {}}"#, "unsupported version 2"),
    ];
    for (content, expected) in cases {
        let (_dir, store) = store();
        fs::write(store.path(), content).unwrap();
        let error = store.load().unwrap_err().to_string();
        assert!(
            error.contains("auth-profiles.json") && error.contains(expected),
            "{content}: {error}"
        );
        let error = store
            .add_api_key("openai", None, "sk-aaaaaaaaaaaa")
            .unwrap_err();
        assert!(error.to_string().contains("auth-profiles.json"), "{error}");
        assert_eq!(fs::read_to_string(store.path()).unwrap(), *content);
    }
}

#[test]
fn parse_errors_never_quote_secret_values() {
    let (_dir, store) = store();
    fs::write(
        store.path(),
        r#"{"profiles": {"a:b": {"type": "oauth", "provider": "p", "access": "SECRET-ACCESS", "refresh": ["SECRET-REFRESH"], "expires": 1}}}"#,
    )
    .unwrap();
    let error = store.load().unwrap_err().to_string();
    assert!(!error.contains("SECRET"), "{error}");
    assert!(error.contains("\"refresh\" must be a string"), "{error}");
}

#[test]
fn name_clashes_get_numbered_and_the_same_key_is_not_duplicated() {
    let (_dir, store) = store();
    let add = |profile, key| store.add_api_key("openai", profile, key).unwrap();
    let first = add(None, "sk-one-1234567890");
    let again = add(None, "sk-one-1234567890");
    let second = add(None, "sk-two-1234567890");
    let third = add(Some("default"), "sk-three-123456789");
    let named = add(Some("work"), "sk-work-123456789");
    let ids: Vec<&str> = [&first, &again, &second, &third, &named]
        .iter()
        .map(|id| id.as_str())
        .collect();
    assert_eq!(
        ids,
        [
            "openai:default",
            "openai:default",
            "openai:default#2",
            "openai:default#3",
            "openai:work"
        ]
    );
    assert_eq!(store.load().unwrap().profiles.len(), 4);
}

#[test]
fn invalid_names_providers_and_keys_are_refused() {
    let (_dir, store) = store();
    let refused: Vec<String> = [
        ("", None, "sk-aaaaaaaaaaaa"),
        ("open ai", None, "sk-aaaaaaaaaaaa"),
        ("openai", Some("a:b"), "sk-aaaaaaaaaaaa"),
        ("openai", Some(""), "sk-aaaaaaaaaaaa"),
        ("openai", None, "   "),
        ("openai", None, "sk-abc\ndef"),
    ]
    .into_iter()
    .map(|(provider, profile, key)| {
        let added = store.add_api_key(provider, profile, key);
        added.unwrap_err().to_string()
    })
    .collect();
    assert_eq!(
        refused,
        [
            "invalid provider \"\": use letters, digits, '-', '_' or '.' (for example openai-codex)",
            "invalid provider \"open ai\": use letters, digits, '-', '_' or '.' (for example openai-codex)",
            "invalid profile name \"a:b\": it must be 1-128 characters without spaces, control characters or ':'",
            "invalid profile name \"\": it must be 1-128 characters without spaces, control characters or ':'",
            "the key is empty or contains spaces or control characters",
            "the key is empty or contains spaces or control characters",
        ]
    );
    assert!(!store.path().exists());
}

#[test]
fn oauth_logins_are_named_by_account_and_a_new_login_replaces_the_old() {
    let (_dir, store) = store();
    let id = store
        .add_oauth("openai-codex", oauth(Some("acct-9"), "at-1"))
        .unwrap();
    let without_account = store
        .add_oauth("openai-codex", oauth(None, "at-x"))
        .unwrap();
    assert_eq!(without_account.as_str(), "openai-codex:default");
    store
        .mark_failure(
            &id,
            pincer_auth::FailureKind::Auth,
            &Default::default(),
            NOW,
        )
        .unwrap();
    let relogin = store
        .add_oauth("openai-codex", oauth(Some("acct-9"), "at-2"))
        .unwrap();
    assert_eq!(relogin, id);
    let status = store.status(NOW).unwrap();
    let line = status.iter().find(|s| s.id == id).unwrap();
    assert_eq!(line.disabled_until, None);
    assert_eq!(line.error_count, 0);
    assert_eq!(
        read(&store)["profiles"]["openai-codex:acct-9"]["access"],
        "at-2"
    );
}

#[test]
fn remove_use_and_status() {
    let (_dir, store) = store();
    let key = store
        .add_api_key("openai", Some("work"), "sk-work-abcdef123456")
        .unwrap();
    let codex = store
        .add_oauth(
            "openai-codex",
            oauth(Some("acct-1"), "eyJhbGciOi.payload.sig"),
        )
        .unwrap();
    store.set_active(&codex).unwrap();
    store.mark_success(&key, NOW - 5_000).unwrap();
    // Sorted by id: '-' sorts before ':'.
    let status = store.status(NOW - 60_000).unwrap();
    assert_eq!(
        status,
        vec![
            ProfileStatus {
                id: codex.clone(),
                provider: "openai-codex".into(),
                kind: CredentialKind::OAuth,
                masked_secret: "eyJ***sig".into(),
                account_id: Some("acct-1".into()),
                expires_at: Some(NOW + 3_600_000),
                expires_in_ms: Some(3_660_000),
                cooldown_until: None,
                disabled_until: None,
                disabled_reason: None,
                error_count: 0,
                last_used: None,
                active: true,
            },
            ProfileStatus {
                id: key.clone(),
                provider: "openai".into(),
                kind: CredentialKind::ApiKey,
                masked_secret: "sk-***456".into(),
                account_id: None,
                expires_at: None,
                expires_in_ms: None,
                cooldown_until: None,
                disabled_until: None,
                disabled_reason: None,
                error_count: 0,
                last_used: Some(NOW - 5_000),
                active: false,
            },
        ]
    );
    let expired = store.status(NOW + 3_600_001).unwrap();
    assert_eq!(expired[0].expires_in_ms, Some(-1));

    store.remove(&codex).unwrap();
    let file = store.load().unwrap();
    assert!(file.active.is_empty(), "the pin goes with the profile");
    let missing = store.remove(&codex).unwrap_err().to_string();
    assert_eq!(
        missing,
        "no auth profile \"openai-codex:acct-1\"; `pincer auth status` lists them"
    );
    assert!(matches!(
        store.set_active(&ProfileId::from("nope:x")),
        Err(AuthError::ProfileNotFound { .. })
    ));
    assert_eq!(store.remove_all().unwrap(), 1);
    assert_eq!(read(&store), json!({"version": 1, "profiles": {}}));
}

#[test]
fn concurrent_writers_lose_nothing() {
    let (_dir, store) = store();
    let store = Arc::new(store);
    let threads: Vec<_> = (0..8)
        .map(|i| {
            let store = Arc::clone(&store);
            std::thread::spawn(move || {
                for j in 0..5 {
                    store
                        .add_api_key(
                            "openai",
                            Some(&format!("t{i}-{j}")),
                            &format!("sk-{i}-{j}-0000000000"),
                        )
                        .unwrap();
                }
            })
        })
        .collect();
    for thread in threads {
        thread.join().unwrap();
    }
    assert_eq!(store.load().unwrap().profiles.len(), 40);
}

#[test]
fn masks_and_debug_output_hide_secrets() {
    assert_eq!(mask_secret("sk-abcdefghijklmnop"), "sk-***nop");
    assert_eq!(mask_secret("123456789012"), "123***012");
    assert_eq!(mask_secret("12345678901"), "***");
    assert_eq!(mask_secret(""), "***");
    assert_eq!(mask_secret("ключ-секрет-длинный"), "клю***ный");

    let (_dir, store) = store();
    store
        .add_api_key("openai", None, "sk-VERYSECRET-123")
        .unwrap();
    store
        .add_oauth("openai-codex", oauth(Some("a"), "ACCESS-SECRET-TOKEN"))
        .unwrap();
    let debug = format!(
        "{:?} {:?}",
        store.load().unwrap(),
        store.status(NOW).unwrap()
    );
    assert!(!debug.contains("VERYSECRET"), "{debug}");
    assert!(!debug.contains("ACCESS-SECRET"), "{debug}");
    assert!(!debug.contains("refresh-of"), "{debug}");
    assert_eq!(format!("{:?}", Secret::new("x")), "Secret(***)");

    fs::write(
        store.path(),
        r#"{"profiles": {"g:sa": {"type": "service_account", "provider": "g", "private_key": "PEM-SECRET"}}, "vault": "TOP-SECRET"}"#,
    )
    .unwrap();
    let debug = format!("{:?}", store.load().unwrap());
    assert!(!debug.contains("SECRET"), "{debug}");
    assert!(
        debug.contains("private_key") && debug.contains("vault"),
        "{debug}"
    );
}

#[test]
fn durations_read_like_a_person_wrote_them() {
    let cases = [
        (0, "0s"),
        (999, "0s"),
        (45_000, "45s"),
        (270_000, "4m 30s"),
        (3_600_000, "1h"),
        (3_900_000, "1h 5m"),
        (183_600_000, "2d 3h"),
    ];
    for (ms, text) in cases {
        assert_eq!(format_duration_ms(ms), text, "{ms}");
    }
}

//! DM pairing through the public API: codes, the pending-request rules (same code for the
//! same sender, at most 3 per channel, 1 h expiry), approval into the right allow-from file,
//! revocation, corrupt files that are reported and left alone, file modes and the exact
//! file shape; approval and revocation in `pairing/approval.rs`. The access decisions and
//! texts are in `pairing_policy.rs`.

use std::collections::HashSet;
use std::fs;
use std::sync::Arc;
use std::time::Duration;

use pincer_automation::system_events::ManualClock;
use pincer_gateway::pairing::{
    Approved, CODE_ALPHABET, CODE_LENGTH, PairingError, PairingRequestOutcome, PairingStore,
    Revoked, generate_code,
};
#[cfg(unix)]
use pincer_testkit::files::mode;
use pincer_testkit::files::{read_json, strings};
use serde_json::{Value, json};

mod approval;

/// 2026-01-01T00:00:00.000Z
const T0: i64 = 1_767_225_600_000;
const HOUR: Duration = Duration::from_secs(3600);

/// A store under `credentials/` of a new temporary directory, on a manual clock at `T0`.
fn temp_store() -> (tempfile::TempDir, PairingStore, ManualClock) {
    let tmp = tempfile::tempdir().unwrap();
    let clock = ManualClock::at(T0);
    let store =
        PairingStore::new(tmp.path().join("credentials")).with_clock(Arc::new(clock.clone()));
    (tmp, store, clock)
}

fn created(outcome: PairingRequestOutcome) -> String {
    match outcome {
        PairingRequestOutcome::Created { code } => code,
        other => panic!("expected Created, got {other:?}"),
    }
}

// --- codes -------------------------------------------------------------------------------

#[test]
fn codes_are_eight_characters_of_the_alphabet() {
    assert_eq!(CODE_ALPHABET, "ABCDEFGHJKLMNPQRSTUVWXYZ23456789");
    assert_eq!(CODE_LENGTH, 8);
    let mut seen_chars = HashSet::new();
    let mut codes = HashSet::new();
    for _ in 0..4000 {
        let code = generate_code().unwrap();
        assert_eq!(code.len(), 8, "{code}");
        for c in code.chars() {
            assert!(CODE_ALPHABET.contains(c), "{code}");
            seen_chars.insert(c);
        }
        codes.insert(code);
    }
    // 32 characters over 32,000 draws: each shows up; 4000 codes of 40 bits do not repeat.
    assert_eq!(seen_chars.len(), 32);
    assert_eq!(codes.len(), 4000);
}

// --- requests ----------------------------------------------------------------------------

#[test]
fn one_request_writes_this_exact_file() {
    let (tmp, store, _clock) = temp_store();
    let code = created(
        store
            .request(
                "telegram",
                Some("work"),
                " 123 ",
                Some(json!({"username": "alice", "name": "Alice"})),
            )
            .unwrap(),
    );
    let path = tmp.path().join("credentials/telegram-pairing.json");
    let text = fs::read_to_string(&path).unwrap();
    let expected = format!(
        r#"{{
  "version": 1,
  "requests": [
    {{
      "id": "123",
      "code": "{code}",
      "createdAt": "2026-01-01T00:00:00.000Z",
      "lastSeenAt": "2026-01-01T00:00:00.000Z",
      "accountId": "work",
      "meta": {{
        "name": "Alice",
        "username": "alice"
      }}
    }}
  ]
}}
"#
    );
    // Key order inside `meta` depends on serde_json's map features: compare as JSON here;
    // the exact bytes are checked below on a request without meta.
    assert_eq!(
        serde_json::from_str::<Value>(&text).unwrap(),
        serde_json::from_str::<Value>(&expected).unwrap()
    );
    store.request("telegram", None, "456", None).unwrap();
    let file = read_json(&path);
    assert_eq!(
        file["requests"][1],
        json!({
            "id": "456",
            "code": file["requests"][1]["code"],
            "createdAt": "2026-01-01T00:00:00.000Z",
            "lastSeenAt": "2026-01-01T00:00:00.000Z",
        })
    );
}

#[test]
fn request_without_meta_is_written_as_openclaw_writes_it() {
    let (tmp, store, _clock) = temp_store();
    let code = created(store.request("discord", None, "42", None).unwrap());
    let text = fs::read_to_string(tmp.path().join("credentials/discord-pairing.json")).unwrap();
    assert_eq!(
        text,
        format!(
            "{{\n  \"version\": 1,\n  \"requests\": [\n    {{\n      \"id\": \"42\",\n      \
             \"code\": \"{code}\",\n      \"createdAt\": \"2026-01-01T00:00:00.000Z\",\n      \
             \"lastSeenAt\": \"2026-01-01T00:00:00.000Z\"\n    }}\n  ]\n}}\n"
        )
    );
}

#[test]
fn the_same_sender_keeps_its_code_and_lastseenat_moves() {
    let (tmp, store, clock) = temp_store();
    let code = created(
        store
            .request("telegram", None, "123", Some(json!({"name": "A"})))
            .unwrap(),
    );
    clock.advance(Duration::from_secs(300));
    let again = store.request("telegram", None, "123", None).unwrap();
    assert_eq!(
        again,
        PairingRequestOutcome::Existing { code: code.clone() }
    );
    assert_eq!(again.code(), Some(code.as_str()));
    let file = read_json(&tmp.path().join("credentials/telegram-pairing.json"));
    let requests = file["requests"].as_array().unwrap();
    assert_eq!(requests.len(), 1);
    assert_eq!(requests[0]["createdAt"], "2026-01-01T00:00:00.000Z");
    assert_eq!(requests[0]["lastSeenAt"], "2026-01-01T00:05:00.000Z");
    assert_eq!(
        requests[0]["meta"],
        json!({"name": "A"}),
        "kept without new meta"
    );

    // New meta replaces the old one.
    store
        .request("telegram", None, "123", Some(json!({"name": "B"})))
        .unwrap();
    let file = read_json(&tmp.path().join("credentials/telegram-pairing.json"));
    assert_eq!(file["requests"][0]["meta"], json!({"name": "B"}));
}

#[test]
fn a_repeat_request_leaves_the_file_alone_until_lastseenat_is_stale() {
    use std::os::unix::fs::MetadataExt;
    let (tmp, store, clock) = temp_store();
    let meta = json!({"chatId": "123", "name": "A"});
    let code = created(
        store
            .request("telegram", None, "123", Some(meta.clone()))
            .unwrap(),
    );
    let path = tmp.path().join("credentials/telegram-pairing.json");
    let first = fs::metadata(&path).unwrap();
    let text = fs::read_to_string(&path).unwrap();
    // The same sender with the same meta, twice, within five minutes: nothing is written
    // (a rewrite would replace the file: a new inode).
    for _ in 0..2 {
        clock.advance(Duration::from_secs(60));
        assert_eq!(
            store
                .request("telegram", None, "123", Some(meta.clone()))
                .unwrap(),
            PairingRequestOutcome::Existing { code: code.clone() }
        );
    }
    let after = fs::metadata(&path).unwrap();
    assert_eq!(
        (after.ino(), after.mtime(), after.mtime_nsec()),
        (first.ino(), first.mtime(), first.mtime_nsec())
    );
    assert_eq!(fs::read_to_string(&path).unwrap(), text);
    // Five minutes after the last stamp, lastSeenAt moves.
    clock.advance(Duration::from_secs(180));
    store
        .request("telegram", None, "123", Some(meta.clone()))
        .unwrap();
    assert_eq!(
        read_json(&path)["requests"][0]["lastSeenAt"],
        "2026-01-01T00:05:00.000Z"
    );
    assert_ne!(fs::metadata(&path).unwrap().ino(), first.ino());
}

#[test]
fn a_fourth_sender_finds_the_channel_full() {
    let (_tmp, store, _clock) = temp_store();
    let codes: Vec<String> = ["1", "2", "3"]
        .iter()
        .map(|id| created(store.request("telegram", None, id, None).unwrap()))
        .collect();
    let distinct: HashSet<&String> = codes.iter().collect();
    assert_eq!(distinct.len(), 3);
    assert_eq!(
        store.request("telegram", Some("work"), "4", None).unwrap(),
        PairingRequestOutcome::Full
    );
    assert_eq!(PairingRequestOutcome::Full.code(), None);
    // A pending sender still gets its code while the channel is full.
    assert_eq!(
        store.request("telegram", None, "2", None).unwrap(),
        PairingRequestOutcome::Existing {
            code: codes[1].clone()
        }
    );
    // Another channel has its own limit.
    created(store.request("discord", None, "4", None).unwrap());
    assert_eq!(store.list(Some("telegram"), None).unwrap().len(), 3);
}

#[test]
fn requests_expire_after_an_hour() {
    let (tmp, store, clock) = temp_store();
    let old_code = created(store.request("telegram", None, "1", None).unwrap());
    created(store.request("telegram", None, "2", None).unwrap());
    created(store.request("telegram", None, "3", None).unwrap());

    clock.advance(HOUR);
    assert_eq!(
        store.request("telegram", None, "4", None).unwrap(),
        PairingRequestOutcome::Full,
        "exactly one hour old is still pending"
    );
    clock.advance(Duration::from_millis(1));
    let new_code = created(store.request("telegram", None, "4", None).unwrap());
    let file = read_json(&tmp.path().join("credentials/telegram-pairing.json"));
    assert_eq!(
        file["requests"].as_array().unwrap().len(),
        1,
        "expired pruned"
    );

    let err = store.approve("telegram", &old_code).unwrap_err();
    assert!(
        matches!(&err, PairingError::UnknownCode { channel, code } if channel == "telegram" && *code == old_code),
        "{err:?}"
    );
    // The old sender asking again gets a new request with a new code.
    let renewed = created(store.request("telegram", None, "1", None).unwrap());
    assert_ne!(renewed, new_code);
    let listed = store.list(Some("telegram"), None).unwrap();
    assert_eq!(
        listed
            .iter()
            .map(|r| r.sender_id.as_str())
            .collect::<Vec<_>>(),
        ["4", "1"]
    );
    assert_eq!(listed[0].expires_at_ms, T0 + 3_600_001 + 3_600_000);
}

#[test]
fn ttl_and_limit_are_configurable() {
    let tmp = tempfile::tempdir().unwrap();
    let clock = ManualClock::at(T0);
    let store = PairingStore::new(tmp.path())
        .with_clock(Arc::new(clock.clone()))
        .with_ttl(Duration::from_secs(60))
        .with_max_pending(1);
    created(store.request("slack", None, "U1", None).unwrap());
    assert_eq!(
        store.request("slack", None, "U2", None).unwrap(),
        PairingRequestOutcome::Full
    );
    clock.advance(Duration::from_secs(61));
    created(store.request("slack", None, "U2", None).unwrap());
}

#[test]
fn a_channel_may_have_its_own_ttl_and_limit() {
    let tmp = tempfile::tempdir().unwrap();
    let clock = ManualClock::at(T0);
    let store = PairingStore::new(tmp.path())
        .with_clock(Arc::new(clock.clone()))
        .with_channel_limits("feishu", Duration::from_secs(60), 1);
    created(store.request("feishu", None, "ou_1", None).unwrap());
    // The (max+1)-th pending request of feishu is refused; other channels keep 3.
    assert_eq!(
        store.request("feishu", None, "ou_2", None).unwrap(),
        PairingRequestOutcome::Full
    );
    for id in ["U1", "U2", "U3"] {
        created(store.request("slack", None, id, None).unwrap());
    }
    // Past feishu's 60 s its request is gone from lists and cannot be approved; slack's
    // (an hour) are not.
    clock.advance(Duration::from_secs(61));
    assert_eq!(store.list(Some("feishu"), None).unwrap(), vec![]);
    assert_eq!(store.list(Some("slack"), None).unwrap().len(), 3);
    let code = created(store.request("feishu", None, "ou_2", None).unwrap());
    assert_eq!(
        store.list(Some("feishu"), None).unwrap()[0].expires_at_ms,
        T0 + 61_000 + 60_000
    );
    clock.advance(Duration::from_secs(61));
    assert!(store.approve("feishu", &code).is_err());
}

// --- approval ----------------------------------------------------------------------------

#[test]
fn a_corrupt_pairing_file_is_reported_and_left_alone() {
    let (tmp, store, _clock) = temp_store();
    let dir = tmp.path().join("credentials");
    fs::create_dir_all(&dir).unwrap();
    let path = dir.join("telegram-pairing.json");
    let garbage = b"{\"version\": 1, \"requests\": [ {oops";
    fs::write(&path, garbage).unwrap();

    let err = store.request("telegram", None, "123", None).unwrap_err();
    match &err {
        PairingError::Corrupt { path: p, .. } => assert_eq!(p, &path),
        other => panic!("expected Corrupt, got {other:?}"),
    }
    assert!(err.to_string().contains("telegram-pairing.json"), "{err}");
    for result in [
        store.list(Some("telegram"), None).map(|_| ()),
        store.list(None, None).map(|_| ()),
        store.approve("telegram", "ABCDEFGH").map(|_| ()),
    ] {
        assert!(
            matches!(result, Err(PairingError::Corrupt { .. })),
            "{result:?}"
        );
    }
    assert_eq!(fs::read(&path).unwrap(), garbage, "not overwritten");

    // Wrong shapes are corrupt too, and so is a version this code does not know.
    for text in [
        r#"[]"#,
        r#"{"version":1,"requests":{}}"#,
        r#"{"version":1,"requests":[{"id":"1"}]}"#,
        r#"{"version":2,"requests":[]}"#,
    ] {
        fs::write(&path, text).unwrap();
        assert!(
            matches!(
                store.request("telegram", None, "123", None),
                Err(PairingError::Corrupt { .. })
            ),
            "{text}"
        );
        assert_eq!(fs::read_to_string(&path).unwrap(), text);
    }

    // Once fixed (or removed), requests work again.
    fs::remove_file(&path).unwrap();
    created(store.request("telegram", None, "123", None).unwrap());
}

#[test]
fn a_corrupt_allow_from_file_stops_the_approval_and_keeps_the_request() {
    let (tmp, store, _clock) = temp_store();
    let code = created(store.request("telegram", None, "123", None).unwrap());
    let allow = tmp.path().join("credentials/telegram-allowFrom.json");
    fs::write(&allow, "not json").unwrap();

    let err = store.approve("telegram", &code).unwrap_err();
    assert!(
        matches!(&err, PairingError::Corrupt { path, .. } if *path == allow),
        "{err:?}"
    );
    assert_eq!(fs::read_to_string(&allow).unwrap(), "not json");
    assert_eq!(store.list(Some("telegram"), None).unwrap().len(), 1);
    for result in [
        store.allow_from("telegram", None).map(|_| ()),
        store.add_allow_from("telegram", None, "9").map(|_| ()),
        store.revoke("telegram", None, "9").map(|_| ()),
    ] {
        assert!(
            matches!(result, Err(PairingError::Corrupt { .. })),
            "{result:?}"
        );
    }
    assert_eq!(fs::read_to_string(&allow).unwrap(), "not json");
}

#[test]
fn unknown_fields_are_kept_through_a_rewrite() {
    let (tmp, store, _clock) = temp_store();
    let dir = tmp.path().join("credentials");
    fs::create_dir_all(&dir).unwrap();
    fs::write(
        dir.join("telegram-allowFrom.json"),
        r#"{"version":1,"allowFrom":["1"],"note":"mine"}"#,
    )
    .unwrap();
    store.add_allow_from("telegram", None, "2").unwrap();
    assert_eq!(
        read_json(&dir.join("telegram-allowFrom.json")),
        json!({"version": 1, "allowFrom": ["1", "2"], "note": "mine"})
    );
}

#[test]
fn invalid_channel_and_account_names_are_rejected() {
    let (tmp, store, _clock) = temp_store();
    for bad in ["", "Telegram", "../etc", "a/b", "a.b", &"x".repeat(65)] {
        assert!(
            matches!(
                store.request(bad, None, "1", None),
                Err(PairingError::InvalidChannel { name }) if name == bad
            ),
            "{bad:?}"
        );
        assert!(matches!(
            store.approve(bad, "ABCDEFGH"),
            Err(PairingError::InvalidChannel { .. })
        ));
        assert!(matches!(
            store.list(Some(bad), None),
            Err(PairingError::InvalidChannel { .. })
        ));
        assert!(matches!(
            store.allow_from(bad, None),
            Err(PairingError::InvalidChannel { .. })
        ));
        assert!(matches!(
            store.revoke(bad, None, "1"),
            Err(PairingError::InvalidChannel { .. })
        ));
        assert!(matches!(
            store.request("telegram", Some(bad), "1", None),
            Err(PairingError::InvalidAccount { .. })
        ));
    }
    assert!(matches!(
        store.request("telegram", None, "  ", None),
        Err(PairingError::InvalidEntry { .. })
    ));
    assert!(!tmp.path().join("credentials").exists(), "nothing created");
    created(
        store
            .request(&"x".repeat(64), Some("a_b-9"), "1", None)
            .unwrap(),
    );
}

// --- listing -------------------------------------------------------------------------------

#[test]
fn list_covers_every_channel_oldest_first() {
    let (tmp, store, clock) = temp_store();
    assert!(store.list(None, None).unwrap().is_empty());
    let t1 = created(store.request("telegram", None, "t1", None).unwrap());
    clock.advance(Duration::from_secs(60));
    let d1 = created(
        store
            .request("discord", Some("work"), "d1", Some(json!({"name": "D"})))
            .unwrap(),
    );
    clock.advance(Duration::from_secs(60));
    let t2 = created(store.request("telegram", Some("work"), "t2", None).unwrap());
    clock.advance(Duration::from_secs(240));
    store.request("telegram", None, "t1", None).unwrap(); // lastSeenAt only (5 min old)

    let all = store.list(None, None).unwrap();
    let summary: Vec<(&str, &str, &str)> = all
        .iter()
        .map(|r| (r.channel.as_str(), r.sender_id.as_str(), r.code.as_str()))
        .collect();
    assert_eq!(
        summary,
        [
            ("telegram", "t1", t1.as_str()),
            ("discord", "d1", d1.as_str()),
            ("telegram", "t2", t2.as_str()),
        ]
    );
    assert_eq!(all[0].created_at_ms, T0);
    assert_eq!(all[0].last_seen_at_ms, T0 + 360_000);
    assert_eq!(all[0].expires_at_ms, T0 + 3_600_000);
    assert_eq!(all[1].account_id.as_deref(), Some("work"));
    assert_eq!(all[1].meta, Some(json!({"name": "D"})));

    let telegram: Vec<String> = store
        .list(Some("telegram"), None)
        .unwrap()
        .into_iter()
        .map(|r| r.sender_id)
        .collect();
    assert_eq!(telegram, ["t1", "t2"]);
    let work: Vec<String> = store
        .list(None, Some("work"))
        .unwrap()
        .into_iter()
        .map(|r| r.sender_id)
        .collect();
    assert_eq!(work, ["d1", "t2"]);
    assert_eq!(store.channels().unwrap(), ["discord", "telegram"]);
    assert!(store.list(Some("slack"), None).unwrap().is_empty());

    // Listing prunes what expired, in the file too.
    clock.advance(HOUR);
    assert!(store.list(None, None).unwrap().is_empty());
    assert_eq!(
        read_json(&tmp.path().join("credentials/telegram-pairing.json")),
        json!({"version": 1, "requests": []})
    );
}

#[test]
fn two_stores_on_one_directory_lose_no_request() {
    // Two stores stand for two processes: they share only the files and the lock file.
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("credentials");
    let a = Arc::new(PairingStore::new(&dir).with_max_pending(1000));
    let b = Arc::new(PairingStore::new(&dir).with_max_pending(1000));
    let handles: Vec<_> = [a, b]
        .into_iter()
        .enumerate()
        .map(|(n, store)| {
            std::thread::spawn(move || {
                for i in 0..25 {
                    created(
                        store
                            .request("telegram", None, &format!("{n}-{i}"), None)
                            .unwrap(),
                    );
                }
            })
        })
        .collect();
    for handle in handles {
        handle.join().unwrap();
    }
    let store = PairingStore::new(&dir).with_max_pending(1000);
    assert_eq!(store.list(Some("telegram"), None).unwrap().len(), 50);
}

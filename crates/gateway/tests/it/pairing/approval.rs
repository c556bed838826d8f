//! Approving and revoking: which allow-from file an approval goes to, codes read loosely,
//! unknown codes, a held lock, revocation and the allow-from list.

use super::*;

#[test]
fn approval_goes_to_the_account_file_or_the_channel_file() {
    let (tmp, store, _clock) = temp_store();
    let dir = tmp.path().join("credentials");
    let work_code = created(
        store
            .request("telegram", Some("work"), "111", Some(json!({"name": "W"})))
            .unwrap(),
    );
    let plain_code = created(store.request("telegram", None, "222", None).unwrap());

    assert_eq!(
        store.approve("telegram", &work_code).unwrap(),
        Approved {
            sender_id: "111".into(),
            account_id: Some("work".into()),
            meta: Some(json!({"name": "W"})),
        }
    );
    assert_eq!(
        read_json(&dir.join("telegram-work-allowFrom.json")),
        json!({"version": 1, "allowFrom": ["111"]})
    );
    assert!(!dir.join("telegram-allowFrom.json").exists());

    assert_eq!(
        store.approve("telegram", &plain_code).unwrap(),
        Approved {
            sender_id: "222".into(),
            account_id: None,
            meta: None,
        }
    );
    assert_eq!(
        fs::read_to_string(dir.join("telegram-allowFrom.json")).unwrap(),
        "{\n  \"version\": 1,\n  \"allowFrom\": [\n    \"222\"\n  ]\n}\n"
    );
    assert_eq!(
        read_json(&dir.join("telegram-pairing.json")),
        json!({"version": 1, "requests": []})
    );
    assert!(store.list(None, None).unwrap().is_empty());
    assert_eq!(
        store.allow_from("telegram", Some("work")).unwrap(),
        strings(&["111", "222"])
    );

    #[cfg(unix)]
    {
        assert_eq!(mode(&dir), 0o700);
        for name in [
            "telegram-pairing.json",
            "telegram-allowFrom.json",
            "telegram-work-allowFrom.json",
            "telegram-pairing.json.lock",
        ] {
            assert_eq!(mode(&dir.join(name)), 0o600, "{name}");
        }
    }
    // No temp files left behind.
    let mut names: Vec<String> = fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(
        names,
        [
            "telegram-allowFrom.json",
            "telegram-pairing.json",
            "telegram-pairing.json.lock",
            "telegram-work-allowFrom.json"
        ]
    );
}

#[test]
fn approval_ignores_case_and_spaces() {
    let (_tmp, store, _clock) = temp_store();
    let code = created(store.request("telegram", None, "123", None).unwrap());
    let typed = format!("  {}\n", code.to_lowercase());
    assert_eq!(store.approve("telegram", &typed).unwrap().sender_id, "123");
    // Approved once: the code is gone.
    assert!(matches!(
        store.approve("telegram", &code),
        Err(PairingError::UnknownCode { .. })
    ));
}

#[test]
fn unknown_codes_are_an_error() {
    let (tmp, store, _clock) = temp_store();
    let err = store.approve("telegram", "zzzz2345").unwrap_err();
    assert!(
        matches!(&err, PairingError::UnknownCode { channel, code } if channel == "telegram" && code == "ZZZZ2345"),
        "{err:?}"
    );
    assert_eq!(
        err.to_string(),
        "no pending pairing request on telegram with code ZZZZ2345"
    );
    assert!(!tmp.path().join("credentials").exists(), "nothing created");

    let code = created(store.request("telegram", None, "1", None).unwrap());
    assert!(matches!(
        store.approve("telegram", "ABCDEFGH").unwrap_err(),
        PairingError::UnknownCode { .. }
    ));
    assert!(matches!(
        store.approve("telegram", "").unwrap_err(),
        PairingError::UnknownCode { .. }
    ));
    // A code of another channel does not approve here.
    assert!(matches!(
        store.approve("discord", &code).unwrap_err(),
        PairingError::UnknownCode { .. }
    ));
}

#[test]
fn an_approval_gives_up_on_a_held_lock_with_a_clear_error() {
    let (tmp, store, _clock) = temp_store();
    let store = store.with_lock_timeout(Duration::from_millis(200));
    let code = created(store.request("telegram", None, "1", None).unwrap());
    // Another process's lock: flock locks belong to the open file description, so a second
    // open of the file conflicts with it even in this process.
    let lock_path = tmp.path().join("credentials/telegram-pairing.json.lock");
    let held = fs::OpenOptions::new().write(true).open(&lock_path).unwrap();
    held.lock().unwrap();

    let err = store.approve("telegram", &code).unwrap_err();
    assert!(
        matches!(&err, PairingError::LockTimeout(t) if t.path == lock_path && t.waited == Duration::from_millis(200)),
        "{err:?}"
    );
    let shown = lock_path.display();
    assert_eq!(
        err.to_string(),
        format!(
            "{shown}: still locked by another process after 0.2 s (a stopped or hung pincer holds it; `fuser {shown}` names it)"
        )
    );

    // Nothing changed meanwhile; once the lock is free the approval goes through.
    drop(held);
    assert_eq!(store.list(Some("telegram"), None).unwrap().len(), 1);
    assert_eq!(store.approve("telegram", &code).unwrap().sender_id, "1");
}

// --- allow-from ----------------------------------------------------------------------------

#[test]
fn revoke_reports_removed_and_remaining() {
    let (tmp, store, _clock) = temp_store();
    for entry in ["1", "2", "3"] {
        assert!(store.add_allow_from("telegram", None, entry).unwrap());
    }
    assert!(
        !store
            .add_allow_from("telegram", None, "telegram:2")
            .unwrap()
    );
    assert!(store.add_allow_from("telegram", Some("work"), "9").unwrap());

    // In order: (channel, account, entry) revoked, then whether it was removed and how many
    // entries that file has left. The account's entry is only in its own file.
    let revokes = [
        ("telegram", None, "2", true, 2),
        ("telegram", None, "2", false, 2),
        ("telegram", None, "Telegram:3", true, 1),
        ("telegram", None, "9", false, 1),
        ("telegram", Some("work"), "9", true, 0),
    ];
    for (channel, account, entry, removed, remaining) in revokes {
        assert_eq!(
            store.revoke(channel, account, entry).unwrap(),
            Revoked { removed, remaining },
            "{channel} {account:?} {entry}"
        );
    }
    assert_eq!(
        read_json(&tmp.path().join("credentials/telegram-allowFrom.json")),
        json!({"version": 1, "allowFrom": ["1"]})
    );
    // Revoking from a file that does not exist creates nothing.
    assert_eq!(
        store.revoke("discord", None, "1").unwrap(),
        Revoked {
            removed: false,
            remaining: 0
        }
    );
    assert!(
        !tmp.path()
            .join("credentials/discord-allowFrom.json")
            .exists()
    );
    assert!(matches!(
        store.add_allow_from("telegram", None, "*"),
        Err(PairingError::InvalidEntry { .. })
    ));
}

#[test]
fn allow_from_lists_the_account_first_then_the_channel_without_duplicates() {
    let (tmp, store, _clock) = temp_store();
    let dir = tmp.path().join("credentials");
    assert!(
        store
            .allow_from("telegram", Some("work"))
            .unwrap()
            .is_empty()
    );
    fs::create_dir_all(&dir).unwrap();
    fs::write(
        dir.join("telegram-work-allowFrom.json"),
        r#"{"version":1,"allowFrom":["a","b","a"]}"#,
    )
    .unwrap();
    // Hand-edited: a number is read as a string.
    fs::write(
        dir.join("telegram-allowFrom.json"),
        r#"{"version":1,"allowFrom":["b",123,"c"]}"#,
    )
    .unwrap();
    assert_eq!(
        store.allow_from("telegram", Some("work")).unwrap(),
        strings(&["a", "b", "123", "c"])
    );
    assert_eq!(
        store.allow_from("telegram", None).unwrap(),
        strings(&["b", "123", "c"])
    );
    assert_eq!(
        store.allow_from("telegram", Some("home")).unwrap(),
        strings(&["b", "123", "c"])
    );
}

// --- corrupt files and names -------------------------------------------------------------

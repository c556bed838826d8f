//! `pincer pairing list|approve|revoke` with no gateway running: the commands work on
//! `$PINCER_HOME/credentials` directly, through the same store the gateway uses (the tests
//! write the pending requests and allow-lists with it), and say that an approved sender is
//! told nothing until they write again.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::gateway::free_port;
use common::{Home, Run, json_of};
use pincer_gateway::pairing::{PairingStore, PendingRequest};
use serde_json::{Value, json};

/// The zone the commands run in: times are shown in it (a half-hour offset, so a time shown
/// in UTC instead would not pass).
const ZONE: &str = "Asia/Kolkata";

/// A home whose gateway would listen on a free port where nothing runs; `extra` goes into
/// the config.
fn offline_home(extra: &str) -> Home {
    let home = Home::new().with_env("TZ", ZONE);
    home.write_config(&format!(
        "{{ gateway: {{ port: {} }}, {extra} }}",
        free_port()
    ));
    home
}

/// A home with the Telegram channel configured (the gateway would poll it; it does not run).
fn telegram_home() -> Home {
    offline_home(r#"channels: { telegram: { botToken: "x" } }"#)
}

fn store(home: &Home) -> PairingStore {
    PairingStore::new(home.path().join("credentials"))
}

/// A new pending request of `sender` on telegram; its code.
fn request(home: &Home, account: Option<&str>, sender: &str, name: Option<&str>) -> String {
    let meta = name.map(|n| json!({ "chatId": sender, "name": n }));
    let outcome = store(home)
        .request("telegram", account, sender, meta)
        .unwrap();
    outcome.code().unwrap().to_owned()
}

fn pending(home: &Home) -> Vec<PendingRequest> {
    store(home).list(None, None).unwrap()
}

/// `2026-11-22 18:35`: the request's time in [`ZONE`].
fn local_minute(ms: i64) -> String {
    jiff::Timestamp::from_millisecond(ms)
        .unwrap()
        .to_zoned(jiff::tz::TimeZone::get(ZONE).unwrap())
        .strftime("%Y-%m-%d %H:%M")
        .to_string()
}

fn allow_from(home: &Home, file: &str) -> Value {
    let path = home.path().join("credentials").join(file);
    serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap()
}

/// `pincer pairing <args>` in `home`.
fn pairing(home: &Home, args: &[&str]) -> Run {
    home.run(&[&["pairing"], args].concat())
}

/// Exit 0, this on stdout, nothing on stderr.
fn assert_out(run: &Run, stdout: &str) {
    run.assert_ok();
    assert_eq!(run.stdout(), stdout, "stderr:\n{}", run.stderr());
    assert_eq!(run.stderr(), "");
}

/// Exit 1, nothing on stdout, this one error line on stderr.
fn assert_error(run: &Run, message: &str) {
    assert_eq!(run.code(), 1, "stdout:\n{}", run.stdout());
    assert_eq!(run.stdout(), "");
    assert_eq!(run.stderr(), format!("error: {message}\n"));
}

/// What `pairing approve` says when `who` is approved on telegram with no gateway running.
fn approved_offline(who: &str) -> String {
    format!(
        "Approved {who} on telegram.\n\
         The gateway is not running: {who} is approved, but will be told only when they write \
         again.\n"
    )
}

#[test]
fn list_without_requests() {
    let home = offline_home("");
    assert_out(&pairing(&home, &["list"]), "No pending pairing requests.\n");
    assert_out(
        &pairing(&home, &["list", "telegram"]),
        "No pending telegram pairing requests.\n",
    );
    assert_out(
        &pairing(&home, &["list", "--channel", "telegram"]),
        "No pending telegram pairing requests.\n",
    );
    assert_out(
        &pairing(&home, &["list", "telegram", "--account", "work"]),
        "No pending telegram pairing requests for account work.\n",
    );
    assert_eq!(
        json_of(&pairing(&home, &["list", "--json"])),
        json!({ "channel": null, "requests": [] })
    );
    assert_eq!(
        json_of(&pairing(&home, &["list", "telegram", "--json"])),
        json!({ "channel": "telegram", "requests": [] })
    );
    // Listing creates nothing.
    assert!(!home.path().join("credentials").exists());
}

#[test]
fn list_shows_the_pending_requests() {
    let home = offline_home("");
    let ada = request(&home, None, "123", Some("Ada Lovelace"));
    let bob = request(&home, Some("work"), "456", None);
    let requests = pending(&home);
    assert_eq!(requests.len(), 2);
    let (first, second) = (&requests[0], &requests[1]);
    assert_eq!(
        (first.sender_id.as_str(), second.sender_id.as_str()),
        ("123", "456")
    );

    let ada_line = format!(
        "- telegram id=123 code={ada} requested={} name=Ada Lovelace\n",
        local_minute(first.created_at_ms)
    );
    let bob_line = format!(
        "- telegram id=456 code={bob} requested={} account=work\n",
        local_minute(second.created_at_ms)
    );
    assert_out(&pairing(&home, &["list"]), &format!("{ada_line}{bob_line}"));
    assert_out(
        &pairing(&home, &["list", "telegram"]),
        &format!("{ada_line}{bob_line}"),
    );
    assert_out(&pairing(&home, &["list", "--account", "work"]), &bob_line);
    assert_out(
        &pairing(&home, &["list", "discord"]),
        "No pending discord pairing requests.\n",
    );

    let out = json_of(&pairing(&home, &["list", "telegram", "--json"]));
    assert_eq!(
        out,
        json!({
            "channel": "telegram",
            "requests": [
                {
                    "channel": "telegram", "id": "123", "code": ada, "accountId": null,
                    "createdAtMs": first.created_at_ms,
                    "lastSeenAtMs": first.last_seen_at_ms,
                    "expiresAtMs": first.created_at_ms + 3_600_000,
                    "meta": { "chatId": "123", "name": "Ada Lovelace" },
                },
                {
                    "channel": "telegram", "id": "456", "code": bob, "accountId": "work",
                    "createdAtMs": second.created_at_ms,
                    "lastSeenAtMs": second.last_seen_at_ms,
                    "expiresAtMs": second.created_at_ms + 3_600_000,
                    "meta": null,
                },
            ],
        })
    );
    let out = json_of(&pairing(&home, &["list", "--json", "--account", "work"]));
    assert_eq!(out["channel"], Value::Null, "{out}");
    assert_eq!(out["requests"].as_array().unwrap().len(), 1, "{out}");
    assert_eq!(out["requests"][0]["id"], "456", "{out}");
}

#[test]
fn approve_by_code_in_any_case() {
    let home = offline_home("");
    let code = request(&home, None, "123", Some("Ada"));
    let other = request(&home, None, "789", None);
    let run = pairing(&home, &["approve", "telegram", &code.to_lowercase()]);
    assert_out(&run, &approved_offline("123"));
    assert_eq!(
        allow_from(&home, "telegram-allowFrom.json")["allowFrom"],
        json!(["123"])
    );
    // Only that request is gone.
    let left = pending(&home);
    assert_eq!(left.len(), 1);
    assert_eq!(
        (left[0].sender_id.as_str(), left[0].code.as_str()),
        ("789", other.as_str())
    );

    // The code is used up.
    assert_error(
        &pairing(&home, &["approve", "telegram", &code]),
        &format!("no pending pairing request on telegram with code {code}"),
    );
}

#[test]
fn approve_a_request_of_an_account() {
    let home = offline_home("");
    let code = request(&home, Some("work"), "456", None);
    // `--account` approves only a request of that account.
    assert_error(
        &pairing(&home, &["approve", "telegram", &code, "--account", "home"]),
        &format!("no pending pairing request on telegram for account home with code {code}"),
    );
    assert_eq!(pending(&home).len(), 1);
    assert_out(
        &pairing(
            &home,
            &[
                "approve",
                "--channel",
                "telegram",
                &code,
                "--account",
                "work",
            ],
        ),
        &approved_offline("456"),
    );
    // Into the account's own list.
    assert_eq!(
        allow_from(&home, "telegram-work-allowFrom.json")["allowFrom"],
        json!(["456"])
    );
    assert!(
        !home
            .path()
            .join("credentials/telegram-allowFrom.json")
            .exists()
    );
    assert!(pending(&home).is_empty());
}

#[test]
fn approve_an_unknown_code_fails() {
    let home = offline_home("");
    request(&home, None, "123", None);
    assert_error(
        &pairing(&home, &["approve", "telegram", "zzzz2222"]),
        "no pending pairing request on telegram with code ZZZZ2222",
    );
    // A channel without any request.
    assert_error(
        &pairing(&home, &["approve", "discord", "ABCD2345"]),
        "no pending pairing request on discord with code ABCD2345",
    );
    assert_eq!(pending(&home).len(), 1);
    assert!(
        !home
            .path()
            .join("credentials/telegram-allowFrom.json")
            .exists()
    );
}

#[test]
fn revoke_present_and_absent_entries() {
    let home = offline_home("");
    let store = store(&home);
    for id in ["123", "456"] {
        assert!(store.add_allow_from("telegram", None, id).unwrap());
    }
    assert!(
        store
            .add_allow_from("telegram", Some("work"), "789")
            .unwrap()
    );

    assert_out(
        &pairing(&home, &["revoke", "telegram", "123"]),
        "Revoked 123 on telegram.\nCurrent allow-from entries: 1\n",
    );
    assert_eq!(
        allow_from(&home, "telegram-allowFrom.json")["allowFrom"],
        json!(["456"])
    );
    assert_out(
        &pairing(&home, &["revoke", "telegram", "123"]),
        "123 was not in the allow-from list of telegram.\nCurrent allow-from entries: 1\n",
    );
    // The account's list is its own.
    assert_out(
        &pairing(&home, &["revoke", "telegram", "456", "--account", "work"]),
        "456 was not in the allow-from list of telegram (account work).\n\
         Current allow-from entries: 1\n",
    );
    assert_out(
        &pairing(&home, &["revoke", "telegram", "789", "--account", "work"]),
        "Revoked 789 on telegram (account work).\nCurrent allow-from entries: 0\n",
    );
    assert_eq!(
        allow_from(&home, "telegram-allowFrom.json")["allowFrom"],
        json!(["456"])
    );
}

#[test]
fn the_channel_defaults_to_the_only_configured_one() {
    let home = telegram_home();
    let code = request(&home, None, "123", None);
    assert_out(
        &pairing(&home, &["approve", &code]),
        &approved_offline("123"),
    );
    assert_eq!(
        allow_from(&home, "telegram-allowFrom.json")["allowFrom"],
        json!(["123"])
    );
    assert_out(
        &pairing(&home, &["revoke", "123"]),
        "Revoked 123 on telegram.\nCurrent allow-from entries: 0\n",
    );
}

#[test]
fn without_a_configured_channel_it_must_be_named() {
    let home = offline_home("");
    let code = request(&home, None, "123", None);
    assert_error(
        &pairing(&home, &["approve", &code]),
        "no chat channel is configured, so name the channel: `pincer pairing approve \
         telegram <CODE>`",
    );
    assert_error(
        &pairing(&home, &["revoke", "123"]),
        "no chat channel is configured, so name the channel: `pincer pairing revoke \
         telegram <ENTRY>`",
    );
    assert_eq!(pending(&home).len(), 1);
}

#[test]
fn invalid_names_are_refused() {
    let home = telegram_home();
    assert_error(
        &pairing(&home, &["list", "Telegram"]),
        r#"invalid channel name "Telegram" (use 1 to 64 of a-z, 0-9, _ and -)"#,
    );
    assert_error(
        &pairing(&home, &["approve", "../x", "ABCD2345"]),
        r#"invalid channel name "../x" (use 1 to 64 of a-z, 0-9, _ and -)"#,
    );
    assert_error(
        &pairing(&home, &["revoke", "tele gram", "123"]),
        r#"invalid channel name "tele gram" (use 1 to 64 of a-z, 0-9, _ and -)"#,
    );
    assert_error(
        &pairing(&home, &["list", "--account", "Work"]),
        r#"invalid account id "Work" (use 1 to 64 of a-z, 0-9, _ and -)"#,
    );
    assert_error(
        &pairing(&home, &["revoke", "123", "--account", "a/b"]),
        r#"invalid account id "a/b" (use 1 to 64 of a-z, 0-9, _ and -)"#,
    );
    assert!(!home.path().join("credentials").exists());
}

#[test]
fn the_channel_is_given_once() {
    let home = telegram_home();
    let run = pairing(
        &home,
        &["approve", "--channel", "telegram", "telegram", "X"],
    );
    run.assert_fails(
        2,
        "the argument '--channel <CHANNEL>' cannot be used with '[CHANNEL]'",
    );
}

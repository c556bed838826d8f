//! The fake Telegram Bot API server, driven over real HTTP with reqwest: getMe, tokens,
//! long polling, offsets, redelivery, control endpoints, the binary. Sending and files are
//! in `fake_telegram_send.rs`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::telegram_support;

use std::time::{Duration, Instant};

use pincer_fakes::FakeTelegram;
use pincer_fakes::fake_telegram::{FakeTelegramConfig, InjectMessage};
use serde_json::{Value, json};
use telegram_support::*;

#[tokio::test]
async fn get_me_and_startup_methods() {
    let fake = FakeTelegram::start().await;
    assert_eq!(fake.token(), "123456:TEST-TOKEN");
    assert!(fake.base_url().starts_with("http://127.0.0.1:"));
    let me = ok(&fake, "getMe", json!({})).await;
    assert_eq!(me["id"], 4242);
    assert_eq!(me["is_bot"], true);
    assert_eq!(me["first_name"], "Pincer Test Bot");
    assert_eq!(me["username"], "pincer_test_bot");
    // GET with a query string, and a case-insensitive method name.
    let response = client()
        .get(format!(
            "{}?drop_pending_updates=true",
            fake.method_url("deletewebhook")
        ))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    assert_eq!(response.json::<Value>().await.unwrap()["result"], true);
    let commands = json!([{"command": "new", "description": "Start a new session"}]);
    assert_eq!(
        ok(&fake, "setMyCommands", json!({"commands": commands})).await,
        true
    );
    assert_eq!(fake.my_commands(), Some(commands));
    let bad = json!([{"command": "New-Session", "description": "x"}]);
    assert_eq!(
        bad_request(&fake, "setMyCommands", json!({"commands": bad})).await,
        "Bad Request: BOT_COMMAND_INVALID"
    );
    assert_eq!(
        fake.calls(),
        ["getMe", "deleteWebhook", "setMyCommands", "setMyCommands"]
    );
}

#[tokio::test]
async fn configured_bot_and_first_update_id() {
    let fake = FakeTelegram::start_with(
        FakeTelegramConfig::default()
            .token("999:OTHER")
            .bot_username("other_bot")
            .first_update_id(500),
    )
    .await;
    assert_eq!(fake.token(), "999:OTHER");
    assert_eq!(ok(&fake, "getMe", json!({})).await["username"], "other_bot");
    let (update_id, _) = fake.inject_message(InjectMessage::private(7, "hi"));
    assert_eq!(update_id, 500);
}

#[tokio::test]
async fn wrong_token_and_unknown_method() {
    let fake = FakeTelegram::start().await;
    let response = client()
        .post(format!("{}/bot123456:WRONG/getMe", fake.base_url()))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 401);
    assert_eq!(
        response.json::<Value>().await.unwrap(),
        json!({"ok": false, "error_code": 401, "description": "Unauthorized"})
    );
    let (status, body) = call(&fake, "sendCarrierPigeon", json!({})).await;
    assert_eq!(status, 404);
    assert_eq!(
        body,
        json!({"ok": false, "error_code": 404, "description": "Not Found: method not found"})
    );
    // Calls with a wrong token are not recorded; unknown methods are.
    assert_eq!(fake.calls(), ["sendCarrierPigeon"]);
}

#[tokio::test]
async fn long_poll_wakes_on_injection() {
    let fake = FakeTelegram::start().await;
    let poller = {
        let fake = fake.clone();
        tokio::spawn(async move {
            let started = Instant::now();
            let result = ok(&fake, "getUpdates", json!({"offset": 0, "timeout": 30})).await;
            (result, started.elapsed())
        })
    };
    assert!(
        fake.wait_for_calls("getUpdates", 1, Duration::from_secs(5))
            .await
    );
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(
        !poller.is_finished(),
        "the long poll answered before any update"
    );
    let (update_id, message_id) = fake.inject_message(InjectMessage::private(1001, "hello"));
    let (result, elapsed) = tokio::time::timeout(Duration::from_secs(5), poller)
        .await
        .unwrap()
        .unwrap();
    assert!(elapsed < Duration::from_secs(10));
    assert_eq!(ids(&result), [update_id]);
    let message = &result[0]["message"];
    assert_eq!(message["message_id"], message_id);
    assert_eq!(message["text"], "hello");
    assert_eq!(message["chat"]["id"], 1001);
    assert_eq!(message["chat"]["type"], "private");
    assert_eq!(message["from"]["id"], 1001);
    assert_eq!(message["from"]["is_bot"], false);
    assert!(message.get("entities").is_none());
}

#[tokio::test]
async fn long_poll_times_out_with_an_empty_list() {
    let fake = FakeTelegram::start().await;
    let started = Instant::now();
    let result = ok(&fake, "getUpdates", json!({"timeout": 1})).await;
    assert_eq!(result, json!([]));
    assert!(started.elapsed() >= Duration::from_millis(900));
}

#[tokio::test]
async fn offsets_confirm_updates() {
    let fake = FakeTelegram::start().await;
    let first = fake.inject_message(InjectMessage::private(1, "a")).0;
    let second = fake.inject_message(InjectMessage::private(1, "b")).0;
    let third = fake.inject_message(InjectMessage::group(-5, 2, "c")).0;
    assert_eq!([first, second, third], [1, 2, 3]);
    // No offset: everything unconfirmed; limit applies.
    assert_eq!(ids(&ok(&fake, "getUpdates", json!({})).await), [1, 2, 3]);
    assert_eq!(
        ids(&ok(&fake, "getUpdates", json!({"limit": 2})).await),
        [1, 2]
    );
    // Offset 3 confirms 1 and 2.
    assert_eq!(
        ids(&ok(&fake, "getUpdates", json!({"offset": 3})).await),
        [3]
    );
    assert_eq!(fake.pending_update_ids(), [3]);
    // A lower offset later does not bring confirmed updates back.
    assert_eq!(
        ids(&ok(&fake, "getUpdates", json!({"offset": 1})).await),
        [3]
    );
    assert_eq!(
        ids(&ok(&fake, "getUpdates", json!({"offset": 4})).await),
        Vec::<i64>::new()
    );
    assert!(fake.pending_update_ids().is_empty());
    // Form-encoded parameters work too.
    let fourth = fake.inject_message(InjectMessage::private(1, "d")).0;
    let form = client()
        .post(fake.method_url("getUpdates"))
        .header("content-type", "application/x-www-form-urlencoded")
        .body(format!("offset={fourth}&timeout=0"))
        .send()
        .await
        .unwrap()
        .json::<Value>()
        .await
        .unwrap();
    assert_eq!(ids(&form["result"]), [fourth]);
    assert_eq!(fake.get_updates_offsets(), [0, 0, 3, 1, 4, 4]);
}

#[tokio::test]
async fn redeliver_sends_a_confirmed_update_again() {
    let fake = FakeTelegram::start().await;
    let (update_id, _) = fake.inject_message(InjectMessage::private(1, "once"));
    assert_eq!(ids(&ok(&fake, "getUpdates", json!({})).await), [update_id]);
    assert_eq!(
        ids(&ok(&fake, "getUpdates", json!({"offset": update_id + 1})).await),
        Vec::<i64>::new()
    );
    assert!(fake.redeliver(update_id));
    assert!(!fake.redeliver(999));
    let again = ok(
        &fake,
        "getUpdates",
        json!({"offset": update_id + 1, "timeout": 5}),
    )
    .await;
    assert_eq!(ids(&again), [update_id]);
    assert_eq!(again[0]["message"]["text"], "once");
    // Delivered once more only.
    assert_eq!(
        ids(&ok(&fake, "getUpdates", json!({"offset": update_id + 1})).await),
        Vec::<i64>::new()
    );
}

#[tokio::test]
async fn raw_updates_keep_or_get_an_update_id() {
    let fake = FakeTelegram::start().await;
    let unknown = fake.inject_raw_update(json!({"weird_update": {"x": 1}}));
    let explicit = fake.inject_raw_update(json!({"update_id": 40, "message": "not an object"}));
    let next = fake.inject_message(InjectMessage::private(1, "after")).0;
    assert_eq!((unknown, explicit, next), (1, 40, 41));
    let result = ok(&fake, "getUpdates", json!({})).await;
    assert_eq!(ids(&result), [1, 40, 41]);
    assert_eq!(result[0], json!({"update_id": 1, "weird_update": {"x": 1}}));
}

#[tokio::test]
async fn control_endpoints() {
    let fake = FakeTelegram::start().await;
    let injected: Value = post_json(
        &format!("{}/__fake/inject", fake.base_url()),
        &json!({"text": "from curl"}),
    )
    .await;
    assert_eq!(injected["update_id"], 1);
    let updates = ok(&fake, "getUpdates", json!({})).await;
    assert_eq!(updates[0]["message"]["chat"]["id"], 1001);
    assert_eq!(updates[0]["message"]["text"], "from curl");
    ok(
        &fake,
        "sendMessage",
        json!({"chat_id": 1001, "text": "reply"}),
    )
    .await;
    let sent: Value = get_json(&format!("{}/__fake/sent_messages", fake.base_url())).await;
    assert_eq!(sent[0]["text"], "reply");
    let calls: Value = get_json(&format!("{}/__fake/calls", fake.base_url())).await;
    assert_eq!(calls[1]["method"], "sendMessage");
}

#[tokio::test]
async fn stops_when_the_last_handle_is_dropped() {
    let fake = FakeTelegram::start().await;
    let url = fake.method_url("getMe");
    let clone = fake.clone();
    drop(fake);
    assert_eq!(client().get(&url).send().await.unwrap().status(), 200);
    drop(clone);
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(client().get(&url).send().await.is_err());
}

#[test]
fn binary_prints_its_address_and_token_and_relays_stdin() {
    use std::io::{BufRead, BufReader, Write};
    use std::process::{Command, Stdio};

    let mut child = Command::new(env!("CARGO_BIN_EXE_pincer-fake-telegram"))
        .args(["--port", "0", "--token", "1:BIN", "--chat-id", "77"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    stdout.read_line(&mut line).unwrap();
    let url = line
        .strip_prefix("fake telegram listening on ")
        .unwrap_or_else(|| panic!("unexpected first line {line:?}"))
        .trim_end()
        .to_owned();
    assert!(url.starts_with("http://127.0.0.1:"));
    line.clear();
    stdout.read_line(&mut line).unwrap();
    assert_eq!(line.trim_end(), "bot token: 1:BIN");

    let mut stdin = child.stdin.take().unwrap();
    writeln!(stdin, "typed by hand").unwrap();
    stdin.flush().unwrap();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let updates: Value = post_json(
            &format!("{url}/bot1:BIN/getUpdates"),
            &json!({"timeout": 5}),
        )
        .await;
        assert_eq!(updates["result"][0]["message"]["text"], "typed by hand");
        assert_eq!(updates["result"][0]["message"]["chat"]["id"], 77);
        let sent: Value = post_json(
            &format!("{url}/bot1:BIN/sendMessage"),
            &json!({"chat_id": 77, "text": "hello human"}),
        )
        .await;
        assert_eq!(sent["ok"], true);
    });
    line.clear();
    stdout.read_line(&mut line).unwrap();
    assert_eq!(line.trim_end(), "bot -> 77: hello human");

    crate::common::terminate(child);
}

//! System events over the wire, against a real server on 127.0.0.1: the `system-event` and
//! `wake` methods over the WebSocket protocol, `POST /hooks/wake` over HTTP, what `status`
//! shows of the queue, the heartbeat requests they make of the runtime, and (once the turn
//! path drains the queue) the `System:` lines a turn's prompt starts with.

use crate::support;
use crate::support::client::Client;

use pincer_automation::system_events::format_timestamp;
use pincer_testkit::{Match, Reply, Rule, Scenario};
use serde_json::{Value, json};

const TOKEN: &str = "system-events-token-789";
const MAIN: &str = "agent:main:main";

fn scenario() -> Scenario {
    Scenario::new().rule(Rule::when(Match::last_user_contains("ping")).reply(Reply::text("pong")))
}

impl Client {
    async fn queued_on_main(&mut self) -> Value {
        self.ok("status", json!({})).await["queuedSystemEvents"].clone()
    }
}

/// How many heartbeats the server asked of agent `main`, and the last reason.
fn heartbeats(running: &support::Running) -> (u64, Option<String>) {
    let status = running.heartbeats.status("main").unwrap();
    (status.requests, status.last_request)
}

/// The answer of `system-event` and `wake`: `n` events now queued on `session_key`.
fn queued(session_key: &str, n: u64) -> Value {
    json!({"ok": true, "sessionKey": session_key, "queued": n})
}

fn invalid(message: &str) -> (String, String) {
    ("INVALID_REQUEST".to_owned(), message.to_owned())
}

#[tokio::test]
async fn system_event_queues_for_a_session_and_drops_repeats() {
    let running = support::start_server(scenario(), TOKEN).await;
    let mut admin = Client::connect_scoped(&running, TOKEN, &["operator.admin"]).await;

    let first = admin
        .ok("system-event", json!({"text": "  Build finished  "}))
        .await;
    assert_eq!(first, queued(MAIN, 1));
    // The same line again is dropped; another one is not.
    let again = admin
        .ok("system-event", json!({"text": "Build finished"}))
        .await;
    assert_eq!(again["queued"], 1);
    let other = admin
        .ok(
            "system-event",
            json!({"text": "Deploy done", "agentId": "main"}),
        )
        .await;
    assert_eq!(other, queued(MAIN, 2));
    assert_eq!(
        admin.queued_on_main().await,
        json!(["Build finished", "Deploy done"])
    );

    // A named session gets its own queue; `status` shows the main session's only.
    let elsewhere = admin
        .ok(
            "system-event",
            json!({"text": "Build finished", "sessionKey": "agent:main:ops"}),
        )
        .await;
    assert_eq!(elsewhere, queued("agent:main:ops", 1));
    assert_eq!(
        admin.queued_on_main().await,
        json!(["Build finished", "Deploy done"])
    );

    // Queued events are not transcript messages, and asked for no heartbeat so far.
    let history = admin.ok("chat.history", json!({"sessionKey": MAIN})).await;
    assert_eq!(history["messages"], json!([]));
    assert_eq!(heartbeats(&running), (0, None));

    // `wake: true` asks for one, for the session's agent.
    let woken = admin
        .ok(
            "system-event",
            json!({"text": "Look now", "sessionKey": "agent:main:ops", "wake": true}),
        )
        .await;
    assert_eq!(woken["queued"], 2);
    assert_eq!(heartbeats(&running), (1, Some("wake".into())));
    running.stop.cancel();
}

#[tokio::test]
async fn system_event_needs_admin_and_good_params() {
    let running = support::start_server(scenario(), TOKEN).await;
    let mut writer =
        Client::connect_scoped(&running, TOKEN, &["operator.read", "operator.write"]).await;
    let refused = writer.call("system-event", json!({"text": "hello"})).await;
    assert_eq!(refused["error"]["code"], "FORBIDDEN");
    assert_eq!(refused["error"]["message"], "missing scope: operator.admin");
    assert_eq!(
        refused["error"]["details"]["missingScope"],
        "operator.admin"
    );

    let mut admin = Client::connect_scoped(&running, TOKEN, &["operator.admin"]).await;
    for (params, message) in [
        (json!({}), "text required"),
        (json!({"text": " \n "}), "text required"),
        (json!({"text": 7}), "text must be a string"),
        (
            json!({"text": "x", "agentId": "ghost"}),
            "unknown agentId: ghost",
        ),
        (
            json!({"text": "x", "sessionKey": "a\u{1b}[2Jb"}),
            "sessionKey must be 1 to 512 characters without control characters",
        ),
        (
            json!({"text": "x", "sessionKey": "k".repeat(513)}),
            "sessionKey must be 1 to 512 characters without control characters",
        ),
        (
            json!({"text": "x", "wake": "yes"}),
            "wake must be a boolean",
        ),
    ] {
        assert_eq!(
            admin.err("system-event", params.clone()).await,
            invalid(message),
            "{params}"
        );
    }
    // Nothing was queued by the refused calls.
    assert_eq!(admin.queued_on_main().await, json!([]));
    assert_eq!(heartbeats(&running), (0, None));
    running.stop.cancel();
}

#[tokio::test]
async fn wake_queues_on_the_main_session_and_asks_for_a_heartbeat_when_now() {
    let running = support::start_server(scenario(), TOKEN).await;
    let mut writer = Client::connect_scoped(&running, TOKEN, &["operator.write"]).await;

    let later = writer
        .ok(
            "wake",
            json!({"mode": "next-heartbeat", "text": "Check the mail"}),
        )
        .await;
    assert_eq!(later, queued(MAIN, 1));
    assert_eq!(heartbeats(&running), (0, None));

    let now = writer
        .ok("wake", json!({"mode": "now", "text": "Disk almost full"}))
        .await;
    assert_eq!(now, queued(MAIN, 2));
    assert_eq!(heartbeats(&running), (1, Some("wake".into())));
    assert_eq!(
        writer.queued_on_main().await,
        json!(["Check the mail", "Disk almost full"])
    );

    for (params, message) in [
        (
            json!({"text": "x"}),
            "missing parameter mode (now or next-heartbeat)",
        ),
        (
            json!({"mode": "later", "text": "x"}),
            "mode must be now or next-heartbeat",
        ),
        (json!({"mode": "now"}), "text required"),
        (json!({"mode": "now", "text": ""}), "text required"),
    ] {
        assert_eq!(
            writer.err("wake", params.clone()).await,
            invalid(message),
            "{params}"
        );
    }
    let mut reader = Client::connect_scoped(&running, TOKEN, &["operator.read"]).await;
    let refused = reader
        .call("wake", json!({"mode": "now", "text": "x"}))
        .await;
    assert_eq!(refused["error"]["code"], "FORBIDDEN");
    assert_eq!(heartbeats(&running).0, 1, "refused calls asked nothing");
    running.stop.cancel();
}

#[tokio::test]
async fn the_methods_are_advertised() {
    let running = support::start_server(scenario(), TOKEN).await;
    let mut client = Client::open(&running).await;
    let hello = client
        .ok(
            "connect",
            json!({"minProtocol": 4, "maxProtocol": 4, "client": {"id": "test"},
                   "auth": {"token": TOKEN}}),
        )
        .await;
    let methods = hello["features"]["methods"].as_array().unwrap();
    assert!(methods.contains(&json!("system-event")), "{methods:?}");
    assert!(methods.contains(&json!("wake")), "{methods:?}");
    running.stop.cancel();
}

/// `POST /hooks/wake` with `body` (raw) and `auth` as the Authorization header.
async fn hook_wake(
    running: &support::Running,
    path: &str,
    auth: Option<&str>,
    body: &str,
) -> (u16, Value) {
    let mut req = reqwest::Client::new()
        .post(format!("http://{}{path}", running.addr))
        .header("content-type", "application/json")
        .body(body.to_owned());
    if let Some(auth) = auth {
        req = req.header("authorization", auth);
    }
    let res = req.send().await.unwrap();
    let status = res.status().as_u16();
    (status, res.json().await.unwrap())
}

#[tokio::test]
async fn hooks_wake_queues_untrusted_events_with_openclaws_answers() {
    let running = support::start_server(scenario(), TOKEN).await;
    let bearer = format!("Bearer {TOKEN}");
    let auth = Some(bearer.as_str());

    assert_eq!(
        hook_wake(
            &running,
            "/hooks/wake",
            auth,
            r#"{"text":"New email from Ann"}"#
        )
        .await,
        (200, json!({"ok": true, "mode": "now"}))
    );
    assert_eq!(heartbeats(&running), (1, Some("hook:wake".into())));
    assert_eq!(
        hook_wake(
            &running,
            "/hooks/wake",
            auth,
            r#"{"text":"Nightly backup done","mode":"next-heartbeat"}"#
        )
        .await,
        (200, json!({"ok": true, "mode": "next-heartbeat"}))
    );
    // OpenClaw's leniency: an unknown mode means now.
    assert_eq!(
        hook_wake(
            &running,
            "/hooks/wake",
            auth,
            r#"{"text":"Odd","mode":"whenever"}"#
        )
        .await,
        (200, json!({"ok": true, "mode": "now"}))
    );
    assert_eq!(heartbeats(&running).0, 2);

    let mut reader = Client::connect_scoped(&running, TOKEN, &["operator.read"]).await;
    assert_eq!(
        reader.queued_on_main().await,
        json!(["New email from Ann", "Nightly backup done", "Odd"])
    );
    running.stop.cancel();
}

#[tokio::test]
async fn hooks_wake_refuses_bad_credentials_and_bad_bodies() {
    let running = support::start_server(scenario(), TOKEN).await;
    let bearer = format!("Bearer {TOKEN}");
    let good = r#"{"text":"x"}"#;

    assert_eq!(
        hook_wake(&running, "/hooks/wake", None, good).await,
        (
            401,
            json!({"ok": false, "error": "this gateway needs a token: send Authorization: Bearer <token>"})
        )
    );
    assert_eq!(
        hook_wake(&running, "/hooks/wake", Some("Bearer wrong"), good).await,
        (
            401,
            json!({"ok": false, "error": "the token does not match this gateway's"})
        )
    );
    // A token in the query string is refused even next to a good header.
    assert_eq!(
        hook_wake(
            &running,
            &format!("/hooks/wake?token={TOKEN}"),
            Some(&bearer),
            good
        )
        .await
        .0,
        400
    );

    for (body, error) in [
        ("{}", "text required"),
        (r#"{"text":"   "}"#, "text required"),
        (r#"{"text":42}"#, "text required"),
        ("[]", "text required"),
        (
            "not json",
            "invalid body: expected ident at line 1 column 2",
        ),
    ] {
        assert_eq!(
            hook_wake(&running, "/hooks/wake", Some(&bearer), body).await,
            (400, json!({"ok": false, "error": error})),
            "{body}"
        );
    }
    assert_eq!(
        heartbeats(&running),
        (0, None),
        "no refused call woke anything"
    );
    let mut reader = Client::connect_scoped(&running, TOKEN, &["operator.read"]).await;
    assert_eq!(reader.queued_on_main().await, json!([]));
    running.stop.cancel();
}

/// The `System:` block a turn's user message starts with, with the time of each event
/// somewhere in `[from, to]` (wall-clock ms); the exact text is checked per second.
fn prefix_matches(actual: &str, lines: &[(&str, &str)], from: i64, to: i64) -> bool {
    // Every combination is tried per second in the window (events land within it).
    (from / 1000..=to / 1000).any(|a| {
        (from / 1000..=to / 1000).any(|b| {
            let stamps = [format_timestamp(a * 1000), format_timestamp(b * 1000)];
            let expected: Vec<String> = lines
                .iter()
                .zip(stamps.iter())
                .map(|((label, text), stamp)| format!("{label}: [{stamp}] {text}"))
                .collect();
            actual == format!("{}\n\nping", expected.join("\n"))
        })
    })
}

#[tokio::test]
async fn a_turn_starts_with_the_queued_events_and_drains_them() {
    let running = support::start_server(scenario(), TOKEN).await;
    let mut admin = Client::connect_scoped(&running, TOKEN, &["operator.admin"]).await;
    let from = pincer_ai::now_ms();
    admin
        .ok("system-event", json!({"text": "Reminder: stand up"}))
        .await;
    let bearer = format!("Bearer {TOKEN}");
    let (status, _) = hook_wake(
        &running,
        "/hooks/wake",
        Some(&bearer),
        r#"{"text":"Mail from Ann","mode":"next-heartbeat"}"#,
    )
    .await;
    assert_eq!(status, 200);
    let to = pincer_ai::now_ms();

    let res = admin
        .agent(json!({"message": "ping", "sessionKey": MAIN, "idempotencyKey": "turn-1"}))
        .await;
    assert_eq!(res["status"], "ok", "{res}");

    // The model saw the events in front of the message, in OpenClaw's format.
    let requests = running.llm.requests();
    let messages = requests.last().unwrap().body["messages"]
        .as_array()
        .unwrap()
        .clone();
    let user = messages.last().unwrap()["content"]
        .as_str()
        .unwrap()
        .to_owned();
    let lines = [
        ("System", "Reminder: stand up"),
        ("System (untrusted)", "Mail from Ann"),
    ];
    assert!(prefix_matches(&user, &lines, from, to), "{user}");
    // The transcript keeps what the model saw; the queue is empty now.
    let history = admin.ok("chat.history", json!({"sessionKey": MAIN})).await;
    let first = &history["messages"][0]["content"];
    let text = first
        .as_str()
        .map(str::to_owned)
        .unwrap_or_else(|| first[0]["text"].as_str().unwrap().to_owned());
    assert_eq!(text, user);
    assert_eq!(admin.queued_on_main().await, json!([]));

    // The next turn has nothing in front.
    admin
        .agent(json!({"message": "ping again", "sessionKey": MAIN, "idempotencyKey": "turn-2"}))
        .await;
    let requests = running.llm.requests();
    let messages = requests.last().unwrap().body["messages"].clone();
    let last = &messages.as_array().unwrap().last().unwrap()["content"];
    assert_eq!(last, "ping again");
    running.stop.cancel();
}

//! The heartbeat executor in a real server on 127.0.0.1 with the mock LLM: what a run sends
//! the model (the prompt it picks from the pending events), what clients see (`heartbeat`
//! events, and a `chat` final only when something is worth delivering; `HEARTBEAT_OK`
//! never), skips (empty HEARTBEAT.md, a busy session) and `last-heartbeat`.

use crate::support;

use pincer_automation::heartbeat::{EXEC_EVENT_PROMPT, HEARTBEAT_PROMPT, HeartbeatSettings};
use pincer_testkit::{Match, Reply, Rule, Scenario};
use serde_json::{Value, json};
use support::client::{Client, last_prompt, text_of};

const TOKEN: &str = "heartbeat-token-456";
const MAIN: &str = "agent:main:main";

/// A heartbeat that is on (the timer is far away: tests ask for runs).
fn on() -> HeartbeatSettings {
    HeartbeatSettings {
        every_ms: 3_600_000,
        ..HeartbeatSettings::default()
    }
}

/// A server whose main agent has the heartbeat `settings`, and a client connected to it.
async fn start(scenario: Scenario, settings: HeartbeatSettings) -> (support::Running, Client) {
    let running = support::start_server_with(scenario, TOKEN, move |options| {
        options.heartbeat = vec![("main".into(), settings)];
    })
    .await;
    let client = Client::connect(&running, TOKEN).await;
    (running, client)
}

/// Writes the main agent's `HEARTBEAT.md`.
fn write_checklist(running: &support::Running, text: &str) {
    let workspace = running.dir.path().join("workspace");
    std::fs::create_dir_all(&workspace).unwrap();
    std::fs::write(workspace.join("HEARTBEAT.md"), text).unwrap();
}

#[tokio::test]
async fn an_acknowledgement_stays_silent_and_never_shows_the_token() {
    // The run uses a tool first: its calls are not shown either.
    let scenario = Scenario::new()
        .rule(
            Rule::when(Match::last_user_contains(HEARTBEAT_PROMPT))
                .reply(Reply::tool_call("sleep", json!({"ms": 10}))),
        )
        .rule(
            Rule::when(Match::tool_result("sleep"))
                .reply(Reply::text("**HEARTBEAT_OK** nothing needs you")),
        );
    let (running, mut client) = start(scenario, on()).await;
    assert_eq!(client.ok("last-heartbeat", json!({})).await, Value::Null);

    assert!(running.heartbeats.request_now("main", "manual"));
    let event = client.heartbeat().await;
    assert_eq!(event["status"], "ok-token", "{event}");
    assert_eq!(event["reason"], "manual");
    assert_eq!(event["agentId"], "main");
    assert_eq!(running.llm.requests().len(), 2);

    // The run's lifecycle is visible, its words are not.
    let chats = client.heartbeat_run_events("chat");
    assert_eq!(chats, Vec::<Value>::new());
    let agent = client.heartbeat_run_events("agent");
    assert!(
        agent.iter().all(|e| e["stream"] == "lifecycle"),
        "{agent:?}"
    );
    assert!(!agent.is_empty());
    let seen = serde_json::to_string(&client.events).unwrap();
    assert!(!seen.contains("HEARTBEAT_OK"), "{seen}");

    let last = client.ok("last-heartbeat", json!({})).await;
    assert_eq!(last, event);
    running.stop.cancel();
}

#[tokio::test]
async fn an_alert_is_delivered_as_a_chat_final_without_the_token() {
    // With the token and at most `ackMaxChars` besides it, a reply is an ack: a small
    // `ackMaxChars` makes this one an alert.
    let scenario = support::answering(HEARTBEAT_PROMPT, "HEARTBEAT_OK The disk is 95% full.");
    let settings = HeartbeatSettings {
        ack_max_chars: 10,
        ..on()
    };
    let (running, mut client) = start(scenario, settings).await;

    running.heartbeats.request_now("main", "manual");
    let event = client.heartbeat().await;
    assert_eq!(event["status"], "sent", "{event}");
    assert_eq!(event["preview"], "The disk is 95% full.");
    let chats = client.heartbeat_run_events("chat");
    assert_eq!(chats.len(), 1, "{chats:?}");
    assert_eq!(chats[0]["state"], "final");
    assert_eq!(chats[0]["sessionKey"], MAIN);
    assert_eq!(text_of(&chats[0]["message"]), "The disk is 95% full.");
    running.stop.cancel();
}

#[tokio::test]
async fn a_finished_background_command_is_relayed_with_the_exec_prompt() {
    let scenario = support::answering(EXEC_EVENT_PROMPT, "Your build finished: all tests passed.");
    let (running, mut client) = start(scenario, on()).await;
    // An empty checklist does not hold back an event-driven run.
    write_checklist(&running, "# Checklist\n\n- [ ]\n");

    client
        .ok(
            "system-event",
            json!({"text": "Exec completed (abcd1234, code 0) :: 12 passed"}),
        )
        .await;
    running.heartbeats.request_now("main", "exec:abcd1234:exit");
    let event = client.heartbeat().await;
    assert_eq!(event["status"], "sent", "{event}");
    assert_eq!(event["reason"], "exec:abcd1234:exit");

    let prompt = last_prompt(&running);
    assert!(
        prompt.starts_with("System: [") && prompt.ends_with(EXEC_EVENT_PROMPT),
        "{prompt}"
    );
    assert!(
        prompt.contains("] Exec completed (abcd1234, code 0) :: 12 passed\n"),
        "{prompt}"
    );
    let chats = client.heartbeat_run_events("chat");
    assert_eq!(
        text_of(&chats[0]["message"]),
        "Your build finished: all tests passed."
    );
    // The event was drained into that turn: the next one does not see it again.
    let status = client.ok("status", json!({})).await;
    assert_eq!(status["queuedSystemEvents"], json!([]));
    running.stop.cancel();
}

#[tokio::test]
async fn an_empty_checklist_skips_a_timer_run_without_calling_the_model() {
    let (running, mut client) = start(Scenario::new(), on()).await;
    write_checklist(&running, "# Tasks\n\n- [ ] \n");

    // A plain request (not an event) follows the timer's rules for the checklist.
    running.heartbeats.request_now("main", "requested");
    let event = client.heartbeat().await;
    assert_eq!(event["status"], "skipped");
    assert_eq!(event["skipReason"], "empty-heartbeat-file");
    assert_eq!(running.llm.requests().len(), 0);
    running.stop.cancel();
}

#[tokio::test]
async fn target_none_runs_but_delivers_nothing() {
    let scenario = support::answering(
        HEARTBEAT_PROMPT,
        "Something long enough to be an alert, surely.",
    );
    let settings = HeartbeatSettings {
        target: pincer_automation::heartbeat::HeartbeatTarget::None,
        ..on()
    };
    let (running, mut client) = start(scenario, settings).await;
    running.heartbeats.request_now("main", "manual");
    let event = client.heartbeat().await;
    assert_eq!(event["status"], "sent");
    assert_eq!(event["silent"], true);
    assert_eq!(client.heartbeat_run_events("chat"), Vec::<Value>::new());
    running.stop.cancel();
}

#[tokio::test]
async fn a_busy_session_makes_the_heartbeat_wait_for_the_users_turn() {
    let (running, mut client, sent) = busy_main(1500, "user-1").await;
    assert_eq!(sent["status"], "started");
    running.heartbeats.request_now("main", "manual");
    let event = client.heartbeat().await;
    assert_eq!(event["status"], "ok-token");
    // The user's turn finished before the heartbeat's began: one after the other.
    let user_final = client
        .events
        .iter()
        .position(|f| {
            f["event"] == "chat"
                && f["payload"]["runId"] == "user-1"
                && f["payload"]["state"] == "final"
        })
        .expect("the user's reply came first");
    let heartbeat_start = client
        .events
        .iter()
        .position(|f| {
            f["event"] == "agent"
                && f["payload"]["runId"]
                    .as_str()
                    .is_some_and(|id| id.starts_with("heartbeat-"))
        })
        .unwrap();
    assert!(user_final < heartbeat_start);
    let status = running.heartbeats.status("main").unwrap();
    assert_eq!(
        status.last_outcome,
        Some(pincer_automation::heartbeat::RunOutcome::Ran)
    );
    running.stop.cancel();
}

/// A server whose model answers `slow` only after `first_byte_ms` and acknowledges
/// heartbeats, a client, and a `slow` user turn on the main session sent as `run_id` (the
/// payload of its `chat.send`): the session is busy.
async fn busy_main(first_byte_ms: u64, run_id: &str) -> (support::Running, Client, Value) {
    let scenario = Scenario::new()
        .rule(
            Rule::when(Match::last_user_contains("slow"))
                .reply(Reply::text("done slowly"))
                .fault(pincer_testkit::Fault::slow_first_byte_ms(first_byte_ms)),
        )
        .rule(
            Rule::when(Match::last_user_contains(HEARTBEAT_PROMPT))
                .reply(Reply::text("HEARTBEAT_OK")),
        );
    let (running, mut client) = start(scenario, on()).await;
    let sent = client.chat_send(MAIN, "slow please", run_id).await;
    (running, client, sent)
}

/// The texts of a session's history, in order.
async fn history(client: &mut Client) -> Vec<String> {
    let history = client.ok("chat.history", json!({"sessionKey": MAIN})).await;
    history["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| match &m["content"] {
            Value::String(s) => s.clone(),
            _ => text_of(m),
        })
        .collect()
}

#[tokio::test]
async fn an_acknowledged_run_leaves_no_turn_in_the_transcript_an_alert_does() {
    let scenario = Scenario::new()
        .rule(Rule::when(Match::last_user_contains("ping")).reply(Reply::text("pong")))
        .rule(
            Rule::when(Match::last_user_contains(HEARTBEAT_PROMPT))
                .reply(Reply::text("HEARTBEAT_OK"))
                .times(1),
        )
        .rule(
            Rule::when(Match::last_user_contains(HEARTBEAT_PROMPT))
                .reply(Reply::text("The backup failed last night.")),
        );
    let (running, mut client) = start(scenario, on()).await;
    let sent = client.chat_send(MAIN, "ping", "u-1").await;
    assert_eq!(sent["status"], "started");
    client
        .ok("agent.wait", json!({"runId": "u-1", "timeoutMs": 10_000}))
        .await;

    running.heartbeats.request_now("main", "manual");
    assert_eq!(client.heartbeat().await["status"], "ok-token");
    assert_eq!(history(&mut client).await, ["ping", "pong"]);

    running.heartbeats.request_now("main", "manual");
    assert_eq!(client.heartbeat().await["status"], "sent");
    let after = history(&mut client).await;
    assert_eq!(after.len(), 4, "{after:?}");
    assert_eq!(after[3], "The backup failed last night.");
    running.stop.cancel();
}

#[tokio::test]
async fn a_timer_beat_on_a_busy_session_is_dropped_an_event_waits() {
    let (running, mut client, _) = busy_main(800, "u-1").await;
    running.heartbeats.request_now("main", "interval-like");
    let event = client.heartbeat().await;
    assert_eq!(event["status"], "skipped", "{event}");
    assert_eq!(event["skipReason"], "busy");
    running.stop.cancel();
}

#[tokio::test]
async fn a_message_during_a_heartbeat_waits_for_its_own_turn_instead_of_steering_into_it() {
    let scenario = Scenario::new()
        .rule(
            Rule::when(Match::last_user_contains(HEARTBEAT_PROMPT))
                .reply(Reply::text("HEARTBEAT_OK"))
                .fault(pincer_testkit::Fault::slow_first_byte_ms(800)),
        )
        .rule(Rule::when(Match::last_user_contains("hello")).reply(Reply::text("hi there")));
    let (running, mut client) = start(scenario, on()).await;
    running.heartbeats.request_now("main", "manual");
    // Wait until the heartbeat's turn runs.
    loop {
        let frame = client.frame().await;
        if frame["event"] == "agent"
            && frame["payload"]["runId"]
                .as_str()
                .is_some_and(|id| id.starts_with("heartbeat-"))
        {
            break;
        }
    }
    let sent = client.chat_send(MAIN, "hello", "u-2").await;
    assert_eq!(sent["status"], "queued", "{sent}");
    let reply = loop {
        let frame = client.frame().await;
        if frame["event"] == "chat"
            && frame["payload"]["runId"] == "u-2"
            && frame["payload"]["state"] == "final"
        {
            break frame["payload"].clone();
        }
    };
    assert_eq!(text_of(&reply["message"]), "hi there");
    running.stop.cancel();
}

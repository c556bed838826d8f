//! `agent.runner: "rpc"`: the gateway's WS flows served by RPC worker processes from its
//! pool — a chat turn, a tool turn, the session kept across turns, steering, abort, and a
//! worker killed mid-turn (that run fails clearly; the next message gets a new worker that
//! resumes from the transcript). Each scenario runs on `pincer rpc` workers, and on real
//! `pi --mode rpc` workers when `interop/pi-rpc.sh` runs the ignored tests (it installs pi
//! and sets `PINCER_PI_CLI` / `PINCER_NODE`).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::time::{Duration, Instant};

use common::gateway::*;
use common::{Home, Script as _, answers, mock};
use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;
use pincer_testkit::{Match, MockLlm, Reply, Rule, Scenario};
use serde_json::{Value, json};

const TOKEN: &str = "rpc-runner-token";
const KEY: &str = "agent:main:main";

/// Which program the pool's workers run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Workers {
    Pincer,
    Pi,
}

/// A home whose gateway runs turns on a pool of at most 2 workers of `kind`, with the
/// heartbeat off.
fn rpc_home(llm: &MockLlm, kind: Workers) -> (Home, u16) {
    rpc_home_with(llm, kind, "0m", 2)
}

/// [`rpc_home`] with a heartbeat every `every` and at most `max` workers.
fn rpc_home_with(llm: &MockLlm, kind: Workers, every: &str, max: usize) -> (Home, u16) {
    let mut home = Home::new();
    let command = match kind {
        Workers::Pincer => String::new(),
        Workers::Pi => {
            let node = std::env::var("PINCER_NODE").unwrap_or_else(|_| "node".into());
            let cli = std::env::var("PINCER_PI_CLI").expect("PINCER_PI_CLI: run interop/pi-rpc.sh");
            let pi_dir = common::pi_agent_dir(&home, llm);
            // The workers inherit the gateway's environment.
            let user_home = home.dir.path().join("user").display().to_string();
            home = home
                .with_env("PI_CODING_AGENT_DIR", &pi_dir.display().to_string())
                .with_env("PI_OFFLINE", "1")
                .with_env("HOME", &user_home);
            format!(", workerCommand: {}", json!([node, cli, "--mode", "rpc"]))
        }
    };
    gateway_home_in(
        home,
        llm,
        TOKEN,
        &format!("heartbeat: {{ every: \"{every}\" }}"),
        &format!("agent: {{ runner: \"rpc\", pool: {{ min: 0, max: {max} }}{command} }},"),
    )
}

/// A gateway running in [`rpc_home_with`] and a client connected to it.
async fn rpc_gateway(
    llm: &MockLlm,
    kind: Workers,
    every: &str,
    max: usize,
) -> (Home, Foreground, WsClient) {
    let (home, port) = rpc_home_with(llm, kind, every, max);
    let (gateway, client) = run_and_connect(&home, port, TOKEN).await;
    (home, gateway, client)
}

/// A gateway of at most `max` workers already streaming run `story` of [`KEY`]: the model
/// tells a slow story (200 words) for the message `story`, and answers by `also` besides.
async fn telling(
    kind: Workers,
    max: usize,
    story: &str,
    also: Rule,
) -> (MockLlm, Home, Foreground, WsClient) {
    let llm = mock(
        Scenario::new()
            .rule(Rule::when(Match::last_user(story)).reply(long_story(200)))
            .rule(also),
    )
    .await;
    let (home, gateway, mut client) = rpc_gateway(&llm, kind, "0m", max).await;
    client.chat_until(KEY, story, "story", "delta").await;
    (llm, home, gateway, client)
}

/// The processes whose parent is `pid`.
fn children(pid: u32) -> Vec<u32> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(child) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{child}/stat")) else {
            continue;
        };
        // `pid (comm) state ppid …`: comm may hold spaces, so split after its `)`.
        let ppid = stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().nth(1))
            .and_then(|p| p.parse::<u32>().ok());
        if ppid == Some(pid) {
            out.push(child);
        }
    }
    out
}

/// The gateway's workers: its only children in these tests (pi renames its process, so
/// the command line does not tell).
fn workers(gateway: &Foreground) -> Vec<u32> {
    let mut pids = children(gateway.child.id());
    pids.sort_unstable();
    pids
}

fn user_texts(messages: &Value) -> Vec<String> {
    messages
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "user")
        .map(text_of)
        .collect()
}

async fn chat_and_tool_turns_run_on_a_worker_and_keep_the_session(kind: Workers) {
    let llm = mock(
        Scenario::new()
            .rule(Rule::when(Match::last_user("hello")).reply(Reply::text("hi from a worker")))
            .tool_turn(
                "read the note",
                "read",
                json!({"path": "note.txt"}),
                "the note says: pincers",
            ),
    )
    .await;
    let (home, port) = rpc_home(&llm, kind);
    let workspace = home.path().join("agents/main/workspace");
    std::fs::create_dir_all(&workspace).unwrap();
    std::fs::write(workspace.join("note.txt"), "pincers\n").unwrap();

    let gateway = Foreground::start(&home, &["gateway", "run"]);
    assert!(
        workers(&gateway).is_empty(),
        "min 0: no worker before a turn"
    );
    let mut client = WsClient::connect(port, TOKEN).await;

    let first = client.chat_until(KEY, "hello", "run-1", "final").await;
    assert_eq!(
        text_of(&first["payload"]["message"]),
        "hi from a worker",
        "{first}"
    );
    let pool = workers(&gateway);
    assert_eq!(pool.len(), 1, "one worker served the turn: {pool:?}");

    client.start_chat(KEY, "read the note", "run-2").await;
    let mut tool_events = Vec::new();
    let second = loop {
        let frame = client.frame().await.expect("the connection stays up");
        if frame["event"] == "agent" && frame["payload"]["stream"] == "tool" {
            tool_events.push(
                frame["payload"]["data"]["phase"]
                    .as_str()
                    .unwrap()
                    .to_owned(),
            );
        }
        if frame["event"] == "chat"
            && frame["payload"]["runId"] == "run-2"
            && frame["payload"]["state"] == "final"
        {
            break frame;
        }
    };
    assert_eq!(
        text_of(&second["payload"]["message"]),
        "the note says: pincers",
        "{second}"
    );
    assert_eq!(
        tool_events,
        ["start", "result"],
        "tool events as the embedded runner sends them"
    );
    assert_eq!(workers(&gateway), pool, "the session's worker was reused");

    // The gateway's store has the session, written by the worker.
    let history = client.history(KEY).await;
    let messages = &history["payload"]["messages"];
    assert_eq!(
        user_texts(messages),
        ["hello", "read the note"],
        "{history}"
    );
    assert_eq!(
        common::roles(&history["payload"]),
        [
            "user",
            "assistant",
            "user",
            "assistant",
            "toolResult",
            "assistant"
        ],
        "{history}"
    );
    // The tool's result went back to the model with the earlier turn as context.
    let last = llm.requests().last().unwrap().body.clone();
    assert_eq!(
        user_texts(&last["messages"]),
        ["hello", "read the note"],
        "{last}"
    );
    let sessions = client.call("sessions.list", json!({})).await;
    let row = sessions["payload"]["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["key"] == KEY)
        .cloned()
        .unwrap_or_else(|| panic!("{sessions}"));
    assert!(
        row["totalTokens"].as_u64().unwrap_or(0) > 0,
        "usage counted: {row}"
    );
    let health = client.call("health", json!({})).await;
    let command = if kind == Workers::Pincer {
        "pincer rpc"
    } else {
        "custom"
    };
    assert_eq!(
        health["payload"]["agentRunner"],
        json!({"kind": "rpc", "workerCommand": command, "workers": 1, "busy": 0, "waiting": 0,
               "min": 0, "max": 2, "spawned": 1, "stopped": 0}),
        "{health}"
    );

    // Stopping the gateway stops its workers.
    gateway.signal(Signal::SIGTERM);
    let mut gateway = gateway;
    assert!(gateway.wait().success());
    let deadline = Instant::now() + Duration::from_secs(10);
    while pool.iter().any(|pid| alive(*pid)) {
        assert!(
            Instant::now() < deadline,
            "worker {pool:?} outlived the gateway"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

async fn abort_stops_the_worker_turn_and_the_worker_serves_the_next(kind: Workers) {
    let short = Rule::when(Match::last_user("short one")).reply(Reply::text("ok"));
    let (_llm, _home, gateway, mut client) = telling(kind, 2, "tell me a long story", short).await;

    let pool = workers(&gateway);
    assert_eq!(pool.len(), 1, "{pool:?}");
    let aborted = client.abort_chat(KEY, "story").await;
    assert_eq!(aborted["payload"]["aborted"], true, "{aborted}");
    let end = client.chat_event("story", "aborted").await;
    assert_eq!(end["payload"]["stopReason"], "aborted", "{end}");

    let reply = client.chat_until(KEY, "short one", "short", "final").await;
    assert_eq!(text_of(&reply["payload"]["message"]), "ok", "{reply}");
    assert_eq!(
        workers(&gateway),
        pool,
        "the worker that stopped is the one that answered"
    );
    let history = client.history(KEY).await;
    let messages = history["payload"]["messages"].as_array().unwrap();
    assert_eq!(
        user_texts(&history["payload"]["messages"]),
        ["tell me a long story", "short one"],
        "{history}"
    );
    assert_eq!(messages[1]["stopReason"], "aborted", "{history}");
}

async fn a_worker_killed_mid_turn_fails_that_run_and_the_next_message_resumes(kind: Workers) {
    let llm = mock(answers([
        ("first", Reply::text("first reply")),
        ("tell me a long story", long_story(200)),
        ("are you back?", Reply::text("yes, back")),
    ]))
    .await;
    let (_home, gateway, mut client) = rpc_gateway(&llm, kind, "0m", 2).await;

    client.chat_until(KEY, "first", "one", "final").await;
    client
        .chat_until(KEY, "tell me a long story", "two", "delta")
        .await;
    let pool = workers(&gateway);
    assert_eq!(pool.len(), 1, "{pool:?}");
    kill(Pid::from_raw(pool[0] as i32), Signal::SIGKILL).unwrap();

    let failed = client.chat_event("two", "error").await;
    let error = failed["payload"]["errorMessage"]
        .as_str()
        .unwrap_or_default();
    assert!(
        error.starts_with("the agent worker stopped mid-turn (")
            && error.ends_with(
                "what it finished is kept, and the next message continues the session on a new worker"
            ),
        "{failed}"
    );

    let back = client
        .chat_until(KEY, "are you back?", "three", "final")
        .await;
    assert_eq!(text_of(&back["payload"]["message"]), "yes, back", "{back}");
    let now = workers(&gateway);
    assert_eq!(now.len(), 1, "{now:?}");
    assert_ne!(now, pool, "a new worker");
    // It resumed the session from the transcript: the model saw the earlier turns.
    let last = llm.requests().last().unwrap().body.clone();
    assert_eq!(
        user_texts(&last["messages"]),
        ["first", "tell me a long story", "are you back?"],
        "{last}"
    );
    let history = client.history(KEY).await;
    assert_eq!(
        user_texts(&history["payload"]["messages"]),
        ["first", "tell me a long story", "are you back?"],
        "{history}"
    );
    drop(gateway);
}

async fn a_message_sent_while_busy_is_steered_into_the_worker_turn(kind: Workers) {
    let llm = mock(
        Scenario::new()
            .rule(Rule::when(Match::last_user("tell me a story")).reply(long_story(40)))
            .rule(
                Rule::when(Match::last_user_contains("also this"))
                    .reply(Reply::text("noted, also this")),
            ),
    )
    .await;
    let (_home, gateway, mut client) = rpc_gateway(&llm, kind, "0m", 2).await;

    client
        .chat_until(KEY, "tell me a story", "story", "delta")
        .await;
    let steered = client
        .call(
            "chat.send",
            json!({"sessionKey": KEY, "message": "also this", "idempotencyKey": "steer-1"}),
        )
        .await;
    assert_eq!(steered["payload"]["status"], "steered", "{steered}");
    let done = client.chat_event("story", "final").await;
    assert_eq!(
        text_of(&done["payload"]["message"]),
        "noted, also this",
        "the turn went on with the steered message: {done}"
    );
    let waited = client.wait_run("steer-1", 10000).await;
    assert_eq!(waited["payload"]["status"], "ok", "{waited}");
    let history = client.history(KEY).await;
    assert_eq!(
        user_texts(&history["payload"]["messages"]),
        [
            "tell me a story".to_owned(),
            "[INTERRUPT] New message from user: also this".to_owned()
        ],
        "{history}"
    );
    drop(gateway);
}

async fn a_heartbeat_runs_on_a_worker_and_its_pruned_ack_is_not_in_the_next_context(kind: Workers) {
    let llm = mock(
        Scenario::new()
            .rule(
                Rule::when(Match::last_user_contains("ping the heartbeat"))
                    .reply(Reply::text("HEARTBEAT_OK")),
            )
            .rule(Rule::when(Match::last_user("hello")).reply(Reply::text("hi"))),
    )
    .await;
    // Timer beats a day apart: only the wake below runs one.
    let (_home, gateway, mut client) = rpc_gateway(&llm, kind, "24h", 2).await;
    client.chat_until(KEY, "hello", "before", "final").await;
    let pool = workers(&gateway);

    let woke = client
        .call("wake", json!({"mode": "now", "text": "ping the heartbeat"}))
        .await;
    assert_eq!(woke["ok"], true, "{woke}");
    let beat = client.event("heartbeat").await;
    assert_eq!(beat["payload"]["status"], "ok-token", "{beat}");
    assert_eq!(
        workers(&gateway),
        pool,
        "the idle worker took the heartbeat"
    );
    let heartbeat_request = llm.requests().last().unwrap().body.clone();
    assert!(
        text_of(
            heartbeat_request["messages"]
                .as_array()
                .unwrap()
                .last()
                .unwrap()
        )
        .contains("ping the heartbeat"),
        "{heartbeat_request}"
    );

    // The acknowledged beat was cut from the transcript; the worker must not remember it.
    client.chat_until(KEY, "hello", "after", "final").await;
    let last = llm.requests().last().unwrap().body.clone();
    assert_eq!(user_texts(&last["messages"]), ["hello", "hello"], "{last}");
    drop(gateway);
}

async fn a_heartbeat_never_starts_a_worker_and_leaves_its_events_for_the_next_turn(kind: Workers) {
    let llm = mock(
        Scenario::new()
            .rule(Rule::when(Match::last_user_contains("hello")).reply(Reply::text("hi"))),
    )
    .await;
    // Timer beats a day apart: only the wake below runs one. No turn ran: no worker yet.
    let (_home, gateway, mut client) = rpc_gateway(&llm, kind, "24h", 2).await;
    assert_eq!(workers(&gateway), Vec::<u32>::new());

    let woke = client
        .call("wake", json!({"mode": "now", "text": "the build finished"}))
        .await;
    assert_eq!(woke["ok"], true, "{woke}");
    let beat = client.event("heartbeat").await;
    assert_eq!(
        (&beat["payload"]["status"], &beat["payload"]["skipReason"]),
        (&json!("skipped"), &json!("no-idle-worker")),
        "{beat}"
    );
    assert_eq!(
        workers(&gateway),
        Vec::<u32>::new(),
        "no worker was started"
    );
    assert!(llm.requests().is_empty());

    // The wake's event was not lost: the next turn (which may start a worker) carries it.
    client.chat_until(KEY, "hello", "after", "final").await;
    let last = llm.requests().last().unwrap().body.clone();
    let users = user_texts(&last["messages"]);
    assert_eq!(users.len(), 1, "{last}");
    assert!(
        users[0].contains("the build finished") && users[0].ends_with("hello"),
        "{users:?}"
    );
    drop(gateway);
}

async fn a_run_waiting_for_a_worker_can_be_aborted_and_then_waits_no_more(kind: Workers) {
    let answer = Rule::when(Match::last_user("next")).reply(Reply::text("next reply"));
    let (llm, _home, gateway, mut client) = telling(kind, 1, "tell me a story", answer).await;

    // The only worker is busy: another session's run waits for it.
    let other = "agent:main:other";
    client.start_chat(other, "never sent", "waiting").await;
    let aborted = client.abort_chat(other, "waiting").await;
    assert_eq!(aborted["payload"]["aborted"], true, "{aborted}");
    // It ends at once, not when the worker is free: the story still streams.
    let waited = client.wait_run("waiting", 10000).await;
    assert_eq!(waited["payload"]["status"], "error", "{waited}");
    let story_state = client.wait_run("story", 0).await;
    assert_eq!(story_state["payload"]["status"], "timeout", "{story_state}");
    client.abort_chat(KEY, "story").await;
    let story_end = client.wait_run("story", 10000).await;
    assert_ne!(story_end["payload"]["status"], "timeout", "{story_end}");

    let next = client.chat_until(KEY, "next", "next", "final").await;
    assert_eq!(text_of(&next["payload"]["message"]), "next reply", "{next}");
    // The aborted message never reached the model.
    let users: Vec<String> = llm
        .requests()
        .iter()
        .flat_map(|r| user_texts(&r.body["messages"]))
        .collect();
    assert!(!users.iter().any(|u| u == "never sent"), "{users:?}");
    drop(gateway);
}

/// One test per scenario and kind of worker; pi's need pi installed (`--ignored`).
macro_rules! on_both {
    ($($scenario:ident => $pincer:ident, $pi:ident;)*) => {$(
        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn $pincer() {
            $scenario(Workers::Pincer).await;
        }

        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        #[ignore = "needs pi: run interop/pi-rpc.sh"]
        async fn $pi() {
            $scenario(Workers::Pi).await;
        }
    )*};
}

on_both! {
    chat_and_tool_turns_run_on_a_worker_and_keep_the_session => chat_and_tools_on_pincer_workers, chat_and_tools_on_pi_workers;
    abort_stops_the_worker_turn_and_the_worker_serves_the_next => abort_on_pincer_workers, abort_on_pi_workers;
    a_worker_killed_mid_turn_fails_that_run_and_the_next_message_resumes => killed_pincer_worker, killed_pi_worker;
    a_message_sent_while_busy_is_steered_into_the_worker_turn => steering_on_pincer_workers, steering_on_pi_workers;
    a_heartbeat_runs_on_a_worker_and_its_pruned_ack_is_not_in_the_next_context => heartbeat_on_pincer_workers, heartbeat_on_pi_workers;
    a_run_waiting_for_a_worker_can_be_aborted_and_then_waits_no_more => abort_while_waiting_on_pincer_workers, abort_while_waiting_on_pi_workers;
    a_heartbeat_never_starts_a_worker_and_leaves_its_events_for_the_next_turn => heartbeat_skips_without_idle_pincer_worker, heartbeat_skips_without_idle_pi_worker;
}

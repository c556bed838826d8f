//! `/compact [instructions]` as a real compaction, end to end through the binary: typed in
//! `chat.send`, in a (fake) Telegram chat and in `pincer chat` (in process and through a
//! gateway), the older conversation is summarised by the session's model with the
//! instructions in the prompt, the summary is kept as pi's `compaction` entry, the next
//! turn starts from it, and the answer is OpenClaw's one line. Also the other commands
//! `pincer chat` now answers (`/usage`, `/queue`, `/verbose`), `/reset` as `/new`, and
//! `/model` naming a model nobody has.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use pincer_fakes::fake_telegram::FakeTelegram;
use pincer_testkit::{Match, MockLlm, Reply, Rule, Scenario, UsageSpec};
use serde_json::{Value, json};

use crate::common::channels::GATEWAY_TOKEN;
use crate::common::fake_channel::{FakeChannel, T};
use crate::common::gateway::{Foreground, WsClient, gateway_home_in, text_of, transcript_entries};
use crate::common::{Home, mock};

const KEY: &str = "agent:main:main";
/// What the mock answers the summary request with.
const SUMMARY: &str = "## Goal\nKeep the dates: launch on 3 May, review on 9 June.";
/// How pi carries a summary into the conversation.
const PREFIX: &str = "The conversation history before this point was compacted into the following summary:\n\n<summary>\n";
const SUFFIX: &str = "\n</summary>";
/// Three exchanges; with `keepRecentTokens: 6` the last one is kept as it is and the first
/// two are summarised.
const TURNS: [(&str, &str); 3] = [
    ("when is the launch?", "The launch is on 3 May."),
    ("and the review?", "The review is on 9 June."),
    ("what about June?", "June has the 9th."),
];
/// The model's context window (`mock/primary` names none: the default).
const WINDOW: u64 = 128_000;

/// The agent defaults every test here runs with: a compaction keeps about 6 tokens.
const DEFAULTS: &str = "heartbeat: { every: \"0m\" }, compaction: { keepRecentTokens: 6 },";

/// The summary request (its focus), the three exchanges (each reporting a 1200-token
/// context), and a reply after the compaction.
fn scenario() -> Scenario {
    scenario_with(Reply::text(SUMMARY))
}

/// [`scenario`] with `summary` as the summary request's reply.
fn scenario_with(summary: Reply) -> Scenario {
    let usage = UsageSpec {
        input: Some(1000),
        output: Some(200),
        ..Default::default()
    };
    let mut scenario = Scenario::new().rule(
        Rule::when(Match::last_user_contains(
            "Additional focus: focus on the dates",
        ))
        .reply(summary),
    );
    for (asked, answer) in TURNS {
        scenario = scenario
            .rule(Rule::when(Match::last_user(asked)).reply(Reply::text(answer).with_usage(usage)));
    }
    scenario
        .rule(Rule::when(Match::last_user_contains("what next?")).reply(Reply::text("Prepare.")))
}

/// chars / 4, rounded up: how compaction estimates a text's tokens.
fn tokens(text: &str) -> u64 {
    (text.chars().count() as u64).div_ceil(4)
}

/// The context after compacting [`TURNS`]: the summary and the kept exchange.
fn tokens_after() -> u64 {
    let (asked, answer) = TURNS[2];
    tokens(&format!("{PREFIX}{SUMMARY}{SUFFIX}")) + tokens(asked) + tokens(answer)
}

/// The answer a compaction of [`TURNS`] gives: 1200 tokens before (the last reply's
/// reported context), [`tokens_after`] after.
fn compacted_line() -> String {
    let after = tokens_after();
    assert!(after < 1000, "{after}");
    format!(
        "⚙️ Compacted (1.2k → {after}) • Context {after}/128k ({}%)",
        (after * 100 + WINDOW / 2) / WINDOW
    )
}

/// Checks what the compaction asked and kept: one summary request with the instructions
/// and the summarised exchanges (not the kept one), the `compaction` entry in the
/// transcript, and the next turn's request starting from the summary.
/// `told`: the gateway told the agent of the compaction as a system event with the next
/// message, as OpenClaw does (`pincer chat` in process has no system events).
fn check_compaction(llm: &MockLlm, home: &Home, requests_before: usize, told: bool) {
    let requests = llm.requests();
    let summary_request = &requests[requests_before].body;
    let messages = summary_request["messages"].as_array().unwrap();
    assert!(
        text_of(&messages[0]).starts_with("You are a context summarization assistant."),
        "{summary_request}"
    );
    let prompt = text_of(messages.last().unwrap());
    assert!(
        prompt.starts_with("<conversation>\n[User]: when is the launch?"),
        "{prompt}"
    );
    assert!(
        prompt.contains("[Assistant]: The review is on 9 June."),
        "{prompt}"
    );
    assert!(
        !prompt.contains("what about June?"),
        "the kept exchange: {prompt}"
    );
    assert!(
        prompt.ends_with("\n\nAdditional focus: focus on the dates"),
        "{prompt}"
    );

    let entries = transcript_entries(home);
    let compaction = entries.iter().find(|e| e["type"] == "compaction").unwrap();
    assert_eq!(compaction["summary"], SUMMARY);
    assert_eq!(compaction["tokensBefore"], 1200);
    let kept = entries
        .iter()
        .find(|e| e["id"] == compaction["firstKeptEntryId"])
        .unwrap();
    assert_eq!(text_of(&kept["message"]), TURNS[2].0);

    let next = &requests.last().unwrap().body;
    let mut users: Vec<String> = next["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "user")
        .map(text_of)
        .collect();
    if told {
        let last = users.pop().unwrap();
        let event = compacted_line().replace("⚙️ ", "");
        let told = last
            .strip_prefix("System: [")
            .and_then(|rest| rest.split_once("] "))
            .map(|(_, rest)| rest);
        assert_eq!(
            told,
            Some(format!("{event}\n\nwhat next?").as_str()),
            "{last}"
        );
        users.push("what next?".to_owned());
    }
    assert_eq!(
        users,
        [
            format!("{PREFIX}{SUMMARY}{SUFFIX}"),
            TURNS[2].0.to_owned(),
            "what next?".to_owned()
        ],
        "{next}"
    );
    assert!(!next.to_string().contains(TURNS[0].1), "{next}");
}

/// `chat.send` of `text` as `run_id`, which the gateway answers itself: the answer's text
/// (the run's `chat` final), once the request settled (`ok`).
async fn command(client: &mut WsClient, text: &str, run_id: &str) -> String {
    let id = client
        .send_request(
            "chat.send",
            json!({"sessionKey": KEY, "message": text, "idempotencyKey": run_id}),
        )
        .await;
    let (mut answer, mut settled) = (None, false);
    while answer.is_none() || !settled {
        let frame = client.frame().await.expect("frames until the answer");
        if frame["type"] == "res" && frame["id"] == id {
            assert_eq!(frame["payload"]["status"], "ok", "{frame}");
            settled = true;
        }
        let payload = &frame["payload"];
        if frame["event"] == "chat" && payload["runId"] == run_id && payload["state"] == "final" {
            answer = Some(text_of(&payload["message"]));
        }
    }
    answer.unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn compact_through_chat_send_summarises_with_the_instructions() {
    let llm = mock(scenario()).await;
    let (home, port) = gateway_home_in(Home::new(), &llm, "tok", DEFAULTS, "");
    let _gateway = Foreground::start(&home, &["gateway", "run"]);
    let mut client = WsClient::connect(port, "tok").await;
    for (i, (asked, _)) in TURNS.iter().enumerate() {
        client
            .chat_until(KEY, asked, &format!("r-{i}"), "final")
            .await;
    }
    let before = llm.requests().len();
    assert_eq!(
        command(&mut client, "/compact focus on the dates", "c-1").await,
        compacted_line()
    );
    assert_eq!(llm.requests().len(), before + 1, "one summary request");
    // Counted, and the context is the compacted one until the next reply reports its own.
    let row = &client.call("sessions.list", json!({})).await["payload"]["sessions"][0];
    assert_eq!(
        (&row["compactionCount"], &row["totalTokens"]),
        (&json!(1), &json!(tokens_after())),
        "{row}"
    );
    client.chat_until(KEY, "what next?", "r-9", "final").await;
    check_compaction(&llm, &home, before, true);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn compact_in_a_telegram_chat_summarises_with_the_instructions() {
    let llm = mock(scenario()).await;
    let fake = FakeTelegram::start().await;
    let channels = format!(
        "channels: {{ {} }},",
        fake.config(&FakeTelegram::owner_only())
    );
    let (home, _port) = gateway_home_in(Home::new(), &llm, GATEWAY_TOKEN, DEFAULTS, &channels);
    let _gateway = Foreground::start(&home, &["gateway", "run"]);
    let owner = FakeTelegram::OWNER;
    for (i, (asked, answer)) in TURNS.iter().enumerate() {
        fake.inject_dm(owner, asked);
        let sent = fake.wait_for_sent(i + 1, T).await;
        assert_eq!(sent[i].plain, *answer);
    }
    let before = llm.requests().len();
    fake.inject_dm(owner, "/compact focus on the dates");
    let sent = fake.wait_for_sent(4, T).await;
    assert_eq!(sent[3].plain, compacted_line());
    fake.inject_dm(owner, "what next?");
    let sent = fake.wait_for_sent(5, T).await;
    assert_eq!(sent[4].plain, "Prepare.");
    check_compaction(&llm, &home, before, true);
}

/// The `compaction` entries of `home`'s transcript.
fn compactions(home: &Home) -> Vec<Value> {
    transcript_entries(home)
        .into_iter()
        .filter(|e| e["type"] == "compaction")
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pincer_chat_compacts_in_process_and_through_a_gateway() {
    // In process.
    let llm = mock(scenario()).await;
    let home = Home::new();
    home.use_mock(
        &llm,
        &format!("agents: {{ defaults: {{ model: \"mock/primary\", {DEFAULTS} }} }},"),
    );
    let typed: String = TURNS
        .iter()
        .map(|(asked, _)| format!("{asked}\n"))
        .collect();
    let run = home.run_with_stdin(
        &["chat"],
        &format!("{typed}/compact focus on the dates\nwhat next?\n"),
    );
    run.assert_ok();
    let out = run.stdout();
    let lines: Vec<&str> = out.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(
        lines,
        [
            TURNS[0].1,
            TURNS[1].1,
            TURNS[2].1,
            compacted_line().as_str(),
            "Prepare."
        ],
        "{out}"
    );
    check_compaction(&llm, &home, TURNS.len(), false);
    assert_eq!(compactions(&home).len(), 1);

    // Through a gateway: the line goes as typed and the gateway answers it.
    let llm = mock(scenario()).await;
    let (home, port) = gateway_home_in(Home::new(), &llm, "tok", DEFAULTS, "");
    let _gateway = Foreground::start(&home, &["gateway", "run"]);
    let url = format!("ws://127.0.0.1:{port}/");
    let run = home.run_with_stdin(
        &["chat", "--url", &url, "--token", "tok"],
        &format!("{typed}/compact focus on the dates\nwhat next?\n"),
    );
    run.assert_ok();
    let out = run.stdout();
    let lines: Vec<&str> = out.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(lines[3..], [compacted_line().as_str(), "Prepare."], "{out}");
    check_compaction(&llm, &home, TURNS.len(), true);
}

/// What `pincer chat` prints for [`COMMANDS_TYPED`] on stdout, in order: a reply, then the
/// answers, then `/reset`'s (its session id left out). `wrong` are the answers to a
/// wrong verbose level and an unknown model: on stdout through a gateway (its answers),
/// on stderr as errors in process.
const COMMANDS_TYPED: &str = "when is the launch?\n/usage\n/queue\n/queue collect\n/verbose on\n/verbose loud\n/model nope/x\n/reset\n";

fn answers_of(out: &str) -> Vec<String> {
    out.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| match l.split_once("sessionId=") {
            Some((start, _)) => format!("{start}sessionId=…"),
            None => l.to_owned(),
        })
        .collect()
}

const WRONG: [&str; 2] = [
    "Verbose level \"loud\" is not one of on, off (or default).",
    "Unknown model \"nope/x\": name one as provider/model (configured: mock/primary, mock/backup).",
];

fn expected_answers(wrong_on_stdout: bool) -> Vec<String> {
    let mut lines: Vec<String> = [
        TURNS[0].1,
        "replies:    1",
        "tokens in:  1000",
        "tokens out: 200",
        "cache:      0 read, 0 written",
        "cost:       $0.0000",
        "context:    1200",
        "queue: steer (default)",
        "queue: collect",
        "verbose: on",
    ]
    .map(str::to_owned)
    .to_vec();
    if wrong_on_stdout {
        lines.extend(WRONG.map(str::to_owned));
    }
    lines.push("New session started. sessionId=…".to_owned());
    lines
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pincer_chat_answers_usage_queue_verbose_reset_and_unknown_models() {
    // In process.
    let llm = mock(scenario()).await;
    let home = Home::new();
    home.use_mock(
        &llm,
        &format!("agents: {{ defaults: {{ model: \"mock/primary\", {DEFAULTS} }} }},"),
    );
    let run = home.run_with_stdin(&["chat"], COMMANDS_TYPED);
    run.assert_ok();
    assert_eq!(answers_of(&run.stdout()), expected_answers(false));
    let errors: Vec<String> = run
        .stderr()
        .lines()
        .filter_map(|l| l.strip_prefix("error: "))
        .map(str::to_owned)
        .collect();
    assert_eq!(errors, WRONG, "{}", run.stderr());
    // The settings are the session's, where the gateway keeps them; /reset started a new
    // session under the key and kept them, as /new does.
    let index: Value = serde_json::from_str(
        &std::fs::read_to_string(home.sessions_dir().join("sessions.json")).unwrap(),
    )
    .unwrap();
    let entry = &index[KEY];
    assert_eq!(
        (&entry["queueMode"], &entry["verboseLevel"], &entry["model"]),
        (&json!("collect"), &json!("on"), &Value::Null),
        "{index}"
    );
    // `pincer ask` takes /reset as /new too.
    let asked = home.run_ok(&["ask", "/reset"]);
    assert!(
        asked
            .stdout()
            .starts_with("New session started. sessionId="),
        "{}",
        asked.stdout()
    );

    // Through a gateway: every line goes to the gateway, which answers it.
    let llm = mock(scenario()).await;
    let (home, port) = gateway_home_in(Home::new(), &llm, "tok", DEFAULTS, "");
    let _gateway = Foreground::start(&home, &["gateway", "run"]);
    let url = format!("ws://127.0.0.1:{port}/");
    let run = home.run_with_stdin(&["chat", "--url", &url, "--token", "tok"], COMMANDS_TYPED);
    run.assert_ok();
    assert_eq!(answers_of(&run.stdout()), expected_answers(true));
    // The unknown model was not set.
    let mut client = WsClient::connect(port, "tok").await;
    let row = &client.call("sessions.list", json!({})).await["payload"]["sessions"][0];
    assert_eq!(row.get("model"), None, "{row}");
    // /reset through chat.send, as a chat client sends it.
    let old = row["sessionId"].clone();
    let answer = command(&mut client, "/reset", "n-1").await;
    let row = &client.call("sessions.list", json!({})).await["payload"]["sessions"][0];
    assert_eq!(
        answer,
        format!(
            "New session started. sessionId={}",
            row["sessionId"].as_str().unwrap()
        )
    );
    assert_ne!(row["sessionId"], old);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn compact_on_rpc_workers_is_seen_by_the_next_worker_turn() {
    let llm = mock(scenario()).await;
    let (home, port) = gateway_home_in(
        Home::new(),
        &llm,
        "tok",
        DEFAULTS,
        "agent: { runner: \"rpc\", pool: { min: 0, max: 1 } },",
    );
    let _gateway = Foreground::start(&home, &["gateway", "run"]);
    let mut client = WsClient::connect(port, "tok").await;
    for (i, (asked, _)) in TURNS.iter().enumerate() {
        client
            .chat_until(KEY, asked, &format!("r-{i}"), "final")
            .await;
    }
    let before = llm.requests().len();
    assert_eq!(
        command(&mut client, "/compact focus on the dates", "c-1").await,
        compacted_line()
    );
    // The worker that served the session reads it again: the summary is its context now.
    client.chat_until(KEY, "what next?", "r-9", "final").await;
    check_compaction(&llm, &home, before, true);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_message_sent_while_compacting_waits_for_the_summary() {
    // The summary streams for about a second.
    let slow = Reply::text(SUMMARY).with_chunk_size(6).with_delay_ms(100);
    let llm = mock(scenario_with(slow)).await;
    let (home, port) = gateway_home_in(Home::new(), &llm, "tok", DEFAULTS, "");
    let _gateway = Foreground::start(&home, &["gateway", "run"]);
    let mut client = WsClient::connect(port, "tok").await;
    for (i, (asked, _)) in TURNS.iter().enumerate() {
        client
            .chat_until(KEY, asked, &format!("r-{i}"), "final")
            .await;
    }
    let before = llm.requests().len();
    let compact = client
        .send_request(
            "chat.send",
            json!({"sessionKey": KEY, "message": "/compact focus on the dates", "idempotencyKey": "c-1"}),
        )
        .await;
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while llm.requests().len() == before {
        assert!(std::time::Instant::now() < deadline, "no summary request");
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    // The session is busy with the compaction: the message waits its turn.
    let sent = client
        .call(
            "chat.send",
            json!({"sessionKey": KEY, "message": "what next?", "idempotencyKey": "r-9"}),
        )
        .await;
    assert_eq!(sent["payload"]["status"], "queued", "{sent}");
    // The compaction's answer comes first, then the waiting message's reply.
    let (mut finals, mut settled) = (Vec::new(), false);
    while finals.len() < 2 || !settled {
        let frame = client.frame().await.expect("frames");
        let payload = &frame["payload"];
        if frame["type"] == "res" && frame["id"] == compact {
            assert_eq!(payload["status"], "ok", "{frame}");
            settled = true;
        } else if frame["event"] == "chat" && payload["state"] == "final" {
            let run = payload["runId"].as_str().unwrap();
            finals.push(format!("{run} {}", text_of(&payload["message"])));
        }
    }
    assert_eq!(
        finals,
        [
            format!("c-1 {}", compacted_line()),
            "r-9 Prepare.".to_owned()
        ]
    );
    check_compaction(&llm, &home, before, true);
}

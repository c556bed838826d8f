//! Interop with the real pi (`@mariozechner/pi-coding-agent`, `pi --mode rpc`): the same
//! scenarios drive a pi worker and a `pincer rpc` worker through the same client code
//! (`pincer_rpc::RpcClient`), against the same mock LLM, and their event sequences
//! must match (ids, timestamps and token granularity aside); then a transcript written by
//! Pincer is opened by pi and one written by pi is resumed by Pincer.
//!
//! Needs pi: `bash interop/pi-rpc.sh` installs it and runs these with `--ignored`
//! (`PINCER_PI_CLI` = pi's `dist/cli.js`, `PINCER_NODE` = node).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::path::{Path, PathBuf};
use std::time::Duration;

use common::Home;
use pincer_rpc::{RpcClient, RpcCommand, StreamingBehavior, WorkerSpec};
use pincer_testkit::{Fault, Match, MockLlm, Reply, Rule, Scenario};
use serde_json::{Value, json};

const T: Duration = Duration::from_secs(30);

fn scenario() -> Scenario {
    Scenario::new()
        .rule(Rule::when(Match::last_user("hi")).reply(Reply::text("hello there")))
        .rule(Rule::when(Match::tool_result("ls")).reply(Reply::text("done listing")))
        .rule(
            Rule::when(Match::last_user("list files"))
                .reply(Reply::tool_call("ls", json!({"path": "."}))),
        )
        .rule(
            Rule::when(Match::last_user("slow"))
                .reply(Reply::text("this is slow"))
                .fault(Fault::slow_first_byte_ms(5_000)),
        )
        .rule(
            Rule::when(Match::last_user("wait"))
                .reply(Reply::text("waited"))
                .fault(Fault::slow_first_byte_ms(1_500)),
        )
        .rule(Rule::when(Match::last_user("steered")).reply(Reply::text("took the steer")))
}

/// What both kinds of worker need: the mock, a pi agent dir, a Pincer home, a work dir.
struct Setup {
    llm: MockLlm,
    home: Home,
    pi_agent_dir: PathBuf,
    work: PathBuf,
}

impl Setup {
    async fn new() -> Self {
        let llm = MockLlm::start(scenario()).await.unwrap();
        let home = Home::new();
        home.use_mock(&llm, "");
        let pi_agent_dir = common::pi_agent_dir(&home, &llm);
        let work = home.dir.path().join("work");
        std::fs::create_dir_all(&work).unwrap();
        Self {
            llm,
            home,
            pi_agent_dir,
            work,
        }
    }

    fn pi(&self, extra: &[&str]) -> RpcClient {
        let node = std::env::var("PINCER_NODE").unwrap_or_else(|_| "node".into());
        let cli = std::env::var("PINCER_PI_CLI").expect("PINCER_PI_CLI: run interop/pi-rpc.sh");
        self.spawn(
            WorkerSpec::new(node).arg(cli),
            extra,
            [
                (
                    "PI_CODING_AGENT_DIR".into(),
                    self.pi_agent_dir.display().to_string(),
                ),
                ("PI_OFFLINE".into(), "1".into()),
            ],
        )
    }

    fn pincer(&self, extra: &[&str]) -> RpcClient {
        self.spawn(
            WorkerSpec::new(env!("CARGO_BIN_EXE_pincer")).arg("rpc"),
            extra,
            [("PINCER_HOME".into(), self.home.path().display().to_string())],
        )
    }

    /// `program` as an RPC worker on the mock's `primary` with the `ls` and `read` tools,
    /// plus `extra` arguments, in the work dir, with the temp `$HOME` and `env`.
    fn spawn<const N: usize>(
        &self,
        program: WorkerSpec,
        extra: &[&str],
        env: [(String, String); N],
    ) -> RpcClient {
        let mut spec = program;
        for arg in [
            "--mode",
            "rpc",
            "--provider",
            "mock",
            "--model",
            "primary",
            "--tools",
            "ls,read",
        ]
        .iter()
        .chain(extra)
        {
            spec = spec.arg(*arg);
        }
        spec.cwd = Some(self.work.clone());
        spec.env = vec![(
            "HOME".into(),
            self.home.dir.path().join("user").display().to_string(),
        )];
        spec.env.extend(env);
        RpcClient::spawn(spec).unwrap()
    }
}

/// The event types of one run, consecutive repeats folded (token granularity differs), with
/// the assistant event type for `message_update`s.
fn shape(events: &[Value]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for event in events {
        let ty = event["type"].as_str().unwrap_or("?");
        let name = match event["assistantMessageEvent"]["type"].as_str() {
            Some(sub) if ty == "message_update" => format!("{ty}:{sub}"),
            _ => ty.to_owned(),
        };
        if out.last() != Some(&name) {
            out.push(name);
        }
    }
    out
}

/// Runs `prompt` on `client` and returns its events up to `agent_end`; `during` runs once
/// the run has started (steer, abort).
async fn run_turn(
    client: &RpcClient,
    message: &str,
    during: Option<(&str, RpcCommand)>,
) -> Vec<Value> {
    let mut events = client.subscribe();
    client
        .request(RpcCommand::prompt(message), T)
        .await
        .unwrap();
    let mut seen = Vec::new();
    let mut during = during;
    loop {
        let event = tokio::time::timeout(T, events.recv())
            .await
            .unwrap()
            .unwrap();
        let ty = event["type"].as_str().unwrap_or("").to_owned();
        seen.push((*event).clone());
        if let Some((trigger, _)) = &during
            && ty == *trigger
            && let Some((_, command)) = during.take()
        {
            client.request(command, T).await.unwrap();
        }
        if ty == "agent_end" {
            return seen;
        }
    }
}

fn texts(messages: &Value) -> Vec<String> {
    messages
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            let text: String = match &m["content"] {
                Value::String(s) => s.clone(),
                Value::Array(blocks) => blocks
                    .iter()
                    .map(|b| {
                        b["text"]
                            .as_str()
                            .map(str::to_owned)
                            .or_else(|| b["name"].as_str().map(|n| format!("call:{n}")))
                            .unwrap_or_default()
                    })
                    .collect(),
                _ => String::new(),
            };
            format!("{}:{text}", m["role"].as_str().unwrap())
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs pi: bash interop/pi-rpc.sh"]
async fn pi_and_pincer_workers_emit_the_same_event_sequences() {
    let setup = Setup::new().await;
    let pi_sessions = setup.home.dir.path().join("pi-sessions");
    let pincer_sessions = setup.home.dir.path().join("pincer-sessions");
    let pi = setup.pi(&["--session-dir", pi_sessions.to_str().unwrap()]);
    let pincer = setup.pincer(&["--session-dir", pincer_sessions.to_str().unwrap()]);

    let mut results = Vec::new();
    for client in [&pi, &pincer] {
        let chat = run_turn(client, "hi", None).await;
        let tool = run_turn(client, "list files", None).await;
        let aborted = run_turn(client, "slow", Some(("message_start", RpcCommand::Abort))).await;
        // A steer while the reply is coming: taken after it, in a turn of its own.
        let steered = run_turn(
            client,
            "wait",
            Some((
                "turn_start",
                RpcCommand::Prompt {
                    message: "steered".into(),
                    images: None,
                    streaming_behavior: Some(StreamingBehavior::Steer),
                },
            )),
        )
        .await;
        let messages = client.request(RpcCommand::GetMessages, T).await.unwrap();
        results.push((
            shape(&chat),
            shape(&tool),
            shape(&aborted),
            shape(&steered),
            texts(&messages["messages"]),
        ));
    }
    let (pi_result, pincer_result) = (&results[0], &results[1]);
    assert_eq!(pi_result.0, pincer_result.0, "chat turn");
    assert_eq!(pi_result.1, pincer_result.1, "tool turn");
    assert_eq!(pi_result.2, pincer_result.2, "aborted turn");
    assert_eq!(pi_result.3, pincer_result.3, "steered turn");
    assert_eq!(pi_result.4, pincer_result.4, "the conversations");
    pi.stop().await;
    pincer.stop().await;
}

/// The newest `.jsonl` under `dir`.
fn newest_session(dir: &Path) -> PathBuf {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .collect();
    files.sort();
    files.pop().expect("a session file")
}

/// Has `writer` run a chat turn and a tool turn, stops it and returns the messages it
/// held (what its session file must give back).
async fn two_turns(writer: RpcClient) -> Value {
    run_turn(&writer, "hi", None).await;
    run_turn(&writer, "list files", None).await;
    let written = writer.request(RpcCommand::GetMessages, T).await.unwrap();
    writer.stop().await;
    written
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs pi: bash interop/pi-rpc.sh"]
async fn transcripts_cross_between_pi_and_pincer() {
    let setup = Setup::new().await;
    // Pincer writes, pi reads.
    let dir = setup.home.dir.path().join("by-pincer");
    let written = two_turns(setup.pincer(&["--session-dir", dir.to_str().unwrap()])).await;
    let file = newest_session(&dir);
    let pi = setup.pi(&["--session", file.to_str().unwrap()]);
    let read = pi.request(RpcCommand::GetMessages, T).await.unwrap();
    assert_eq!(texts(&read["messages"]), texts(&written["messages"]));
    // And pi continues it: the model sees the whole conversation.
    run_turn(&pi, "hi", None).await;
    pi.stop().await;
    let body = setup.llm.requests().last().unwrap().body.clone();
    let users = body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "user")
        .count();
    assert_eq!(users, 3, "{body}");

    // pi writes, Pincer resumes.
    let dir = setup.home.dir.path().join("by-pi");
    let written = two_turns(setup.pi(&["--session-dir", dir.to_str().unwrap()])).await;
    let pincer = setup.pincer(&["--session-dir", dir.to_str().unwrap(), "--continue"]);
    let read = pincer.request(RpcCommand::GetMessages, T).await.unwrap();
    assert_eq!(texts(&read["messages"]), texts(&written["messages"]));
    run_turn(&pincer, "hi", None).await;
    pincer.stop().await;
    let file = newest_session(&dir);
    let lines = std::fs::read_to_string(&file).unwrap();
    assert_eq!(
        lines
            .lines()
            .filter(|l| l.contains(r#""role":"user""#))
            .count(),
        3,
        "Pincer appended to pi's file"
    );
}

/// The JSON types of `value`, keys kept: what two answers must share when their values
/// (ids, paths, times) differ.
fn type_shape(value: &Value) -> Value {
    match value {
        Value::Null => json!("null"),
        Value::Bool(_) => json!("boolean"),
        Value::Number(_) => json!("number"),
        Value::String(_) => json!("string"),
        Value::Array(items) => Value::Array(items.iter().take(1).map(type_shape).collect()),
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| (k.clone(), type_shape(v)))
                .collect(),
        ),
    }
}

/// What a worker answers to pi's session-tree commands after two turns: the fork list, a
/// fork before the second message, a fork of an unknown entry, the conversation after the
/// fork and after one more turn, `export_html` to a given path and to the default one, and
/// a `clone` of the branch.
async fn session_tree_answers(client: &RpcClient, out: &Path) -> Vec<Value> {
    run_turn(client, "hi", None).await;
    run_turn(client, "list files", None).await;
    let before = client.request(RpcCommand::GetState, T).await.unwrap();
    let listed = client
        .request(RpcCommand::GetForkMessages, T)
        .await
        .unwrap();
    let second = listed["messages"][1]["entryId"]
        .as_str()
        .unwrap()
        .to_owned();
    let forked = client
        .request(RpcCommand::Fork { entry_id: second }, T)
        .await
        .unwrap();
    let unknown = match client
        .request(
            RpcCommand::Fork {
                entry_id: "deadbeef".into(),
            },
            T,
        )
        .await
    {
        Err(pincer_rpc::RpcError::Command { command, message }) => json!([command, message]),
        other => panic!("a fork of an unknown entry answered {other:?}"),
    };
    let after = client.request(RpcCommand::GetState, T).await.unwrap();
    assert_ne!(
        before["sessionFile"], after["sessionFile"],
        "a fork is a new session file"
    );
    let branch = client.request(RpcCommand::GetMessages, T).await.unwrap();
    run_turn(client, "hi", None).await;
    let continued = client.request(RpcCommand::GetMessages, T).await.unwrap();
    let exported = client
        .request(
            RpcCommand::ExportHtml {
                output_path: Some(out.display().to_string()),
            },
            T,
        )
        .await
        .unwrap();
    let html = std::fs::read_to_string(out).unwrap();
    // pi's page carries the session as base64 for its scripts, Pincer's as escaped HTML.
    assert!(html.starts_with("<!DOCTYPE html>"), "{html}");
    let default = client
        .request(RpcCommand::ExportHtml { output_path: None }, T)
        .await
        .unwrap();
    let default_path = default["path"].as_str().unwrap();
    assert!(default_path.ends_with(".html"), "{default}");
    let cloned = client.request(RpcCommand::CloneSession, T).await.unwrap();
    let clone_state = client.request(RpcCommand::GetState, T).await.unwrap();
    assert_ne!(
        clone_state["sessionFile"], after["sessionFile"],
        "a clone is a new file"
    );
    let clone_messages = client.request(RpcCommand::GetMessages, T).await.unwrap();
    vec![
        listed["messages"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["text"].clone())
            .collect(),
        type_shape(&listed),
        forked,
        unknown,
        json!(texts(&branch["messages"])),
        json!(texts(&continued["messages"])),
        json!(exported["path"] == json!(out.display().to_string())),
        type_shape(&exported),
        type_shape(&default),
        cloned,
        json!(texts(&clone_messages["messages"])),
    ]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs pi: bash interop/pi-rpc.sh"]
async fn fork_and_export_html_answer_as_pi_does() {
    let setup = Setup::new().await;
    let mut results = Vec::new();
    for who in ["pi", "pincer"] {
        let sessions = setup.home.dir.path().join(format!("{who}-tree"));
        let args = ["--session-dir", sessions.to_str().unwrap()];
        let client = match who {
            "pi" => setup.pi(&args),
            _ => setup.pincer(&args),
        };
        let out = setup.home.dir.path().join(format!("{who}-export.html"));
        results.push(session_tree_answers(&client, &out).await);
        client.stop().await;
    }
    let labels = [
        "fork messages",
        "get_fork_messages shape",
        "fork answer",
        "fork of an unknown entry",
        "the branch",
        "the branch continued",
        "export_html path as given",
        "export_html shape",
        "export_html default shape",
        "clone answer",
        "the clone's conversation",
    ];
    for (i, label) in labels.iter().enumerate() {
        assert_eq!(results[0][i], results[1][i], "{label}");
    }
    assert_eq!(
        results[1][2],
        json!({"text": "list files", "cancelled": false})
    );
}

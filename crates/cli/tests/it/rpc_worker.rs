//! `pincer rpc` as a pi RPC worker, driven over stdin/stdout against the mock LLM: pi's
//! response and event shapes and order, tool turns, steering and follow-ups while busy,
//! abort, session files resumed with `--continue`, malformed input answered as pi answers
//! it, and a clean exit at EOF.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use common::{Home, Script as _, mock, replies, reply_when_containing};
use pincer_testkit::{Fault, Match, Reply, Rule, Scenario};
use serde_json::{Value, json};

/// A running worker; killed on drop.
pub(crate) struct Worker {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: mpsc::Receiver<Value>,
    /// Every line read so far, in order.
    seen: Vec<Value>,
}

impl Worker {
    pub(crate) fn start(home: &Home, extra: &[&str]) -> Self {
        let sessions = home.dir.path().join("rpc-sessions");
        let sessions = sessions.to_str().unwrap().to_owned();
        let mut args = vec![
            "rpc",
            "--provider",
            "mock",
            "--model",
            "primary",
            "--session-dir",
            &sessions,
        ];
        args.extend_from_slice(extra);
        let mut child = home
            .command(&args)
            .current_dir(home.dir.path())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { return };
                let value: Value = serde_json::from_str(&line)
                    .unwrap_or_else(|e| panic!("stdout line is not JSON ({e}): {line}"));
                if tx.send(value).is_err() {
                    return;
                }
            }
        });
        Self {
            stdin: child.stdin.take(),
            child,
            lines,
            seen: Vec::new(),
        }
    }

    fn send_raw(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().unwrap();
        writeln!(stdin, "{line}").unwrap();
        stdin.flush().unwrap();
    }

    fn send(&mut self, command: Value) {
        self.send_raw(&command.to_string());
    }

    fn next(&mut self) -> Value {
        let line = self
            .lines
            .recv_timeout(Duration::from_secs(20))
            .expect("a line within 20 s");
        self.seen.push(line.clone());
        line
    }

    /// Sends `command` (with `id`) and returns its response, keeping the events between.
    pub(crate) fn call(&mut self, id: &str, mut command: Value) -> Value {
        command["id"] = json!(id);
        self.send(command);
        loop {
            let line = self.next();
            if line["type"] == "response" && line["id"] == id {
                return line;
            }
        }
    }

    /// Reads until an event of `kind`; returns it.
    pub(crate) fn until(&mut self, kind: &str) -> Value {
        loop {
            let line = self.next();
            if line["type"] == kind {
                return line;
            }
        }
    }

    /// The types of the lines seen, from index `from`.
    fn types(&self, from: usize) -> Vec<String> {
        self.seen[from..]
            .iter()
            .map(|l| l["type"].as_str().unwrap_or("?").to_owned())
            .collect()
    }

    /// Closes stdin and waits for the exit code.
    pub(crate) fn finish(mut self) -> Option<i32> {
        drop(self.stdin.take());
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status.code();
            }
            assert!(std::time::Instant::now() < deadline, "no exit after EOF");
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// How a prompt's run opens (event types, repeats folded): the response, the agent's and
/// the turn's start, the user's message (start, end), then the assistant's streamed one.
const OPENING: [&str; 8] = [
    "response",
    "agent_start",
    "turn_start",
    "message_start",
    "message_end",
    "message_start",
    "message_update",
    "message_end",
];

fn text_of(message: &Value) -> String {
    message["content"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|b| b["text"].as_str())
        .collect()
}

pub(crate) async fn home_with(scenario: Scenario) -> (Home, pincer_testkit::MockLlm) {
    let llm = mock(scenario).await;
    let home = Home::new();
    home.use_mock(&llm, "");
    (home, llm)
}

/// The `type` of each entry of a session file.
fn entry_types(path: impl AsRef<std::path::Path>) -> Vec<String> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| {
            serde_json::from_str::<Value>(l).unwrap()["type"]
                .as_str()
                .unwrap()
                .to_owned()
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_text_reply_streams_in_pis_order_and_is_saved() {
    let (home, _llm) = home_with(replies(&[("hi", "hello there")])).await;
    let mut worker = Worker::start(&home, &[]);
    let state = worker.call("s1", json!({"type": "get_state"}));
    assert_eq!(state["success"], true, "{state}");
    assert_eq!(state["command"], "get_state");
    let data = &state["data"];
    assert_eq!(data["model"]["provider"], "mock");
    assert_eq!(data["model"]["id"], "primary");
    assert_eq!(data["isStreaming"], false);
    assert_eq!(data["messageCount"], 0);
    assert_eq!(data["steeringMode"], "one-at-a-time");
    let session_file = data["sessionFile"].as_str().unwrap().to_owned();

    let start = worker.seen.len();
    let response = worker.call("p1", json!({"type": "prompt", "message": "hi"}));
    assert_eq!(
        response,
        json!({"id": "p1", "type": "response", "command": "prompt", "success": true})
    );
    let end = worker.until("agent_end");
    let mut types = worker.types(start);
    types.dedup();
    assert_eq!(types, [&OPENING[..], &["turn_end", "agent_end"]].concat());
    let update = worker.seen[start..]
        .iter()
        .rfind(|l| l["type"] == "message_update")
        .unwrap();
    assert_eq!(update["message"]["role"], "assistant");
    let messages = end["messages"].as_array().unwrap();
    assert_eq!(text_of(messages.last().unwrap()), "hello there");

    let last = worker.call("t", json!({"type": "get_last_assistant_text"}));
    assert_eq!(last["data"], json!({"text": "hello there"}));
    assert_eq!(worker.finish(), Some(0));

    // The session file has pi's layout: header, model, thinking level, the two messages.
    assert_eq!(
        entry_types(&session_file),
        [
            "session",
            "model_change",
            "thinking_level_change",
            "message",
            "message"
        ]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn continue_resumes_the_newest_session() {
    let (home, llm) = home_with(replies(&[("first", "one"), ("second", "two")])).await;
    let mut worker = Worker::start(&home, &[]);
    worker.call("p", json!({"type": "prompt", "message": "first"}));
    worker.until("agent_end");
    assert_eq!(worker.finish(), Some(0));

    let mut worker = Worker::start(&home, &["--continue"]);
    let state = worker.call("s", json!({"type": "get_state"}));
    assert_eq!(state["data"]["messageCount"], 2, "{state}");
    worker.call("p", json!({"type": "prompt", "message": "second"}));
    worker.until("agent_end");
    // The model saw the whole conversation.
    let users = crate::common::channels::last_request_users(&llm);
    assert_eq!(users.len(), 2, "{users:?}");
    assert_eq!(worker.finish(), Some(0));
}

/// As pi, a new session's file is written with its first message: a worker that is only
/// pointed at another session (what the gateway's pool does) leaves no empty file behind.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_file_is_written_with_its_first_message() {
    let (home, _llm) =
        home_with(Scenario::new().rule(Rule::when(Match::any()).reply(Reply::text("ok")))).await;
    let sessions = home.dir.path().join("rpc-sessions");
    let files = || -> Vec<std::path::PathBuf> {
        std::fs::read_dir(&sessions)
            .map(|d| d.map(|e| e.unwrap().path()).collect())
            .unwrap_or_default()
    };
    let mut worker = Worker::start(&home, &[]);
    let state = worker.call("s", json!({"type": "get_state"}));
    let path = state["data"]["sessionFile"].as_str().unwrap().to_owned();
    worker.call("n", json!({"type": "set_session_name", "name": "later"}));
    assert!(
        files().is_empty(),
        "nothing written before a message: {:?}",
        files()
    );
    worker.call("p", json!({"type": "prompt", "message": "hi"}));
    worker.until("agent_end");
    assert_eq!(files(), [std::path::PathBuf::from(&path)]);
    assert_eq!(
        entry_types(&path),
        [
            "session",
            "model_change",
            "thinking_level_change",
            "session_info",
            "message",
            "message"
        ]
    );
    assert_eq!(worker.finish(), Some(0));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_turn_reports_the_execution_and_continues() {
    let (home, _llm) = home_with(Scenario::new().tool_turn(
        "list files",
        "ls",
        json!({"path": "."}),
        "done listing",
    ))
    .await;
    let mut worker = Worker::start(&home, &["--tools", "ls,read"]);
    let start = worker.seen.len();
    worker.call("p", json!({"type": "prompt", "message": "list files"}));
    worker.until("agent_end");
    let mut types = worker.types(start);
    types.dedup();
    let after_the_opening = [
        "tool_execution_start",
        "tool_execution_end",
        "message_start",
        "message_end",
        "turn_end",
        "turn_start",
        "message_start",
        "message_update",
        "message_end",
        "turn_end",
        "agent_end",
    ];
    assert_eq!(types, [&OPENING[..], &after_the_opening].concat());
    let tool_end = worker
        .seen
        .iter()
        .find(|l| l["type"] == "tool_execution_end")
        .unwrap();
    assert_eq!(tool_end["toolName"], "ls");
    assert_eq!(tool_end["isError"], false);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn while_busy_a_prompt_needs_a_streaming_behavior_and_abort_ends_the_run() {
    let (home, _llm) = home_with(
        Scenario::new()
            .rule(
                Rule::when(Match::last_user("slow"))
                    .reply(Reply::text("slow reply"))
                    .fault(Fault::slow_first_byte_ms(3000)),
            )
            .rule(Rule::when(Match::last_user_contains("later")).reply(Reply::text("ok later"))),
    )
    .await;
    let mut worker = Worker::start(&home, &[]);
    worker.call("p1", json!({"type": "prompt", "message": "slow"}));
    worker.until("agent_start");
    let refused = worker.call("p2", json!({"type": "prompt", "message": "now?"}));
    assert_eq!(refused["success"], false, "{refused}");
    assert!(
        refused["error"]
            .as_str()
            .unwrap()
            .contains("streamingBehavior"),
        "{refused}"
    );
    let queued = worker.call(
        "p3",
        json!({"type": "prompt", "message": "later", "streamingBehavior": "followUp"}),
    );
    assert_eq!(queued["success"], true, "{queued}");
    let state = worker.call("s", json!({"type": "get_state"}));
    assert_eq!(state["data"]["isStreaming"], true);
    assert_eq!(state["data"]["pendingMessageCount"], 1);

    let aborted = worker.call("a", json!({"type": "abort"}));
    assert_eq!(aborted["success"], true);
    // The aborted reply ends its turn; the follow-up is then answered.
    let end = worker.until("agent_end");
    let texts: Vec<String> = end["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "assistant")
        .map(|m| format!("{}:{}", m["stopReason"].as_str().unwrap(), text_of(m)))
        .collect();
    assert!(texts.first().unwrap().starts_with("aborted"), "{texts:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn malformed_input_is_answered_as_pi_answers_it() {
    let (home, _llm) = home_with(Scenario::new()).await;
    let mut worker = Worker::start(&home, &[]);
    worker.send_raw("this is not json");
    let parse = worker.next();
    assert_eq!(parse["type"], "response");
    assert_eq!(parse["command"], "parse");
    assert_eq!(parse["success"], false);
    assert!(
        parse["error"]
            .as_str()
            .unwrap()
            .starts_with("Failed to parse command:"),
        "{parse}"
    );
    worker.send(json!({"type": "no_such_command", "id": "u1"}));
    assert_eq!(
        worker.next(),
        json!({"type": "response", "command": "no_such_command", "success": false,
               "error": "Unknown command: no_such_command"})
    );
    let missing = worker.call("m1", json!({"type": "set_model"}));
    assert_eq!(missing["success"], false);
    assert_eq!(missing["command"], "set_model");
    let bad_level = worker.call(
        "t1",
        json!({"type": "set_thinking_level", "level": "extreme"}),
    );
    assert_eq!(bad_level["success"], false);
    // Still serving.
    let state = worker.call("s", json!({"type": "get_state"}));
    assert_eq!(state["success"], true);
    assert_eq!(worker.finish(), Some(0));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bash_output_reaches_the_next_prompt() {
    let (home, llm) = home_with(reply_when_containing(
        "what did it say?",
        "it said hello-from-bash",
    ))
    .await;
    let mut worker = Worker::start(&home, &[]);
    let ran = worker.call(
        "b",
        json!({"type": "bash", "command": "echo hello-from-bash; exit 3"}),
    );
    assert_eq!(
        ran["data"],
        json!({"output": "hello-from-bash\n", "exitCode": 3, "cancelled": false, "truncated": false})
    );
    worker.call(
        "p",
        json!({"type": "prompt", "message": "what did it say?"}),
    );
    worker.until("agent_end");
    let body = llm.requests().last().unwrap().body.clone();
    let user = body["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .to_string();
    assert!(
        user.contains("Ran `echo hello-from-bash; exit 3`"),
        "{user}"
    );
    assert!(user.contains("Command exited with code 3"), "{user}");
}

/// A role's worker (issue 22): `--skill` loads that one skill besides the agent's,
/// `--append-system-prompt` ends the prompt, and the worker adds no gateway sections of
/// its own (its gateway passes them).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn skill_and_append_system_prompt_flags_shape_the_prompt() {
    let (home, llm) = home_with(replies(&[("hi", "hello")])).await;
    let lib = home.dir.path().join("lib");
    for name in ["deploy", "rollback"] {
        std::fs::create_dir_all(lib.join(name)).unwrap();
        std::fs::write(
            lib.join(name).join("SKILL.md"),
            format!("---\nname: {name}\ndescription: Does {name}\n---\n"),
        )
        .unwrap();
    }
    let skill = lib.join("deploy").display().to_string();
    let mut worker = Worker::start(
        &home,
        &[
            "--skill",
            &skill,
            "--append-system-prompt",
            "You run deployments.",
        ],
    );
    worker.call("p1", json!({"type": "prompt", "message": "hi"}));
    worker.until("agent_end");
    assert_eq!(worker.finish(), Some(0));
    let system = llm.requests()[0].body["messages"][0]["content"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(system.contains("Does deploy"), "{system}");
    assert!(!system.contains("Does rollback"), "{system}");
    assert!(system.ends_with("\n\nYou run deployments."), "{system}");
    assert!(!system.contains("Protocol"), "{system}");
}

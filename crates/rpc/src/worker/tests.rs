//! The worker through its command dispatch, on a fake host and the offline stub model:
//! each response line exactly as it goes on the wire.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::future::Future;
use std::path::Path;
use std::pin::Pin;
use std::sync::Arc;

use pincer_agent::AgentConfig;
use pincer_ai::providers::stub;
use pincer_ai::{LlmClient, Model};
use serde_json::{Value, json};
use tokio::sync::mpsc;

use crate::worker::WorkerOptions;
use crate::worker::dispatch::dispatch;
use crate::worker::host::{ConfigRequest, HostError, SkillCommand, WorkerHost};
use crate::worker::output::Output;
use crate::worker::state::Worker;
use crate::{WorkerInput, decode_input};

struct FakeHost {
    scoped: Vec<String>,
}

impl WorkerHost for FakeHost {
    fn agent_config(&self, request: &ConfigRequest<'_>) -> Result<AgentConfig, HostError> {
        if let Some(provider) = request.provider.filter(|p| *p != stub::PROVIDER) {
            return Err(HostError::new(format!(
                "unknown model {provider}/{}: not in the catalog",
                request.model.unwrap_or_default()
            )));
        }
        let client = LlmClient::new();
        Ok(AgentConfig::new(
            stub::model(),
            Arc::new(move |m, c, o| client.stream(m, c, o)),
        ))
    }

    fn models(&self) -> Vec<Model> {
        vec![stub::model()]
    }

    fn scoped_models(&self) -> Vec<String> {
        self.scoped.clone()
    }

    fn skills(&self, _cwd: &Path) -> Vec<SkillCommand> {
        vec![SkillCommand {
            name: "deploy".into(),
            description: "Ships it".into(),
        }]
    }

    fn shutdown(&self) -> Pin<Box<dyn Future<Output = ()> + Send + '_>> {
        Box::pin(async {})
    }
}

struct Harness {
    worker: Worker,
    out: Output,
    lines: mpsc::UnboundedReceiver<String>,
    _dir: tempfile::TempDir,
}

impl Harness {
    async fn new(scoped: &[&str]) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let options = WorkerOptions {
            agent_id: "main".into(),
            session_dir: dir.path().join("sessions"),
            cwd: dir.path().to_owned(),
            ..WorkerOptions::default()
        };
        let host = Arc::new(FakeHost {
            scoped: scoped.iter().map(|s| (*s).to_owned()).collect(),
        });
        let (out, lines) = Output::capture();
        let worker = Worker::start(host, options, out.clone()).await.unwrap();
        Self {
            worker,
            out,
            lines,
            _dir: dir,
        }
    }

    /// Sends one command line and returns its response.
    async fn send(&mut self, line: &str) -> Value {
        let Ok(WorkerInput::Command(request)) = decode_input(line) else {
            panic!("not a command: {line}");
        };
        dispatch(&mut self.worker, &self.out, request).await;
        loop {
            let line = self.lines.recv().await.unwrap();
            let value: Value = serde_json::from_str(&line).unwrap();
            if value["type"] == "response" {
                return value;
            }
        }
    }
}

fn refused(id: &str, command: &str, error: &str) -> Value {
    json!({"id": id, "type": "response", "command": command, "success": false, "error": error})
}

#[tokio::test]
async fn refusals_carry_the_workers_texts() {
    let mut h = Harness::new(&["nope", "stub/echo"]).await;
    assert_eq!(
        h.send(r#"{"id":"1","type":"set_session_name","name":"  "}"#)
            .await,
        refused("1", "set_session_name", "Session name cannot be empty")
    );
    assert_eq!(
        h.send(r#"{"id":"2","type":"set_thinking_level","level":"max"}"#)
            .await,
        refused(
            "2",
            "set_thinking_level",
            "unknown thinking level \"max\": use off, minimal, low, medium, high or xhigh"
        )
    );
    assert_eq!(
        h.send(r#"{"id":"3","type":"cycle_model"}"#).await,
        refused(
            "3",
            "cycle_model",
            "configured model \"nope\" is not provider/model"
        )
    );
    // Before the first message there is no file to export or fork (pi's texts).
    assert_eq!(
        h.send(r#"{"id":"4","type":"export_html"}"#).await,
        refused(
            "4",
            "export_html",
            "Nothing to export yet - start a conversation first"
        )
    );
    assert_eq!(
        h.send(r#"{"id":"5","type":"fork","entryId":"abc"}"#).await,
        refused("5", "fork", "Invalid entry ID for forking")
    );
}

#[tokio::test]
async fn a_host_error_is_the_response_text() {
    let mut h = Harness::new(&[]).await;
    assert_eq!(
        h.send(r#"{"id":"m","type":"set_model","provider":"other","modelId":"big"}"#)
            .await,
        refused(
            "m",
            "set_model",
            "unknown model other/big: not in the catalog"
        )
    );
}

#[tokio::test]
async fn host_answers_reach_the_client_in_pis_shape() {
    let mut h = Harness::new(&["stub/echo"]).await;
    assert_eq!(
        h.send(r#"{"id":"c","type":"get_commands"}"#).await,
        json!({"id": "c", "type": "response", "command": "get_commands", "success": true,
               "data": {"commands": [
                   {"name": "skill:deploy", "description": "Ships it", "source": "skill"}]}})
    );
    // One scoped model: nothing to cycle to.
    assert_eq!(
        h.send(r#"{"id":"n","type":"cycle_model"}"#).await,
        json!({"id": "n", "type": "response", "command": "cycle_model", "success": true,
               "data": null})
    );
    let models = h.send(r#"{"id":"a","type":"get_available_models"}"#).await;
    assert_eq!(models["data"]["models"], json!([stub::model()]));
}

impl Harness {
    /// Runs `message` to its `agent_end`; returns the event types after the response.
    async fn run(&mut self, message: &str) -> Vec<String> {
        let prompt = json!({"id": "p", "type": "prompt", "message": message}).to_string();
        assert_eq!(
            self.send(&prompt).await,
            json!({"id": "p", "type": "response", "command": "prompt", "success": true})
        );
        let mut events = Vec::new();
        while events.last().is_none_or(|t| t != "agent_end") {
            let line = self.lines.recv().await.unwrap();
            let value: Value = serde_json::from_str(&line).unwrap();
            events.push(value["type"].as_str().unwrap().to_owned());
        }
        events
    }

    async fn data(&mut self, line: &str) -> Value {
        let response = self.send(line).await;
        assert_eq!(response["success"], true, "{response}");
        response["data"].clone()
    }
}

/// The role and text of each message of `get_messages`.
fn conversation(messages: &Value) -> Vec<String> {
    messages
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            let text = match &m["content"] {
                Value::String(s) => s.clone(),
                Value::Array(blocks) => blocks.iter().filter_map(|b| b["text"].as_str()).collect(),
                _ => String::new(),
            };
            let role = m["role"].as_str().unwrap();
            // The stub's replies are long; their first word is enough.
            let text = if role == "assistant" {
                text.split_whitespace().next().unwrap_or("").to_owned()
            } else {
                text
            };
            format!("{role}:{text}")
        })
        .collect()
}

#[tokio::test]
async fn a_fork_is_a_new_session_branching_before_the_chosen_message() {
    let mut h = Harness::new(&[]).await;
    h.run("first").await;
    h.run("second").await;
    let old_file = h.data(r#"{"type":"get_state"}"#).await["sessionFile"].clone();
    let listed = h.data(r#"{"type":"get_fork_messages"}"#).await;
    let messages = listed["messages"].as_array().unwrap();
    let texts: Vec<&str> = messages
        .iter()
        .map(|m| m["text"].as_str().unwrap())
        .collect();
    assert_eq!(texts, ["first", "second"]);
    assert_eq!(messages[0].as_object().unwrap().len(), 2, "{listed}");
    let second = messages[1]["entryId"].as_str().unwrap().to_owned();

    let fork = json!({"id": "f", "type": "fork", "entryId": second}).to_string();
    assert_eq!(
        h.send(&fork).await,
        json!({"id": "f", "type": "response", "command": "fork", "success": true,
               "data": {"text": "second", "cancelled": false}})
    );
    let state = h.data(r#"{"type":"get_state"}"#).await;
    assert_ne!(state["sessionFile"], old_file);
    let before = conversation(&h.data(r#"{"type":"get_messages"}"#).await["messages"]);
    assert_eq!(before.len(), 2, "{before:?}");
    assert_eq!(before[0], "user:first");

    // The next prompt continues the branch, in the new file; the old file is untouched.
    h.run("again").await;
    let after = conversation(&h.data(r#"{"type":"get_messages"}"#).await["messages"]);
    assert_eq!(after[..2], before[..]);
    assert_eq!(after[2], "user:again");
    assert_eq!(after.len(), 4);
    let file = std::fs::read_to_string(state["sessionFile"].as_str().unwrap()).unwrap();
    let header: Value = serde_json::from_str(file.lines().next().unwrap()).unwrap();
    assert_eq!(header["parentSession"], old_file);
    let old = std::fs::read_to_string(old_file.as_str().unwrap()).unwrap();
    assert!(!old.contains("again"));
    assert!(file.contains("\"again\"") && !file.contains("\"second\""));
    // The entries keep pi's tree: each one's parent is the entry before it.
    let entries: Vec<Value> = file
        .lines()
        .skip(1)
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    for pair in entries.windows(2) {
        assert_eq!(pair[1]["parentId"], pair[0]["id"], "{file}");
    }

    // An entry that is not a user message cannot be forked from.
    let first_entry = entries[0]["id"].as_str().unwrap();
    let bad = json!({"id": "b", "type": "fork", "entryId": first_entry}).to_string();
    assert_eq!(
        h.send(&bad).await,
        refused("b", "fork", "Invalid entry ID for forking")
    );
}

#[tokio::test]
async fn a_clone_continues_the_whole_branch_in_a_new_file() {
    let mut h = Harness::new(&[]).await;
    h.run("first").await;
    let old_file = h.data(r#"{"type":"get_state"}"#).await["sessionFile"].clone();
    assert_eq!(
        h.send(r#"{"id":"c","type":"clone"}"#).await,
        json!({"id": "c", "type": "response", "command": "clone", "success": true,
               "data": {"cancelled": false}})
    );
    let state = h.data(r#"{"type":"get_state"}"#).await;
    assert_ne!(state["sessionFile"], old_file);
    let cloned = conversation(&h.data(r#"{"type":"get_messages"}"#).await["messages"]);
    assert_eq!(cloned.len(), 2);
    assert_eq!(cloned[0], "user:first");
    // Written at once: it holds a conversation.
    let file = std::fs::read_to_string(state["sessionFile"].as_str().unwrap()).unwrap();
    assert!(file.contains("\"first\""));
    h.run("second").await;
    let after = conversation(&h.data(r#"{"type":"get_messages"}"#).await["messages"]);
    assert_eq!(after.len(), 4);
    let old = std::fs::read_to_string(old_file.as_str().unwrap()).unwrap();
    assert!(!old.contains("\"second\""));
}

#[tokio::test]
async fn export_html_writes_the_page_where_asked_or_by_pis_default_name() {
    let mut h = Harness::new(&[]).await;
    h.run("<script>alert(1)</script>").await;
    let dir = h._dir.path().to_owned();
    assert_eq!(
        h.send(r#"{"id":"e","type":"export_html","outputPath":"out/page.html"}"#)
            .await,
        json!({"id": "e", "type": "response", "command": "export_html", "success": true,
               "data": {"path": "out/page.html"}})
    );
    let html = std::fs::read_to_string(dir.join("out/page.html")).unwrap();
    assert!(
        html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"),
        "{html}"
    );
    assert!(!html.contains("<script"));

    let file = h.data(r#"{"type":"get_state"}"#).await["sessionFile"].clone();
    let stem = std::path::Path::new(file.as_str().unwrap())
        .file_stem()
        .unwrap()
        .to_str()
        .unwrap()
        .to_owned();
    let data = h.data(r#"{"type":"export_html","outputPath":""}"#).await;
    let name = format!("pincer-session-{stem}.html");
    assert_eq!(data, json!({"path": name}));
    assert!(dir.join(&name).is_file());
    // No path at all: the same default.
    assert_eq!(
        h.data(r#"{"type":"export_html"}"#).await,
        json!({"path": name})
    );

    // A path that cannot be written is an error response, not a crash.
    std::fs::write(dir.join("blocker"), "").unwrap();
    let refused_write = h
        .send(r#"{"id":"x","type":"export_html","outputPath":"blocker/page.html"}"#)
        .await;
    assert_eq!(refused_write["success"], false);
    assert!(
        refused_write["error"]
            .as_str()
            .unwrap()
            .starts_with("cannot write the export "),
        "{refused_write}"
    );
}

#[tokio::test]
async fn a_runs_messages_are_in_the_session_file_once_its_events_are_out() {
    let mut h = Harness::new(&[]).await;
    let events = h.run("hello").await;
    assert_eq!(events.first().map(String::as_str), Some("agent_start"));
    let state = h.send(r#"{"id":"s","type":"get_state"}"#).await;
    let path = state["data"]["sessionFile"].as_str().unwrap().to_owned();
    let text = tokio::fs::read_to_string(&path).await.unwrap();
    let entries: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let kinds: Vec<&str> = entries
        .iter()
        .map(|e| match e["type"].as_str().unwrap() {
            "message" => e["message"]["role"].as_str().unwrap(),
            other => other,
        })
        .collect();
    assert_eq!(
        kinds,
        [
            "session",
            "model_change",
            "thinking_level_change",
            "user",
            "assistant"
        ]
    );
}

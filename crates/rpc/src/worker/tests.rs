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
    assert_eq!(
        h.send(r#"{"id":"4","type":"export_html"}"#).await,
        refused(
            "4",
            "export_html",
            "export_html is not supported by pincer rpc (pi's interactive-session features)"
        )
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

#[tokio::test]
async fn a_runs_messages_are_in_the_session_file_once_its_events_are_out() {
    let mut h = Harness::new(&[]).await;
    assert_eq!(
        h.send(r#"{"id":"p","type":"prompt","message":"hello"}"#)
            .await,
        json!({"id": "p", "type": "response", "command": "prompt", "success": true})
    );
    let mut events = Vec::new();
    while events.last().is_none_or(|t| t != "agent_end") {
        let line = h.lines.recv().await.unwrap();
        let value: Value = serde_json::from_str(&line).unwrap();
        events.push(value["type"].as_str().unwrap().to_owned());
    }
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

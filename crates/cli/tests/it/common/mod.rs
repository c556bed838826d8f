//! The harness of the CLI tests: the real `pincer` binary with a temporary `$PINCER_HOME`
//! and `$HOME`, a clean environment (no keys leak in from the machine), and the mock LLM
//! configured as a custom provider.

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

pub mod channels;
pub mod fake_channel;
pub mod gateway;

use std::io::Write;
use std::os::unix::fs::DirBuilderExt as _;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

use pincer_testkit::{Api, Match, MockLlm, Reply, Rule, Scenario};
use serde_json::Value;

pub struct Home {
    pub dir: tempfile::TempDir,
    pub env: Vec<(String, String)>,
}

impl Home {
    pub fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("user")).unwrap();
        Self {
            dir,
            env: Vec::new(),
        }
    }

    /// A new home whose agents answer from `server`'s `primary` model.
    pub fn on_mock(server: &MockLlm) -> Self {
        let home = Self::new();
        home.use_mock(server, "agents: { defaults: { model: \"mock/primary\" } },");
        home
    }

    /// The mock LLM answering by `script`, and a new home on it ([`Home::on_mock`]).
    pub async fn on_script(script: Scenario) -> (MockLlm, Self) {
        let server = mock(script).await;
        let home = Self::on_mock(&server);
        (server, home)
    }

    /// `$PINCER_HOME`.
    pub fn path(&self) -> PathBuf {
        self.dir.path().join("pincer")
    }

    pub fn with_env(mut self, key: &str, value: &str) -> Self {
        self.env.push((key.into(), value.into()));
        self
    }

    pub fn write_config(&self, text: &str) {
        // 0700, as Pincer makes it: a looser home draws a warning on the next command.
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(self.path())
            .unwrap();
        std::fs::write(self.path().join("pincer.json5"), text).unwrap();
    }

    /// A config whose custom provider `mock` (models `primary`, which takes images, and
    /// `backup`, text only) is the server.
    pub fn use_mock(&self, server: &MockLlm, extra: &str) {
        self.write_config(&format!(
            r#"{{
  models: {{ providers: {{ mock: {{
    baseUrl: "{}", api: "openai-completions", apiKey: "mock-key",
    models: [{{ id: "primary", input: ["text", "image"] }}, {{ id: "backup" }}],
  }} }} }},
  {extra}
}}"#,
            server.base_url(Api::OpenAiCompletions)
        ));
    }

    pub fn command(&self, args: &[&str]) -> Command {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_pincer"));
        cmd.args(args)
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("HOME", self.dir.path().join("user"))
            .env("PINCER_HOME", self.path())
            .stdin(Stdio::null());
        for (k, v) in &self.env {
            cmd.env(k, v);
        }
        cmd
    }

    pub fn run(&self, args: &[&str]) -> Run {
        Run(self.command(args).output().unwrap())
    }

    /// [`Home::run`] that must succeed.
    pub fn run_ok(&self, args: &[&str]) -> Run {
        let run = self.run(args);
        run.assert_ok();
        run
    }

    /// Starts `pincer args` with stdin, stdout and stderr piped.
    pub fn spawn_piped(&self, args: &[&str]) -> std::process::Child {
        self.command(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    }

    pub fn run_with_stdin(&self, args: &[&str], stdin: &str) -> Run {
        let mut child = self.spawn_piped(args);
        child
            .stdin
            .take()
            .unwrap()
            .write_all(stdin.as_bytes())
            .unwrap();
        Run(child.wait_with_output().unwrap())
    }

    /// `ask --json …` that must succeed; its result object.
    pub fn ask_json(&self, args: &[&str]) -> Value {
        let mut all = vec!["ask", "--json"];
        all.extend_from_slice(args);
        json_of(&self.run(&all))
    }

    pub fn sessions_dir(&self) -> PathBuf {
        self.path().join("agents/main/sessions")
    }

    /// The names of the files in [`Home::sessions_dir`].
    pub fn session_files(&self) -> Vec<String> {
        std::fs::read_dir(self.sessions_dir())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect()
    }

    /// The transcript of the session that `session` (an `ask --json` result or a
    /// session-index entry) names by its `sessionId`.
    pub fn transcript(&self, session: &Value) -> PathBuf {
        let id = session["sessionId"].as_str().unwrap();
        self.sessions_dir().join(format!("{id}.jsonl"))
    }
}

pub struct Run(pub Output);

impl Run {
    pub fn stdout(&self) -> String {
        String::from_utf8_lossy(&self.0.stdout).into_owned()
    }
    pub fn stderr(&self) -> String {
        String::from_utf8_lossy(&self.0.stderr).into_owned()
    }
    pub fn code(&self) -> i32 {
        self.0.status.code().unwrap_or(-1)
    }
    /// Asserts that the command said each of `parts` on stderr.
    pub fn assert_stderr_has(&self, parts: &[&str]) {
        assert_contains(&self.stderr(), parts);
    }

    /// Asserts that the command exited with `code` and said `part` on stderr.
    pub fn assert_fails(&self, code: i32, part: &str) {
        assert_eq!(self.code(), code, "stderr:\n{}", self.stderr());
        assert!(self.stderr().contains(part), "{}", self.stderr());
    }

    pub fn assert_ok(&self) {
        assert_eq!(
            self.code(),
            0,
            "stdout:\n{}\nstderr:\n{}",
            self.stdout(),
            self.stderr()
        );
    }
}

/// Asserts that `text` (a command's stderr, a reply, …) holds each of `parts`.
pub fn assert_contains(text: &str, parts: &[&str]) {
    for part in parts {
        assert!(text.contains(part), "no {part:?} in:\n{text}");
    }
}

/// The JSON a command that succeeded printed on stdout.
pub fn json_of(run: &Run) -> Value {
    run.assert_ok();
    serde_json::from_str(&run.stdout()).unwrap_or_else(|e| panic!("{e}: {}", run.stdout()))
}

/// Steps the tests' scripts share, on top of the mock's [`Scenario`] builder.
pub trait Script {
    /// `user` draws a call of `tool` with `args`, and the call's result draws `reply`.
    fn tool_turn(self, user: &str, tool: &str, args: Value, reply: &str) -> Self;
}

impl Script for Scenario {
    fn tool_turn(self, user: &str, tool: &str, args: Value, reply: &str) -> Self {
        self.rule(Rule::when(Match::last_user(user)).reply(Reply::tool_call(tool, args)))
            .rule(Rule::when(Match::tool_result(tool)).reply(Reply::text(reply)))
    }
}

/// A slow reply to "long story" (five characters per delta, `delay_ms` apart), for the tests
/// that interrupt a reply while it streams: "once" arrives first, "very long story" last.
pub fn long_story(delay_ms: u64) -> Rule {
    Rule::when(Match::last_user("long story")).reply(
        Reply::text("once upon a time there was a very long story")
            .with_chunk_size(5)
            .with_delay_ms(delay_ms),
    )
}

/// A script that answers each `(user message, reply)` pair's message with its reply.
pub fn replies(pairs: &[(&str, &str)]) -> Scenario {
    answers(
        pairs
            .iter()
            .map(|(user, reply)| (*user, Reply::text(*reply))),
    )
}

/// A script that answers every message containing `part` with `reply`.
pub fn reply_when_containing(part: &str, reply: &str) -> Scenario {
    Scenario::new().rule(Rule::when(Match::last_user_contains(part)).reply(Reply::text(reply)))
}

/// [`replies`] with any kind of reply (a slow stream, a tool call, …).
pub fn answers<'a>(pairs: impl IntoIterator<Item = (&'a str, Reply)>) -> Scenario {
    pairs
        .into_iter()
        .fold(Scenario::new(), |scenario, (user, reply)| {
            scenario.rule(Rule::when(Match::last_user(user)).reply(reply))
        })
}

pub async fn mock(scenario: Scenario) -> MockLlm {
    MockLlm::start(scenario).await.unwrap()
}

/// A fact the memory tests have the agent save, as `memory/2026-11-23.md`.
pub const FACT: &str = "# 2026-11-23\n\nAnn's sister Mia visits on Friday.\n";

/// "remember: Mia visits on Friday" writes [`FACT`] to memory ("Noted."); "when does my
/// sister visit?" searches memory, and the search result draws `answer`.
pub fn remember_and_recall(answer: &str) -> Scenario {
    Scenario::new()
        .tool_turn(
            "remember: Mia visits on Friday",
            "write",
            serde_json::json!({"path": "memory/2026-11-23.md", "content": FACT}),
            "Noted.",
        )
        .tool_turn(
            "when does my sister visit?",
            "memory_search",
            serde_json::json!({"query": "sister visits"}),
            answer,
        )
}

/// A pi agent dir (`$PI_CODING_AGENT_DIR`) in the home's temp dir whose provider `mock`
/// (model `primary`) is `llm`, for tests that run the real pi.
pub fn pi_agent_dir(home: &Home, llm: &MockLlm) -> PathBuf {
    let dir = home.dir.path().join("pi-agent");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("models.json"),
        serde_json::json!({"providers": {"mock": {
            "baseUrl": llm.base_url(Api::OpenAiCompletions), "api": "openai-completions",
            "apiKey": "mock-key",
            "compat": {"supportsDeveloperRole": false, "supportsReasoningEffort": false},
            "models": [{"id": "primary", "contextWindow": 32000, "maxTokens": 4096}]}}})
        .to_string(),
    )
    .unwrap();
    dir
}

/// The content of the last tool result in the model's last request (its JSON text if it is
/// not a string).
pub fn last_tool_result(llm: &MockLlm) -> String {
    let body = llm.requests().last().unwrap().body.clone();
    let messages = body["messages"].as_array().unwrap();
    let tool = messages.iter().rev().find(|m| m["role"] == "tool").unwrap();
    match &tool["content"] {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}

/// File mode bits.
pub use pincer_testkit::files::mode;

/// The roles of the messages of a recorded OpenAI request.
pub fn roles(body: &Value) -> Vec<String> {
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["role"].as_str().unwrap().to_owned())
        .collect()
}

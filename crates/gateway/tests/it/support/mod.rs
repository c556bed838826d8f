//! What the server tests share: a `Runtime` whose turns run on the mock LLM (model
//! `mock/m`), and a server started with it on 127.0.0.1 with a token.

#![allow(dead_code)]

pub mod client;

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::thread::ThreadId;

use futures_util::future::BoxFuture;
use pincer_agent::{AgentConfig, AgentTool, ToolContext, ToolError, ToolOutput, llm_stream_fn};
use pincer_ai::env::MapEnv;
use pincer_ai::{LlmClient, Message, Model, ModelRegistry};
use pincer_automation::heartbeat::HeartbeatSettings;
use pincer_gateway::server::{
    Heartbeats, ModelDefaults, PlanError, Runtime, ServeOptions, TurnRequest, serve,
};
use pincer_store::SessionStore;
use pincer_testkit::{Api, Match, MockLlm, Reply, Rule, Scenario};
use pincer_turns::turn::TurnPlan;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

/// A model that answers `reply` to a prompt containing `asked`.
pub fn answering(asked: &str, reply: &str) -> Scenario {
    Scenario::new().rule(Rule::when(Match::last_user_contains(asked)).reply(Reply::text(reply)))
}

/// A tool that waits `ms` milliseconds (default 300), so a test can act while a turn is
/// inside its tool batch (steering lands at the batch's end).
pub struct SleepTool;

impl AgentTool for SleepTool {
    fn name(&self) -> &str {
        "sleep"
    }
    fn description(&self) -> &str {
        "Wait a while"
    }
    fn parameters(&self) -> &Value {
        static SCHEMA: std::sync::OnceLock<Value> = std::sync::OnceLock::new();
        SCHEMA.get_or_init(|| json!({"type": "object", "properties": {"ms": {"type": "integer"}}}))
    }
    fn execute(
        &self,
        args: Value,
        ctx: ToolContext,
    ) -> BoxFuture<'_, Result<ToolOutput, ToolError>> {
        let ms = args["ms"].as_u64().unwrap_or(300);
        Box::pin(async move {
            tokio::select! {
                () = tokio::time::sleep(std::time::Duration::from_millis(ms)) => Ok(ToolOutput::text("slept")),
                () = ctx.cancel.cancelled() => Err(ToolError::Aborted),
            }
        })
    }
}

/// Agent `main` only, sessions under `root`, every turn on `model` with [`SleepTool`].
pub struct TestRuntime {
    pub model: Model,
    pub client: LlmClient,
    pub root: std::path::PathBuf,
    /// Where agent `main`'s workspace is (HEARTBEAT.md), if it has one.
    pub workspace: Option<std::path::PathBuf>,
    /// The thread each `plan` call ran on.
    pub plan_threads: Arc<Mutex<Vec<ThreadId>>>,
    /// [`test_config`].
    pub config: pincer_config::PincerConfig,
}

/// The configuration the test runtime describes: agent `main` ("Main") on `mock/m` with
/// fallback `mock/gone` (a model nothing knows), provider `mock` with a key and its model
/// `m` ("Mock M").
pub fn test_config() -> pincer_config::PincerConfig {
    serde_json::from_value(json!({
        "agents": {
            "defaults": {"model": {"primary": "mock/m", "fallbacks": ["mock/gone"]}},
            "list": [{"id": "main", "default": true, "name": "Main"}],
        },
        "models": {"providers": {"mock": {
            "baseUrl": "http://127.0.0.1:9/v1", "api": "openai-completions", "apiKey": "k",
            "models": [{"id": "m", "name": "Mock M"}],
        }}},
    }))
    .unwrap()
}

impl TestRuntime {
    /// The turn's user message as the binary's runtime makes it: the text, its media named
    /// and its images sent (model `m` takes images).
    fn user_message(&self, request: &TurnRequest) -> Message {
        if request.media.is_empty() {
            return Message::user(request.message.clone());
        }
        let workspace = self.workspace.clone().unwrap_or_else(|| self.root.clone());
        let takes_images = self.model.input.contains(&pincer_ai::InputKind::Image);
        let (content, _) = pincer_turns::media_input::user_content(
            &workspace,
            &request.message,
            &request.media,
            takes_images,
            &self.media_limits(),
        );
        Message::User(pincer_ai::UserMessage {
            content,
            timestamp: pincer_ai::now_ms(),
        })
    }
}

impl Runtime for TestRuntime {
    fn default_agent_id(&self) -> String {
        "main".into()
    }
    fn is_known_agent(&self, id: &str) -> bool {
        id == "main"
    }
    fn main_session_key(&self, agent: &str) -> String {
        format!("agent:{agent}:main")
    }
    fn sessions(&self, agent: &str) -> SessionStore {
        SessionStore::new(self.root.join(agent))
    }
    fn model_defaults(&self, _: &str) -> ModelDefaults {
        ModelDefaults {
            provider: "mock".into(),
            model: "m".into(),
            context_tokens: 128_000,
        }
    }
    fn models(&self) -> Vec<Model> {
        vec![self.model.clone()]
    }
    fn config(&self) -> &pincer_config::PincerConfig {
        &self.config
    }
    fn skills(&self, _: &str) -> pincer_turns::skills::SkillSet {
        let Some(workspace) = &self.workspace else {
            return pincer_turns::skills::SkillSet::default();
        };
        let dirs = pincer_turns::skills::SkillDirs::new(
            workspace,
            None,
            &self.root,
            &pincer_config::SkillsConfig::default(),
        );
        pincer_turns::skills::load_skills(&dirs)
    }
    fn log_file(&self) -> Option<std::path::PathBuf> {
        Some(self.root.join("gateway.log"))
    }
    fn tools(&self, _: &str) -> Vec<Value> {
        vec![json!({"name": "time.now", "description": "now", "inputSchema": {}})]
    }
    fn config_redacted(&self) -> (String, Value) {
        (
            "/tmp/pincer.json5".into(),
            json!({"models": {"providers": {"mock": {"apiKey": "abc***xyz"}}}}),
        )
    }
    fn plan(&self, request: TurnRequest) -> Result<TurnPlan, PlanError> {
        self.plan_threads
            .lock()
            .unwrap()
            .push(std::thread::current().id());
        let input = self.user_message(&request);
        let plan = TurnPlan {
            store: self.sessions(&request.agent_id),
            session_key: request.session_key,
            new_session: false,
            agent: AgentConfig {
                tools: vec![Arc::new(SleepTool)],
                ..AgentConfig::new(self.model.clone(), llm_stream_fn(self.client.clone()))
            },
            input: vec![input],
            session_patch: None,
            retention: None,
            abort: None,
            rpc: None,
            memory: None,
        };
        Ok(plan)
    }
    fn workspace(&self, _: &str) -> Option<std::path::PathBuf> {
        self.workspace.clone()
    }
}

/// A server on a free loopback port, its mock LLM and its session directory.
pub struct Running {
    pub addr: SocketAddr,
    pub stop: CancellationToken,
    pub task: tokio::task::JoinHandle<()>,
    pub llm: MockLlm,
    /// The thread each `plan` call of the server's runtime ran on.
    pub plan_threads: Arc<Mutex<Vec<ThreadId>>>,
    pub dir: tempfile::TempDir,
    /// The agents' heartbeat clocks; `main` has one that is off (it counts requests)
    /// unless the test configured another.
    pub heartbeats: Heartbeats,
}

/// Starts the mock LLM with `scenario` and a server that needs `token`.
pub async fn start_server(scenario: Scenario, token: &str) -> Running {
    start_server_with(scenario, token, |_| {}).await
}

/// [`start_server`] with `configure` applied to the server's options first.
pub async fn start_server_with(
    scenario: Scenario,
    token: &str,
    configure: impl FnOnce(&mut ServeOptions),
) -> Running {
    start_server_configured(scenario, token, test_config(), configure).await
}

/// [`start_server_with`] on a runtime that describes `config` instead of [`test_config`]
/// (its `agents.defaults.mediaMaxMb` is the runtime's media limit).
pub async fn start_server_configured(
    scenario: Scenario,
    token: &str,
    config: pincer_config::PincerConfig,
    configure: impl FnOnce(&mut ServeOptions),
) -> Running {
    let llm = MockLlm::start(scenario).await.unwrap();
    let mut registry = ModelRegistry::builtin().unwrap();
    registry
        .apply_models_config(&format!(
            r#"{{providers: {{mock: {{baseUrl: "{}", api: "openai-completions", apiKey: "k", models: [{{id: "m", input: ["text", "image"]}}]}}}}}}"#,
            llm.base_url(Api::OpenAiCompletions)
        ))
        .unwrap();
    let model = registry.resolve("mock/m").unwrap().clone();
    let client = LlmClient::with_env(Arc::new(MapEnv::default()));
    client.set_api_key("mock", "k");
    let dir = tempfile::tempdir().unwrap();
    let plan_threads = Arc::new(Mutex::new(Vec::new()));
    let runtime = Arc::new(TestRuntime {
        model,
        client,
        root: dir.path().to_path_buf(),
        workspace: Some(dir.path().join("workspace")),
        plan_threads: Arc::clone(&plan_threads),
        config,
    });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let stop = CancellationToken::new();
    let mut options = ServeOptions::new(Some(token.into()), runtime);
    options.heartbeat = vec![(
        "main".into(),
        HeartbeatSettings {
            every_ms: 0,
            ..HeartbeatSettings::default()
        },
    )];
    configure(&mut options);
    let heartbeats = options.heartbeats.clone();
    let task = tokio::spawn({
        let stop = stop.clone();
        async move { serve(listener, options, stop).await.unwrap() }
    });
    Running {
        addr,
        stop,
        task,
        llm,
        plan_threads,
        dir,
        heartbeats,
    }
}

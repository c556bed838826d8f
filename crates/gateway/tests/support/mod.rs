//! What the server tests share: a `Runtime` whose turns run on the mock LLM (model
//! `mock/m`), and a server started with it on 127.0.0.1 with a token.

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::net::SocketAddr;
use std::sync::Arc;

use futures_util::future::BoxFuture;
use pincer_agent::{AgentConfig, llm_stream_fn};
use pincer_ai::env::MapEnv;
use pincer_ai::{LlmClient, Message, Model, ModelRegistry};
use pincer_gateway::server::{ModelDefaults, Runtime, ServeOptions, TurnRequest, serve};
use pincer_gateway::turn::TurnPlan;
use pincer_store::SessionStore;
use pincer_testkit::{Api, MockLlm, Scenario};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

/// Agent `main` only, sessions under `root`, every turn on `model`.
pub struct TestRuntime {
    pub model: Model,
    pub client: LlmClient,
    pub root: std::path::PathBuf,
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
    fn models(&self) -> Vec<Value> {
        vec![json!({"id": "mock/m", "name": "m", "provider": "mock", "contextWindow": 128_000})]
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
    fn plan(&self, request: TurnRequest) -> BoxFuture<'static, Result<TurnPlan, String>> {
        let plan = TurnPlan {
            store: self.sessions(&request.agent_id),
            session_key: request.session_key,
            new_session: false,
            agent: AgentConfig::new(self.model.clone(), llm_stream_fn(self.client.clone())),
            input: vec![Message::user(request.message)],
            session_patch: None,
            retention: None,
            abort: None,
        };
        Box::pin(async move { Ok(plan) })
    }
}

/// A server on a free loopback port, its mock LLM and its session directory.
pub struct Running {
    pub addr: SocketAddr,
    pub stop: CancellationToken,
    pub task: tokio::task::JoinHandle<()>,
    pub llm: MockLlm,
    pub dir: tempfile::TempDir,
}

/// Starts the mock LLM with `scenario` and a server that needs `token`.
pub async fn start_server(scenario: Scenario, token: &str) -> Running {
    let llm = MockLlm::start(scenario).await.unwrap();
    let mut registry = ModelRegistry::builtin().unwrap();
    registry
        .apply_models_config(&format!(
            r#"{{providers: {{mock: {{baseUrl: "{}", api: "openai-completions", apiKey: "k", models: [{{id: "m"}}]}}}}}}"#,
            llm.base_url(Api::OpenAiCompletions)
        ))
        .unwrap();
    let model = registry.resolve("mock/m").unwrap().clone();
    let client = LlmClient::with_env(Arc::new(MapEnv::default()));
    client.set_api_key("mock", "k");
    let dir = tempfile::tempdir().unwrap();
    let runtime = Arc::new(TestRuntime {
        model,
        client,
        root: dir.path().to_path_buf(),
    });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let stop = CancellationToken::new();
    let options = ServeOptions::new(Some(token.into()), runtime);
    let task = tokio::spawn({
        let stop = stop.clone();
        async move { serve(listener, options, stop).await.unwrap() }
    });
    Running {
        addr,
        stop,
        task,
        llm,
        dir,
    }
}

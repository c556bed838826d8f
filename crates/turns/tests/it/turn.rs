//! Turns of persistent sessions against the mock LLM: the transcript and index after each
//! turn, context carried across turns, errors that keep the session, and failover across
//! credentials and models on injected failures.

use std::sync::{Arc, Mutex};

use futures_util::future::BoxFuture;
use pincer_agent::{AgentConfig, AgentEvent};
use pincer_ai::env::MapEnv;
use pincer_ai::{ErrorKind, LlmClient, Message, Model, ModelRegistry, StopReason};
use pincer_store::{EntryBody, SessionStore};
use pincer_testkit::{Api, Fault, Match, MockLlm, Reply, Rule, Scenario};
use pincer_turns::failover::{
    Attempts, Credential, CredentialSource, EnvCredentials, failover_stream_fn,
};
use pincer_turns::turn::{TurnPlan, run_turn};

struct Setup {
    server: MockLlm,
    registry: ModelRegistry,
    client: LlmClient,
    _dir: tempfile::TempDir,
    store: SessionStore,
}

async fn setup(scenario: Scenario) -> Setup {
    let server = MockLlm::start(scenario).await.unwrap();
    let mut registry = ModelRegistry::builtin().unwrap();
    registry
        .apply_models_config(&format!(
            r#"{{providers: {{
                mock: {{baseUrl: "{0}", api: "openai-completions", apiKey: "env-key",
                        models: [{{id: "primary"}}, {{id: "backup"}}]}},
                other: {{baseUrl: "{0}", api: "openai-completions", apiKey: "other-key",
                        models: [{{id: "spare"}}]}} }} }}"#,
            server.base_url(Api::OpenAiCompletions)
        ))
        .unwrap();
    let client = LlmClient::with_env(Arc::new(MapEnv::default()));
    for provider in ["mock", "other"] {
        let key = registry.configured_key(provider).unwrap();
        client.set_api_key(provider, key.resolve(provider, &MapEnv::default()).unwrap());
    }
    let dir = tempfile::tempdir().unwrap();
    let store = SessionStore::new(dir.path().join("sessions")).with_cwd("/work");
    Setup {
        server,
        registry,
        client,
        _dir: dir,
        store,
    }
}

impl Setup {
    fn model(&self, reference: &str) -> Model {
        self.registry.resolve(reference).unwrap().clone()
    }

    fn plan(&self, key: &str, text: &str, config: AgentConfig) -> TurnPlan {
        TurnPlan {
            store: self.store.clone(),
            session_key: key.into(),
            new_session: false,
            agent: config,
            input: vec![Message::user(text)],
            session_patch: None,
            retention: None,
            abort: None,
            rpc: None,
            memory: None,
        }
    }

    fn config(
        &self,
        fallbacks: &[&str],
        creds: Arc<dyn CredentialSource>,
    ) -> (AgentConfig, Attempts) {
        let attempts = Attempts::default();
        let stream = failover_stream_fn(
            self.client.clone(),
            fallbacks.iter().map(|r| self.model(r)).collect(),
            creds,
            attempts.clone(),
        );
        (
            AgentConfig::new(self.model("mock/primary"), stream),
            attempts,
        )
    }
}

/// [`setup`] on `scenario`, and its config with keys from the environment and
/// `fallbacks`.
async fn setup_with_env_keys(
    scenario: Scenario,
    fallbacks: &[&str],
) -> (Setup, AgentConfig, Attempts) {
    let s = setup(scenario).await;
    let (config, attempts) = s.config(fallbacks, Arc::new(EnvCredentials));
    (s, config, attempts)
}

fn kinds(store: &SessionStore, key: &str) -> Vec<String> {
    let session = store.resume(key).unwrap();
    session
        .transcript
        .entries()
        .iter()
        .map(|e| match &e.body {
            EntryBody::Message(m) => format!("message:{}", m.message.role()),
            other => other.kind().to_owned(),
        })
        .collect()
}

#[tokio::test]
async fn turns_persist_and_the_next_turn_sees_the_conversation() {
    let scenario = Scenario::new()
        .rule(Rule::when(Match::last_user("hi")).reply(Reply::text("Hello!")))
        .rule(Rule::when(Match::last_user("again")).reply(Reply::text("Still here.")));
    let (s, config, _) = setup_with_env_keys(scenario, &[]).await;
    let mut seen = Vec::new();
    let first = run_turn(s.plan("agent:main:main", "hi", config.clone()), |e| {
        seen.push(e.kind())
    })
    .await
    .unwrap();
    assert!(first.created);
    assert_eq!(first.reply.as_ref().unwrap().text(), "Hello!");
    assert!(seen.contains(&"message_update"));
    let second = run_turn(s.plan("agent:main:main", "again", config), |_| {})
        .await
        .unwrap();
    assert!(!second.created);
    assert_eq!(second.session_id, first.session_id);
    assert_eq!(second.reply.unwrap().text(), "Still here.");
    // The second request carried the first exchange.
    let body = &s.server.requests()[1].body;
    let roles: Vec<&str> = body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(roles, ["user", "assistant", "user"]);
    assert_eq!(
        kinds(&s.store, "agent:main:main"),
        [
            "model_change",
            "thinking_level_change",
            "message:user",
            "message:assistant",
            "message:user",
            "message:assistant"
        ]
    );
    let entry = s
        .store
        .index()
        .unwrap()
        .get("agent:main:main")
        .unwrap()
        .clone();
    assert!(entry.input_tokens.unwrap() > 0 && entry.output_tokens.unwrap() > 0);
}

#[tokio::test]
async fn an_llm_error_is_recorded_and_the_session_continues() {
    let scenario = Scenario::new()
        .rule(Rule::when(Match::last_user("boom")).fault(Fault::status(400)))
        .rule(Rule::when(Match::last_user("ok?")).reply(Reply::text("Yes.")));
    let (s, config, _) = setup_with_env_keys(scenario, &[]).await;
    let failed = run_turn(s.plan("k", "boom", config.clone()), |_| {})
        .await
        .unwrap();
    assert_eq!(
        failed.reply.as_ref().unwrap().stop_reason,
        StopReason::Error
    );
    assert!(
        failed.error().unwrap().contains("400"),
        "{:?}",
        failed.error()
    );
    let next = run_turn(s.plan("k", "ok?", config), |_| {}).await.unwrap();
    assert_eq!(next.session_id, failed.session_id, "no silent reset");
    assert_eq!(next.reply.unwrap().text(), "Yes.");
}

#[tokio::test]
async fn new_session_keeps_the_old_transcript() {
    let (s, config, _) = setup_with_env_keys(Scenario::new(), &[]).await;
    let first = run_turn(s.plan("k", "one", config.clone()), |_| {})
        .await
        .unwrap();
    let mut plan = s.plan("k", "two", config);
    plan.new_session = true;
    let second = run_turn(plan, |_| {}).await.unwrap();
    assert_ne!(second.session_id, first.session_id);
    assert!(second.created);
    let kept = std::fs::read_dir(s.store.root())
        .unwrap()
        .filter_map(|e| e.ok())
        .any(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            name.starts_with(&format!("{}.jsonl.reset.", first.session_id))
        });
    assert!(kept, "the old transcript is kept beside the new one");
    // The new session's request has only the new message.
    let last = s.server.requests().last().unwrap().body.clone();
    assert_eq!(last["messages"].as_array().unwrap().len(), 1);
}

/// Two profiles of `mock`; records what the failover loop reported.
#[derive(Default)]
struct TwoProfiles {
    log: Mutex<Vec<String>>,
}

impl CredentialSource for TwoProfiles {
    fn candidates(&self, provider: &str) -> BoxFuture<'static, Result<Vec<Credential>, String>> {
        let list = if provider == "mock" {
            vec![
                Credential {
                    profile_id: Some("mock:a".into()),
                    secret: Some("key-a".into()),
                },
                Credential {
                    profile_id: Some("mock:b".into()),
                    secret: Some("key-b".into()),
                },
            ]
        } else {
            Vec::new()
        };
        Box::pin(async move { Ok(list) })
    }
    fn succeeded(&self, _: &str, profile_id: &str) -> BoxFuture<'static, ()> {
        self.log.lock().unwrap().push(format!("ok {profile_id}"));
        Box::pin(async {})
    }
    fn failed(
        &self,
        _: &str,
        profile_id: &str,
        kind: &ErrorKind,
        _: &str,
    ) -> BoxFuture<'static, ()> {
        self.log
            .lock()
            .unwrap()
            .push(format!("{} {profile_id}", kind.code()));
        Box::pin(async {})
    }
}

#[tokio::test]
async fn a_rate_limited_profile_rotates_to_the_next() {
    let scenario = Scenario::new()
        .rule(
            Rule::when(Match::last_user("hi"))
                .times(1)
                .fault(Fault::status(429).retry_after("30")),
        )
        .rule(Rule::when(Match::last_user("hi")).reply(Reply::text("from b")));
    let s = setup(scenario).await;
    let creds = Arc::new(TwoProfiles::default());
    let (config, attempts) = s.config(&[], creds.clone());
    let outcome = run_turn(s.plan("k", "hi", config), |_| {}).await.unwrap();
    assert_eq!(outcome.reply.unwrap().text(), "from b");
    assert_eq!(
        *creds.log.lock().unwrap(),
        ["rate_limited mock:a", "ok mock:b"]
    );
    let list = attempts.list();
    assert_eq!(list.len(), 1);
    assert_eq!(list[0].profile_id.as_deref(), Some("mock:a"));
    let answer = attempts.answered().unwrap();
    assert_eq!(
        (answer.model.as_str(), answer.profile_id.as_deref()),
        ("mock/primary", Some("mock:b"))
    );
    let auth: Vec<String> = s
        .server
        .requests()
        .iter()
        .map(|r| r.header("authorization").unwrap_or_default().to_owned())
        .collect();
    assert_eq!(auth, ["Bearer key-a", "Bearer key-b"]);
}

#[tokio::test]
async fn a_failing_model_falls_back_and_the_reply_says_which_answered() {
    let scenario = Scenario::new()
        .rule(Rule::when(Match::model("primary")).fault(Fault::status(503)))
        .rule(Rule::when(Match::model("spare")).reply(Reply::text("spare here")));
    let (s, config, attempts) = setup_with_env_keys(scenario, &["other/spare"]).await;
    let mut events = Vec::new();
    let outcome = run_turn(s.plan("k", "hi", config), |e| {
        if let AgentEvent::MessageEnd { message } = e {
            events.push(message.role().to_owned());
        }
    })
    .await
    .unwrap();
    let reply = outcome.reply.unwrap();
    assert_eq!(
        (reply.provider.as_str(), reply.model.as_str()),
        ("other", "spare")
    );
    assert_eq!(reply.text(), "spare here");
    assert_eq!(
        events,
        ["user", "assistant"],
        "the failed attempt never reached the agent"
    );
    let list = attempts.list();
    assert_eq!(list.len(), 1);
    assert_eq!(
        (list[0].model.as_str(), list[0].kind),
        ("mock/primary", "server")
    );
}

#[tokio::test]
async fn when_everything_fails_the_error_lists_every_attempt() {
    let scenario =
        Scenario::new().rule(Rule::when(Match::last_user("hi")).fault(Fault::status(429)));
    let (s, mut config, _) = setup_with_env_keys(scenario, &["other/spare"]).await;
    config.stream_options.retry.max_retries = 0;
    let outcome = run_turn(s.plan("k", "hi", config), |_| {}).await.unwrap();
    let error = outcome.error().unwrap();
    assert!(
        error.starts_with("every model and credential failed: mock/primary: ")
            && error.contains("; other/spare: "),
        "{error}"
    );
}

#[tokio::test]
async fn an_aborted_turn_keeps_the_partial_reply() {
    let scenario = Scenario::new().rule(
        Rule::when(Match::last_user("long")).reply(
            Reply::text("one two three four five six seven eight")
                .with_chunk_size(4)
                .with_delay_ms(40),
        ),
    );
    let (s, config, _) = setup_with_env_keys(scenario, &[]).await;
    let abort = pincer_ai::CancellationToken::new();
    let mut plan = s.plan("k", "long", config);
    plan.abort = Some(abort.clone());
    let mut started = false;
    let outcome = run_turn(plan, |e| {
        if !started && matches!(e, AgentEvent::MessageUpdate { .. }) {
            started = true;
            abort.cancel();
        }
    })
    .await
    .unwrap();
    let reply = outcome.reply.unwrap();
    assert_eq!(reply.stop_reason, StopReason::Aborted);
    // The transcript has the aborted reply, so the next turn sees what was said.
    let session = s.store.resume("k").unwrap();
    let last = session.transcript.context().pop().unwrap();
    assert!(matches!(last, Message::Assistant(a) if a.stop_reason == StopReason::Aborted));
}

/// A tool that waits (up to 10 s) until the session's transcript on disk holds the call
/// that started it, and answers whether it saw it.
struct WaitsForItsCall {
    store: SessionStore,
    key: String,
}

impl pincer_agent::AgentTool for WaitsForItsCall {
    fn name(&self) -> &str {
        "wait_for_call"
    }
    fn description(&self) -> &str {
        "Waits until its own call is in the transcript file."
    }
    fn parameters(&self) -> &serde_json::Value {
        &serde_json::Value::Null
    }
    fn execute(
        &self,
        _args: serde_json::Value,
        _ctx: pincer_agent::ToolContext,
    ) -> BoxFuture<'_, Result<pincer_agent::ToolOutput, pincer_agent::ToolError>> {
        Box::pin(async move {
            let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
            let on_disk = |store: &SessionStore, key: &str| {
                kinds(store, key).contains(&"message:assistant".to_owned())
            };
            while !on_disk(&self.store, &self.key) {
                if std::time::Instant::now() > deadline {
                    return Ok(pincer_agent::ToolOutput::text("not on disk"));
                }
                tokio::time::sleep(std::time::Duration::from_millis(5)).await;
            }
            Ok(pincer_agent::ToolOutput::text("on disk"))
        })
    }
}

#[tokio::test]
async fn a_tool_call_is_on_disk_while_its_tool_runs_and_every_message_after_the_turn() {
    let scenario = Scenario::new()
        .rule(
            Rule::when(Match::last_user("check"))
                .reply(Reply::tool_call("wait_for_call", serde_json::json!({}))),
        )
        .rule(Rule::when(Match::tool_result("wait_for_call")).reply(Reply::text("Checked.")));
    let (s, mut config, _) = setup_with_env_keys(scenario, &[]).await;
    let key = "agent:main:main";
    config.tools = vec![Arc::new(WaitsForItsCall {
        store: s.store.clone(),
        key: key.to_owned(),
    })];
    let outcome = run_turn(s.plan(key, "check", config), |_| {})
        .await
        .unwrap();
    assert_eq!(outcome.reply.unwrap().text(), "Checked.");
    // The reply without tool calls went with the close; everything is there, in order.
    assert_eq!(
        kinds(&s.store, key),
        [
            "model_change",
            "thinking_level_change",
            "message:user",
            "message:assistant",
            "message:toolResult",
            "message:assistant"
        ]
    );
    let session = s.store.resume(key).unwrap();
    let result = session
        .transcript
        .context()
        .into_iter()
        .find_map(|m| match m {
            Message::ToolResult(r) => match r.content.as_slice() {
                [pincer_ai::ContentBlock::Text(t)] => Some(t.text.clone()),
                _ => None,
            },
            _ => None,
        });
    assert_eq!(result.as_deref(), Some("on disk"));
}

/// One profile of `mock` whose key the provider may refuse; renewing gives `key-a2` once.
#[derive(Default)]
struct RenewableProfile {
    log: Mutex<Vec<String>>,
}

impl CredentialSource for RenewableProfile {
    fn candidates(&self, provider: &str) -> BoxFuture<'static, Result<Vec<Credential>, String>> {
        let list = if provider == "mock" {
            vec![Credential {
                profile_id: Some("mock:a".into()),
                secret: Some("key-a".into()),
            }]
        } else {
            Vec::new()
        };
        Box::pin(async move { Ok(list) })
    }
    fn succeeded(&self, _: &str, profile_id: &str) -> BoxFuture<'static, ()> {
        self.log.lock().unwrap().push(format!("ok {profile_id}"));
        Box::pin(async {})
    }
    fn failed(&self, _: &str, id: &str, kind: &ErrorKind, _: &str) -> BoxFuture<'static, ()> {
        self.log
            .lock()
            .unwrap()
            .push(format!("{} {id}", kind.code()));
        Box::pin(async {})
    }
    fn renew(
        &self,
        _: &str,
        profile_id: Option<&str>,
        rejected: &pincer_base::Secret,
    ) -> BoxFuture<'static, Option<Credential>> {
        let mut log = self.log.lock().unwrap();
        log.push(format!("renew {}", rejected.expose()));
        let renewed = Credential {
            profile_id: profile_id.map(str::to_owned),
            secret: Some("key-a2".into()),
        };
        Box::pin(async move { Some(renewed) })
    }
}

#[tokio::test]
async fn a_refused_key_is_renewed_once_then_the_refusal_is_final() {
    let scenario = Scenario::new()
        .rule(
            Rule::when(Match::last_user("hi"))
                .times(1)
                .fault(Fault::status(401)),
        )
        .rule(Rule::when(Match::last_user("hi")).reply(Reply::text("renewed")))
        .rule(Rule::when(Match::last_user("again")).fault(Fault::status(401)));
    let s = setup(scenario).await;
    let creds = Arc::new(RenewableProfile::default());
    let (config, _) = s.config(&[], creds.clone());
    let outcome = run_turn(s.plan("k", "hi", config.clone()), |_| {})
        .await
        .unwrap();
    assert_eq!(outcome.reply.unwrap().text(), "renewed");
    assert_eq!(
        *creds.log.lock().unwrap(),
        ["auth mock:a", "renew key-a", "ok mock:a"]
    );

    // Refused again after renewing: no third try.
    creds.log.lock().unwrap().clear();
    let outcome = run_turn(s.plan("k", "again", config), |_| {})
        .await
        .unwrap();
    assert_eq!(outcome.reply.unwrap().stop_reason, StopReason::Error);
    assert_eq!(
        *creds.log.lock().unwrap(),
        ["auth mock:a", "renew key-a", "auth mock:a"]
    );
    let auth: Vec<String> = s
        .server
        .requests()
        .iter()
        .map(|r| r.header("authorization").unwrap_or_default().to_owned())
        .collect();
    assert_eq!(
        auth,
        [
            "Bearer key-a",
            "Bearer key-a2",
            "Bearer key-a",
            "Bearer key-a2"
        ]
    );
}

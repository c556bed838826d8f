//! The agent loop against the mock LLM server over real HTTP: event order, parallel tools
//! finishing out of order, steering, follow-ups, abort mid-stream and mid-tool, invalid
//! arguments, unknown tools, hooks, busy prompts, truncated tool calls.

#![allow(clippy::expect_used)]

use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::FutureExt;
use pincer_agent::{
    AfterToolCall, Agent, AgentConfig, AgentError, AgentEvent, BeforeToolCall, ToolContext,
    ToolError, ToolOutput, TypedTool, llm_stream_fn, typed,
};
use pincer_ai::env::MapEnv;
use pincer_ai::{LlmClient, Message, StopReason};
use pincer_testkit::{Match, MockLlm, Reply, Rule, Scenario, StopReason as MockStop};
use serde::Deserialize;
use serde_json::json;
use tokio::sync::mpsc::UnboundedReceiver;
use tokio::task::JoinHandle;

use crate::common::{first_tool_result, last_assistant, mock_anthropic};

/// A scenario in which "go" is answered with `reply` and every `sleep` result with `after`.
fn go_then(reply: Reply, after: &str) -> Scenario {
    Scenario::new()
        .rule(Rule::when(Match::tool_result("sleep")).reply(Reply::text(after)))
        .rule(Rule::when(Match::last_user("go")).reply(reply))
}

/// A mock server and an agent config whose Anthropic model talks to it.
async fn config_with(
    scenario: Scenario,
    tools: Vec<Arc<dyn pincer_agent::AgentTool>>,
) -> (AgentConfig, MockLlm) {
    let (server, model, client) = mock_anthropic(scenario).await;
    let mut config = AgentConfig::new(model, llm_stream_fn(client));
    config.system_prompt = "You are a test agent.".into();
    config.tools = tools;
    (config, server)
}

async fn agent_with(
    scenario: Scenario,
    tools: Vec<Arc<dyn pincer_agent::AgentTool>>,
) -> (Agent, MockLlm) {
    let (config, server) = config_with(scenario, tools).await;
    (Agent::new(config), server)
}

fn drain(rx: &mut UnboundedReceiver<Arc<AgentEvent>>) -> Vec<Arc<AgentEvent>> {
    let mut out = Vec::new();
    while let Ok(e) = rx.try_recv() {
        out.push(e);
    }
    out
}

/// Wait until an event matching `wanted` arrives.
async fn wait_for(
    rx: &mut UnboundedReceiver<Arc<AgentEvent>>,
    wanted: impl Fn(&AgentEvent) -> bool,
) {
    while let Some(event) = rx.recv().await {
        if wanted(&event) {
            return;
        }
    }
    panic!("the agent's event stream ended first");
}

/// Text and error flag of every tool result in the conversation, in order.
fn tool_results(agent: &Agent) -> Vec<(String, bool)> {
    agent
        .state()
        .messages
        .iter()
        .filter_map(|m| match m {
            Message::ToolResult(r) => Some((
                ToolOutput {
                    content: r.content.clone(),
                    details: None,
                }
                .text_content(),
                r.is_error,
            )),
            _ => None,
        })
        .collect()
}

/// Runs `agent.prompt(text)` in a task of its own, so the test can act while it runs.
fn prompt_in_task(agent: &Agent, text: &'static str) -> JoinHandle<Result<(), AgentError>> {
    let runner = agent.clone();
    tokio::spawn(async move { runner.prompt(text).await })
}

/// A reply calling `sleep` once per `(ms, label)`, in order.
fn sleeps(calls: &[(u64, &str)]) -> Reply {
    calls.iter().fold(Reply::empty(), |reply, (ms, label)| {
        reply.with_tool_call("sleep", json!({"ms": ms, "label": label}))
    })
}

/// The agent with the `sleep` tool for `scenario`, prompted "go" in a task of its own, once
/// its events have reached one that `reached` matches.
async fn going_until(
    scenario: Scenario,
    reached: impl Fn(&AgentEvent) -> bool,
) -> (Agent, MockLlm, JoinHandle<Result<(), AgentError>>) {
    let (agent, server) = agent_with(scenario, vec![typed(Sleep)]).await;
    let mut rx = agent.subscribe();
    let run = prompt_in_task(&agent, "go");
    wait_for(&mut rx, reached).await;
    (agent, server, run)
}

/// Asserts that the agent's last error mentions `part`.
fn assert_error_mentions(agent: &Agent, part: &str) {
    let error = agent.state().error;
    assert!(
        error.as_deref().is_some_and(|e| e.contains(part)),
        "{error:?}"
    );
}

/// How many of `events` are of `kind`.
fn count(events: &[Arc<AgentEvent>], kind: &str) -> usize {
    kinds(events).iter().filter(|k| **k == kind).count()
}

fn kinds(events: &[Arc<AgentEvent>]) -> Vec<&'static str> {
    events
        .iter()
        .filter(|e| !matches!(***e, AgentEvent::MessageUpdate { .. }))
        .map(|e| e.kind())
        .collect()
}

#[derive(Deserialize, schemars::JsonSchema)]
struct SleepArgs {
    ms: u64,
    label: String,
}

/// Sleeps, then returns its label; honours cancellation.
struct Sleep;

impl TypedTool for Sleep {
    type Args = SleepArgs;
    const NAME: &'static str = "sleep";
    const DESCRIPTION: &'static str = "Sleep for ms milliseconds";
    async fn run(&self, args: SleepArgs, ctx: ToolContext) -> Result<ToolOutput, ToolError> {
        ctx.update(ToolOutput::text(format!("{} sleeping", args.label)));
        tokio::select! {
            () = tokio::time::sleep(Duration::from_millis(args.ms)) => Ok(ToolOutput::text(format!("{} woke", args.label))),
            () = ctx.cancel.cancelled() => Err(ToolError::Aborted),
        }
    }
}

#[tokio::test]
async fn a_text_turn_emits_pi_events_in_order() {
    let (agent, _server) = agent_with(
        Scenario::new().default_reply(Reply::text("Hello there")),
        vec![],
    )
    .await;
    let mut rx = agent.subscribe();
    agent.prompt("hi").await.unwrap();
    let events = drain(&mut rx);
    assert_eq!(
        kinds(&events),
        [
            "agent_start",
            "turn_start",
            "message_start",
            "message_end",
            "message_start",
            "message_end",
            "turn_end",
            "agent_end"
        ]
    );
    assert!(
        events
            .iter()
            .any(|e| matches!(**e, AgentEvent::MessageUpdate { .. }))
    );
    let state = agent.state();
    assert_eq!(state.messages.len(), 2);
    let Message::Assistant(reply) = &state.messages[1] else {
        panic!()
    };
    assert_eq!(reply.text(), "Hello there");
    assert!(!state.is_streaming);
    assert_eq!(state.error, None);
    let AgentEvent::AgentEnd { messages } = &**events.last().unwrap() else {
        panic!()
    };
    assert_eq!(messages.len(), 2);
}

#[tokio::test]
async fn parallel_tools_finish_out_of_order_but_results_keep_call_order() {
    let scenario = go_then(sleeps(&[(400, "slow"), (10, "fast")]), "both done");
    let (agent, server) = agent_with(scenario, vec![typed(Sleep)]).await;
    let mut rx = agent.subscribe();
    agent.prompt("go").await.unwrap();
    let events = drain(&mut rx);
    let ends: Vec<String> = events
        .iter()
        .filter_map(|e| match &**e {
            AgentEvent::ToolExecutionEnd { result, .. } => Some(result.text_content()),
            _ => None,
        })
        .collect();
    assert_eq!(
        ends,
        ["fast woke", "slow woke"],
        "ends arrive as tools finish"
    );
    let updates = events
        .iter()
        .filter(|e| matches!(***e, AgentEvent::ToolExecutionUpdate { .. }))
        .count();
    assert_eq!(updates, 2);
    let state = agent.state();
    let results: Vec<String> = state
        .messages
        .iter()
        .filter_map(|m| match m {
            Message::ToolResult(r) => Some(
                ToolOutput {
                    content: r.content.clone(),
                    details: None,
                }
                .text_content(),
            ),
            _ => None,
        })
        .collect();
    assert_eq!(
        results,
        ["slow woke", "fast woke"],
        "result messages keep call order"
    );
    let last = last_assistant(&state.messages);
    assert_eq!(last.text(), "both done");
    assert_eq!(count(&events, "turn_start"), 2);
    // The second request carried both results, in call order.
    let second = &server.requests()[1].body;
    let text = second.to_string();
    assert!(text.find("slow woke").unwrap() < text.find("fast woke").unwrap());
}

#[tokio::test]
async fn steering_is_delivered_after_the_tool_batch() {
    let scenario = Scenario::new()
        .rule(
            Rule::when(Match::last_user("change of plan")).reply(Reply::text("ok, changing plan")),
        )
        .rule(Rule::when(Match::tool_result("sleep")).reply(Reply::text("should not be asked")))
        .rule(Rule::when(Match::last_user("go")).reply(sleeps(&[(300, "t")])));
    // Steer once the tool is running.
    let (agent, _server, run) = going_until(scenario, |e| {
        matches!(e, AgentEvent::ToolExecutionStart { .. })
    })
    .await;
    agent.steer(Message::user("change of plan"));
    run.await.unwrap().unwrap();
    let state = agent.state();
    let roles: Vec<&str> = state
        .messages
        .iter()
        .map(|m| match m {
            Message::User(_) => "user",
            Message::Assistant(_) => "assistant",
            Message::ToolResult(_) => "toolResult",
        })
        .collect();
    assert_eq!(
        roles,
        ["user", "assistant", "toolResult", "user", "assistant"]
    );
    let last = last_assistant(&state.messages);
    assert_eq!(last.text(), "ok, changing plan");
}

#[tokio::test]
async fn follow_ups_run_when_the_agent_would_stop() {
    let scenario = Scenario::new()
        .rule(Rule::when(Match::last_user("first")).reply(Reply::text("one")))
        .rule(Rule::when(Match::last_user("second")).reply(Reply::text("two")));
    let (agent, _server) = agent_with(scenario, vec![]).await;
    agent.follow_up(Message::user("second"));
    let mut rx = agent.subscribe();
    agent.prompt("first").await.unwrap();
    let events = drain(&mut rx);
    assert_eq!(count(&events, "agent_end"), 1, "one run");
    assert_eq!(count(&events, "turn_end"), 2);
    let texts: Vec<String> = agent
        .state()
        .messages
        .iter()
        .filter_map(|m| match m {
            Message::Assistant(a) => Some(a.text()),
            _ => None,
        })
        .collect();
    assert_eq!(texts, ["one", "two"]);
}

#[tokio::test]
async fn abort_mid_stream_ends_the_run_with_an_aborted_message() {
    let scenario = Scenario::new()
        .default_reply(Reply::text("word ".repeat(300)))
        .chunk_size(5)
        .delay_ms(10);
    let (agent, _server) = agent_with(scenario, vec![]).await;
    let mut rx = agent.subscribe();
    let run = prompt_in_task(&agent, "talk");
    while agent
        .state()
        .stream_message
        .is_none_or(|m| m.text().len() < 10)
    {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    assert!(agent.state().is_streaming);
    assert!(agent.state().stream_message.is_some());
    agent.abort();
    run.await.unwrap().unwrap();
    let state = agent.state();
    let last = last_assistant(&state.messages);
    assert_eq!(last.stop_reason, StopReason::Aborted);
    assert!(last.text().starts_with("word "), "partial reply kept");
    assert_error_mentions(&agent, "aborted");
    assert!(!state.is_streaming);
    let tail = kinds(&drain(&mut rx));
    assert_eq!(
        &tail[tail.len() - 3..],
        ["message_end", "turn_end", "agent_end"]
    );
}

#[tokio::test]
async fn abort_mid_tool_cancels_the_tool_and_ends_the_run() {
    let scenario =
        Scenario::new().rule(Rule::when(Match::last_user("go")).reply(sleeps(&[(60000, "long")])));
    let (agent, _server, run) = going_until(scenario, |e| {
        matches!(e, AgentEvent::ToolExecutionUpdate { .. })
    })
    .await;
    agent.abort();
    tokio::time::timeout(Duration::from_secs(10), run)
        .await
        .expect("abort is prompt")
        .unwrap()
        .unwrap();
    let state = agent.state();
    let result = first_tool_result(&state.messages);
    assert!(result.is_error);
    assert_eq!(
        result.content,
        vec![pincer_ai::ContentBlock::text("the tool call was aborted")]
    );
    let last = last_assistant(&state.messages);
    assert_eq!(last.stop_reason, StopReason::Aborted);
}

#[tokio::test]
async fn invalid_arguments_and_unknown_tools_become_error_results() {
    let scenario = go_then(
        Reply::empty()
            .with_tool_call("sleep", json!({"ms": "soon"}))
            .with_tool_call("teleport", json!({})),
        "noted",
    );
    let (agent, _server) = agent_with(scenario, vec![typed(Sleep)]).await;
    agent.prompt("go").await.unwrap();
    let results = tool_results(&agent);
    assert_eq!(
        results,
        [
            (
                "invalid arguments for sleep: ms: invalid type: string \"soon\", expected u64"
                    .to_owned(),
                true
            ),
            ("Tool teleport not found".to_owned(), true),
        ]
    );
}

#[tokio::test]
async fn hooks_block_rewrite_and_replace_results() {
    let scenario = go_then(sleeps(&[(1, "blocked"), (1, "original")]), "fine");
    let (mut config, _server) = config_with(scenario, vec![typed(Sleep)]).await;
    let order = Arc::new(Mutex::new(Vec::new()));
    {
        let o = Arc::clone(&order);
        config.hooks.before_tool_call(
            0,
            Arc::new(move |info| {
                o.lock()
                    .unwrap()
                    .push(format!("low:{}", info.args["label"]));
                async { BeforeToolCall::Continue }.boxed()
            }),
        );
        let o = Arc::clone(&order);
        config.hooks.before_tool_call(
            10,
            Arc::new(move |info| {
                o.lock()
                    .unwrap()
                    .push(format!("high:{}", info.args["label"]));
                let decision = if info.args["label"] == "blocked" {
                    BeforeToolCall::Block {
                        reason: "not allowed here".into(),
                    }
                } else {
                    BeforeToolCall::Rewrite(json!({"ms": 1, "label": "rewritten"}))
                };
                async move { decision }.boxed()
            }),
        );
        config.hooks.after_tool_call(
            0,
            Arc::new(|_, outcome: AfterToolCall| {
                async move {
                    AfterToolCall {
                        result: ToolOutput::text(format!(
                            "[checked] {}",
                            outcome.result.text_content()
                        )),
                        is_error: outcome.is_error,
                    }
                }
                .boxed()
            }),
        );
        let agent = Agent::new(config);
        agent.prompt("go").await.unwrap();
        let results = tool_results(&agent);
        assert_eq!(
            results,
            [
                ("not allowed here".to_owned(), true),
                ("[checked] rewritten woke".to_owned(), false)
            ]
        );
    }
    assert_eq!(
        *order.lock().unwrap(),
        ["high:\"blocked\"", "high:\"original\"", "low:\"rewritten\""]
    );
}

#[tokio::test]
async fn prompting_while_busy_is_refused_with_advice() {
    let scenario = Scenario::new()
        .default_reply(Reply::text("slow reply"))
        .delay_ms(50);
    let (agent, _server) = agent_with(scenario, vec![]).await;
    let run = prompt_in_task(&agent, "one");
    while !agent.state().is_streaming {
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    let err = agent.prompt("two").await.unwrap_err();
    assert_eq!(err, AgentError::Busy);
    assert_eq!(
        err.to_string(),
        "Agent is already processing a prompt. Use steer() or follow_up() to queue messages, or wait for completion."
    );
    run.await.unwrap().unwrap();
    agent.wait_for_idle().await;
}

#[tokio::test]
async fn tool_calls_cut_off_by_the_token_limit_are_not_run() {
    let scenario = go_then(
        sleeps(&[(1, "x")]).with_stop_reason(MockStop::Length),
        "retrying",
    );
    let (agent, _server) = agent_with(scenario, vec![typed(Sleep)]).await;
    let mut rx = agent.subscribe();
    agent.prompt("go").await.unwrap();
    assert!(
        !drain(&mut rx)
            .iter()
            .any(|e| matches!(**e, AgentEvent::ToolExecutionUpdate { .. })),
        "the tool never ran"
    );
    let result = first_tool_result(&agent.state().messages);
    assert!(result.is_error);
}

#[tokio::test]
async fn the_offline_stub_answers_without_a_server() {
    let model = pincer_ai::providers::stub::model();
    let agent = Agent::new(AgentConfig::new(
        model,
        llm_stream_fn(LlmClient::with_env(Arc::new(MapEnv::default()))),
    ));
    agent.prompt("ping").await.unwrap();
    let Message::Assistant(reply) = agent.state().messages.last().cloned().unwrap() else {
        panic!()
    };
    assert!(reply.text().starts_with("[offline stub] You said: ping"));
}

#[tokio::test]
async fn continue_retries_after_an_error_and_reset_forgets() {
    use pincer_testkit::Fault;
    let scenario = Scenario::new()
        .rule(Rule::any().times(1).fault(Fault::status(500)))
        .default_reply(Reply::text("second time lucky"));
    let (mut config, _server) = config_with(scenario, vec![]).await;
    config.stream_options.retry.max_retries = 0;
    let agent = Agent::new(config);
    agent.prompt("hi").await.unwrap();
    let state = agent.state();
    assert_error_mentions(&agent, "HTTP 500");
    // The last message is the failed reply: continuing needs something to continue from.
    assert_eq!(
        agent.continue_run().await.unwrap_err().to_string(),
        "Cannot continue: the last message is from the assistant and nothing is queued"
    );
    // Drop the failed reply and retry from the user message, as a caller would.
    let mut messages = state.messages.clone();
    messages.pop();
    agent.replace_messages(messages);
    agent.continue_run().await.unwrap();
    let state = agent.state();
    assert_eq!(state.error, None);
    let last = last_assistant(&state.messages);
    assert_eq!(last.text(), "second time lucky");
    assert_eq!(state.messages.len(), 2);
    agent.reset().await;
    assert!(agent.state().messages.is_empty());
    assert_eq!(
        agent.continue_run().await.unwrap_err().to_string(),
        "Cannot continue: no messages in context"
    );
}

#[tokio::test]
async fn sequential_mode_runs_one_call_at_a_time() {
    let scenario = go_then(sleeps(&[(200, "slow"), (1, "fast")]), "done");
    let (mut config, _server) = config_with(scenario, vec![typed(Sleep)]).await;
    config.tool_execution = pincer_agent::ExecutionMode::Sequential;
    let agent = Agent::new(config);
    let mut rx = agent.subscribe();
    agent.prompt("go").await.unwrap();
    let tool_events: Vec<String> = drain(&mut rx)
        .iter()
        .filter_map(|e| match &**e {
            AgentEvent::ToolExecutionStart { args, .. } => Some(format!("start {}", args["label"])),
            AgentEvent::ToolExecutionEnd { result, .. } => {
                Some(format!("end {}", result.text_content()))
            }
            _ => None,
        })
        .collect();
    assert_eq!(
        tool_events,
        [
            "start \"slow\"",
            "end slow woke",
            "start \"fast\"",
            "end fast woke"
        ]
    );
}

#[tokio::test]
async fn persist_and_agent_end_hooks_run() {
    let scenario = Scenario::new()
        .rule(Rule::when(Match::tool_result("sleep")).reply(Reply::text("done")))
        .rule(Rule::when(Match::last_user("go")).reply(sleeps(&[(1, "secret-token")])));
    let (mut config, server) = config_with(scenario, vec![typed(Sleep)]).await;
    config
        .hooks
        .tool_result_persist(Arc::new(|result: &mut pincer_ai::ToolResultMessage| {
            for block in &mut result.content {
                if let pincer_ai::ContentBlock::Text(t) = block {
                    t.text = t.text.replace("secret-token", "[redacted]");
                }
            }
        }));
    let ended = Arc::new(Mutex::new(0usize));
    let seen = Arc::clone(&ended);
    config.hooks.agent_end(Arc::new(move |messages| {
        *seen.lock().unwrap() = messages.len();
        async {}.boxed()
    }));
    let agent = Agent::new(config);
    agent.prompt("go").await.unwrap();
    let result = first_tool_result(&agent.state().messages);
    assert_eq!(
        result.content,
        vec![pincer_ai::ContentBlock::text("[redacted] woke")]
    );
    assert!(
        !server.requests()[1]
            .body
            .to_string()
            .contains("secret-token woke"),
        "the model saw the persisted form"
    );
    assert_eq!(
        *ended.lock().unwrap(),
        4,
        "user, assistant, tool result, assistant"
    );
}

#[tokio::test]
async fn prompts_can_carry_images_and_thinking_levels_reach_the_request() {
    let (agent, server) =
        agent_with(Scenario::new().default_reply(Reply::text("a cat")), vec![]).await;
    agent.set_thinking_level(pincer_ai::ThinkingLevel::Low);
    let mut model = agent.state().model;
    model.reasoning = true;
    agent.set_model(model);
    let image = pincer_ai::ContentBlock::Image(pincer_ai::ImageContent {
        data: "aGk=".into(),
        mime_type: "image/png".into(),
    });
    let message = Message::User(pincer_ai::UserMessage {
        content: pincer_ai::UserContent::Blocks(vec![
            pincer_ai::ContentBlock::text("what is this?"),
            image,
        ]),
        timestamp: 1,
    });
    agent.prompt_messages(vec![message]).await.unwrap();
    let body = &server.requests()[0].body;
    assert_eq!(body["messages"][0]["content"][1]["source"]["data"], "aGk=");
    assert_eq!(body["thinking"]["type"], "enabled");
    assert_eq!(body["system"][0]["text"], "You are a test agent.");
}

/// A tool with a dotted name, as lainclaw's basics have.
struct DottedEcho;

#[derive(Deserialize, schemars::JsonSchema)]
struct EchoArgs {
    text: String,
}

impl TypedTool for DottedEcho {
    type Args = EchoArgs;
    const NAME: &'static str = "tools.echo";
    const DESCRIPTION: &'static str = "Echo text";
    async fn run(&self, args: EchoArgs, _ctx: ToolContext) -> Result<ToolOutput, ToolError> {
        Ok(ToolOutput::text(args.text))
    }
}

#[tokio::test]
async fn dotted_tool_names_are_offered_under_a_wire_safe_name() {
    let scenario = Scenario::new()
        .rule(Rule::when(Match::tool_result("tools_echo")).reply(Reply::text("echoed")))
        .rule(
            Rule::when(Match::last_user("go"))
                .reply(Reply::empty().with_tool_call("tools_echo", json!({"text": "hey"}))),
        );
    let (agent, server) = agent_with(scenario, vec![typed(DottedEcho)]).await;
    agent.prompt("go").await.unwrap();
    assert_eq!(server.requests()[0].body["tools"][0]["name"], "tools_echo");
    let result = first_tool_result(&agent.state().messages);
    assert!(!result.is_error);
    assert_eq!(result.content, vec![pincer_ai::ContentBlock::text("hey")]);
}

#[tokio::test]
async fn the_tool_round_cap_refuses_further_calls_and_ends_the_run() {
    // The model asks for a tool after every result: without a cap it would loop forever.
    let scenario = Scenario::new()
        .rule(Rule::when(Match::tool_result("sleep")).reply(sleeps(&[(1, "again")])))
        .rule(Rule::when(Match::last_user("go")).reply(sleeps(&[(1, "first")])));
    let (mut config, server) = config_with(scenario, vec![typed(Sleep)]).await;
    config.max_tool_rounds = Some(2);
    let agent = Agent::new(config);
    agent.prompt("go").await.unwrap();
    assert!(agent.tool_limit_reached());
    assert_eq!(
        tool_results(&agent),
        [
            ("first woke".to_owned(), false),
            ("again woke".to_owned(), false),
            (
                "Tool call \"sleep\" was not executed: tool call loop exceeded max steps (2)"
                    .to_owned(),
                true
            ),
        ]
    );
    // Three LLM calls: two rounds ran, the third reply's calls were refused, no fourth call.
    assert_eq!(server.requests().len(), 3);
    assert!(matches!(
        agent.state().messages.last(),
        Some(Message::ToolResult(_))
    ));
}

//! An agent with the built-in exec and process tools, driven by the mock LLM server:
//! it starts a long build that backgrounds itself, polls it with `process`, and finishes.
//! Prints the agent's events as they happen, and the exit notice the gateway would turn
//! into a system event.
//!
//! `cargo run --example agent -p pincer-agent`

use std::sync::Arc;
use std::time::Duration;

use pincer_agent::{Agent, AgentConfig, AgentEvent, llm_stream_fn};
use pincer_ai::env::MapEnv;
use pincer_ai::{AssistantMessageEvent, LlmClient, ModelRegistry};
use pincer_testkit::{Match, MockLlm, Reply, Rule, Scenario};
use pincer_tools::{ExecSecurity, PathPolicy, ProcessRegistry, exec_tools};
use serde_json::json;

const BUILD: &str =
    "for step in compile link test; do echo \"$step...\"; sleep 0.4; done; echo 'build ok'";

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    // The mock model: start the build, poll it a little later, then report.
    let scenario = Scenario::new()
        .rule(Rule::when(Match::tool_result("process")).reply(Reply::text(
            "The build finished: compile, link and test all passed.",
        )))
        .rule(
            Rule::when(Match::tool_result("exec")).reply(
                // Streams slowly, so the build has finished by the time the poll runs.
                Reply::empty()
                    .with_tool_call("process", json!({"action": "poll"}))
                    .with_delay_ms(250),
            ),
        )
        .rule(
            Rule::when(Match::last_user_contains("build")).reply(
                Reply::empty()
                    .with_thinking(
                        "The build takes a while; run it in the background and check back.",
                    )
                    .with_tool_call("exec", json!({"command": BUILD, "yieldMs": 300})),
            ),
        )
        .chunk_size(6);
    let server = MockLlm::start(scenario).await?;
    let mut models = ModelRegistry::builtin()?;
    models.set_base_url("anthropic", &server.url());
    let model = models.resolve("anthropic/claude-haiku-4-5")?.clone();
    let client = LlmClient::with_env(Arc::new(MapEnv::new([("ANTHROPIC_API_KEY", "mock-key")])));

    let workspace =
        std::env::temp_dir().join(format!("pincer-agent-example-{}", std::process::id()));
    std::fs::create_dir_all(&workspace)?;
    let (notice_tx, mut notices) = tokio::sync::mpsc::unbounded_channel();
    let registry = ProcessRegistry::new().with_exit_callback(Arc::new(move |notice| {
        let _ = notice_tx.send(notice);
    }));
    let mut config = AgentConfig::new(model, llm_stream_fn(client));
    config.system_prompt = "You are a build assistant.".into();
    config.tools = exec_tools(
        PathPolicy::workspace(&workspace)?,
        registry.clone(),
        ExecSecurity::Full,
        "main",
    );
    let agent = Agent::new(config);

    let mut events = agent.subscribe();
    let printer = tokio::spawn(async move {
        while let Some(event) = events.recv().await {
            match &*event {
                AgentEvent::MessageUpdate {
                    assistant_message_event: AssistantMessageEvent::TextDelta { delta, .. },
                } => print!("{delta}"),
                AgentEvent::MessageUpdate {
                    assistant_message_event: AssistantMessageEvent::ThinkingEnd { content, .. },
                } => println!("  (thinking: {content})"),
                AgentEvent::ToolExecutionStart {
                    tool_name, args, ..
                } => println!("→ {tool_name} {args}"),
                AgentEvent::ToolExecutionUpdate { partial_result, .. } => {
                    println!(
                        "  … {}",
                        partial_result.text_content().lines().last().unwrap_or("")
                    )
                }
                AgentEvent::ToolExecutionEnd {
                    tool_name,
                    result,
                    is_error,
                    ..
                } => {
                    let status = result
                        .details
                        .as_ref()
                        .and_then(|d| d.get("status"))
                        .and_then(|s| s.as_str())
                        .unwrap_or("done");
                    println!(
                        "← {tool_name} [{status}{}]\n{}",
                        if *is_error { ", error" } else { "" },
                        indent(&result.text_content())
                    );
                }
                AgentEvent::AgentEnd { messages } => {
                    println!("\n[agent_end: {} new messages]", messages.len())
                }
                _ => {}
            }
        }
    });

    println!("user: please run the build");
    agent.prompt("please run the build").await?;
    // Dropping the agent closes its event stream: the printer drains what is left and ends.
    drop(agent);
    let _ = printer.await;
    if let Ok(Some(notice)) = tokio::time::timeout(Duration::from_secs(10), notices.recv()).await {
        println!("[system event] {}", notice.text);
    }
    registry.shutdown().await;
    server.shutdown().await?;
    std::fs::remove_dir_all(&workspace)?;
    Ok(())
}

fn indent(text: &str) -> String {
    text.lines()
        .map(|l| format!("    {l}"))
        .collect::<Vec<_>>()
        .join("\n")
}

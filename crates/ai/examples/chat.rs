//! Streams one reply from each of the four wire APIs — OpenAI Chat Completions, OpenAI
//! Responses, Anthropic Messages, Google Generative AI — served by the mock LLM server of
//! pincer-testkit on 127.0.0.1, printing deltas as they arrive.
//!
//! `cargo run --example chat -p pincer-ai [-- "your prompt"]`

use std::io::{IsTerminal, Write};
use std::sync::Arc;

use futures_util::StreamExt;
use pincer_ai::env::MapEnv;
use pincer_ai::{AssistantMessageEvent, Context, LlmClient, Message, ModelRegistry, StreamOptions};
use pincer_testkit::{MockLlm, Reply, Scenario};

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let prompt = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "Say hello".to_owned());
    let scenario = Scenario::new()
        .default_reply(
            Reply::text(
                "Hello! This reply streamed from the mock server, a few characters at a time.",
            )
            .with_thinking("A greeting is wanted."),
        )
        .chunk_size(7)
        .delay_ms(15);
    let server = MockLlm::start(scenario).await?;
    let url = server.url();

    // Point the built-in providers at the mock, as a user points them at a proxy.
    let env = MapEnv::new([
        ("OPENAI_BASE_URL", format!("{url}/v1")),
        ("ANTHROPIC_BASE_URL", url.clone()),
        ("GEMINI_BASE_URL", format!("{url}/v1beta")),
        ("OPENAI_API_KEY", "mock-key".to_owned()),
        ("ANTHROPIC_API_KEY", "mock-key".to_owned()),
        ("GEMINI_API_KEY", "mock-key".to_owned()),
        ("DEEPSEEK_API_KEY", "mock-key".to_owned()),
    ]);
    let mut models = ModelRegistry::builtin()?;
    models.apply_env_overrides(&env);
    models.set_base_url("deepseek", &format!("{url}/v1"));
    let client = LlmClient::with_env(Arc::new(env));

    let dim = |text: &str| {
        if std::io::stdout().is_terminal() {
            format!("\x1b[2m{text}\x1b[0m")
        } else {
            text.to_owned()
        }
    };
    let context = Context {
        system_prompt: Some("You are terse.".into()),
        messages: vec![Message::user(prompt)],
        tools: vec![],
    };
    for reference in [
        "deepseek/deepseek-chat",
        "openai/gpt-4o-mini",
        "anthropic/claude-haiku-4-5",
        "google/gemini-2.5-flash",
    ] {
        let model = models.resolve(reference)?;
        print!("[{} via {}] ", model.reference(), model.api);
        let mut stream = client.stream(model, &context, StreamOptions::default());
        while let Some(event) = stream.next().await {
            match event {
                AssistantMessageEvent::ThinkingDelta { delta, .. } => print!("{}", dim(&delta)),
                AssistantMessageEvent::ThinkingEnd { .. } => print!(" | "),
                AssistantMessageEvent::TextDelta { delta, .. } => print!("{delta}"),
                AssistantMessageEvent::Done { reason, message } => {
                    println!(
                        "\n  -> {} ({} in / {} out tokens, ${:.6})",
                        reason.as_str(),
                        message.usage.input,
                        message.usage.output,
                        message.usage.cost.total
                    );
                }
                AssistantMessageEvent::Error { error, .. } => {
                    println!("\n  -> error: {}", error.error_message.unwrap_or_default());
                }
                _ => {}
            }
            std::io::stdout().flush()?;
        }
    }
    server.shutdown().await?;
    Ok(())
}

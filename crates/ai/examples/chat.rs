//! Streams one reply from each wire API — OpenAI Chat Completions, OpenAI Responses, Azure
//! OpenAI Responses, Anthropic Messages, Google Generative AI, Vertex AI, Cloud Code Assist
//! (Gemini CLI), Amazon Bedrock ConverseStream — and from GitHub Copilot, served by the mock
//! LLM server of pincer-testkit on 127.0.0.1, printing deltas as they arrive.
//!
//! `cargo run --example chat -p pincer-ai [-- "your prompt"]`

use std::io::{IsTerminal, Write};
use std::sync::Arc;

use futures_util::StreamExt;
use pincer_ai::env::MapEnv;
use pincer_ai::{AssistantMessageEvent, Context, Message, ModelRegistry, StreamOptions};
use pincer_testkit::{MockLlm, Reply, Scenario};

mod google_cloud {
    //! google-vertex and google-gemini-cli against the mock: a service-account file whose
    //! `token_uri` is the mock's token endpoint (Vertex's Application Default Credentials),
    //! and a Cloud Code Assist key as a `google-gemini-cli` sign-in resolves to.

    use std::path::PathBuf;
    use std::sync::Arc;

    use pincer_ai::env::MapEnv;
    use pincer_ai::providers::google::GoogleVertex;
    use pincer_ai::{ApiRegistry, LazyHttpClient, LlmClient, ModelRegistry};
    use pincer_testkit::google_cloud::{MOCK_CODE_ASSIST_PROJECT, service_account_json};

    /// The model references this adds to the example's list.
    pub const MODELS: [&str; 2] = [
        "google-vertex/gemini-2.5-flash",
        "google-gemini-cli/gemini-2.5-flash",
    ];

    /// Writes the credential file under the temp dir; returns the variables that find it.
    pub fn env_vars(url: &str) -> std::io::Result<Vec<(&'static str, String)>> {
        let dir: PathBuf =
            std::env::temp_dir().join(format!("pincer-chat-example-{}", std::process::id()));
        std::fs::create_dir_all(&dir)?;
        let file = dir.join("service-account.json");
        std::fs::write(
            &file,
            service_account_json(
                &format!("{url}/token"),
                "example@mock-project.iam.gserviceaccount.com",
            ),
        )?;
        Ok(vec![
            ("GOOGLE_APPLICATION_CREDENTIALS", file.display().to_string()),
            ("GOOGLE_CLOUD_PROJECT", "mock-project".to_owned()),
            ("GOOGLE_CLOUD_LOCATION", "us-central1".to_owned()),
        ])
    }

    /// A client whose Vertex provider reads `env`, with the Code Assist key set.
    pub fn client(env: Arc<MapEnv>, models: &mut ModelRegistry, url: &str) -> LlmClient {
        models.set_base_url("google-vertex", url);
        models.set_base_url("google-gemini-cli", url);
        let apis = ApiRegistry::with_builtins(LazyHttpClient::new());
        apis.register(
            Arc::new(GoogleVertex::new(LazyHttpClient::new()).with_env(env.clone())),
            None,
        );
        let client = LlmClient::from_parts(Arc::new(apis), env);
        let key =
            serde_json::json!({"token": "ya29.example", "projectId": MOCK_CODE_ASSIST_PROJECT});
        client.set_api_key("google-gemini-cli", key.to_string());
        client
    }
}

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
    let mut vars = vec![
        ("OPENAI_BASE_URL", format!("{url}/v1")),
        ("ANTHROPIC_BASE_URL", url.clone()),
        ("GEMINI_BASE_URL", format!("{url}/v1beta")),
        ("OPENAI_API_KEY", "mock-key".to_owned()),
        ("ANTHROPIC_API_KEY", "mock-key".to_owned()),
        ("GEMINI_API_KEY", "mock-key".to_owned()),
        ("DEEPSEEK_API_KEY", "mock-key".to_owned()),
        ("AZURE_OPENAI_BASE_URL", format!("{url}/openai/v1")),
        ("AZURE_OPENAI_API_KEY", "mock-key".to_owned()),
        // Amazon Bedrock: SigV4-signed with these keys (the mock refuses unsigned requests).
        ("AWS_ENDPOINT_URL_BEDROCK_RUNTIME", url.clone()),
        ("AWS_ACCESS_KEY_ID", "AKIDMOCKEXAMPLE".to_owned()),
        ("AWS_SECRET_ACCESS_KEY", "mock-secret-key".to_owned()),
        ("AWS_REGION", "us-east-1".to_owned()),
    ];
    vars.extend(google_cloud::env_vars(&url)?);
    let env = Arc::new(MapEnv::new(vars));
    let mut models = ModelRegistry::builtin()?;
    models.apply_env_overrides(env.as_ref());
    models.set_base_url("deepseek", &format!("{url}/v1"));
    let client = google_cloud::client(env.clone(), &mut models, &url);
    // GitHub Copilot: the key is the Copilot token pincer-auth exchanges a GitHub token for.
    models.set_base_url("github-copilot", &url);
    client.set_api_key(
        "github-copilot",
        "tid=mock;exp=9999999999;proxy-ep=proxy.mock",
    );
    // Bedrock's credential chain reads the example's environment, not the process's.
    client.apis().register(
        Arc::new(pincer_ai::providers::bedrock::BedrockProvider::new(
            pincer_ai::LazyHttpClient::new(),
            env,
        )),
        None,
    );

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
        "azure-openai-responses/gpt-4o-mini",
        "amazon-bedrock/us.anthropic.claude-haiku-4-5-20251001-v1:0",
        "github-copilot/gpt-4o",
    ]
    .into_iter()
    .chain(google_cloud::MODELS)
    {
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

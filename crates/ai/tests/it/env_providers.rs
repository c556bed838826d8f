//! pi's table of environment keys (`env-api-keys.ts`) against the catalog: every provider
//! with a key variable has models and every catalog provider has a key variable (or signs
//! in another way), and a key from the environment reaches each new provider's requests.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use pincer_ai::env::{MapEnv, api_key_vars};
use pincer_ai::{Context, LlmClient, Message, ModelRegistry, StreamOptions, apis};
use pincer_testkit::{Api, MockLlm, Reply, Scenario};

/// pi's table (github-copilot, amazon-bedrock and google-vertex sign in their own ways
/// and are checked with their providers).
const PI_ENV_KEYS: [(&str, &[&str]); 18] = [
    ("openai", &["OPENAI_API_KEY"]),
    ("anthropic", &["ANTHROPIC_OAUTH_TOKEN", "ANTHROPIC_API_KEY"]),
    ("azure-openai-responses", &["AZURE_OPENAI_API_KEY"]),
    ("google", &["GEMINI_API_KEY"]),
    ("groq", &["GROQ_API_KEY"]),
    ("cerebras", &["CEREBRAS_API_KEY"]),
    ("xai", &["XAI_API_KEY"]),
    ("openrouter", &["OPENROUTER_API_KEY"]),
    ("vercel-ai-gateway", &["AI_GATEWAY_API_KEY"]),
    ("zai", &["ZAI_API_KEY"]),
    ("mistral", &["MISTRAL_API_KEY"]),
    ("minimax", &["MINIMAX_API_KEY"]),
    ("minimax-cn", &["MINIMAX_CN_API_KEY"]),
    ("huggingface", &["HF_TOKEN"]),
    ("opencode", &["OPENCODE_API_KEY"]),
    ("opencode-go", &["OPENCODE_API_KEY"]),
    ("kimi-coding", &["KIMI_API_KEY"]),
    // Not in pi's table: DeepSeek's own API (pi reaches it only through OpenRouter).
    ("deepseek", &["DEEPSEEK_API_KEY"]),
];

/// Catalog providers that sign in rather than read a key variable (or need none).
const NO_KEY_VARIABLE: [&str; 6] = [
    "stub",
    "openai-codex",
    "google-gemini-cli",
    "google-antigravity",
    "google-vertex",
    "amazon-bedrock",
];

#[test]
fn every_key_variable_has_models_and_every_provider_a_key_variable() {
    let models = ModelRegistry::builtin().unwrap();
    let providers = models.providers();
    for (provider, vars) in PI_ENV_KEYS {
        assert_eq!(api_key_vars(provider), vars, "{provider}");
        assert!(
            providers.contains(&provider),
            "{provider} has a key variable but no catalog models"
        );
    }
    for provider in providers {
        if NO_KEY_VARIABLE.contains(&provider) {
            continue;
        }
        assert!(
            !api_key_vars(provider).is_empty(),
            "{provider} has catalog models but no key variable"
        );
    }
}

#[test]
fn the_new_providers_carry_pis_endpoints_and_quirks() {
    let models = ModelRegistry::builtin().unwrap();
    let summary = |reference: &str| {
        let m = models.resolve(reference).unwrap();
        let compat = m
            .compat
            .as_ref()
            .map(|c| serde_json::to_string(c).unwrap())
            .unwrap_or_default();
        format!("{} {} {compat}", m.api, m.base_url)
    };
    let cases = [
        (
            "cerebras/gpt-oss-120b",
            "openai-completions https://api.cerebras.ai/v1 ",
        ),
        (
            "huggingface/deepseek-ai/DeepSeek-V3.2",
            r#"openai-completions https://router.huggingface.co/v1 {"supportsDeveloperRole":false}"#,
        ),
        (
            "zai/glm-4.7",
            r#"openai-completions https://api.z.ai/api/coding/paas/v4 {"supportsDeveloperRole":false,"thinkingFormat":"zai"}"#,
        ),
        (
            "vercel-ai-gateway/anthropic/claude-sonnet-4.5",
            "anthropic-messages https://ai-gateway.vercel.sh ",
        ),
        (
            "minimax/MiniMax-M2.5",
            "anthropic-messages https://api.minimax.io/anthropic ",
        ),
        (
            "minimax-cn/MiniMax-M2.5",
            "anthropic-messages https://api.minimaxi.com/anthropic ",
        ),
        (
            "kimi-coding/k2p5",
            "anthropic-messages https://api.kimi.com/coding ",
        ),
        (
            "opencode/gpt-5.1-codex",
            "openai-responses https://opencode.ai/zen/v1 ",
        ),
        (
            "opencode-go/glm-5",
            "openai-completions https://opencode.ai/zen/go/v1 ",
        ),
        ("azure-openai-responses/gpt-5", "azure-openai-responses  "),
    ];
    for (reference, want) in cases {
        assert_eq!(summary(reference), want, "{reference}");
    }
}

/// For each new provider with a plain key: the variable's value is what its request carries.
#[tokio::test]
async fn a_key_from_the_environment_reaches_each_new_providers_request() {
    let server = MockLlm::start(Scenario::new().default_reply(Reply::text("keyed")))
        .await
        .unwrap();
    let cases = [
        (
            "cerebras/gpt-oss-120b",
            "CEREBRAS_API_KEY",
            Api::OpenAiCompletions,
        ),
        (
            "huggingface/moonshotai/Kimi-K2.5",
            "HF_TOKEN",
            Api::OpenAiCompletions,
        ),
        ("zai/glm-4.7", "ZAI_API_KEY", Api::OpenAiCompletions),
        (
            "opencode-go/glm-5",
            "OPENCODE_API_KEY",
            Api::OpenAiCompletions,
        ),
        (
            "opencode/gpt-5.1-codex",
            "OPENCODE_API_KEY",
            Api::OpenAiResponses,
        ),
        (
            "vercel-ai-gateway/openai/gpt-5",
            "AI_GATEWAY_API_KEY",
            Api::AnthropicMessages,
        ),
        (
            "minimax/MiniMax-M2.5",
            "MINIMAX_API_KEY",
            Api::AnthropicMessages,
        ),
        (
            "minimax-cn/MiniMax-M2",
            "MINIMAX_CN_API_KEY",
            Api::AnthropicMessages,
        ),
        (
            "kimi-coding/kimi-k2-thinking",
            "KIMI_API_KEY",
            Api::AnthropicMessages,
        ),
    ];
    let context = Context {
        system_prompt: None,
        messages: vec![Message::user("hi")],
        tools: vec![],
    };
    for (reference, var, api) in cases {
        let key = format!("{}-value", var.to_lowercase());
        let client = LlmClient::with_env(Arc::new(MapEnv::new([(var, key.clone())])));
        let mut models = ModelRegistry::builtin().unwrap();
        let provider = reference.split_once('/').unwrap().0;
        models.set_base_url(provider, &server.base_url(api));
        let model = models.resolve(reference).unwrap();
        let reply = client
            .complete(model, &context, StreamOptions::default())
            .await
            .unwrap();
        assert_eq!(reply.text(), "keyed", "{reference}");
        let request = server.requests().pop().unwrap();
        let sent = if model.api == apis::ANTHROPIC_MESSAGES {
            request.header("x-api-key").map(str::to_owned)
        } else {
            request.header("authorization").map(str::to_owned)
        };
        let want = if model.api == apis::ANTHROPIC_MESSAGES {
            key.clone()
        } else {
            format!("Bearer {key}")
        };
        assert_eq!(sent.as_deref(), Some(want.as_str()), "{reference}");
        assert_eq!(request.body["model"], model.id.as_str(), "{reference}");
    }
}

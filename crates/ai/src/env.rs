//! Where API keys and base-URL overrides come from: the environment, exactly as pi-ai's
//! `env-api-keys.ts` and the official SDKs read it. An [`EnvSource`] is injected so tests
//! never depend on the real process environment.

use std::collections::HashMap;

/// A source of environment variables.
pub trait EnvSource: Send + Sync {
    fn var(&self, name: &str) -> Option<String>;
}

/// The real process environment.
#[derive(Debug, Clone, Copy, Default)]
pub struct ProcessEnv;

impl EnvSource for ProcessEnv {
    fn var(&self, name: &str) -> Option<String> {
        std::env::var(name).ok().filter(|v| !v.is_empty())
    }
}

/// A fixed map of variables (tests, embedding).
#[derive(Debug, Clone, Default)]
pub struct MapEnv(pub HashMap<String, String>);

impl MapEnv {
    pub fn new<I, K, V>(vars: I) -> Self
    where
        I: IntoIterator<Item = (K, V)>,
        K: Into<String>,
        V: Into<String>,
    {
        Self(
            vars.into_iter()
                .map(|(k, v)| (k.into(), v.into()))
                .collect(),
        )
    }
}

impl EnvSource for MapEnv {
    fn var(&self, name: &str) -> Option<String> {
        self.0.get(name).filter(|v| !v.is_empty()).cloned()
    }
}

/// The environment variables that hold a provider's key, in priority order.
pub fn api_key_vars(provider: &str) -> &'static [&'static str] {
    match provider {
        "anthropic" => &["ANTHROPIC_OAUTH_TOKEN", "ANTHROPIC_API_KEY"],
        "openai" => &["OPENAI_API_KEY"],
        "google" => &["GEMINI_API_KEY"],
        // Vertex express mode; without it Vertex uses Application Default Credentials.
        "google-vertex" => &["GOOGLE_CLOUD_API_KEY"],
        "github-copilot" => &["COPILOT_GITHUB_TOKEN", "GH_TOKEN", "GITHUB_TOKEN"],
        "azure-openai-responses" => &["AZURE_OPENAI_API_KEY"],
        "xai" => &["XAI_API_KEY"],
        "groq" => &["GROQ_API_KEY"],
        "openrouter" => &["OPENROUTER_API_KEY"],
        "mistral" => &["MISTRAL_API_KEY"],
        "huggingface" => &["HF_TOKEN"],
        "deepseek" => &["DEEPSEEK_API_KEY"],
        "cerebras" => &["CEREBRAS_API_KEY"],
        "zai" => &["ZAI_API_KEY"],
        // A Bedrock API key, sent as a bearer token; without one, SigV4 from the AWS chain.
        "amazon-bedrock" => &["AWS_BEARER_TOKEN_BEDROCK"],
        "vercel-ai-gateway" => &["AI_GATEWAY_API_KEY"],
        "minimax" => &["MINIMAX_API_KEY"],
        "minimax-cn" => &["MINIMAX_CN_API_KEY"],
        "opencode" | "opencode-go" => &["OPENCODE_API_KEY"],
        "kimi-coding" => &["KIMI_API_KEY"],
        _ => &[],
    }
}

/// The key for `provider` from the environment (pi's `getEnvApiKey`).
pub fn env_api_key(env: &dyn EnvSource, provider: &str) -> Option<String> {
    api_key_vars(provider).iter().find_map(|name| env.var(name))
}

/// The variable that re-points a provider's base URL, as the official SDKs read it.
pub fn base_url_var(provider: &str) -> Option<&'static str> {
    match provider {
        "openai" => Some("OPENAI_BASE_URL"),
        "anthropic" => Some("ANTHROPIC_BASE_URL"),
        "google" => Some("GEMINI_BASE_URL"),
        // The AWS SDKs' service-specific endpoint variable.
        "amazon-bedrock" => Some("AWS_ENDPOINT_URL_BEDROCK_RUNTIME"),
        _ => None,
    }
}

/// The base URL the environment gives `provider`: its SDK's variable, or for Azure
/// `AZURE_OPENAI_BASE_URL` or the endpoint of `AZURE_OPENAI_RESOURCE_NAME`.
pub fn env_base_url(env: &dyn EnvSource, provider: &str) -> Option<String> {
    if provider == crate::model::apis::AZURE_OPENAI_RESPONSES {
        return crate::providers::openai_responses::azure::env_base_url(env);
    }
    base_url_var(provider).and_then(|var| env.var(var))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn oauth_token_wins_over_api_key() {
        let env = MapEnv::new([("ANTHROPIC_API_KEY", "k"), ("ANTHROPIC_OAUTH_TOKEN", "o")]);
        assert_eq!(env_api_key(&env, "anthropic").as_deref(), Some("o"));
        let env = MapEnv::new([("ANTHROPIC_API_KEY", "k"), ("ANTHROPIC_OAUTH_TOKEN", "")]);
        assert_eq!(env_api_key(&env, "anthropic").as_deref(), Some("k"));
        assert_eq!(env_api_key(&env, "openai"), None);
        assert_eq!(
            env_api_key(&MapEnv::new([("GEMINI_API_KEY", "g")]), "google").as_deref(),
            Some("g")
        );
    }
}

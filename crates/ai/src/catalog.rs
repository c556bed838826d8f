//! The model registry: the built-in catalog (a data file compiled in, from pi's generated
//! catalog, plus the offline stub), custom providers and models in pi's `models.json`
//! shape, base-URL overrides from the environment, and lookup by `provider/id`.

use pincer_base::Secret;
use std::collections::{BTreeMap, HashMap};
use std::sync::OnceLock;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::env::{EnvSource, env_base_url};
use crate::model::{Compat, InputKind, Model, ModelCost, apis};

mod proxied;

const BUILTIN_MODELS: &str = include_str!("../data/models.json");
const EXTRA_MODELS: &str = include_str!("../data/extra-models.json");
/// The other providers of pi's env-key table (Azure, Cerebras, Hugging Face, Z.AI, …).
const PI_PROVIDER_MODELS: &str = include_str!("../data/pi-providers.json");
/// A handful of pi's amazon-bedrock models (Nova, Claude on Bedrock, …).
const BEDROCK_MODELS: &str = include_str!("../data/amazon-bedrock.json");
/// A few of pi's google-vertex and google-gemini-cli models (Vertex AI, Cloud Code Assist).
const GOOGLE_CLOUD_MODELS: &str = include_str!("../data/google-cloud.json");
/// GitHub Copilot's models (pi's list): each speaks the wire API of its vendor.
const COPILOT_MODELS: &str = include_str!("../data/github-copilot.json");

/// Why a catalog or models configuration could not be used.
#[derive(Debug, thiserror::Error)]
pub enum CatalogError {
    #[error("the built-in model catalog is invalid: {0}")]
    Builtin(String),
    #[error("models configuration: {0}")]
    Parse(String),
    #[error("models configuration: provider \"{provider}\": {message}")]
    Provider { provider: String, message: String },
    #[error("unknown model \"{reference}\"{hint}")]
    UnknownModel { reference: String, hint: String },
    #[error("model \"{reference}\" is ambiguous: it matches {matches}; write it as provider/id")]
    Ambiguous { reference: String, matches: String },
    #[error("API key command for provider \"{provider}\" failed: {message}")]
    KeyCommand { provider: String, message: String },
}

#[derive(Deserialize)]
struct CatalogFile {
    models: Vec<Model>,
}

/// Where a custom provider's key comes from (pi: an env-var name, a literal, or `!cmd`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KeySpec {
    /// The name of an environment variable if one is set by that name, else the literal.
    EnvOrLiteral(String),
    /// A shell command whose trimmed stdout is the key.
    Command(String),
}

impl KeySpec {
    fn parse(raw: &str) -> Self {
        match raw.strip_prefix('!') {
            Some(cmd) => Self::Command(cmd.trim().to_owned()),
            None => Self::EnvOrLiteral(raw.to_owned()),
        }
    }

    /// Resolve to the key. Runs the command for `!cmd` keys.
    pub fn resolve(&self, provider: &str, env: &dyn EnvSource) -> Result<String, CatalogError> {
        match self {
            Self::EnvOrLiteral(text) => Ok(env.var(text).unwrap_or_else(|| text.clone())),
            Self::Command(cmd) => {
                let fail = |message: String| CatalogError::KeyCommand {
                    provider: provider.to_owned(),
                    message,
                };
                let output = std::process::Command::new("sh")
                    .arg("-c")
                    .arg(cmd)
                    .stdin(std::process::Stdio::null())
                    .output()
                    .map_err(|e| fail(format!("cannot run `{cmd}`: {e}")))?;
                if !output.status.success() {
                    return Err(fail(format!("`{cmd}` exited with {}", output.status)));
                }
                let key = String::from_utf8_lossy(&output.stdout).trim().to_owned();
                if key.is_empty() {
                    return Err(fail(format!("`{cmd}` printed nothing")));
                }
                Ok(key)
            }
        }
    }
}

/// pi's `models.json`: `{"providers": {"<name>": {...}}}` (also the `models` section of
/// Pincer's config).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ModelsConfig {
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub providers: BTreeMap<String, ProviderConfig>,
}

/// A custom provider, or overrides of a built-in one (only `baseUrl` re-points it).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ProviderConfig {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_url: Option<String>,
    /// Wire API: openai-completions, openai-responses, anthropic-messages, google-generative-ai,
    /// or `proxy` (pi's proxy at `baseUrl`, the key its bearer token; each model's id names
    /// the model it stands for, e.g. `anthropic/claude-sonnet-4-5`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api: Option<String>,
    /// An environment-variable name, a literal key, or `!command` whose output is the key.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_key: Option<Secret>,
    /// Extra request headers; their values are often credentials (`Cookie`, `X-Auth`…).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub headers: Option<BTreeMap<String, Secret>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compat: Option<Compat>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub models: Vec<CustomModel>,
}

/// A model of a custom provider.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CustomModel {
    pub id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_url: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input: Option<Vec<InputKind>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost: Option<ModelCost>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context_window: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub headers: Option<BTreeMap<String, Secret>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compat: Option<Compat>,
}

/// Every embedded catalog file's models, then the offline stub.
fn parse_builtin_models() -> Result<Vec<Model>, String> {
    let mut models = Vec::new();
    for data in [
        BUILTIN_MODELS,
        EXTRA_MODELS,
        PI_PROVIDER_MODELS,
        GOOGLE_CLOUD_MODELS,
        COPILOT_MODELS,
        BEDROCK_MODELS,
    ] {
        let file: CatalogFile = serde_json::from_str(data).map_err(|e| e.to_string())?;
        models.extend(file.models);
    }
    models.push(crate::providers::stub::model());
    Ok(models)
}

/// Every model Pincer can use.
#[derive(Debug, Clone, Default)]
pub struct ModelRegistry {
    models: Vec<Model>,
    keys: HashMap<String, KeySpec>,
    /// The model each proxied model (`api: "proxy"`) stands for, by its `provider/id`.
    proxied: HashMap<String, Model>,
}

impl ModelRegistry {
    /// The built-in catalog, the DeepSeek entries and the offline stub. The embedded files
    /// (some 300 models) are parsed once per process; every call clones that parse, since
    /// the gateway builds a registry for every turn.
    pub fn builtin() -> Result<Self, CatalogError> {
        static PARSED: OnceLock<Result<Vec<Model>, String>> = OnceLock::new();
        let models = PARSED.get_or_init(parse_builtin_models);
        match models {
            Ok(models) => Ok(Self {
                models: models.clone(),
                keys: HashMap::new(),
                proxied: HashMap::new(),
            }),
            Err(e) => Err(CatalogError::Builtin(e.clone())),
        }
    }

    /// Re-point built-in providers at the base URLs the environment names
    /// (`OPENAI_BASE_URL`, `ANTHROPIC_BASE_URL`, `GEMINI_BASE_URL`).
    pub fn apply_env_overrides(&mut self, env: &dyn EnvSource) {
        for model in &mut self.models {
            if let Some(url) = env_base_url(env, &model.provider) {
                model.base_url = url;
            }
        }
    }

    /// Re-point every model of `provider` at `base_url` (configuration's per-provider override).
    pub fn set_base_url(&mut self, provider: &str, base_url: &str) {
        for model in self.models.iter_mut().filter(|m| m.provider == provider) {
            base_url.clone_into(&mut model.base_url);
        }
    }

    /// Merge a `models.json` document (JSON5 accepted): new providers and models, and
    /// overrides of built-in ones. Unknown keys are errors, so typos do not pass silently.
    pub fn apply_models_config(&mut self, text: &str) -> Result<(), CatalogError> {
        let config: ModelsConfig =
            json5::from_str(text).map_err(|e| CatalogError::Parse(e.to_string()))?;
        self.apply_models(&config)
    }

    /// Merge an already parsed models configuration (see [`ModelRegistry::apply_models_config`]).
    pub fn apply_models(&mut self, config: &ModelsConfig) -> Result<(), CatalogError> {
        // Proxy providers last: their models name models of the others.
        let (proxies, direct): (Vec<_>, Vec<_>) = config
            .providers
            .iter()
            .partition(|(_, cfg)| cfg.api.as_deref() == Some(apis::PROXY));
        for (provider, cfg) in direct.into_iter().chain(proxies) {
            self.apply_provider(provider, cfg.clone())?;
        }
        Ok(())
    }

    fn apply_provider(&mut self, provider: &str, cfg: ProviderConfig) -> Result<(), CatalogError> {
        let err = |message: String| CatalogError::Provider {
            provider: provider.to_owned(),
            message,
        };
        if let Some(key) = &cfg.api_key {
            self.keys
                .insert(provider.to_owned(), KeySpec::parse(key.expose()));
        }
        // Overrides of what the provider already has.
        for model in self.models.iter_mut().filter(|m| m.provider == provider) {
            if let Some(url) = &cfg.base_url {
                model.base_url.clone_from(url);
            }
            if let Some(headers) = &cfg.headers {
                model
                    .headers
                    .get_or_insert_with(BTreeMap::new)
                    .extend(exposed(headers));
            }
            if let Some(compat) = &cfg.compat {
                model.compat = Some(compat.clone());
            }
        }
        let known = self.models.iter().any(|m| m.provider == provider);
        for custom in cfg.models {
            let api = custom.api.clone().or_else(|| cfg.api.clone()).or_else(|| {
                self.models
                    .iter()
                    .find(|m| m.provider == provider)
                    .map(|m| m.api.clone())
            });
            let Some(api) = api else {
                return Err(err(format!(
                    "model \"{}\" needs an \"api\" (one of {}, {}, {}, {}, {})",
                    custom.id,
                    apis::OPENAI_COMPLETIONS,
                    apis::OPENAI_RESPONSES,
                    apis::ANTHROPIC_MESSAGES,
                    apis::GOOGLE_GENERATIVE_AI,
                    apis::PROXY
                )));
            };
            if api == apis::PROXY {
                let model = self.proxied_model(
                    provider,
                    cfg.base_url.as_deref(),
                    cfg.headers.as_ref(),
                    custom,
                )?;
                self.models
                    .retain(|m| !(m.provider == model.provider && m.id == model.id));
                self.models.push(model);
                continue;
            }
            let base_url = custom
                .base_url
                .clone()
                .or_else(|| cfg.base_url.clone())
                .or_else(|| {
                    self.models
                        .iter()
                        .find(|m| m.provider == provider)
                        .map(|m| m.base_url.clone())
                });
            let Some(base_url) = base_url else {
                return Err(err(format!("model \"{}\" needs a \"baseUrl\"", custom.id)));
            };
            let model = Model {
                name: custom.name.unwrap_or_else(|| custom.id.clone()),
                id: custom.id,
                api,
                provider: provider.to_owned(),
                base_url,
                reasoning: custom.reasoning.unwrap_or(false),
                input: custom.input.unwrap_or_else(|| vec![InputKind::Text]),
                cost: custom.cost.unwrap_or_default(),
                context_window: custom.context_window.unwrap_or(128_000),
                max_tokens: custom.max_tokens.unwrap_or(16_384),
                headers: merge_headers(cfg.headers.as_ref(), custom.headers),
                compat: custom.compat.or_else(|| cfg.compat.clone()),
            };
            self.models
                .retain(|m| !(m.provider == model.provider && m.id == model.id));
            self.models.push(model);
        }
        if !known && !self.models.iter().any(|m| m.provider == provider) {
            return Err(err(
                "is not a built-in provider and lists no models".to_owned()
            ));
        }
        Ok(())
    }

    /// The key configured for a provider in `models.json`, if any.
    pub fn configured_key(&self, provider: &str) -> Option<&KeySpec> {
        self.keys.get(provider)
    }

    /// All models.
    pub fn models(&self) -> &[Model] {
        &self.models
    }

    /// Provider ids, sorted and unique.
    pub fn providers(&self) -> Vec<&str> {
        let mut providers: Vec<&str> = self.models.iter().map(|m| m.provider.as_str()).collect();
        providers.sort_unstable();
        providers.dedup();
        providers
    }

    pub fn find(&self, provider: &str, id: &str) -> Option<&Model> {
        self.models
            .iter()
            .find(|m| m.provider == provider && m.id == id)
    }

    /// Look up `provider/id` (the id may contain slashes, as OpenRouter's do) or a bare id
    /// that only one provider has.
    pub fn resolve(&self, reference: &str) -> Result<&Model, CatalogError> {
        if let Some((provider, id)) = reference.split_once('/')
            && let Some(model) = self.find(provider, id)
        {
            return Ok(model);
        }
        let matches: Vec<&Model> = self.models.iter().filter(|m| m.id == reference).collect();
        match matches.as_slice() {
            [one] => Ok(one),
            [] => {
                let hint = match reference.split_once('/') {
                    Some((provider, _)) if !self.providers().contains(&provider) => format!(
                        ": no provider \"{provider}\"; known providers: {}",
                        self.providers().join(", ")
                    ),
                    Some((provider, _)) => {
                        format!("; list the models of {provider} with `pincer models`")
                    }
                    None => {
                        "; write it as provider/id, e.g. anthropic/claude-sonnet-4-5".to_owned()
                    }
                };
                Err(CatalogError::UnknownModel {
                    reference: reference.to_owned(),
                    hint,
                })
            }
            many => Err(CatalogError::Ambiguous {
                reference: reference.to_owned(),
                matches: many
                    .iter()
                    .map(|m| m.reference())
                    .collect::<Vec<_>>()
                    .join(", "),
            }),
        }
    }
}

fn merge_headers(
    provider: Option<&BTreeMap<String, Secret>>,
    model: Option<BTreeMap<String, Secret>>,
) -> Option<BTreeMap<String, String>> {
    match (provider, model) {
        (None, None) => None,
        (p, m) => {
            let mut out = p.map(exposed).unwrap_or_default();
            out.extend(m.as_ref().map(exposed).unwrap_or_default());
            Some(out)
        }
    }
}

/// Configured headers as the request sends them.
fn exposed(headers: &BTreeMap<String, Secret>) -> BTreeMap<String, String> {
    headers
        .iter()
        .map(|(name, value)| (name.clone(), value.expose().to_owned()))
        .collect()
}

/// Serialise the registry's models as pi's catalog JSON (for `models` listings).
pub fn models_to_json(models: &[Model]) -> Value {
    serde_json::to_value(models).unwrap_or(Value::Null)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::env::MapEnv;

    #[test]
    fn builtin_catalog_loads_and_covers_the_required_providers() {
        let registry = ModelRegistry::builtin().unwrap();
        let providers = registry.providers();
        for p in [
            "anthropic",
            "openai",
            "google",
            "deepseek",
            "xai",
            "groq",
            "mistral",
            "openrouter",
            "openai-codex",
            "amazon-bedrock",
            "github-copilot",
            "google-vertex",
            "google-gemini-cli",
            "stub",
        ] {
            assert!(providers.contains(&p), "missing provider {p}");
        }
        let known_apis = [
            apis::OPENAI_COMPLETIONS,
            apis::OPENAI_RESPONSES,
            apis::ANTHROPIC_MESSAGES,
            apis::GOOGLE_GENERATIVE_AI,
            apis::OPENAI_CODEX_RESPONSES,
            apis::AZURE_OPENAI_RESPONSES,
            apis::BEDROCK_CONVERSE_STREAM,
            apis::GOOGLE_VERTEX,
            apis::GOOGLE_GEMINI_CLI,
            apis::STUB,
        ];
        for model in registry.models() {
            assert!(
                known_apis.contains(&model.api.as_str()),
                "{} has api {}",
                model.reference(),
                model.api
            );
            assert!(
                model.context_window > 0 && model.max_tokens > 0,
                "{}",
                model.reference()
            );
        }
        let mut refs: Vec<String> = registry.models().iter().map(Model::reference).collect();
        let before = refs.len();
        refs.sort();
        refs.dedup();
        assert_eq!(refs.len(), before, "duplicate models in catalog");
    }

    #[test]
    fn resolves_references() {
        let registry = ModelRegistry::builtin().unwrap();
        assert_eq!(registry.resolve("stub/echo").unwrap().api, "stub");
        assert_eq!(registry.resolve("echo").unwrap().provider, "stub");
        let any_openrouter = registry
            .models()
            .iter()
            .find(|m| m.provider == "openrouter" && m.id.contains('/'))
            .unwrap();
        assert_eq!(
            registry.resolve(&any_openrouter.reference()).unwrap(),
            any_openrouter
        );
        let err = registry.resolve("nope/x").unwrap_err().to_string();
        assert!(
            err.starts_with("unknown model \"nope/x\": no provider \"nope\"; known providers: "),
            "{err}"
        );
        assert!(
            registry
                .resolve("anthropic/not-a-model")
                .unwrap_err()
                .to_string()
                .contains("pincer models")
        );
    }

    /// Whether the base URL of every model of `provider` passes `ok`.
    fn base_urls_are(registry: &ModelRegistry, provider: &str, ok: impl Fn(&str) -> bool) -> bool {
        registry
            .models()
            .iter()
            .filter(|m| m.provider == provider)
            .all(|m| ok(&m.base_url))
    }

    #[test]
    fn env_overrides_base_urls() {
        let mut registry = ModelRegistry::builtin().unwrap();
        registry.apply_env_overrides(&MapEnv::new([
            ("OPENAI_BASE_URL", "http://127.0.0.1:9/v1"),
            ("ANTHROPIC_BASE_URL", "http://127.0.0.1:8"),
        ]));
        assert!(base_urls_are(&registry, "openai", |url| url == "http://127.0.0.1:9/v1"));
        assert!(base_urls_are(&registry, "anthropic", |url| url == "http://127.0.0.1:8"));
        assert!(base_urls_are(&registry, "google", |url| url.starts_with("https://")));
    }

    #[test]
    fn custom_providers_in_pi_models_json_shape() {
        let mut registry = ModelRegistry::builtin().unwrap();
        registry
            .apply_models_config(
                r#"{
                  // comments are fine (JSON5)
                  "providers": {
                    "ollama": {"baseUrl": "http://127.0.0.1:11434/v1", "api": "openai-completions", "apiKey": "!echo k",
                               "compat": {"supportsDeveloperRole": false},
                               "models": [{"id": "llama3.1:8b", "contextWindow": 32000}]},
                    "anthropic": {"baseUrl": "http://127.0.0.1:7"}
                  }
                }"#,
            )
            .unwrap();
        let m = registry.resolve("ollama/llama3.1:8b").unwrap();
        assert_eq!(
            (
                m.api.as_str(),
                m.base_url.as_str(),
                m.context_window,
                m.max_tokens
            ),
            (
                "openai-completions",
                "http://127.0.0.1:11434/v1",
                32000,
                16384
            )
        );
        assert_eq!(
            m.compat.as_ref().unwrap().supports_developer_role,
            Some(false)
        );
        let key = registry
            .configured_key("ollama")
            .unwrap()
            .resolve("ollama", &MapEnv::default())
            .unwrap();
        assert_eq!(key, "k");
        assert!(base_urls_are(&registry, "anthropic", |url| url == "http://127.0.0.1:7"));
    }

    #[test]
    fn bad_models_config_is_a_clear_error() {
        let mut registry = ModelRegistry::builtin().unwrap();
        let err = registry
            .apply_models_config(r#"{"providers":{"x":{"baseUrl":"u","modles":[]}}}"#)
            .unwrap_err()
            .to_string();
        assert!(err.contains("modles"), "{err}");
        let err = registry
            .apply_models_config(r#"{"providers":{"x":{"baseUrl":"u","models":[{"id":"m"}]}}}"#)
            .unwrap_err()
            .to_string();
        assert_eq!(
            err,
            "models configuration: provider \"x\": model \"m\" needs an \"api\" (one of openai-completions, openai-responses, anthropic-messages, google-generative-ai, proxy)"
        );
        let err = registry
            .apply_models_config("{providers: {")
            .unwrap_err()
            .to_string();
        assert!(err.starts_with("models configuration: "), "{err}");
        assert!(err.contains("line 1"), "{err}");
        let key = KeySpec::parse("MY_KEY")
            .resolve("p", &MapEnv::new([("MY_KEY", "v")]))
            .unwrap();
        assert_eq!(key, "v");
        assert_eq!(
            KeySpec::parse("literal")
                .resolve("p", &MapEnv::default())
                .unwrap(),
            "literal"
        );
        assert!(
            KeySpec::parse("!exit 3")
                .resolve("p", &MapEnv::default())
                .unwrap_err()
                .to_string()
                .contains("exited")
        );
    }
}

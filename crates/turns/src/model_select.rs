//! Which model a run uses, and what it falls back to.
//!
//! A model is named `provider/model` (OpenClaw's form). The first of these that is set
//! wins: the command line (`--model provider/model`, or `--provider` + `--model`, or
//! `--provider` alone for that provider's default model), the session's own override
//! (`sessions.patch model`), the agent's entry in `agents.list`, `agents.defaults.model`,
//! `PINCER_MODEL` in the environment, the first custom provider in the config's `models`,
//! the first provider with a stored auth profile, the first provider whose key is in the
//! environment (with that provider's default model), and finally the offline `stub`, so a
//! fresh install always answers.
//!
//! Fallbacks (`{ primary, fallbacks }`) come only with a primary from the configuration: a
//! model named on the command line or patched onto a session is what the user asked for,
//! and answering from another one would surprise them.

use pincer_ai::env::{EnvSource, api_key_vars};
use pincer_ai::{CatalogError, Model, ModelRegistry, providers::stub};
use pincer_config::ModelSelection;

/// The providers whose environment keys Pincer looks for, in order, with the model each
/// one starts with when nothing names a model.
pub const DEFAULT_MODELS: &[(&str, &str)] = &[
    ("anthropic", "claude-sonnet-4-5"),
    ("openai", "gpt-5.1"),
    ("google", "gemini-2.5-pro"),
    ("deepseek", "deepseek-chat"),
    ("xai", "grok-4-fast-non-reasoning"),
    ("groq", "openai/gpt-oss-120b"),
    ("mistral", "mistral-large-latest"),
    ("openrouter", "anthropic/claude-sonnet-4.5"),
    // Signed in with `pincer auth login openai-codex` (lainclaw's model).
    ("openai-codex", "gpt-5.4"),
    // The rest of pi's key table, with pi's defaults (`defaultModelPerProvider`; Vercel's
    // names the Opus 4.6 it lists, Cerebras' the GLM it has).
    ("azure-openai-responses", "gpt-5.2"),
    ("vercel-ai-gateway", "anthropic/claude-opus-4.6"),
    ("cerebras", "zai-glm-4.7"),
    ("zai", "glm-4.6"),
    ("minimax", "MiniMax-M2.1"),
    ("minimax-cn", "MiniMax-M2.1"),
    ("huggingface", "moonshotai/Kimi-K2.5"),
    ("opencode", "claude-opus-4-6"),
    ("opencode-go", "kimi-k2.5"),
    ("kimi-coding", "kimi-k2-thinking"),
];

/// Where the chosen model came from (shown by `--json` and `pincer status`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ModelSource {
    CommandLine,
    Session,
    Agent,
    Defaults,
    /// `PINCER_MODEL`.
    EnvModel,
    /// The first custom provider of the config's `models` section.
    CustomProvider,
    /// A provider with a stored auth profile.
    AuthProfile,
    /// The named environment variable holds the provider's key.
    EnvKey(&'static str),
    /// Nothing is configured: the offline stub.
    Stub,
}

/// What the command line and configuration say about the model.
#[derive(Debug, Clone, Default)]
pub struct ModelRequest<'a> {
    pub cli_provider: Option<&'a str>,
    pub cli_model: Option<&'a str>,
    /// The session's `model` override (`provider/model`).
    pub session: Option<&'a str>,
    /// The agent's `agents.list[].model`.
    pub agent: Option<&'a ModelSelection>,
    /// `agents.defaults.model`.
    pub defaults: Option<&'a ModelSelection>,
}

/// The chosen model and its fallbacks, resolved against the registry.
#[derive(Debug, Clone)]
pub struct ModelChoice {
    pub primary: Model,
    pub fallbacks: Vec<Model>,
    pub source: ModelSource,
}

impl ModelChoice {
    /// The primary model, then the fallbacks.
    pub fn chain(&self) -> Vec<Model> {
        std::iter::once(self.primary.clone())
            .chain(self.fallbacks.iter().cloned())
            .collect()
    }
}

/// Why no model could be chosen.
#[derive(Debug, thiserror::Error)]
pub enum SelectError {
    /// The catalog's reason is part of the message, not a `source`: printed as a chain
    /// it would appear twice.
    #[error("{origin}: {reason}")]
    Unknown {
        origin: String,
        reason: CatalogError,
    },
    #[error("--provider {provider}: no such provider; known providers: {known}")]
    UnknownProvider { provider: String, known: String },
}

/// Facts about the machine the choice depends on.
pub struct SelectionContext<'a> {
    pub registry: &'a ModelRegistry,
    pub env: &'a dyn EnvSource,
    /// Custom providers named in the config's `models` section, in file order.
    pub custom_providers: &'a [String],
    /// Providers that have a stored auth profile.
    pub profile_providers: &'a [String],
}

/// Chooses the model for a run (see the module docs for the order).
pub fn select_model(
    request: &ModelRequest<'_>,
    cx: &SelectionContext<'_>,
) -> Result<ModelChoice, SelectError> {
    let resolve = |reference: &str, origin: &str| {
        cx.registry
            .resolve(reference)
            .cloned()
            .map_err(|reason| SelectError::Unknown {
                origin: origin.to_owned(),
                reason,
            })
    };
    let plain = |primary: Model, source: ModelSource| ModelChoice {
        primary,
        fallbacks: Vec::new(),
        source,
    };
    match (request.cli_provider, request.cli_model) {
        (Some(provider), Some(model)) if !model.contains('/') => {
            let reference = format!("{provider}/{model}");
            return Ok(plain(
                resolve(&reference, "--provider/--model")?,
                ModelSource::CommandLine,
            ));
        }
        (_, Some(model)) => {
            return Ok(plain(resolve(model, "--model")?, ModelSource::CommandLine));
        }
        (Some(provider), None) => {
            let model = provider_default(cx.registry, provider).ok_or_else(|| {
                SelectError::UnknownProvider {
                    provider: provider.to_owned(),
                    known: cx.registry.providers().join(", "),
                }
            })?;
            return Ok(plain(model, ModelSource::CommandLine));
        }
        (None, None) => {}
    }
    if let Some(reference) = request.session {
        return Ok(plain(
            resolve(reference, "the session's model")?,
            ModelSource::Session,
        ));
    }
    for (selection, origin, source) in [
        (request.agent, "agents.list[].model", ModelSource::Agent),
        (
            request.defaults,
            "agents.defaults.model",
            ModelSource::Defaults,
        ),
    ] {
        if let Some(selection) = selection {
            let primary = resolve(selection.primary(), origin)?;
            let mut fallbacks = Vec::new();
            for reference in selection.fallbacks() {
                let model = resolve(reference, &format!("{origin} fallbacks"))?;
                let duplicate = model.reference() == primary.reference()
                    || fallbacks
                        .iter()
                        .any(|m: &Model| m.reference() == model.reference());
                if !duplicate {
                    fallbacks.push(model);
                }
            }
            return Ok(ModelChoice {
                primary,
                fallbacks,
                source,
            });
        }
    }
    if let Some(reference) = cx.env.var("PINCER_MODEL") {
        return Ok(plain(
            resolve(&reference, "PINCER_MODEL")?,
            ModelSource::EnvModel,
        ));
    }
    if let Some(model) = cx
        .custom_providers
        .iter()
        .find_map(|p| provider_default(cx.registry, p))
    {
        return Ok(plain(model, ModelSource::CustomProvider));
    }
    if let Some(model) = cx
        .profile_providers
        .iter()
        .find_map(|p| provider_default(cx.registry, p))
    {
        return Ok(plain(model, ModelSource::AuthProfile));
    }
    for (provider, _) in DEFAULT_MODELS {
        let Some(var) = api_key_vars(provider)
            .iter()
            .find(|var| cx.env.var(var).is_some())
        else {
            continue;
        };
        if let Some(model) = provider_default(cx.registry, provider) {
            return Ok(plain(model, ModelSource::EnvKey(var)));
        }
    }
    Ok(plain(stub::model(), ModelSource::Stub))
}

/// The model a provider starts with: its entry in [`DEFAULT_MODELS`] if the registry has
/// it, else the provider's first model.
pub fn provider_default(registry: &ModelRegistry, provider: &str) -> Option<Model> {
    DEFAULT_MODELS
        .iter()
        .find(|(p, _)| *p == provider)
        .and_then(|(p, id)| registry.find(p, id))
        .or_else(|| registry.models().iter().find(|m| m.provider == provider))
        .cloned()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;
    use pincer_ai::env::MapEnv;
    use pincer_config::ModelChain;

    fn registry() -> ModelRegistry {
        let mut r = ModelRegistry::builtin().unwrap();
        r.apply_models_config(
            r#"{providers: {local: {baseUrl: "http://127.0.0.1:9/v1", api: "openai-completions",
                models: [{id: "small"}, {id: "big"}]}}}"#,
        )
        .unwrap();
        r
    }

    fn pick(
        request: &ModelRequest<'_>,
        env: &MapEnv,
        custom: &[&str],
        profiles: &[&str],
    ) -> (String, ModelSource, Vec<String>) {
        let registry = registry();
        let custom: Vec<String> = custom.iter().map(|s| (*s).to_owned()).collect();
        let profiles: Vec<String> = profiles.iter().map(|s| (*s).to_owned()).collect();
        let cx = SelectionContext {
            registry: &registry,
            env,
            custom_providers: &custom,
            profile_providers: &profiles,
        };
        let choice = select_model(request, &cx).unwrap();
        (
            choice.primary.reference(),
            choice.source,
            choice.fallbacks.iter().map(Model::reference).collect(),
        )
    }

    #[test]
    fn the_order_of_sources() {
        let none = MapEnv::default();
        let keys = MapEnv::new([("OPENAI_API_KEY", "k"), ("GEMINI_API_KEY", "g")]);
        let chain = ModelSelection::Chain(ModelChain {
            primary: "anthropic/claude-haiku-4-5".into(),
            fallbacks: vec!["openai/gpt-4o".into(), "anthropic/claude-haiku-4-5".into()],
        });
        let agent = ModelSelection::Primary("local/big".into());
        let full = ModelRequest {
            cli_provider: None,
            cli_model: Some("openai/gpt-4o-mini"),
            session: Some("google/gemini-2.5-flash"),
            agent: Some(&agent),
            defaults: Some(&chain),
        };
        assert_eq!(pick(&full, &keys, &["local"], &[]).0, "openai/gpt-4o-mini");
        let r = ModelRequest {
            cli_model: None,
            ..full.clone()
        };
        assert_eq!(pick(&r, &keys, &[], &[]).1, ModelSource::Session);
        let r = ModelRequest { session: None, ..r };
        assert_eq!(
            pick(&r, &keys, &[], &[]),
            ("local/big".into(), ModelSource::Agent, vec![])
        );
        let r = ModelRequest { agent: None, ..r };
        assert_eq!(
            pick(&r, &keys, &[], &[]),
            (
                "anthropic/claude-haiku-4-5".into(),
                ModelSource::Defaults,
                vec!["openai/gpt-4o".into()]
            )
        );
        let empty = ModelRequest::default();
        let env_model = MapEnv::new([("PINCER_MODEL", "local/small"), ("OPENAI_API_KEY", "k")]);
        assert_eq!(pick(&empty, &env_model, &[], &[]).0, "local/small");
        assert_eq!(
            pick(&empty, &keys, &["local"], &["google"]),
            ("local/small".into(), ModelSource::CustomProvider, vec![])
        );
        assert_eq!(
            pick(&empty, &keys, &[], &["google"]),
            (
                "google/gemini-2.5-pro".into(),
                ModelSource::AuthProfile,
                vec![]
            )
        );
        assert_eq!(
            pick(&empty, &keys, &[], &[]),
            (
                "openai/gpt-5.1".into(),
                ModelSource::EnvKey("OPENAI_API_KEY"),
                vec![]
            )
        );
        assert_eq!(
            pick(
                &empty,
                &MapEnv::new([("ANTHROPIC_OAUTH_TOKEN", "o")]),
                &[],
                &[]
            )
            .1,
            ModelSource::EnvKey("ANTHROPIC_OAUTH_TOKEN")
        );
        assert_eq!(
            pick(&empty, &none, &[], &[]),
            ("stub/echo".into(), ModelSource::Stub, vec![])
        );
    }

    #[test]
    fn command_line_forms() {
        let env = MapEnv::default();
        let both = ModelRequest {
            cli_provider: Some("local"),
            cli_model: Some("big"),
            ..ModelRequest::default()
        };
        assert_eq!(pick(&both, &env, &[], &[]).0, "local/big");
        let provider_only = ModelRequest {
            cli_provider: Some("anthropic"),
            ..ModelRequest::default()
        };
        assert_eq!(
            pick(&provider_only, &env, &[], &[]).0,
            "anthropic/claude-sonnet-4-5"
        );
        let custom_only = ModelRequest {
            cli_provider: Some("local"),
            ..ModelRequest::default()
        };
        assert_eq!(pick(&custom_only, &env, &[], &[]).0, "local/small");
    }

    #[test]
    fn unknown_models_and_providers_are_clear_errors() {
        let registry = registry();
        let env = MapEnv::default();
        let cx = SelectionContext {
            registry: &registry,
            env: &env,
            custom_providers: &[],
            profile_providers: &[],
        };
        let err = |r: ModelRequest<'_>| select_model(&r, &cx).unwrap_err().to_string();
        assert_eq!(
            err(ModelRequest {
                cli_model: Some("nope/x"),
                ..ModelRequest::default()
            }),
            format!(
                "--model: unknown model \"nope/x\": no provider \"nope\"; known providers: {}",
                registry.providers().join(", ")
            )
        );
        assert_eq!(
            err(ModelRequest {
                cli_provider: Some("nope"),
                ..ModelRequest::default()
            }),
            format!(
                "--provider nope: no such provider; known providers: {}",
                registry.providers().join(", ")
            )
        );
        let bad = ModelSelection::Primary("openai/gpt-9".into());
        assert_eq!(
            err(ModelRequest {
                defaults: Some(&bad),
                ..ModelRequest::default()
            }),
            "agents.defaults.model: unknown model \"openai/gpt-9\"; list the models of openai with `pincer models`"
        );
    }

    #[test]
    fn every_default_model_is_in_the_catalog_and_a_lone_key_picks_it() {
        let registry = ModelRegistry::builtin().unwrap();
        for (provider, id) in DEFAULT_MODELS {
            assert!(registry.find(provider, id).is_some(), "{provider}/{id}");
        }
        let request = ModelRequest {
            cli_provider: None,
            cli_model: None,
            session: None,
            agent: None,
            defaults: None,
        };
        for (var, want) in [
            ("CEREBRAS_API_KEY", "cerebras/zai-glm-4.7"),
            ("HF_TOKEN", "huggingface/moonshotai/Kimi-K2.5"),
            ("KIMI_API_KEY", "kimi-coding/kimi-k2-thinking"),
            ("AZURE_OPENAI_API_KEY", "azure-openai-responses/gpt-5.2"),
        ] {
            let (model, source, _) = pick(&request, &MapEnv::new([(var, "k")]), &[], &[]);
            assert_eq!((model.as_str(), source), (want, ModelSource::EnvKey(var)));
        }
    }
}

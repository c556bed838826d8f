//! The binary's side of the `image` tool ([`pincer_tools::VisionModel`]): which model looks
//! at pictures, the one completion that asks it, and the download of an http(s) image.
//!
//! The model is `agents.defaults.imageModel` (with its fallbacks), else the agent's own
//! configured model when its catalog entry takes images. It is resolved when the tool is
//! called, not when the tool list is built: building the catalog and reading the auth file
//! on every turn, for a tool most turns never call, would tax them all. So the tool is
//! always offered, and without a model that takes images it answers a clear error. The call
//! goes through the turns' failover stream function over the same auth profiles and keys.

use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context as _, Result, bail};
use futures_util::future::BoxFuture;
use pincer_agent::AgentTool;
use pincer_ai::env::EnvSource;
use pincer_ai::{
    ContentBlock, Context, ImageContent, InputKind, LlmClient, Message, Model, ModelRegistry,
    ModelsConfig, StreamOptions, UserContent, UserMessage,
};
use pincer_config::ModelSelection;
use pincer_tools::{ImageTool, PathPolicy, VisionModel};
use pincer_turns::failover::{Attempts, failover_stream_fn};
use pincer_turns::model_select::{ModelRequest, SelectionContext, select_model};

use crate::app::App;
use crate::credentials::SharedCredentials;

/// How long the vision model has to answer (OpenClaw's image timeout).
const DESCRIBE_TIMEOUT: Duration = Duration::from_secs(60);
/// How long an image download may take, redirects included.
const FETCH_TIMEOUT: Duration = Duration::from_secs(10);
/// Most tokens of an answer (OpenClaw's, unless the model's own limit is lower).
const MAX_ANSWER_TOKENS: u64 = 4096;

/// Said when no model can look at pictures.
pub const NO_IMAGE_MODEL: &str =
    "no image model: set agents.defaults.imageModel to a model that takes images";

/// The `image` tool of `agent_id`, confined by `policy`.
pub fn image_tool(app: &App, agent_id: &str, policy: PathPolicy) -> Result<Arc<dyn AgentTool>> {
    let defaults = &app.config.agents.defaults;
    let vision = AppVision(Arc::new(Setup {
        env: Arc::clone(&app.env),
        models: app.config.models.clone(),
        image_model: defaults.image_model.clone(),
        agent_model: app.agent_entry(agent_id).and_then(|a| a.model.clone()),
        default_model: defaults.model.clone(),
        custom_providers: app.custom_providers(),
        credentials: SharedCredentials::new(app, None)?,
        fetch_policy: crate::web_setup::fetch_policy(
            app.web_config(agent_id).and_then(|w| w.fetch.as_ref()),
        ),
    }));
    Ok(pincer_agent::typed(ImageTool::new(
        policy,
        Arc::new(vision),
    )))
}

/// What the call needs from the configuration, taken when the tool is built.
struct Setup {
    env: Arc<dyn EnvSource>,
    models: ModelsConfig,
    image_model: Option<ModelSelection>,
    agent_model: Option<ModelSelection>,
    default_model: Option<ModelSelection>,
    custom_providers: Vec<String>,
    credentials: SharedCredentials,
    /// Where an image URL may be fetched from: `web_fetch`'s policy (`tools.web.fetch`),
    /// so a prompt cannot point the tool at the local network or a metadata service.
    fetch_policy: pincer_web::ssrf::NetworkPolicy,
}

#[derive(Clone)]
struct AppVision(Arc<Setup>);

impl VisionModel for AppVision {
    fn describe(
        &self,
        image: ImageContent,
        prompt: String,
    ) -> BoxFuture<'static, Result<String, String>> {
        let setup = Arc::clone(&self.0);
        Box::pin(async move {
            let call = tokio::task::spawn_blocking(move || setup.prepare())
                .await
                .map_err(|e| format!("the image model's setup failed: {e}"))?
                .map_err(|e| format!("{e:#}"))?;
            call.ask(image, prompt).await
        })
    }

    fn fetch(&self, url: String, limit: u64) -> BoxFuture<'static, Result<Vec<u8>, String>> {
        let policy = self.0.fetch_policy.clone();
        Box::pin(fetch(policy, url, limit))
    }
}

/// One vision call, ready: its models (the first takes images) and a client with their keys.
struct Call {
    chain: Vec<Model>,
    client: LlmClient,
    credentials: Arc<dyn pincer_turns::failover::CredentialSource>,
}

impl Setup {
    /// The catalog, the auth file and the model (blocking: it reads files).
    fn prepare(&self) -> Result<Call> {
        let mut registry = ModelRegistry::builtin()?;
        registry.apply_env_overrides(self.env.as_ref());
        registry.apply_models(&self.models).context("models")?;
        let auth = self.credentials.for_turn()?;
        let chain = self.chain(&registry, &auth.profile_providers)?;
        let client = LlmClient::with_env(Arc::clone(&self.env));
        for model in &chain {
            if let Some(spec) = registry.configured_key(&model.provider) {
                client.set_api_key(
                    &model.provider,
                    spec.resolve(&model.provider, self.env.as_ref())?,
                );
            }
        }
        Ok(Call {
            chain,
            client,
            credentials: auth.credentials,
        })
    }

    /// `imageModel` and its fallbacks, else the agent's model when it takes images.
    fn chain(&self, registry: &ModelRegistry, profile_providers: &[String]) -> Result<Vec<Model>> {
        let takes_images = |m: &Model| m.input.contains(&InputKind::Image);
        if let Some(selection) = &self.image_model {
            let (primary, fallbacks) = match selection {
                ModelSelection::Primary(p) => (p.as_str(), &[][..]),
                ModelSelection::Chain(c) => (c.primary.as_str(), c.fallbacks.as_slice()),
            };
            let mut chain = Vec::new();
            for reference in std::iter::once(primary).chain(fallbacks.iter().map(String::as_str)) {
                let model = registry
                    .resolve(reference)
                    .with_context(|| format!("agents.defaults.imageModel {reference:?}"))?;
                if !takes_images(model) {
                    bail!(
                        "agents.defaults.imageModel {reference:?} does not take images (its \
                         input is text only); name a model that does"
                    );
                }
                chain.push(model.clone());
            }
            return Ok(chain);
        }
        let request = ModelRequest {
            agent: self.agent_model.as_ref(),
            defaults: self.default_model.as_ref(),
            ..ModelRequest::default()
        };
        let cx = SelectionContext {
            registry,
            env: self.env.as_ref(),
            custom_providers: &self.custom_providers,
            profile_providers,
        };
        let choice = select_model(&request, &cx)?;
        if !takes_images(&choice.primary) {
            bail!(NO_IMAGE_MODEL);
        }
        Ok(std::iter::once(choice.primary)
            .chain(choice.fallbacks.into_iter().filter(takes_images))
            .collect())
    }
}

impl Call {
    /// One completion: a user message of the prompt and the image, no tools, no history.
    async fn ask(self, image: ImageContent, prompt: String) -> Result<String, String> {
        let mut chain = self.chain.into_iter();
        let Some(primary) = chain.next() else {
            return Err(NO_IMAGE_MODEL.to_owned());
        };
        let stream_fn = failover_stream_fn(
            self.client,
            chain.collect(),
            self.credentials,
            Attempts::default(),
        );
        let context = Context {
            system_prompt: None,
            messages: vec![Message::User(UserMessage {
                content: UserContent::Blocks(vec![
                    ContentBlock::text(prompt),
                    ContentBlock::Image(image),
                ]),
                timestamp: pincer_base::now_ms(),
            })],
            tools: Vec::new(),
        };
        let options = StreamOptions {
            max_tokens: Some(match primary.max_tokens {
                0 => MAX_ANSWER_TOKENS,
                own => own.min(MAX_ANSWER_TOKENS),
            }),
            ..StreamOptions::default()
        };
        let reference = primary.reference();
        let reply = tokio::time::timeout(
            DESCRIBE_TIMEOUT,
            stream_fn(&primary, &context, options).complete(),
        )
        .await
        .map_err(|_| {
            format!(
                "the image model {reference} did not answer within {} s",
                DESCRIBE_TIMEOUT.as_secs()
            )
        })?
        .map_err(|e| format!("the image model {reference} failed: {}", e.message))?;
        let text = reply.text();
        if text.trim().is_empty() {
            return Err(format!("the image model {reference} answered with no text"));
        }
        Ok(text)
    }
}

/// GETs `url`, at most `limit` bytes ([`pincer_ai::fetch::fetch_capped`]).
async fn fetch(
    policy: pincer_web::ssrf::NetworkPolicy,
    url: String,
    limit: u64,
) -> Result<Vec<u8>, String> {
    use pincer_ai::fetch::{FetchError, FetchLimits, fetch_capped_with};
    let checked = policy.check_url(&url).map_err(|e| e.to_string())?;
    // Names are checked where the client connects (and every redirect again).
    let client =
        pincer_web::fetch::http::client(&policy, pincer_web::fetch::USER_AGENT, FETCH_TIMEOUT)
            .map_err(|e| e.to_string())?;
    let limits = FetchLimits {
        max_bytes: limit,
        timeout: FETCH_TIMEOUT,
        max_redirects: pincer_web::ssrf::MAX_REDIRECTS,
    };
    fetch_capped_with(&client, checked.as_str(), limits)
        .await
        .map_err(|e| match e {
            FetchError::TooLarge { .. } => {
                format!("larger than {limit} bytes, the most the image tool takes")
            }
            other => other.to_string(),
        })
}

//! The `google-vertex` wire API: Gemini on Vertex AI, as pi-ai's `google-vertex.ts` (through
//! the `@google/genai` SDK) calls it. The body and the stream are Gemini's
//! ([`request`](super::request), [`GoogleDecoder`](super::decode::GoogleDecoder)); what
//! differs is the endpoint and the credentials:
//!
//! - with an API key (`GOOGLE_CLOUD_API_KEY`, Vertex express mode):
//!   `{base}/v1/publishers/google/models/{model}:streamGenerateContent?alt=sse`, key in
//!   `x-goog-api-key`, base without a location;
//! - else Application Default Credentials ([`adc`](super::adc)) for project and location
//!   (`GOOGLE_CLOUD_PROJECT`/`GCLOUD_PROJECT`, `GOOGLE_CLOUD_LOCATION`):
//!   `{base}/v1/projects/{project}/locations/{location}/publishers/google/models/{model}:streamGenerateContent?alt=sse`
//!   with a bearer token. The catalog's base is `https://{location}-aiplatform.googleapis.com`;
//!   the `global` location has no regional host (`https://aiplatform.googleapis.com`).
//!
//! A token the server refuses (401/403 before any output) is dropped and fetched anew, and
//! the call made once more; a second refusal is reported as such.

use std::path::PathBuf;
use std::sync::Arc;

use futures_util::StreamExt;
use tokio::sync::mpsc;

use super::adc::{AdcError, TokenSource, credential_path};
use super::decode::GoogleDecoder;
use super::request;
use crate::client::LazyHttpClient;
use crate::env::{EnvSource, ProcessEnv};
use crate::error::ErrorKind;
use crate::event::{AssistantMessageEvent, AssistantStream};
use crate::http::{HttpCall, failed_stream, spawn_http_stream};
use crate::model::{Model, apis};
use crate::options::StreamOptions;
use crate::providers::join_url;
use crate::registry::ApiProvider;
use crate::types::Context;

/// Where a Vertex call goes and with which credentials, when not from the environment.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct VertexSettings {
    pub project: Option<String>,
    pub location: Option<String>,
    /// The ADC file; else `GOOGLE_APPLICATION_CREDENTIALS`, else gcloud's default.
    pub credentials_file: Option<PathBuf>,
}

/// The `google-vertex` provider.
#[derive(Clone)]
pub struct GoogleVertex {
    client: LazyHttpClient,
    env: Arc<dyn EnvSource>,
    settings: VertexSettings,
    tokens: Arc<TokenSource>,
}

impl GoogleVertex {
    /// Reads project, location and credentials from the process environment.
    pub fn new(client: impl Into<LazyHttpClient>) -> Self {
        Self {
            client: client.into(),
            env: Arc::new(ProcessEnv),
            settings: VertexSettings::default(),
            tokens: Arc::default(),
        }
    }

    /// Reads them from `env` instead.
    pub fn with_env(mut self, env: Arc<dyn EnvSource>) -> Self {
        self.env = env;
        self
    }

    /// Explicit settings win over the environment.
    pub fn with_settings(mut self, settings: VertexSettings) -> Self {
        self.settings = settings;
        self
    }

    fn project(&self) -> Result<String, String> {
        self.settings
            .project
            .clone()
            .or_else(|| self.env.var("GOOGLE_CLOUD_PROJECT"))
            .or_else(|| self.env.var("GCLOUD_PROJECT"))
            .ok_or_else(|| {
                "Vertex AI needs a project: set GOOGLE_CLOUD_PROJECT (or GCLOUD_PROJECT)".to_owned()
            })
    }

    fn location(&self) -> Result<String, String> {
        self.settings
            .location
            .clone()
            .or_else(|| self.env.var("GOOGLE_CLOUD_LOCATION"))
            .ok_or_else(|| {
                "Vertex AI needs a location: set GOOGLE_CLOUD_LOCATION (for example us-central1 or global)".to_owned()
            })
    }

    fn credentials_file(&self) -> Result<PathBuf, AdcError> {
        credential_path(
            self.settings.credentials_file.as_deref(),
            self.env.var("GOOGLE_APPLICATION_CREDENTIALS"),
            self.env.var("HOME").map(PathBuf::from),
        )
        .ok_or_else(|| AdcError::NotFound("(no HOME to find gcloud's file under)".into()))
    }
}

impl ApiProvider for GoogleVertex {
    fn api(&self) -> &str {
        apis::GOOGLE_VERTEX
    }

    fn stream(&self, model: &Model, context: &Context, options: StreamOptions) -> AssistantStream {
        if model.base_url.trim().is_empty() {
            return failed_stream(
                model,
                ErrorKind::Config,
                format!(
                    "{}: the model has no baseUrl; set one in the models configuration",
                    model.reference()
                ),
            );
        }
        let (tx, rx) = AssistantStream::channel();
        let task = tokio::spawn(run(
            self.clone(),
            model.clone(),
            context.clone(),
            options,
            tx,
        ));
        AssistantStream::from_task(rx, task)
    }
}

/// `base` for `location`: the `{location}` placeholder filled, or dropped with its dash
/// for `global` and for express mode (`None`), which have no regional host.
pub fn vertex_base(base: &str, location: Option<&str>) -> String {
    match location {
        Some(loc) if loc != "global" => base.replace("{location}", loc),
        _ => base
            .replace("{location}-", "")
            .replace("{location}", "global"),
    }
}

/// The request for `model` with `token` (ADC) or `api_key` (express mode).
pub fn vertex_call(
    model: &Model,
    context: &Context,
    options: &StreamOptions,
    auth: &VertexAuth,
) -> HttpCall {
    let method = format!("models/{}:streamGenerateContent?alt=sse", model.id);
    let (url, headers) = match auth {
        VertexAuth::ApiKey(key) => (
            join_url(
                &vertex_base(&model.base_url, None),
                &format!("v1/publishers/google/{method}"),
            ),
            request::headers(model, options, Some(key)),
        ),
        VertexAuth::Token {
            token,
            project,
            location,
        } => {
            let mut headers = crate::providers::common_headers(model, options);
            if !headers
                .iter()
                .any(|(n, _)| n.eq_ignore_ascii_case("authorization"))
            {
                headers.push(("authorization".into(), format!("Bearer {token}")));
            }
            (
                join_url(
                    &vertex_base(&model.base_url, Some(location)),
                    &format!(
                        "v1/projects/{project}/locations/{location}/publishers/google/{method}"
                    ),
                ),
                headers,
            )
        }
    };
    HttpCall::sse(url, headers, request::body(model, context, options))
}

/// How a Vertex call authenticates.
#[derive(Debug, Clone)]
pub enum VertexAuth {
    ApiKey(String),
    Token {
        token: String,
        project: String,
        location: String,
    },
}

async fn run(
    vertex: GoogleVertex,
    model: Model,
    context: Context,
    options: StreamOptions,
    tx: mpsc::Sender<AssistantMessageEvent>,
) {
    let fail = |kind: ErrorKind, message: String| failed_stream(&model, kind, message);
    let http = vertex.client.get().clone();
    let key = options.api_key.clone().filter(|k| !k.trim().is_empty());
    let adc = match key {
        Some(key) => {
            let call = vertex_call(&model, &context, &options, &VertexAuth::ApiKey(key));
            let stream = spawn_http_stream(
                http,
                model.clone(),
                call,
                Box::new(GoogleDecoder::new(&model)),
                options,
            );
            forward(stream, &tx).await;
            return;
        }
        None => {
            let setup = vertex
                .project()
                .and_then(|p| vertex.location().map(|l| (p, l)));
            let (project, location) = match setup {
                Ok(found) => found,
                Err(message) => {
                    return forward(fail(ErrorKind::Config, message), &tx).await;
                }
            };
            match vertex.credentials_file() {
                Ok(path) => (project, location, path),
                Err(e) => return forward(fail(ErrorKind::Auth, e.to_string()), &tx).await,
            }
        }
    };
    let (project, location, path) = adc;
    for attempt in 0..2 {
        let token = match vertex.tokens.token(&http, &path).await {
            Ok(token) => token,
            Err(e) => {
                let kind = match e {
                    AdcError::Network { .. } => ErrorKind::Network,
                    _ => ErrorKind::Auth,
                };
                return forward(fail(kind, format!("{}: {e}", model.reference())), &tx).await;
            }
        };
        let auth = VertexAuth::Token {
            token: token.clone(),
            project: project.clone(),
            location: location.clone(),
        };
        let call = vertex_call(&model, &context, &options, &auth);
        let mut stream = spawn_http_stream(
            http.clone(),
            model.clone(),
            call,
            Box::new(GoogleDecoder::new(&model)),
            options.clone(),
        );
        let mut first = true;
        while let Some(mut event) = stream.next().await {
            if first
                && let AssistantMessageEvent::Error { kind, error, .. } = &mut event
                && *kind == ErrorKind::Auth
            {
                vertex.tokens.invalidate(&token).await;
                if attempt == 0 {
                    tracing::info!(model = %model.reference(), "Vertex refused the access token; fetching a new one");
                    break;
                }
                let said = error.error_message.take().unwrap_or_default();
                error.error_message = Some(format!(
                    "{said} (Vertex AI refused a freshly fetched access token too: check that the credentials may use Vertex AI in project {project})"
                ));
            }
            first = false;
            let terminal = event.is_terminal();
            if tx.send(event).await.is_err() || terminal {
                return;
            }
        }
    }
}

/// Sends every event of `stream` on.
async fn forward(mut stream: AssistantStream, tx: &mpsc::Sender<AssistantMessageEvent>) {
    while let Some(event) = stream.next().await {
        if tx.send(event).await.is_err() {
            return;
        }
    }
}

//! The `azure-openai-responses` wire API: the Responses protocol served by an Azure OpenAI
//! resource (pi-ai's `azure-openai-responses.ts`). Body and stream are `openai-responses`';
//! where and how the request goes differ:
//!
//! - `POST {base}/responses?api-version={version}`. The base is `AZURE_OPENAI_BASE_URL`,
//!   else `https://{AZURE_OPENAI_RESOURCE_NAME}.openai.azure.com/openai/v1`, else the
//!   model's `baseUrl`; the version is `AZURE_OPENAI_API_VERSION`, else `v1`.
//! - The body's `model` is the deployment: its entry in `AZURE_OPENAI_DEPLOYMENT_NAME_MAP`
//!   (`model=deployment,…`), else the model id.
//! - Authentication: the key (`AZURE_OPENAI_API_KEY` or a configured one) in the `api-key`
//!   header; without a key, a Microsoft Entra ID token as `Authorization: Bearer` —
//!   `AZURE_OPENAI_AD_TOKEN` as given, or a client-credentials token from
//!   `AZURE_TENANT_ID`/`AZURE_CLIENT_ID`/`AZURE_CLIENT_SECRET` (see [`super::entra`]).

use std::sync::Arc;

use crate::builder::MessageBuilder;
use crate::client::LazyHttpClient;
use crate::env::{EnvSource, ProcessEnv};
use crate::error::ErrorKind;
use crate::event::{AssistantMessageEvent, AssistantStream};
use crate::http::{HttpCall, failed_stream, spawn_http_stream};
use crate::model::{Model, apis};
use crate::options::StreamOptions;
use crate::providers::{common_headers, join_url};
use crate::registry::ApiProvider;
use crate::types::Context;

use super::entra::{EntraCredentials, TokenCache};
use super::{decoder, request};

pub const BASE_URL_VAR: &str = "AZURE_OPENAI_BASE_URL";
pub const RESOURCE_NAME_VAR: &str = "AZURE_OPENAI_RESOURCE_NAME";
pub const API_VERSION_VAR: &str = "AZURE_OPENAI_API_VERSION";
pub const DEPLOYMENT_MAP_VAR: &str = "AZURE_OPENAI_DEPLOYMENT_NAME_MAP";
pub const AD_TOKEN_VAR: &str = "AZURE_OPENAI_AD_TOKEN";
/// pi's default: the version-less v1 API.
const DEFAULT_API_VERSION: &str = "v1";

/// How a request authenticates.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AzureAuth {
    /// An Azure OpenAI key, sent as `api-key`.
    ApiKey(String),
    /// A Microsoft Entra ID access token, sent as `Authorization: Bearer`.
    Bearer(String),
}

/// The base URL the environment names: `AZURE_OPENAI_BASE_URL`, else the resource's
/// default endpoint (pi's order). The catalog applies it to Azure models.
pub fn env_base_url(env: &dyn EnvSource) -> Option<String> {
    env.var(BASE_URL_VAR)
        .map(|url| url.trim().trim_end_matches('/').to_owned())
        .filter(|url| !url.is_empty())
        .or_else(|| {
            env.var(RESOURCE_NAME_VAR)
                .map(|name| format!("https://{}.openai.azure.com/openai/v1", name.trim()))
        })
}

/// The deployment `model` is served by: its entry in the `model=deployment,…` map, else
/// its id. Malformed entries are skipped, as pi skips them.
pub fn deployment_name(model: &Model, map: Option<&str>) -> String {
    map.into_iter()
        .flat_map(|map| map.split(','))
        .filter_map(|entry| entry.trim().split_once('='))
        .map(|(id, deployment)| (id.trim(), deployment.trim()))
        .find(|(id, deployment)| *id == model.id && !deployment.is_empty())
        .map_or_else(|| model.id.clone(), |(_, deployment)| deployment.to_owned())
}

/// The request for `model`, authenticated with `auth`, configured by `env`.
pub fn build_call(
    model: &Model,
    context: &Context,
    options: &StreamOptions,
    auth: &AzureAuth,
    env: &dyn EnvSource,
) -> Result<HttpCall, String> {
    let base = env_base_url(env)
        .or_else(|| Some(model.base_url.trim().to_owned()).filter(|u| !u.is_empty()))
        .ok_or_else(|| {
            format!(
                "Azure OpenAI needs a base URL: set {BASE_URL_VAR} or {RESOURCE_NAME_VAR}, \
                 or give the model a baseUrl"
            )
        })?;
    let version = env
        .var(API_VERSION_VAR)
        .unwrap_or_else(|| DEFAULT_API_VERSION.to_owned());
    // The version goes into the query unencoded; real versions are `v1` or dates like
    // `2025-04-01-preview`, so anything else is a typo worth naming.
    if version.is_empty()
        || !version
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '.' | '_'))
    {
        return Err(format!(
            "{API_VERSION_VAR} \"{version}\" is not an API version (e.g. v1 or 2025-04-01-preview)"
        ));
    }
    let mut body = request::build_body(model, context, options);
    body["model"] = deployment_name(model, env.var(DEPLOYMENT_MAP_VAR).as_deref()).into();
    let mut headers = common_headers(model, options);
    let (name, value) = match auth {
        AzureAuth::ApiKey(key) => ("api-key", key.clone()),
        AzureAuth::Bearer(token) => ("authorization", format!("Bearer {token}")),
    };
    if !headers.iter().any(|(n, _)| n.eq_ignore_ascii_case(name)) {
        headers.push((name.to_owned(), value));
    }
    Ok(HttpCall::sse(
        format!("{}?api-version={version}", join_url(&base, "responses")),
        headers,
        body,
    ))
}

/// The `azure-openai-responses` API: reads its settings from `env`, fetches and caches
/// Entra tokens when configured for them.
pub struct AzureOpenAiResponses {
    env: Arc<dyn EnvSource>,
    client: LazyHttpClient,
    tokens: Arc<TokenCache>,
}

impl std::fmt::Debug for AzureOpenAiResponses {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AzureOpenAiResponses")
            .finish_non_exhaustive()
    }
}

impl AzureOpenAiResponses {
    pub fn new(env: Arc<dyn EnvSource>, client: impl Into<LazyHttpClient>) -> Self {
        Self {
            env,
            client: client.into(),
            tokens: Arc::default(),
        }
    }

    /// Configured by the process environment.
    pub fn from_process_env(client: impl Into<LazyHttpClient>) -> Self {
        Self::new(Arc::new(ProcessEnv), client)
    }
}

impl ApiProvider for AzureOpenAiResponses {
    fn api(&self) -> &str {
        apis::AZURE_OPENAI_RESPONSES
    }

    fn stream(&self, model: &Model, context: &Context, options: StreamOptions) -> AssistantStream {
        let env = self.env.as_ref();
        let auth = if let Some(key) = options.api_key.clone().filter(|k| !k.is_empty()) {
            AzureAuth::ApiKey(key)
        } else if let Some(token) = env.var(AD_TOKEN_VAR) {
            AzureAuth::Bearer(token)
        } else if let Some(credentials) = EntraCredentials::from_env(env) {
            return self.stream_with_entra(credentials, model, context, options);
        } else {
            return failed_stream(
                model,
                ErrorKind::Auth,
                format!(
                    "no credentials for provider {}: set AZURE_OPENAI_API_KEY (or configure a key \
                     for it), {AD_TOKEN_VAR}, or AZURE_TENANT_ID, AZURE_CLIENT_ID and \
                     AZURE_CLIENT_SECRET for a Microsoft Entra ID token",
                    model.provider
                ),
            );
        };
        match build_call(model, context, &options, &auth, env) {
            Ok(call) => spawn_http_stream(
                self.client.get().clone(),
                model.clone(),
                call,
                Box::new(decoder::Decoder::new(model)),
                options,
            ),
            Err(message) => failed_stream(
                model,
                ErrorKind::Config,
                format!("{}: cannot build request: {message}", model.reference()),
            ),
        }
    }
}

impl AzureOpenAiResponses {
    /// Get (or reuse) an Entra token first, then stream as usual; the events are forwarded.
    fn stream_with_entra(
        &self,
        credentials: EntraCredentials,
        model: &Model,
        context: &Context,
        options: StreamOptions,
    ) -> AssistantStream {
        let (tx, rx) = AssistantStream::channel();
        let tokens = Arc::clone(&self.tokens);
        let client = self.client.clone();
        let env = Arc::clone(&self.env);
        let (model, context) = (model.clone(), context.clone());
        let task = tokio::spawn(async move {
            let http = client.get().clone();
            let token = match tokens.token(&http, &credentials).await {
                Ok(token) => token,
                Err(e) => {
                    let mut builder = MessageBuilder::new(&model);
                    builder.fail(ErrorKind::Auth, e.to_string());
                    for event in builder.drain_events() {
                        let _ = tx.send(event).await;
                    }
                    return;
                }
            };
            let auth = AzureAuth::Bearer(token);
            let mut inner = match build_call(&model, &context, &options, &auth, env.as_ref()) {
                Ok(call) => spawn_http_stream(
                    http,
                    model.clone(),
                    call,
                    Box::new(decoder::Decoder::new(&model)),
                    options,
                ),
                Err(message) => failed_stream(
                    &model,
                    ErrorKind::Config,
                    format!("{}: cannot build request: {message}", model.reference()),
                ),
            };
            forward(&mut inner, &tx).await;
        });
        AssistantStream::from_task(rx, task)
    }
}

async fn forward(
    inner: &mut AssistantStream,
    tx: &tokio::sync::mpsc::Sender<AssistantMessageEvent>,
) {
    use futures_util::StreamExt;
    while let Some(event) = inner.next().await {
        if tx.send(event).await.is_err() {
            // The caller dropped the stream; dropping `inner` cancels the request.
            return;
        }
    }
}

#[cfg(test)]
#[path = "azure_tests.rs"]
mod tests;

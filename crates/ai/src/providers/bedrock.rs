//! The `bedrock-converse-stream` wire API (provider `amazon-bedrock`): Amazon Bedrock's
//! `ConverseStream`, answered in AWS's binary event stream, authenticated with SigV4 from
//! the standard AWS credential chain — or with a Bedrock API key
//! (`AWS_BEARER_TOKEN_BEDROCK`, any key configured for the provider) as a bearer token, as
//! pi does.
//!
//! - [`request`](self::request): URL and body; [`decode`](self::decode): the events.
//! - [`sigv4`]: the signer; [`credentials`], [`profile`], [`remote`]: the chain.
//!
//! No AWS SDK crates: the signer, the framing (`framing::event_stream`) and the chain are
//! small, tested against AWS's published vectors, and keep a large dependency tree out of
//! the LLM layer.

pub mod credentials;
mod decode;
pub mod profile;
pub mod remote;
mod request;
pub mod sigv4;

use std::sync::{Arc, Mutex};

use futures_util::future::BoxFuture;

use self::credentials::{AwsCredentials, CachedCredentials, CredentialSource, DefaultChain};
use crate::builder::MessageBuilder;
use crate::client::LazyHttpClient;
use crate::env::EnvSource;
use crate::error::ErrorKind;
use crate::event::AssistantStream;
use crate::http::{Framing, HttpCall, RequestSigner, SignError, StreamDecoder};
use crate::model::{Model, apis};
use crate::options::StreamOptions;
use crate::registry::ApiProvider;
use crate::types::Context;

/// The signing name of Bedrock's runtime API.
const SERVICE: &str = "bedrock";
/// pi's region when nothing names one.
const DEFAULT_REGION: &str = "us-east-1";

/// A fresh decoder (the fuzz targets and tests decode recorded streams with it).
pub fn decoder(model: &Model) -> Box<dyn StreamDecoder> {
    Box::new(decode::BedrockDecoder::new(model))
}

/// Streams `bedrock-converse-stream` models.
pub struct BedrockProvider {
    client: LazyHttpClient,
    env: Arc<dyn EnvSource>,
    credentials: Arc<CachedCredentials>,
}

impl std::fmt::Debug for BedrockProvider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BedrockProvider")
            .field("credentials", &self.credentials)
            .finish_non_exhaustive()
    }
}

impl BedrockProvider {
    /// Credentials from the standard chain over `env`.
    pub fn new(client: LazyHttpClient, env: Arc<dyn EnvSource>) -> Self {
        let chain = Arc::new(DefaultChain::new(Arc::clone(&env), client.clone()));
        Self::with_credentials(client, env, chain)
    }

    /// Credentials from `source` (tests, embedders with their own).
    pub fn with_credentials(
        client: LazyHttpClient,
        env: Arc<dyn EnvSource>,
        source: Arc<dyn CredentialSource>,
    ) -> Self {
        Self {
            client,
            env,
            credentials: Arc::new(CachedCredentials::new(source)),
        }
    }
}

/// The region: `AWS_REGION`, `AWS_DEFAULT_REGION`, the profile's `region`, the region in an
/// AWS endpoint's host name, then pi's default.
pub(crate) async fn region(env: &dyn EnvSource, base_url: &str) -> String {
    if let Some(region) = env
        .var("AWS_REGION")
        .or_else(|| env.var("AWS_DEFAULT_REGION"))
    {
        return region;
    }
    // A broken profile file is reported by the credential chain; here it only has no region.
    if let Ok(profile) = profile::ProfileFiles::locate(env).load().await
        && let Some(region) = profile.get("region")
    {
        return region.to_owned();
    }
    aws_endpoint_region(base_url)
        .unwrap_or(DEFAULT_REGION)
        .to_owned()
}

/// `eu-west-1` of `https://bedrock-runtime.eu-west-1.amazonaws.com`.
fn aws_endpoint_region(base_url: &str) -> Option<&str> {
    let host = base_url.split("://").nth(1)?.split(['/', ':']).next()?;
    let rest = host.strip_prefix("bedrock-runtime.")?;
    rest.strip_suffix(".amazonaws.com")
        .or_else(|| rest.strip_suffix(".amazonaws.com.cn"))
        .filter(|r| !r.is_empty() && !r.contains('.'))
}

/// The catalog's AWS endpoint follows the region (pi lets the SDK pick the endpoint from the
/// region); any other base URL (a proxy, a VPC endpoint, a mock) is used as it is.
fn endpoint(base_url: &str, region: &str) -> String {
    match aws_endpoint_region(base_url) {
        Some(_) => format!("https://bedrock-runtime.{region}.amazonaws.com"),
        None => base_url.trim_end_matches('/').to_owned(),
    }
}

/// The request, with SigV4 or a bearer key.
async fn prepare(
    model: &Model,
    context: &Context,
    options: &StreamOptions,
    env: &dyn EnvSource,
    credentials: &Arc<CachedCredentials>,
) -> Result<HttpCall, (ErrorKind, String)> {
    if model.base_url.trim().is_empty() {
        return Err((
            ErrorKind::Config,
            format!(
                "{}: the model has no baseUrl; set one in the models configuration",
                model.reference()
            ),
        ));
    }
    let region = region(env, &model.base_url).await;
    let body = request::body(model, context, options).map_err(|m| {
        (
            ErrorKind::Config,
            format!("{}: cannot build request: {m}", model.reference()),
        )
    })?;
    let mut headers = vec![
        ("content-type".to_owned(), "application/json".to_owned()),
        (
            "accept".to_owned(),
            "application/vnd.amazon.eventstream".to_owned(),
        ),
    ];
    let extra = model.headers.iter().flatten().chain(options.headers.iter());
    for (name, value) in extra {
        headers.retain(|(n, _)| !n.eq_ignore_ascii_case(name));
        headers.push((name.clone(), value.clone()));
    }
    let signer: Option<Arc<dyn RequestSigner>> = match options.api_key.as_deref() {
        Some(key) => {
            headers.push(("authorization".to_owned(), format!("Bearer {key}")));
            None
        }
        None => {
            // pi's switch for proxies that need no authentication: sign with dummy keys.
            let credentials = if env.var("AWS_BEDROCK_SKIP_AUTH").as_deref() == Some("1") {
                Arc::new(CachedCredentials::new(Arc::new(Dummy)))
            } else {
                Arc::clone(credentials)
            };
            Some(Arc::new(SigV4Signer {
                credentials,
                region: region.clone(),
                last: Mutex::new(None),
            }))
        }
    };
    Ok(HttpCall {
        url: request::url(&endpoint(&model.base_url, &region), &model.id),
        headers,
        body,
        framing: Framing::AwsEventStream,
        signer,
    })
}

impl ApiProvider for BedrockProvider {
    fn api(&self) -> &str {
        apis::BEDROCK_CONVERSE_STREAM
    }

    fn stream(&self, model: &Model, context: &Context, options: StreamOptions) -> AssistantStream {
        let (tx, rx) = AssistantStream::channel();
        let client = self.client.clone();
        let env = Arc::clone(&self.env);
        let credentials = Arc::clone(&self.credentials);
        let model = model.clone();
        let context = context.clone();
        let task = tokio::spawn(async move {
            match prepare(&model, &context, &options, env.as_ref(), &credentials).await {
                Ok(call) => {
                    let decoder = decoder(&model);
                    crate::http::run(client.get().clone(), model, call, decoder, options, tx).await;
                }
                Err((kind, message)) => {
                    let mut builder = MessageBuilder::new(&model);
                    builder.fail(kind, message);
                    for event in builder.drain_events() {
                        let _ = tx.send(event).await;
                    }
                }
            }
        });
        AssistantStream::from_task(rx, task)
    }
}

/// Fixed dummy keys (`AWS_BEDROCK_SKIP_AUTH=1`).
#[derive(Debug)]
struct Dummy;

impl CredentialSource for Dummy {
    fn credentials(&self) -> BoxFuture<'_, Result<AwsCredentials, credentials::CredentialError>> {
        Box::pin(async {
            Ok(AwsCredentials::new(
                "dummy-access-key",
                "dummy-secret-key",
                None,
            ))
        })
    }
}

/// SigV4 over each attempt, with the credentials the chain has now.
#[derive(Debug)]
struct SigV4Signer {
    credentials: Arc<CachedCredentials>,
    region: String,
    /// What the last attempt was signed with (to tell a refresh from the same keys).
    last: Mutex<Option<AwsCredentials>>,
}

impl SigV4Signer {
    async fn sign_now(&self, url: &str, body: &[u8]) -> Result<Vec<(String, String)>, SignError> {
        let credentials = self
            .credentials
            .get()
            .await
            .map_err(|e| SignError::new(ErrorKind::Auth, e.to_string()))?;
        let parsed = reqwest::Url::parse(url)
            .map_err(|e| SignError::new(ErrorKind::Config, format!("bad URL {url}: {e}")))?;
        let host = match (parsed.host_str(), parsed.port()) {
            (Some(host), Some(port)) => format!("{host}:{port}"),
            (Some(host), None) => host.to_owned(),
            (None, _) => {
                return Err(SignError::new(
                    ErrorKind::Config,
                    format!("no host in {url}"),
                ));
            }
        };
        let date = sigv4::amz_date(pincer_base::time::now_ms());
        let headers = sigv4::sign(
            &credentials,
            &sigv4::SigningScope {
                region: &self.region,
                service: SERVICE,
                amz_date: &date,
            },
            &sigv4::SignableRequest {
                method: "POST",
                path: parsed.path(),
                query: parsed.query().unwrap_or(""),
                headers: &[("host", &host)],
                body,
            },
        );
        *self.last.lock().unwrap_or_else(|e| e.into_inner()) = Some(credentials);
        Ok(headers)
    }

    async fn refresh_now(&self, body: &str) -> bool {
        // Only a refusal of the credentials themselves is worth new ones (not, say, a model
        // the account has no access to).
        let lower = body.to_ascii_lowercase();
        let about_credentials = [
            "expired",
            "security token",
            "signature",
            "unrecognizedclient",
        ]
        .iter()
        .any(|needle| lower.contains(needle));
        let last = self.last.lock().unwrap_or_else(|e| e.into_inner()).clone();
        match (about_credentials, last) {
            (true, Some(last)) => matches!(self.credentials.refresh(&last).await, Ok(Some(_))),
            _ => false,
        }
    }
}

impl RequestSigner for SigV4Signer {
    fn sign<'a>(
        &'a self,
        url: &'a str,
        _headers: &'a [(String, String)],
        body: &'a [u8],
    ) -> BoxFuture<'a, Result<Vec<(String, String)>, SignError>> {
        Box::pin(self.sign_now(url, body))
    }

    fn refresh<'a>(&'a self, _status: u16, body: &'a str) -> BoxFuture<'a, bool> {
        Box::pin(self.refresh_now(body))
    }
}

#[cfg(test)]
#[path = "bedrock/tests.rs"]
mod tests;

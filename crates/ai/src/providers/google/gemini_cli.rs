//! The `google-gemini-cli` wire API: Gemini through Google Cloud Code Assist, as pi-ai's
//! `google-gemini-cli.ts` speaks it. The request is the Gemini body of
//! [`request`](super::request) inside Code Assist's envelope
//! (`{project, model, request: {…}, userAgent, requestId}`) posted to
//! `{baseUrl}/v1internal:streamGenerateContent?alt=sse` with a sign-in's access token; each
//! streamed event wraps a Gemini chunk as `{"response": {…}}`, unwrapped here and decoded by
//! the Gemini decoder.
//!
//! The key is what a `pincer auth login google-gemini-cli` profile resolves to: pi's JSON
//! `{"token": "<access token>", "projectId": "<Cloud Code Assist project>"}`.

use std::sync::atomic::{AtomicU64, Ordering};

use serde::Deserialize;
use serde_json::{Map, Value, json};

use super::decode::GoogleDecoder;
use super::request;
use crate::builder::MessageBuilder;
use crate::framing::SseEvent;
use crate::http::{DecodeError, Decoded, HttpCall, StreamDecoder};
use crate::model::{Model, apis};
use crate::options::StreamOptions;
use crate::providers::{RequestInput, join_url};

const LOGIN_HINT: &str = "run `pincer auth login google-gemini-cli`";
/// The client identity pi's Gemini CLI provider sends to the production endpoint.
const USER_AGENT: &str = "google-cloud-sdk vscode_cloudshelleditor/0.1";
const API_CLIENT: &str = "gl-node/22.17.0";
const CLIENT_METADATA: &str =
    r#"{"ideType":"IDE_UNSPECIFIED","platform":"PLATFORM_UNSPECIFIED","pluginType":"GEMINI"}"#;

wire_api! {
    /// The `google-gemini-cli` wire API (Cloud Code Assist).
    GoogleGeminiCli: apis::GOOGLE_GEMINI_CLI => build_request, CodeAssistDecoder::new
}

/// What a gemini-cli key holds (pi's `getApiKey` of the OAuth provider).
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct CodeAssistKey {
    token: String,
    project_id: String,
}

/// The access token and project in `key`, or why it cannot be used.
pub fn parse_key(key: Option<&str>) -> Result<(String, String), String> {
    let key = key
        .map(str::trim)
        .filter(|k| !k.is_empty())
        .ok_or_else(|| format!("google-gemini-cli needs a Google sign-in: {LOGIN_HINT}"))?;
    let parsed: CodeAssistKey = serde_json::from_str(key).map_err(|_| {
        format!(
            "the google-gemini-cli credential is not a Cloud Code Assist sign-in ({{\"token\", \"projectId\"}}); {LOGIN_HINT} again"
        )
    })?;
    if parsed.token.is_empty() || parsed.project_id.is_empty() {
        return Err(format!(
            "the google-gemini-cli credential lacks its token or project; {LOGIN_HINT} again"
        ));
    }
    Ok((parsed.token, parsed.project_id))
}

/// A request id unique within the process (pi: `pi-<ms>-<random>`).
fn request_id() -> String {
    static SEQ: AtomicU64 = AtomicU64::new(0);
    let ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis());
    format!("pincer-{ms}-{}", SEQ.fetch_add(1, Ordering::Relaxed))
}

fn build_request(input: RequestInput<'_>) -> Result<HttpCall, String> {
    let (token, project) = parse_key(input.api_key)?;
    let mut inner = request::body(input.model, input.context, input.options);
    if let (Some(map), Some(session)) = (inner.as_object_mut(), &input.options.session_id) {
        map.insert("sessionId".into(), json!(session));
    }
    let mut body = Map::new();
    body.insert("project".into(), json!(project));
    body.insert("model".into(), json!(input.model.id));
    body.insert("request".into(), inner);
    body.insert("userAgent".into(), json!("pincer"));
    body.insert("requestId".into(), json!(request_id()));
    Ok(HttpCall::sse(
        join_url(
            &input.model.base_url,
            "v1internal:streamGenerateContent?alt=sse",
        ),
        headers(input.model, input.options, &token),
        Value::Object(body),
    ))
}

/// pi's header set; the model's and the caller's headers override any of them.
fn headers(model: &Model, options: &StreamOptions, token: &str) -> Vec<(String, String)> {
    let mut headers: Vec<(String, String)> = [
        ("content-type", "application/json".to_owned()),
        ("accept", "text/event-stream".to_owned()),
        ("authorization", format!("Bearer {token}")),
        ("user-agent", USER_AGENT.to_owned()),
        ("x-goog-api-client", API_CLIENT.to_owned()),
        ("client-metadata", CLIENT_METADATA.to_owned()),
    ]
    .into_iter()
    .map(|(n, v)| (n.to_owned(), v))
    .collect();
    for (name, value) in model.headers.iter().flatten().chain(options.headers.iter()) {
        headers.retain(|(n, _)| !n.eq_ignore_ascii_case(name));
        headers.push((name.clone(), value.clone()));
    }
    headers
}

/// Unwraps `{"response": chunk}` and hands the chunk to the Gemini decoder. Events without
/// a response (Code Assist's keep-alives and trace-only events) are skipped, as pi does;
/// an `error` object is decoded as Gemini's.
#[derive(Debug)]
pub(crate) struct CodeAssistDecoder {
    inner: GoogleDecoder,
}

impl CodeAssistDecoder {
    pub(crate) fn new(model: &Model) -> Self {
        Self {
            inner: GoogleDecoder::new(model),
        }
    }
}

impl StreamDecoder for CodeAssistDecoder {
    fn on_event(&mut self, event: SseEvent<'_>, out: &mut MessageBuilder) -> Decoded {
        let mut envelope: Value = DecodeError::parse("a Cloud Code Assist event", event.data)?;
        let inner = match envelope.as_object_mut() {
            Some(map) => match (map.remove("response"), map.remove("error")) {
                (Some(response), _) => response,
                (None, Some(error)) => json!({ "error": error }),
                (None, None) => return Ok(()),
            },
            None => {
                return Err(DecodeError(format!(
                    "a Cloud Code Assist event is not a JSON object: {}",
                    crate::error_text::excerpt(event.data, 120)
                )));
            }
        };
        let data = inner.to_string();
        self.inner.on_event(
            SseEvent {
                event: event.event,
                data: &data,
            },
            out,
        )
    }

    fn finish(&mut self, out: &mut MessageBuilder) -> Decoded {
        self.inner.finish(out)
    }
}

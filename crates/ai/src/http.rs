//! The streaming HTTP driver every built-in provider shares: send with retry (honouring
//! `Retry-After`), check status and content type, frame the body (SSE, NDJSON or AWS's
//! binary event stream), hand events to the provider's decoder, and turn every failure into
//! one `error` event. Requests signed per attempt (AWS SigV4) go through [`signer`].

mod aws_events;
mod signer;

pub use signer::{RequestSigner, SignError};

use std::sync::Arc;
use std::time::Duration;

use futures_util::StreamExt;
use serde_json::Value;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::builder::MessageBuilder;
use crate::error::{ErrorKind, classify_status};
use crate::error_text::{error_chain, error_detail, excerpt, key_or_rate_hint, status_message};
use crate::event::{AssistantMessageEvent, AssistantStream};
use crate::framing::event_stream::{EventStreamError, EventStreamFramer};
use crate::framing::{FrameError, NdjsonFramer, SseEvent, SseFramer};
use crate::model::Model;
use crate::options::{NoRetry, RetryPolicy, StreamOptions};

/// Where Google's error bodies (a JSON array of one error) keep their message.
const GOOGLE_ERROR_ARRAY: &[&str] = &["/0/error/message"];

/// How a response body is framed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Framing {
    Sse,
    Ndjson,
    /// AWS's binary event stream (`application/vnd.amazon.eventstream`): each message reaches
    /// the decoder as an event named by its `:event-type` (or `:exception-type`) header with
    /// its payload as data.
    AwsEventStream,
}

/// A fully built request.
#[derive(Debug, Clone)]
pub struct HttpCall {
    pub url: String,
    pub headers: Vec<(String, String)>,
    pub body: Value,
    pub framing: Framing,
    /// Signs every attempt over the exact bytes sent (AWS SigV4); None for key headers.
    pub signer: Option<Arc<dyn RequestSigner>>,
}

impl HttpCall {
    /// A request whose reply streams as server-sent events, as every built-in API's does.
    pub fn sse(url: String, headers: Vec<(String, String)>, body: Value) -> Self {
        Self {
            url,
            headers,
            body,
            framing: Framing::Sse,
            signer: None,
        }
    }
}

/// Malformed data from the server. Decoders return it; the driver turns it into an
/// `error` event of kind `Protocol`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct DecodeError(pub String);

/// What a decoding step gives: nothing (its output went to the message builder), or why the
/// stream cannot be read.
pub type Decoded = Result<(), DecodeError>;

impl From<FrameError> for DecodeError {
    fn from(e: FrameError) -> Self {
        Self(e.to_string())
    }
}

impl From<EventStreamError> for DecodeError {
    fn from(e: EventStreamError) -> Self {
        Self(e.to_string())
    }
}

impl DecodeError {
    /// `data`, one event's JSON payload, parsed; if it does not parse, an error naming `what`
    /// was expected, with a short excerpt of the data.
    pub fn parse<'a, T: serde::Deserialize<'a>>(what: &str, data: &'a str) -> Result<T, Self> {
        serde_json::from_str(data).map_err(|err| {
            Self(format!(
                "invalid JSON in {what}: {err} (data: {})",
                excerpt(data, 120)
            ))
        })
    }
}

/// Protocol-specific decoding of a streamed body into builder calls.
pub trait StreamDecoder: Send {
    /// One framed event whose data is not blank. NDJSON documents arrive as events named
    /// `message`.
    fn on_event(&mut self, event: SseEvent<'_>, out: &mut MessageBuilder) -> Decoded;
    /// The body ended. Finish the message (`out.done()`), or return an error if the
    /// stream was cut short. Not called when the message already finished.
    fn finish(&mut self, out: &mut MessageBuilder) -> Decoded;
}

/// Start a streamed call on the current tokio runtime.
pub fn spawn_http_stream(
    client: reqwest::Client,
    model: Model,
    call: HttpCall,
    decoder: Box<dyn StreamDecoder>,
    options: StreamOptions,
) -> AssistantStream {
    let (tx, rx) = AssistantStream::channel();
    let task = tokio::spawn(run(client, model, call, decoder, options, tx));
    AssistantStream::from_task(rx, task)
}

/// A stream that fails at once, before any request (no key, bad configuration).
pub fn failed_stream(model: &Model, kind: ErrorKind, message: String) -> AssistantStream {
    let mut builder = MessageBuilder::new(model);
    builder.fail(kind, message);
    AssistantStream::from_events(builder.drain_events().collect())
}

struct Sink {
    tx: mpsc::Sender<AssistantMessageEvent>,
    batch: Vec<AssistantMessageEvent>,
}

impl Sink {
    /// Send queued events; false when the consumer is gone.
    async fn flush(&mut self, builder: &mut MessageBuilder) -> bool {
        self.batch.extend(builder.drain_events());
        for event in self.batch.drain(..) {
            if self.tx.send(event).await.is_err() {
                return false;
            }
        }
        true
    }
}

/// The driver's body: send, then frame and decode into `tx` (providers that prepare their
/// request asynchronously call it from their own task).
pub(crate) async fn run(
    client: reqwest::Client,
    model: Model,
    call: HttpCall,
    mut decoder: Box<dyn StreamDecoder>,
    options: StreamOptions,
    tx: mpsc::Sender<AssistantMessageEvent>,
) {
    let mut builder = MessageBuilder::new(&model);
    let mut sink = Sink {
        tx,
        batch: Vec::new(),
    };
    let label = format!("{}/{}", model.provider, model.id);
    let cancel = options.cancel.clone().unwrap_or_default();
    let idle = options.idle_timeout();

    let response =
        match send_with_retry(&client, &call, &label, &options.retry, idle, &cancel).await {
            Ok(response) => response,
            Err((kind, message)) => {
                builder.fail(kind, message);
                sink.flush(&mut builder).await;
                return;
            }
        };
    if let Err(message) = check_content_type(&response, call.framing, &label) {
        let body = read_error_body(response, idle).await;
        builder.fail(
            ErrorKind::Protocol,
            format!("{message}{}", body_suffix(&body)),
        );
        sink.flush(&mut builder).await;
        return;
    }
    builder.start();
    if !sink.flush(&mut builder).await {
        return;
    }

    let mut body = response.bytes_stream();
    let mut framer = BodyFramer::new(call.framing);
    loop {
        let next = tokio::select! {
            biased;
            () = cancel.cancelled() => {
                builder.fail(ErrorKind::Aborted, format!("request to {label} was aborted"));
                break;
            }
            next = tokio::time::timeout(idle, body.next()) => next,
        };
        match next {
            Err(_) => {
                builder.fail(
                    ErrorKind::Timeout,
                    format!(
                        "{label}: no data for {} s, the stream stalled; try again, or raise the idle timeout",
                        idle.as_secs_f64()
                    ),
                );
                break;
            }
            Ok(Some(Ok(chunk))) => {
                framer.feed_chunk(
                    &chunk,
                    decoder.as_mut(),
                    &mut builder,
                    &format!("{label}: "),
                );
                if !sink.flush(&mut builder).await {
                    return;
                }
                if builder.is_finished() {
                    return;
                }
            }
            Ok(Some(Err(e))) => {
                builder.fail(
                    ErrorKind::Network,
                    format!(
                        "{label}: connection lost mid-stream ({}); try again",
                        error_chain(&e)
                    ),
                );
                break;
            }
            Ok(None) => {
                framer.end_of_body(decoder.as_mut(), &mut builder, &format!("{label}: "));
                break;
            }
        }
    }
    sink.flush(&mut builder).await;
}

enum BodyFramer {
    Sse(SseFramer),
    Ndjson(NdjsonFramer),
    AwsEventStream(EventStreamFramer),
}

impl BodyFramer {
    /// Feed one chunk; malformed data fails the message (`prefix` names the model).
    fn feed_chunk(
        &mut self,
        chunk: &[u8],
        decoder: &mut dyn StreamDecoder,
        out: &mut MessageBuilder,
        prefix: &str,
    ) {
        if let Err(e) = self.feed(chunk, decoder, out) {
            out.fail(
                ErrorKind::Protocol,
                format!("{prefix}malformed stream: {e}"),
            );
        }
    }

    /// The body ended: flush the framer, let the decoder finish, and fail a message that
    /// is still incomplete. Shared by the live driver and [`decode_recorded`].
    fn end_of_body(
        &mut self,
        decoder: &mut dyn StreamDecoder,
        out: &mut MessageBuilder,
        prefix: &str,
    ) {
        let result = self.finish(decoder, out).and_then(|()| {
            if out.is_finished() {
                Ok(())
            } else {
                decoder.finish(out)
            }
        });
        if let Err(e) = result {
            out.fail(ErrorKind::Protocol, format!("{prefix}{e}"));
        }
        if !out.is_finished() {
            out.fail(
                ErrorKind::Protocol,
                format!("{prefix}the stream ended before the reply was complete"),
            );
        }
    }

    fn new(framing: Framing) -> Self {
        match framing {
            Framing::Sse => Self::Sse(SseFramer::default()),
            Framing::Ndjson => Self::Ndjson(NdjsonFramer::default()),
            Framing::AwsEventStream => Self::AwsEventStream(EventStreamFramer::default()),
        }
    }

    fn feed(
        &mut self,
        chunk: &[u8],
        decoder: &mut dyn StreamDecoder,
        out: &mut MessageBuilder,
    ) -> Decoded {
        match self {
            Self::Sse(f) => f.feed(chunk, &mut |ev| deliver(decoder, ev, out)),
            Self::Ndjson(f) => f.feed(chunk, &mut |doc| deliver(decoder, ndjson_event(doc), out)),
            Self::AwsEventStream(f) => {
                f.feed(chunk, &mut |m| aws_events::deliver(decoder, &m, out))
            }
        }
    }

    fn finish(&mut self, decoder: &mut dyn StreamDecoder, out: &mut MessageBuilder) -> Decoded {
        match self {
            Self::Sse(f) => f.finish(&mut |ev| deliver(decoder, ev, out)),
            Self::Ndjson(f) => f.finish(&mut |doc| deliver(decoder, ndjson_event(doc), out)),
            Self::AwsEventStream(f) => Ok(f.finish()?),
        }
    }
}

/// An NDJSON document as the event decoders read: a `message` with the document as data.
fn ndjson_event(doc: &str) -> SseEvent<'_> {
    SseEvent {
        event: "message",
        data: doc,
    }
}

/// Events after the message finished (trailing usage chunks aside) are ignored.
pub(super) fn deliver(
    decoder: &mut dyn StreamDecoder,
    event: SseEvent<'_>,
    out: &mut MessageBuilder,
) -> Decoded {
    // Blank events (keep-alives) carry nothing any protocol reads.
    if out.is_finished() || event.data.trim().is_empty() {
        Ok(())
    } else {
        decoder.on_event(event, out)
    }
}

/// Decode a recorded body in one go (benchmarks, fuzzing, tests): returns every event.
pub fn decode_recorded(
    model: &Model,
    framing: Framing,
    decoder: &mut dyn StreamDecoder,
    chunks: &[&[u8]],
) -> Vec<AssistantMessageEvent> {
    let mut builder = MessageBuilder::new(model);
    builder.start();
    let mut framer = BodyFramer::new(framing);
    let mut events = Vec::new();
    for chunk in chunks {
        framer.feed_chunk(chunk, decoder, &mut builder, "");
        events.extend(builder.drain_events());
        if builder.is_finished() {
            return events;
        }
    }
    framer.end_of_body(decoder, &mut builder, "");
    events.extend(builder.drain_events());
    events
}

async fn send_with_retry(
    client: &reqwest::Client,
    call: &HttpCall,
    label: &str,
    policy: &RetryPolicy,
    idle: Duration,
    cancel: &CancellationToken,
) -> Result<reqwest::Response, (ErrorKind, String)> {
    let body = serde_json::to_vec(&call.body).map_err(|e| {
        (
            ErrorKind::Config,
            format!("{label}: cannot encode request: {e}"),
        )
    })?;
    let aborted = || {
        (
            ErrorKind::Aborted,
            format!("request to {label} was aborted"),
        )
    };
    let mut attempt = 0u32;
    // Credentials the server refused are refreshed once per call (see `RequestSigner`).
    let mut refreshed = false;
    loop {
        let mut request = client.post(&call.url).body(body.clone());
        for (name, value) in &call.headers {
            request = request.header(name, value);
        }
        if let Some(signer) = &call.signer {
            let signed = tokio::select! {
                biased;
                () = cancel.cancelled() => return Err(aborted()),
                signed = signer.sign(&call.url, &call.headers, &body) => signed,
            };
            match signed {
                Ok(headers) => {
                    for (name, value) in headers {
                        request = request.header(name, value);
                    }
                }
                Err(e) => return Err((e.kind, format!("{label}: {}", e.message))),
            }
        }
        let sent = tokio::select! {
            biased;
            () = cancel.cancelled() => return Err(aborted()),
            sent = tokio::time::timeout(idle, request.send()) => sent,
        };
        let (kind, message, retry_after) = match sent {
            Ok(Ok(response)) if response.status().is_success() => return Ok(response),
            Ok(Ok(response)) => {
                let status = response.status();
                let retry_after = retry_after(response.headers());
                let text = read_error_body(response, idle).await;
                if let (401 | 403, Some(signer), false) = (status.as_u16(), &call.signer, refreshed)
                {
                    refreshed = true;
                    if signer.refresh(status.as_u16(), &text).await {
                        continue;
                    }
                }
                let detail = error_detail(&text, GOOGLE_ERROR_ARRAY);
                let retry_after = retry_after.or_else(|| retry_delay_in_body(&text));
                let kind = classify_status(status.as_u16(), &text, retry_after);
                let mut message = status_message(label, status, &detail);
                if refreshed && kind == ErrorKind::Auth {
                    message.push_str(" (refused again after refreshing the credentials once)");
                }
                (kind, message, retry_after)
            }
            Ok(Err(e)) => {
                let kind = if e.is_timeout() {
                    ErrorKind::Timeout
                } else {
                    ErrorKind::Network
                };
                let message = format!(
                    "{label}: cannot reach {} ({}); check the base URL and your network",
                    redact_url(&call.url),
                    error_chain(&e)
                );
                (kind, message, None)
            }
            Err(_) => (
                ErrorKind::Timeout,
                format!("{label}: no response within {} s", idle.as_secs_f64()),
                None,
            ),
        };
        let hint = || hint(&kind, label);
        match policy
            .wait_after_failure(attempt, &kind, retry_after, &message, hint, label, cancel)
            .await
        {
            Ok(()) => attempt += 1,
            Err(NoRetry::GiveUp(message)) => return Err((kind, message)),
            Err(NoRetry::Cancelled) => return Err(aborted()),
        }
    }
}

fn hint(kind: &ErrorKind, label: &str) -> String {
    let provider = label.split('/').next().unwrap_or(label);
    if let Some(hint) = key_or_rate_hint(kind, provider, || {
        format!("; check the API key configured for provider {provider}")
    }) {
        return hint;
    }
    match kind {
        ErrorKind::ContextOverflow => {
            "; the conversation is too long for this model, compact it or start a new session"
                .into()
        }
        ErrorKind::Overloaded => "; the provider is overloaded, try again later".into(),
        _ => String::new(),
    }
}

/// `Retry-After` (seconds or an HTTP date) or `retry-after-ms` (OpenAI).
pub(crate) fn retry_after(headers: &reqwest::header::HeaderMap) -> Option<Duration> {
    let text = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
    pincer_base::retry_after::retry_after(
        text("retry-after"),
        text("retry-after-ms"),
        std::time::SystemTime::now(),
    )
}

/// Google puts the wait in the body: `"retryDelay": "30s"`.
fn retry_delay_in_body(body: &str) -> Option<Duration> {
    let start = body.find("\"retryDelay\"")?;
    let rest = &body[start + "\"retryDelay\"".len()..];
    let value = rest.split('"').nth(1)?;
    pincer_base::retry_after::duration_from_secs(value.strip_suffix('s')?.parse().ok()?)
}

fn body_suffix(body: &str) -> String {
    let detail = error_detail(body, GOOGLE_ERROR_ARRAY);
    if detail.is_empty() {
        String::new()
    } else {
        format!(": {detail}")
    }
}

async fn read_error_body(response: reqwest::Response, idle: Duration) -> String {
    const LIMIT: usize = 64 * 1024;
    let mut body = response.bytes_stream();
    let mut bytes = Vec::new();
    while bytes.len() < LIMIT {
        match tokio::time::timeout(idle.min(Duration::from_secs(10)), body.next()).await {
            Ok(Some(Ok(chunk))) => bytes.extend_from_slice(&chunk),
            _ => break,
        }
    }
    bytes.truncate(LIMIT);
    String::from_utf8_lossy(&bytes).into_owned()
}

fn check_content_type(
    response: &reqwest::Response,
    framing: Framing,
    label: &str,
) -> Result<(), String> {
    let Some(value) = response.headers().get(reqwest::header::CONTENT_TYPE) else {
        return Ok(());
    };
    let value = value.to_str().unwrap_or("").to_ascii_lowercase();
    let ok = match framing {
        Framing::Sse => value.starts_with("text/event-stream"),
        Framing::Ndjson => {
            value.starts_with("application/x-ndjson")
                || value.starts_with("application/jsonl")
                || value.starts_with("application/json")
        }
        Framing::AwsEventStream => value.starts_with("application/vnd.amazon.eventstream"),
    };
    if ok {
        Ok(())
    } else {
        let expected = match framing {
            Framing::Sse => "text/event-stream",
            Framing::Ndjson => "application/x-ndjson",
            Framing::AwsEventStream => "application/vnd.amazon.eventstream",
        };
        Err(format!(
            "{label}: expected a {expected} stream but the server sent {value}; is the base URL right?"
        ))
    }
}

/// Drop the query string (keys sometimes travel there) before showing a URL.
fn redact_url(url: &str) -> &str {
    url.split('?').next().unwrap_or(url)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retry_after_forms() {
        let mut h = reqwest::header::HeaderMap::new();
        h.insert("retry-after", "2".parse().unwrap());
        assert_eq!(retry_after(&h), Some(Duration::from_secs(2)));
        h.insert("retry-after-ms", "1500".parse().unwrap());
        assert_eq!(retry_after(&h), Some(Duration::from_millis(1500)));
        let mut h = reqwest::header::HeaderMap::new();
        h.insert(
            "retry-after",
            "Wed, 21 Oct 2015 07:28:00 GMT".parse().unwrap(),
        );
        assert_eq!(retry_after(&h), Some(Duration::ZERO));
        h.insert("retry-after", "soon".parse().unwrap());
        assert_eq!(retry_after(&h), None);
        assert_eq!(
            retry_delay_in_body(r#"{"error":{"details":[{"retryDelay": "7s"}]}}"#),
            Some(Duration::from_secs(7))
        );
    }

    #[test]
    fn google_error_arrays_give_their_message() {
        assert_eq!(
            body_suffix(r#"[{"error":{"code":429,"message":"Quota exceeded"}}]"#),
            ": Quota exceeded"
        );
        assert_eq!(body_suffix("  "), "");
    }
}

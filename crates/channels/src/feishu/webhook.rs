//! The HTTP event callback listener ("send events to a request URL" in the developer
//! console): an axum server on the configured address taking `POST <path>` — encrypted
//! bodies decrypted, signatures and timestamps checked, the verification token compared,
//! URL verification answered, message events handed to the gateway before the 200 (a
//! non-2xx makes Feishu retry; the gateway dedupes the retries).
//!
//! [`open_callback`] is the pure part (everything but the delivery). The listener lives
//! exactly as long as `run`: it is closed when `run` returns or is dropped.

use pincer_base::Secret;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use pincer_channel_port::{ChannelError, InboundSink};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::crypto::{CryptoError, SignatureError, decrypt, encrypted_field, verify_signature};
use super::events::{Event, EventError, EventKind, decode_event};
use super::{CHANNEL, Inner};

/// How long in-flight callbacks may take to finish once the adapter stops.
const DRAIN: Duration = Duration::from_secs(5);

/// The signature headers of a callback.
#[derive(Debug, Clone, Copy, Default)]
pub struct SignedHeaders<'a> {
    pub timestamp: Option<&'a str>,
    pub nonce: Option<&'a str>,
    pub signature: Option<&'a str>,
}

/// Why a callback was refused, and with which status.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CallbackError {
    #[error("an encrypted callback, but no encrypt key is configured")]
    EncryptedWithoutKey,
    #[error("{0}")]
    Crypto(#[from] CryptoError),
    #[error("{0}")]
    Malformed(#[from] EventError),
    #[error("the verification token does not match")]
    WrongToken,
    #[error("{0}")]
    Signature(#[from] SignatureError),
}

impl CallbackError {
    /// 401 for what is not from Feishu (token, signature, replay), 400 for what does not
    /// read.
    pub fn status(&self) -> u16 {
        match self {
            CallbackError::WrongToken | CallbackError::Signature(_) => 401,
            _ => 400,
        }
    }
}

/// Opens one callback: decrypts it (with `encrypt_key`), decodes it, checks its token
/// (when `verification_token` is set) and, for events, its signature and timestamp (when
/// `encrypt_key` is set). URL verifications are not signed by Feishu, so only their token
/// is checked.
pub fn open_callback(
    verification_token: Option<&str>,
    encrypt_key: Option<&str>,
    headers: SignedHeaders<'_>,
    body: &[u8],
    now_secs: i64,
) -> Result<Event, CallbackError> {
    let plain = match (encrypt_key, encrypted_field(body)) {
        (Some(key), Some(field)) => decrypt(key, &field)?,
        (None, Some(_)) => return Err(CallbackError::EncryptedWithoutKey),
        (_, None) => body.to_vec(),
    };
    let event = decode_event(&plain)?;
    if let Some(expected) = verification_token.filter(|t| !t.is_empty()) {
        let given = event.token.as_deref().unwrap_or_default();
        if !same(given.as_bytes(), expected.as_bytes()) {
            return Err(CallbackError::WrongToken);
        }
    }
    if let Some(key) = encrypt_key.filter(|k| !k.is_empty())
        && !matches!(event.kind, EventKind::UrlVerification { .. })
    {
        verify_signature(
            headers.timestamp,
            headers.nonce,
            headers.signature,
            key,
            body,
            now_secs,
        )?;
    }
    Ok(event)
}

/// Byte strings compared without an early exit.
fn same(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// The reply to an opened callback that needs no delivery: the challenge echoed, or `{}`.
pub fn callback_reply(event: &Event) -> Value {
    match &event.kind {
        EventKind::UrlVerification { challenge } => json!({ "challenge": challenge }),
        _ => json!({}),
    }
}

struct Listener {
    inner: Arc<Inner>,
    sink: InboundSink,
    path: String,
}

/// Serves callbacks on `listen` until `stop`.
pub(super) async fn serve(
    inner: Arc<Inner>,
    listen: SocketAddr,
    path: &str,
    sink: &InboundSink,
    stop: &CancellationToken,
) -> Result<(), ChannelError> {
    // Wrong credentials end the run (nothing could be answered); the bot's identity
    // failing otherwise (the bot capability not enabled yet, Feishu unreachable) must not
    // keep the URL from being verified: it is fetched again with the first message.
    match inner.ensure_bot().await {
        Err(e @ ChannelError::Unauthorized { .. }) => return Err(e),
        Err(e) => tracing::warn!(error = %e, "feishu: the bot's identity is unknown for now"),
        Ok(()) => {}
    }
    let listener =
        tokio::net::TcpListener::bind(listen)
            .await
            .map_err(|e| ChannelError::Connection {
                channel: CHANNEL.into(),
                message: format!("cannot listen for event callbacks on {listen}: {e}"),
            })?;
    sink.health().connected();
    tracing::info!(%listen, path, "feishu: listening for event callbacks");
    let path = if path.starts_with('/') {
        path.to_owned()
    } else {
        format!("/{path}")
    };
    let state = Arc::new(Listener {
        inner,
        sink: sink.clone(),
        path,
    });
    // A fallback rather than a route: the configured path is compared as it is, never
    // parsed as a route pattern (which panics on `{` or `:` segments).
    let app = axum::Router::new().fallback(handle).with_state(state);
    let server = axum::serve(listener, app).with_graceful_shutdown(stop.clone().cancelled_owned());
    let drained = async {
        stop.cancelled().await;
        tokio::time::sleep(DRAIN).await;
    };
    tokio::select! {
        served = server => served.map_err(|e| ChannelError::Connection {
            channel: CHANNEL.into(),
            message: format!("the event callback listener failed: {e}"),
        }),
        () = drained => Ok(()),
    }
}

async fn handle(
    State(listener): State<Arc<Listener>>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    if uri.path() != listener.path {
        return StatusCode::NOT_FOUND.into_response();
    }
    if method != Method::POST {
        return StatusCode::METHOD_NOT_ALLOWED.into_response();
    }
    let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
    let signed = SignedHeaders {
        timestamp: header("x-lark-request-timestamp"),
        nonce: header("x-lark-request-nonce"),
        signature: header("x-lark-signature"),
    };
    let settings = &listener.inner.settings;
    let opened = open_callback(
        settings.verification_token.as_ref().map(Secret::expose),
        settings.encrypt_key.as_ref().map(Secret::expose),
        signed,
        &body,
        pincer_base::time::now_secs(),
    );
    let event = match opened {
        Ok(event) => event,
        Err(e) => {
            tracing::warn!(error = %e, "feishu: event callback refused");
            let status = StatusCode::from_u16(e.status()).unwrap_or(StatusCode::BAD_REQUEST);
            return (status, axum::Json(json!({ "error": e.to_string() }))).into_response();
        }
    };
    listener.sink.health().heard();
    match &event.kind {
        EventKind::MessageReceived(message) => {
            if let Some(inbound) = listener.inner.inbound(message).await
                && !listener.sink.deliver(inbound).await
            {
                // Not taken: a non-2xx makes Feishu send it again later.
                return StatusCode::SERVICE_UNAVAILABLE.into_response();
            }
        }
        EventKind::Skipped { why } => tracing::trace!(%why, "feishu: callback skipped"),
        EventKind::UrlVerification { .. } => {}
    }
    axum::Json(callback_reply(&event)).into_response()
}

#[cfg(test)]
mod tests {
    use super::super::crypto::{encrypt, signature};
    use super::*;

    const NOW: i64 = 1_700_000_000;
    const EVENT: &str =
        r#"{"schema":"2.0","header":{"event_id":"e","event_type":"x.y","token":"vt"},"event":{}}"#;

    #[test]
    fn plain_callbacks() {
        let challenge = br#"{"challenge":"c1","token":"vt","type":"url_verification"}"#;
        let event = open_callback(Some("vt"), None, SignedHeaders::default(), challenge, NOW);
        assert_eq!(callback_reply(&event.unwrap()), json!({"challenge": "c1"}));
        assert_eq!(
            open_callback(
                Some("other"),
                None,
                SignedHeaders::default(),
                challenge,
                NOW
            ),
            Err(CallbackError::WrongToken)
        );
        let event = open_callback(
            Some("vt"),
            None,
            SignedHeaders::default(),
            EVENT.as_bytes(),
            NOW,
        );
        assert_eq!(callback_reply(&event.unwrap()), json!({}));
        let wrong = open_callback(
            Some("vx"),
            None,
            SignedHeaders::default(),
            EVENT.as_bytes(),
            NOW,
        );
        assert_eq!(wrong.unwrap_err().status(), 401);
        let garbage = open_callback(None, None, SignedHeaders::default(), b"{", NOW);
        assert_eq!(garbage.unwrap_err().status(), 400);
        let sealed = format!(
            r#"{{"encrypt":"{}"}}"#,
            encrypt("k", EVENT.as_bytes(), [1; 16])
        );
        assert_eq!(
            open_callback(None, None, SignedHeaders::default(), sealed.as_bytes(), NOW),
            Err(CallbackError::EncryptedWithoutKey)
        );
    }

    #[test]
    fn encrypted_and_signed() {
        let body = format!(
            r#"{{"encrypt":"{}"}}"#,
            encrypt("k", EVENT.as_bytes(), [1; 16])
        );
        let ts = NOW.to_string();
        let sig = signature(&ts, "n", "k", body.as_bytes());
        let headers = SignedHeaders {
            timestamp: Some(&ts),
            nonce: Some("n"),
            signature: Some(&sig),
        };
        let event = open_callback(Some("vt"), Some("k"), headers, body.as_bytes(), NOW).unwrap();
        assert_eq!(event.event_id, "e");
        assert_eq!(
            open_callback(
                Some("vt"),
                Some("k"),
                SignedHeaders::default(),
                body.as_bytes(),
                NOW
            ),
            Err(CallbackError::Signature(SignatureError::Missing))
        );
        let replay = open_callback(Some("vt"), Some("k"), headers, body.as_bytes(), NOW + 600);
        assert_eq!(replay.unwrap_err().status(), 401);
        let forged = SignedHeaders {
            signature: Some("00"),
            ..headers
        };
        assert_eq!(
            open_callback(Some("vt"), Some("k"), forged, body.as_bytes(), NOW),
            Err(CallbackError::Signature(SignatureError::Wrong))
        );
        // URL verification is not signed.
        let challenge = encrypt(
            "k",
            br#"{"challenge":"c2","token":"vt","type":"url_verification"}"#,
            [2; 16],
        );
        let challenge = format!(r#"{{"encrypt":"{challenge}"}}"#);
        let event = open_callback(
            Some("vt"),
            Some("k"),
            SignedHeaders::default(),
            challenge.as_bytes(),
            NOW,
        );
        assert_eq!(callback_reply(&event.unwrap()), json!({"challenge": "c2"}));
        assert!(matches!(
            open_callback(None, Some("k"), headers, br#"{"encrypt":"!!"}"#, NOW),
            Err(CallbackError::Crypto(CryptoError::Base64))
        ));
    }
}

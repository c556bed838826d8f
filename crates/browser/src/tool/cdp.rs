//! A small Chrome DevTools Protocol client: one WebSocket to the browser target, calls with
//! ids and a timeout each, the flattened session mode (`Target.attachToTarget {flatten:
//! true}` puts a `sessionId` on the messages of a page) and an event stream.
//!
//! Why not chromiumoxide: it generates the whole protocol (hundreds of thousands of lines,
//! minutes of compile time on a 2-core machine) for the ~25 methods the tool uses. Here a
//! call is a method name and a JSON object, and the few results we read are read as JSON.
//!
//! Events reach two places: a hook called by the reader in order, before the responses that
//! follow them on the wire resolve (so the console messages `Runtime.enable` replays are in
//! the buffer when `enable` returns), and a bounded broadcast (waiting for a load event; a
//! slow subscriber loses old events, never blocks the reader). When the socket closes (the
//! browser crashed or was stopped) every pending call fails with [`CdpError::Closed`] and
//! [`Cdp::is_closed`] says so: the tool then connects afresh on its next call.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::{SinkExt as _, StreamExt as _};
use serde_json::{Value, json};
use tokio::sync::{broadcast, mpsc, oneshot};
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;

/// The largest message taken from the browser: a full-page screenshot or a PDF in base64.
pub const MAX_MESSAGE_BYTES: usize = 64 * 1024 * 1024;
/// How many events the broadcast keeps for a slow subscriber.
const EVENT_BUFFER: usize = 512;
/// Outgoing messages waiting for the writer.
const OUTGOING_BUFFER: usize = 64;

/// Why a CDP call failed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CdpError {
    #[error("cannot connect to the browser at {url}: {reason}")]
    Connect { url: String, reason: String },
    #[error("the connection to the browser closed (it crashed or was stopped)")]
    Closed,
    #[error("the browser did not answer {method} within {secs:.1} s")]
    Timeout { method: String, secs: f64 },
    #[error("{method} failed: {message}")]
    Protocol { method: String, message: String },
}

/// An event: `method`, its `params`, and the flattened session it belongs to (none for the
/// browser target's own events).
#[derive(Debug, Clone, PartialEq)]
pub struct CdpEvent {
    pub method: String,
    pub params: Value,
    pub session_id: Option<String>,
}

/// One frame from the browser, parsed.
#[derive(Debug, Clone, PartialEq)]
pub enum Incoming {
    /// The answer to call `id`: its result or the protocol error's message.
    Response {
        id: u64,
        result: Result<Value, String>,
    },
    Event(CdpEvent),
}

/// Parses one text frame. `None` for anything that is neither a response nor an event
/// (the browser never sends such; a malformed frame is dropped, not fatal).
pub fn parse_frame(text: &str) -> Option<Incoming> {
    let value: Value = serde_json::from_str(text).ok()?;
    let object = value.as_object()?;
    if let Some(id) = object.get("id").and_then(Value::as_u64) {
        let result = match object.get("error") {
            Some(error) => Err(error
                .get("message")
                .and_then(Value::as_str)
                .map_or_else(|| error.to_string(), str::to_owned)
                + &error
                    .get("data")
                    .and_then(Value::as_str)
                    .map(|d| format!(" ({d})"))
                    .unwrap_or_default()),
            None => Ok(object.get("result").cloned().unwrap_or(Value::Null)),
        };
        return Some(Incoming::Response { id, result });
    }
    let method = object.get("method")?.as_str()?.to_owned();
    Some(Incoming::Event(CdpEvent {
        method,
        params: object.get("params").cloned().unwrap_or(Value::Null),
        session_id: object
            .get("sessionId")
            .and_then(Value::as_str)
            .map(str::to_owned),
    }))
}

/// Called by the reader for every event, in order. It must not block.
pub type EventHook = Arc<dyn Fn(&CdpEvent) + Send + Sync>;

type Pending = Arc<Mutex<HashMap<u64, oneshot::Sender<Result<Value, String>>>>>;

/// A connection to the browser target.
pub struct Cdp {
    outgoing: mpsc::Sender<String>,
    pending: Pending,
    next_id: AtomicU64,
    events: broadcast::Sender<CdpEvent>,
    closed: Arc<AtomicBool>,
    timeout: Duration,
}

impl std::fmt::Debug for Cdp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Cdp")
            .field("closed", &self.is_closed())
            .finish_non_exhaustive()
    }
}

impl Cdp {
    /// Connects to `ws_url` (the browser target); every call waits at most `timeout`.
    pub async fn connect(
        ws_url: &str,
        timeout: Duration,
        hook: EventHook,
    ) -> Result<Arc<Self>, CdpError> {
        let config = WebSocketConfig::default()
            .max_message_size(Some(MAX_MESSAGE_BYTES))
            .max_frame_size(Some(MAX_MESSAGE_BYTES));
        let connect = tokio_tungstenite::connect_async_with_config(ws_url, Some(config), true);
        let connect_error = |reason: String| CdpError::Connect {
            url: ws_url.to_owned(),
            reason,
        };
        let (socket, _) = tokio::time::timeout(timeout, connect)
            .await
            .map_err(|_| connect_error("timed out".to_owned()))?
            .map_err(|e| connect_error(e.to_string()))?;
        let (mut sink, mut stream) = socket.split();
        let (outgoing, mut outgoing_rx) = mpsc::channel::<String>(OUTGOING_BUFFER);
        let pending: Pending = Arc::default();
        let (events, _) = broadcast::channel(EVENT_BUFFER);
        let closed = Arc::new(AtomicBool::new(false));

        tokio::spawn(async move {
            while let Some(text) = outgoing_rx.recv().await {
                if sink.send(Message::text(text)).await.is_err() {
                    break;
                }
            }
            let _ = sink.close().await;
        });

        let reader_pending = pending.clone();
        let reader_events = events.clone();
        let reader_closed = closed.clone();
        tokio::spawn(async move {
            while let Some(frame) = stream.next().await {
                let text = match frame {
                    Ok(Message::Text(text)) => text,
                    Ok(Message::Close(_)) | Err(_) => break,
                    Ok(_) => continue,
                };
                match parse_frame(text.as_str()) {
                    Some(Incoming::Response { id, result }) => {
                        let waiter = lock(&reader_pending).remove(&id);
                        if let Some(waiter) = waiter {
                            let _ = waiter.send(result);
                        }
                    }
                    Some(Incoming::Event(event)) => {
                        hook(&event);
                        let _ = reader_events.send(event);
                    }
                    None => tracing::debug!("cdp: dropped a frame that is not a message"),
                }
            }
            reader_closed.store(true, Ordering::SeqCst);
            // Dropping the senders fails every pending call with Closed.
            lock(&reader_pending).clear();
        });

        Ok(Arc::new(Self {
            outgoing,
            pending,
            next_id: AtomicU64::new(1),
            events,
            closed,
            timeout,
        }))
    }

    /// The socket closed: every call fails; connect again.
    pub fn is_closed(&self) -> bool {
        self.closed.load(Ordering::SeqCst) || self.outgoing.is_closed()
    }

    /// Events from now on.
    pub fn subscribe(&self) -> broadcast::Receiver<CdpEvent> {
        self.events.subscribe()
    }

    /// Calls `method` with `params` on the browser target, or on the page session
    /// `session_id`, waiting at most the connection's timeout.
    pub async fn call(
        &self,
        method: &str,
        params: Value,
        session_id: Option<&str>,
    ) -> Result<Value, CdpError> {
        self.call_within(method, params, session_id, self.timeout)
            .await
    }

    /// [`Cdp::call`] with its own timeout.
    pub async fn call_within(
        &self,
        method: &str,
        params: Value,
        session_id: Option<&str>,
        timeout: Duration,
    ) -> Result<Value, CdpError> {
        if self.is_closed() {
            return Err(CdpError::Closed);
        }
        let id = self.next_id.fetch_add(1, Ordering::SeqCst);
        let mut message = json!({"id": id, "method": method, "params": params});
        if let Some(session) = session_id {
            message["sessionId"] = Value::String(session.to_owned());
        }
        let (tx, rx) = oneshot::channel();
        lock(&self.pending).insert(id, tx);
        // The send is inside the timeout too: a writer stuck on a full socket must not hold
        // the call forever.
        let exchange = async {
            if self.outgoing.send(message.to_string()).await.is_err() {
                return Err(CdpError::Closed);
            }
            match rx.await {
                Ok(Ok(result)) => Ok(result),
                Ok(Err(message)) => Err(CdpError::Protocol {
                    method: method.to_owned(),
                    message,
                }),
                Err(_) => Err(CdpError::Closed),
            }
        };
        match tokio::time::timeout(timeout, exchange).await {
            Ok(result) => {
                if result.is_err() {
                    lock(&self.pending).remove(&id);
                }
                result
            }
            Err(_) => {
                lock(&self.pending).remove(&id);
                Err(CdpError::Timeout {
                    method: method.to_owned(),
                    secs: timeout.as_secs_f64(),
                })
            }
        }
    }
}

/// A poisoned lock only means another task panicked while holding it; the map is still
/// usable.
pub(crate) fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_parse_into_responses_and_events() {
        assert_eq!(
            parse_frame(r#"{"id":3,"result":{"a":1}}"#),
            Some(Incoming::Response {
                id: 3,
                result: Ok(json!({"a":1}))
            })
        );
        assert_eq!(
            parse_frame(r#"{"id":4,"error":{"code":-32000,"message":"No node","data":"x"}}"#),
            Some(Incoming::Response {
                id: 4,
                result: Err("No node (x)".to_owned())
            })
        );
        assert_eq!(
            parse_frame(r#"{"method":"Page.loadEventFired","params":{},"sessionId":"S"}"#),
            Some(Incoming::Event(CdpEvent {
                method: "Page.loadEventFired".to_owned(),
                params: json!({}),
                session_id: Some("S".to_owned()),
            }))
        );
        for bad in [
            "",
            "[]",
            "{",
            "null",
            r#"{"id":-1}"#,
            r#"{"method":3}"#,
            "{}",
        ] {
            assert_eq!(parse_frame(bad), None, "{bad}");
        }
    }
}

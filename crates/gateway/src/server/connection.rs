//! One WebSocket connection: `connect.challenge`, the `connect` handshake (protocol 3–4,
//! token auth, 64 KiB pre-auth frames, 15 s to answer), `hello-ok`, then requests (each on
//! its own task, so a long `agent` call never blocks the rest), broadcast events with a
//! per-connection `seq`, `tick`s, and `shutdown`. A client whose queue passes
//! `maxBufferedBytes`, or that falls behind the event stream, is disconnected. From `hello-ok`
//! until it ends, the connection is in the presence list (see `state.rs`).

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::Duration;

use axum::extract::ws::{CloseFrame, Message, Utf8Bytes, WebSocket};
use futures_util::{SinkExt, StreamExt};
use serde_json::{Value, json};
use tokio::sync::{broadcast, mpsc};

use super::Gateway;
use super::frames::{
    MAX_BUFFERED_BYTES, MAX_PAYLOAD, MAX_PREAUTH_FRAME, MAX_PROTOCOL, MIN_PROTOCOL, MethodError,
    Request, TICK_INTERVAL_MS, codes, error_frame, event_frame, ok_frame, parse_request,
};
use super::methods::{self, Caller, EVENTS, FrameSender, METHODS};
use super::runs::GatewayEvent;
use super::state::Snapshot;

/// Close codes.
const POLICY_VIOLATION: u16 = 1008;
const UNSUPPORTED_DATA: u16 = 1003;
const GOING_AWAY: u16 = 1001;
/// How long a client has to send `connect`.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(15);

enum Outgoing {
    Text(String),
    Close(u16, String),
}

/// The sending half, with the bytes still queued for the socket.
#[derive(Clone)]
struct Out {
    tx: mpsc::UnboundedSender<Outgoing>,
    queued: Arc<AtomicUsize>,
    seq: Arc<AtomicU64>,
}

impl Out {
    fn text(&self, text: String) {
        let len = text.len();
        if self.queued.fetch_add(len, Ordering::Relaxed) + len > MAX_BUFFERED_BYTES {
            self.close(POLICY_VIOLATION, "client too slow: send buffer full");
            return;
        }
        let _ = self.tx.send(Outgoing::Text(text));
    }

    fn event(&self, event: &str, payload: &Value) {
        let seq = self.next_seq();
        self.text(event_frame(event, payload, Some(seq)));
    }

    fn next_seq(&self) -> u64 {
        self.seq.fetch_add(1, Ordering::Relaxed) + 1
    }

    fn close(&self, code: u16, reason: &str) {
        let _ = self.tx.send(Outgoing::Close(code, reason.to_owned()));
    }
}

/// Runs a connection to its end.
pub async fn run(socket: WebSocket, gw: Arc<Gateway>, peer: SocketAddr) {
    let (mut sink, mut stream) = socket.split();
    let (tx, mut rx) = mpsc::unbounded_channel();
    let out = Out {
        tx,
        queued: Arc::new(AtomicUsize::new(0)),
        seq: Arc::new(AtomicU64::new(0)),
    };
    let queued = Arc::clone(&out.queued);
    let writer = tokio::spawn(async move {
        // Everything queued goes out with one flush: a busy gateway sends every client
        // each run's events, and a write per frame would be a syscall per frame.
        let mut batch = Vec::new();
        while rx.recv_many(&mut batch, 256).await > 0 {
            // Let the other connections' tasks run once first: under load more frames
            // arrive meanwhile and share the flush.
            tokio::task::yield_now().await;
            while let Ok(message) = rx.try_recv() {
                batch.push(message);
            }
            let mut sent_bytes = 0;
            let mut closing = None;
            let mut failed = false;
            for message in batch.drain(..) {
                match message {
                    Outgoing::Text(text) => {
                        sent_bytes += text.len();
                        if !failed {
                            failed = sink
                                .feed(Message::Text(Utf8Bytes::from(text)))
                                .await
                                .is_err();
                        }
                    }
                    Outgoing::Close(code, reason) => {
                        closing = Some(CloseFrame {
                            code,
                            reason: Utf8Bytes::from(reason),
                        });
                        break;
                    }
                }
            }
            if !failed {
                failed = sink.flush().await.is_err();
            }
            queued.fetch_sub(sent_bytes, Ordering::Relaxed);
            if let Some(frame) = closing {
                let _ = sink.send(Message::Close(Some(frame))).await;
                break;
            }
            if failed {
                break;
            }
        }
    });

    let nonce = pincer_store::ids::session_id();
    out.text(event_frame(
        "connect.challenge",
        &json!({ "nonce": nonce, "ts": pincer_ai::now_ms() }),
        None,
    ));
    let conn_id = pincer_store::ids::session_id();
    if let Some(session) = handshake(&gw, &out, &mut stream, peer, &conn_id).await {
        serve_requests(&gw, &out, stream, session.caller, session.events).await;
        drop(session.presence);
    }
    drop(out);
    let _ = writer.await;
}

/// What a connection that passed `connect` holds while it serves.
struct Session {
    caller: Caller,
    /// Broadcast events from the moment its snapshot was taken.
    events: broadcast::Receiver<Arc<GatewayEvent>>,
    presence: Member,
    /// Counts the connection among those shown workers' dialogs (`caps: ["extension-ui"]`).
    _dialogs: Option<super::dialogs::DialogClient>,
}

/// The connection's place in the presence list: dropped, it leaves it, however the
/// connection ended.
struct Member {
    gw: Arc<Gateway>,
    conn_id: String,
}

impl Drop for Member {
    fn drop(&mut self) {
        let announce = !self.gw.shutdown.is_cancelled();
        self.gw.state.leave(&self.conn_id, announce);
    }
}

/// Reads the next text frame; `None` when the client is gone or sent something else.
async fn next_text(
    stream: &mut futures_util::stream::SplitStream<WebSocket>,
    out: &Out,
) -> Option<String> {
    loop {
        match stream.next().await? {
            Ok(Message::Text(text)) => return Some(text.to_string()),
            Ok(Message::Binary(_)) => {
                out.close(
                    UNSUPPORTED_DATA,
                    "binary frames are not part of the protocol",
                );
                return None;
            }
            Ok(Message::Close(_)) | Err(_) => return None,
            Ok(Message::Ping(_) | Message::Pong(_)) => {}
        }
    }
}

/// The `connect` exchange. Returns what the client may do, or `None` after refusing it.
async fn handshake(
    gw: &Arc<Gateway>,
    out: &Out,
    stream: &mut futures_util::stream::SplitStream<WebSocket>,
    peer: SocketAddr,
    conn_id: &str,
) -> Option<Session> {
    let text = match tokio::time::timeout(HANDSHAKE_TIMEOUT, next_text(stream, out)).await {
        Ok(Some(text)) => text,
        Ok(None) => return None,
        Err(_) => {
            out.close(POLICY_VIOLATION, "handshake timed out: send connect first");
            return None;
        }
    };
    let refuse = |id: &str, error: MethodError| {
        out.text(error_frame(id, &error));
        out.close(POLICY_VIOLATION, &error.message);
        None
    };
    let req = match parse_request(&text, MAX_PREAUTH_FRAME) {
        Ok(req) => req,
        Err(e) => {
            out.close(POLICY_VIOLATION, &format!("invalid handshake: {e}"));
            return None;
        }
    };
    if req.method != "connect" {
        return refuse(
            &req.id,
            MethodError::invalid("the first request must be connect"),
        );
    }
    let (caller, protocol) = match connect(gw, &req, peer) {
        Ok(accepted) => accepted,
        Err(error) => return refuse(&req.id, error),
    };
    let joined = gw
        .state
        .join(conn_id, &req.params, peer.ip(), &caller.scopes);
    let presence = Member {
        gw: Arc::clone(gw),
        conn_id: conn_id.to_owned(),
    };
    out.text(ok_frame(
        &req.id,
        hello_ok(gw, &caller, protocol, conn_id, joined.snapshot),
    ));
    let answers_dialogs = req
        .params
        .get("caps")
        .and_then(Value::as_array)
        .is_some_and(|caps| caps.iter().any(|c| c == super::dialogs::DIALOG_CAP))
        && caller.may("operator.write");
    Some(Session {
        caller,
        events: joined.events,
        presence,
        _dialogs: answers_dialogs.then(|| gw.runs.dialogs().client()),
    })
}

/// Checks `connect`'s parameters: what the client may do and the protocol version both sides
/// speak, or why it may not connect.
fn connect(gw: &Gateway, req: &Request, peer: SocketAddr) -> Result<(Caller, u64), MethodError> {
    let p = &req.params;
    let min = p
        .get("minProtocol")
        .and_then(Value::as_u64)
        .unwrap_or(MIN_PROTOCOL);
    let max = p
        .get("maxProtocol")
        .and_then(Value::as_u64)
        .unwrap_or(MAX_PROTOCOL);
    let protocol = max.min(MAX_PROTOCOL);
    if protocol < min || protocol < MIN_PROTOCOL {
        return Err(MethodError::invalid(format!(
            "protocol mismatch: the client speaks {min}..{max}, this gateway {MIN_PROTOCOL}..{MAX_PROTOCOL}"
        ))
        .with_details(json!({ "minProtocol": MIN_PROTOCOL, "maxProtocol": MAX_PROTOCOL })));
    }
    if let Some(role) = p.get("role").and_then(Value::as_str)
        && role != "operator"
    {
        return Err(MethodError {
            code: codes::FORBIDDEN,
            message: format!("role {role:?} is not supported; connect as operator"),
            details: None,
        });
    }
    gw.auth
        .check(p.pointer("/auth/token").and_then(Value::as_str), peer.ip())?;
    let scopes: Vec<String> = match p.get("scopes").and_then(Value::as_array) {
        Some(list) => list
            .iter()
            .filter_map(Value::as_str)
            .filter(|s| s.starts_with("operator."))
            .map(str::to_owned)
            .collect(),
        None => vec!["operator.read".into(), "operator.write".into()],
    };
    Ok((Caller { scopes }, protocol))
}

/// `hello-ok` for a client allowed `caller`'s scopes, with the state it joined at.
fn hello_ok(
    gw: &Gateway,
    caller: &Caller,
    protocol: u64,
    conn_id: &str,
    snapshot: Snapshot,
) -> Value {
    let agent = gw.runtime.default_agent_id();
    let main_session_key = gw.runtime.main_session_key(&agent);
    let main_key = main_session_key
        .rsplit(':')
        .next()
        .unwrap_or("main")
        .to_owned();
    json!({
        "type": "hello-ok",
        "protocol": protocol,
        "server": { "version": env!("CARGO_PKG_VERSION"), "connId": conn_id },
        "features": { "methods": METHODS, "events": EVENTS },
        "snapshot": {
            "presence": snapshot.presence,
            "health": snapshot.health,
            "stateVersion": snapshot.version.to_json(),
            "uptimeMs": gw.started.elapsed().as_millis() as u64,
            "sessionDefaults": {
                "defaultAgentId": agent, "mainKey": main_key,
                "mainSessionKey": main_session_key, "scope": "per-sender",
            },
            "authMode": gw.auth.mode(),
        },
        "auth": { "method": gw.auth.mode(), "role": "operator", "scopes": caller.scopes },
        "policy": {
            "maxPayload": MAX_PAYLOAD, "maxBufferedBytes": MAX_BUFFERED_BYTES,
            "tickIntervalMs": TICK_INTERVAL_MS,
        },
    })
}

/// After `hello-ok`: requests, events, ticks, until the client leaves or the server stops.
async fn serve_requests(
    gw: &Arc<Gateway>,
    out: &Out,
    mut stream: futures_util::stream::SplitStream<WebSocket>,
    caller: Caller,
    mut events: broadcast::Receiver<Arc<GatewayEvent>>,
) {
    // The socket is read by its own task: polling a WebSocket stream costs a buffer fill
    // even when nothing arrived, and the loop below wakes for every event it forwards.
    let (frames_tx, mut frames) = mpsc::channel::<String>(16);
    let reader = {
        let out = out.clone();
        tokio::spawn(async move {
            while let Some(text) = next_text(&mut stream, &out).await {
                if frames_tx.send(text).await.is_err() {
                    break;
                }
            }
        })
    };
    let mut tick = tokio::time::interval(Duration::from_millis(TICK_INTERVAL_MS));
    tick.tick().await;
    let send: FrameSender = {
        let out = out.clone();
        Arc::new(move |frame| out.text(frame))
    };
    loop {
        tokio::select! {
            frame = frames.recv() => {
                let Some(text) = frame else { break };
                match parse_request(&text, MAX_PAYLOAD) {
                    Ok(req) => {
                        let (gw, caller, send) = (Arc::clone(gw), caller.clone(), Arc::clone(&send));
                        tokio::spawn(async move {
                            let frame = match methods::call(&gw, &caller, &req, &send).await {
                                Ok(payload) => ok_frame(&req.id, payload),
                                Err(error) => error_frame(&req.id, &error),
                            };
                            send(frame);
                        });
                    }
                    Err(e) => match request_id(&text) {
                        // Answerable: say what is wrong and keep the connection.
                        Some(id) => out.text(error_frame(&id, &MethodError::invalid(e.to_string()))),
                        None => {
                            out.close(POLICY_VIOLATION, &format!("invalid frame: {e}"));
                            break;
                        }
                    },
                }
            }
            event = events.recv() => match event {
                Ok(event) => out.text(event.frame(out.next_seq())),
                Err(broadcast::error::RecvError::Lagged(_)) => {
                    out.close(POLICY_VIOLATION, "client too slow: events were dropped");
                    break;
                }
                Err(broadcast::error::RecvError::Closed) => break,
            },
            _ = tick.tick() => out.event("tick", &json!({ "ts": pincer_ai::now_ms() })),
            () = gw.shutdown.cancelled() => {
                out.event("shutdown", &json!({ "reason": "gateway stopping" }));
                out.close(GOING_AWAY, "gateway stopping");
                break;
            }
        }
    }
    reader.abort();
}

/// The `id` of a frame that is JSON but not a valid request, to answer it.
fn request_id(text: &str) -> Option<String> {
    let value: Value = serde_json::from_str(text).ok()?;
    value.get("id").and_then(Value::as_str).map(str::to_owned)
}

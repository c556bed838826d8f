//! One WebSocket connection: `connect.challenge`, the `connect` handshake (protocol 3–4,
//! token auth, 15 s to answer), `hello-ok`, then requests (each on its own task, so a long
//! `agent` call never blocks the rest), broadcast events with a per-connection `seq`,
//! `tick`s, and `shutdown`. Until `connect` succeeds a connection holds a pending slot
//! (`ws_limits.rs`: per peer and in all) and may send at most 64 KiB in all (the read budget
//! of `preauth_io.rs`, lifted on success). Sending is `writer.rs`'s: a client whose queue
//! passes `maxBufferedBytes`, that stops reading, or that falls behind the event stream is
//! dropped, and a client's Close is answered at once. Session events go only to a
//! connection that subscribed to them, and a run's `agent`/`chat` events only to one that
//! watches its session or named none (`methods::Subscriptions`); each event is serialized
//! once for all connections. From `hello-ok` until it ends, the connection is in the
//! presence list (see `state.rs`).

use std::sync::Arc;
use std::time::Duration;

use futures_util::StreamExt;
use futures_util::stream::SplitStream;
use serde_json::{Value, json};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::{broadcast, mpsc};
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::error::{Error as WsError, ProtocolError};

use super::Gateway;
use super::frames::{
    MAX_BUFFERED_BYTES, MAX_PAYLOAD, MAX_PREAUTH_FRAME, MAX_PROTOCOL, MIN_PROTOCOL, MethodError,
    Request, TICK_INTERVAL_MS, codes, error_frame, event_frame, ok_frame, parse_request,
};
use super::methods::{self, Caller, EVENTS, FrameSender, METHODS};
use super::preauth_io::{BudgetExhausted, BudgetedIo, ReadBudget};
use super::runs::GatewayEvent;
use super::state::Snapshot;
use super::writer::{
    self, GOING_AWAY, INVALID_DATA, MESSAGE_TOO_BIG, Out, POLICY_VIOLATION, PROTOCOL_ERROR,
    TRY_AGAIN_LATER, UNSUPPORTED_DATA,
};
use super::ws_limits::PendingSlot;

/// How long a client has to send `connect`.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(15);

type Stream<S> = SplitStream<WebSocketStream<BudgetedIo<S>>>;

/// Runs a connection to its end.
pub async fn run<S>(socket: WebSocketStream<BudgetedIo<S>>, gw: Arc<Gateway>, peer: super::Peer)
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let budget = socket.get_ref().budget().clone();
    let (sink, mut stream) = socket.split();
    let (out, writer) = writer::channel(MAX_BUFFERED_BYTES);
    let writer = tokio::spawn(writer.run(sink));
    match gw.pending.admit(peer.ip()) {
        Err(refused) => out.close(TRY_AGAIN_LATER, &refused.to_string()),
        Ok(slot) => {
            let nonce = pincer_store::ids::session_id();
            out.text(event_frame(
                "connect.challenge",
                &json!({ "nonce": nonce, "ts": pincer_ai::now_ms() }),
                None,
            ));
            let conn_id = pincer_store::ids::session_id();
            let pending = Pending { slot, budget };
            if let Some(session) = handshake(&gw, &out, &mut stream, peer, &conn_id, pending).await
            {
                serve_requests(&gw, &out, stream, session.caller, session.events).await;
                drop(session.presence);
            }
        }
    }
    out.end();
    let _ = writer.await;
}

/// What holds a connection to the pre-auth limits until `connect` succeeds.
struct Pending {
    slot: PendingSlot,
    budget: ReadBudget,
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

/// Reads the next text frame; `None` when the connection is ending (the client left, closed,
/// broke the protocol or sent something else; `out` has been told how to end).
async fn next_text<S>(stream: &mut Stream<S>, out: &Out) -> Option<String>
where
    S: AsyncRead + AsyncWrite + Unpin,
{
    loop {
        let read = tokio::select! {
            read = stream.next() => read,
            () = out.over() => return None,
        };
        match read {
            Some(Ok(Message::Text(text))) => return Some(text.as_str().to_owned()),
            Some(Ok(Message::Binary(_))) => {
                out.close(
                    UNSUPPORTED_DATA,
                    "binary frames are not part of the protocol",
                );
                return None;
            }
            Some(Ok(Message::Close(_))) => {
                out.answer_peer_close();
                return None;
            }
            Some(Ok(Message::Ping(_) | Message::Pong(_) | Message::Frame(_))) => {}
            Some(Err(error)) => {
                match read_failure(&error) {
                    Some((code, reason)) => out.abort(code, reason),
                    None => out.end(),
                }
                return None;
            }
            None => {
                out.end();
                return None;
            }
        }
    }
}

/// The Close a failed read is answered with; `None` when the client is gone.
fn read_failure(error: &WsError) -> Option<(u16, &'static str)> {
    match error {
        WsError::Io(e) if BudgetExhausted::is(e) => Some((
            MESSAGE_TOO_BIG,
            "too much data before connect: at most 64 KiB until connect succeeds",
        )),
        WsError::Capacity(_) => Some((
            MESSAGE_TOO_BIG,
            "message too big: frames are limited to maxPayload",
        )),
        WsError::Utf8(_) => Some((INVALID_DATA, "text frame is not valid UTF-8")),
        WsError::Protocol(ProtocolError::ResetWithoutClosingHandshake) => None,
        WsError::Protocol(_) => Some((PROTOCOL_ERROR, "WebSocket protocol error")),
        _ => None,
    }
}

/// The `connect` exchange. Returns what the client may do, or `None` after refusing it.
async fn handshake<S>(
    gw: &Arc<Gateway>,
    out: &Out,
    stream: &mut Stream<S>,
    peer: super::Peer,
    conn_id: &str,
    pending: Pending,
) -> Option<Session>
where
    S: AsyncRead + AsyncWrite + Unpin,
{
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
    // Authenticated: requests may now be as large as `maxPayload`, and the connection no
    // longer counts among the pending ones (before `hello-ok`, so a client that got it can
    // count on its place being free).
    pending.budget.lift();
    drop(pending.slot);
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
fn connect(gw: &Gateway, req: &Request, peer: super::Peer) -> Result<(Caller, u64), MethodError> {
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
        .check(p.pointer("/auth/token").and_then(Value::as_str), peer)?;
    let scopes: Vec<String> = match p.get("scopes").and_then(Value::as_array) {
        Some(list) => list
            .iter()
            .filter_map(Value::as_str)
            .filter(|s| s.starts_with("operator."))
            .map(str::to_owned)
            .collect(),
        None => vec!["operator.read".into(), "operator.write".into()],
    };
    let caller = Caller {
        scopes,
        sessions: Arc::default(),
    };
    Ok((caller, protocol))
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
async fn serve_requests<S>(
    gw: &Arc<Gateway>,
    out: &Out,
    mut stream: Stream<S>,
    caller: Caller,
    mut events: broadcast::Receiver<Arc<GatewayEvent>>,
) where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
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
                // Session events go only to the connections that subscribed to them, run
                // events to those watching their session; `seq` counts only what is sent.
                Ok(event) if !caller.sessions.wants(event.event, &event.payload) => {}
                // An approval shows the command line: only for those who may answer it.
                Ok(event)
                    if event.event.starts_with("exec.approval.")
                        && !caller.may("operator.approvals") => {}
                Ok(event) => out.text(event.frame(out.next_seq())),
                Err(broadcast::error::RecvError::Lagged(_)) => {
                    out.abort(POLICY_VIOLATION, "client too slow: events were dropped");
                    break;
                }
                Err(broadcast::error::RecvError::Closed) => break,
            },
            _ = tick.tick() => out.event("tick", &json!({ "ts": pincer_ai::now_ms() })),
            () = out.over() => break,
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

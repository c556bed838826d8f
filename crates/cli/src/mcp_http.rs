//! The gateway's `/mcp`: the MCP server of `pincer mcp serve` over Streamable HTTP, in the
//! gateway process. Its port calls the gateway's method dispatch directly, as an admin
//! operator (whoever passed the gateway token is the owner), and follows a run through the
//! gateway's event broadcast instead of a WebSocket. The gateway checks host, origin and
//! token before a request reaches the route ([`ServeOptions::extra_routes`]).
//!
//! [`ServeOptions::extra_routes`]: pincer_gateway::server::ServeOptions::extra_routes

use std::sync::{Arc, OnceLock, Weak};

use pincer_gateway::server::frames::Request;
use pincer_gateway::server::methods::{self, Caller, FrameSender};
use pincer_gateway::server::runs::GatewayEvent;
use pincer_gateway::server::{Gateway, OnStart};
use pincer_mcp::server::{BoxFuture, Followed, FrameSource, GatewayCalls, GatewayError};
use serde_json::{Value, json};
use tokio::sync::broadcast;

/// Where MCP clients reach the gateway.
pub const PATH: &str = "/mcp";

/// The `/mcp` route, and the start hook that hands it the running gateway.
pub fn routes() -> (axum::Router, OnStart) {
    let slot: Arc<OnceLock<Weak<Gateway>>> = Arc::default();
    let port = InProcess {
        gateway: Arc::clone(&slot),
    };
    let service = pincer_mcp::server::http::http_service(Arc::new(port), env!("CARGO_PKG_VERSION"));
    let bind: OnStart = Arc::new(move |gateway: &Arc<Gateway>| {
        let _ = slot.set(Arc::downgrade(gateway));
    });
    (axum::Router::new().route_service(PATH, service), bind)
}

/// The running gateway, once started (weak: the gateway holds this route).
struct InProcess {
    gateway: Arc<OnceLock<Weak<Gateway>>>,
}

impl InProcess {
    fn gateway(&self) -> Result<Arc<Gateway>, GatewayError> {
        self.gateway.get().and_then(Weak::upgrade).ok_or_else(|| {
            GatewayError::Unreachable("the gateway is starting or shutting down".to_owned())
        })
    }
}

/// One method call as an admin operator.
async fn dispatch(gw: &Arc<Gateway>, method: &str, params: Value) -> Result<Value, GatewayError> {
    let caller = Caller {
        scopes: vec!["operator.admin".to_owned()],
        sessions: Arc::default(),
    };
    let request = Request {
        id: format!("mcp-{}", pincer_base::id::hex_id8()),
        method: method.to_owned(),
        params,
    };
    let send: FrameSender = Arc::new(|_| {});
    methods::call(gw, &caller, &request, &send)
        .await
        .map_err(|e| GatewayError::Refused {
            method: method.to_owned(),
            code: e.code.to_owned(),
            message: e.message,
        })
}

impl GatewayCalls for InProcess {
    fn call<'a>(
        &'a self,
        method: &'a str,
        params: Value,
    ) -> BoxFuture<'a, Result<Value, GatewayError>> {
        Box::pin(async move { dispatch(&self.gateway()?, method, params).await })
    }

    fn send_following<'a>(
        &'a self,
        method: &'a str,
        params: Value,
    ) -> BoxFuture<'a, Result<Followed, GatewayError>> {
        Box::pin(async move {
            let gw = self.gateway()?;
            // Subscribed before the request: none of the run's events can be missed.
            let events = gw.runs.subscribe();
            let request_id = "mcp".to_owned();
            let answer = match dispatch(&gw, method, params).await {
                Ok(payload) => {
                    json!({"type": "res", "id": request_id, "ok": true, "payload": payload})
                }
                Err(GatewayError::Refused { code, message, .. }) => json!({
                    "type": "res", "id": request_id, "ok": false,
                    "error": {"code": code, "message": message},
                }),
                Err(e) => return Err(e),
            };
            Ok(Followed {
                request_id,
                frames: Box::new(Events {
                    answer: Some(answer),
                    events,
                }),
            })
        })
    }
}

/// The request's answer, then every event the gateway broadcasts, as WS frames.
struct Events {
    answer: Option<Value>,
    events: broadcast::Receiver<Arc<GatewayEvent>>,
}

impl FrameSource for Events {
    fn next_frame(&mut self) -> BoxFuture<'_, Result<Value, GatewayError>> {
        Box::pin(async move {
            if let Some(answer) = self.answer.take() {
                return Ok(answer);
            }
            loop {
                match self.events.recv().await {
                    Ok(event) => {
                        return Ok(json!({
                            "type": "event", "event": event.event, "payload": event.payload,
                        }));
                    }
                    // Events of other runs crowded the buffer; the run's end is still ahead.
                    Err(broadcast::error::RecvError::Lagged(skipped)) => {
                        tracing::warn!("/mcp fell {skipped} gateway events behind");
                    }
                    Err(broadcast::error::RecvError::Closed) => {
                        return Err(GatewayError::Failed("the gateway stopped".to_owned()));
                    }
                }
            }
        })
    }
}

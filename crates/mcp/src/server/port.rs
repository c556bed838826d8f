//! The port the MCP server reaches Pincer through: a running gateway's method dispatch.
//! `pincer mcp serve` implements it over the gateway's WebSocket protocol (one operator
//! connection per call); the gateway's own `/mcp` could implement it in process. The server
//! only needs two things: call a method and get its payload, and send a request on a
//! connection whose events it then reads (a run's `agent` and `chat` events).

use std::future::Future;
use std::pin::Pin;

use serde_json::Value;

/// A boxed future the port's methods return (the trait is used as `dyn`).
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// Why a gateway call failed. Each displays as a sentence a user can act on.
#[derive(Debug, thiserror::Error)]
pub enum GatewayError {
    /// No gateway answers where it should run; the message says how to start it.
    #[error("{0}")]
    Unreachable(String),
    /// The gateway answered the request with `ok: false`.
    #[error("the gateway refused {method}: {message}")]
    Refused {
        method: String,
        /// OpenClaw's error code (`INVALID_REQUEST`, `UNAVAILABLE`, …).
        code: String,
        message: String,
    },
    /// Anything else: the connection broke, a call timed out.
    #[error("{0}")]
    Failed(String),
}

/// A connection that sent one request and now yields every frame the gateway sends on it
/// (its `res` and the events broadcast to operators), raw as JSON.
pub trait FrameSource: Send {
    /// The next frame; an error when the connection is gone.
    fn next_frame(&mut self) -> BoxFuture<'_, Result<Value, GatewayError>>;
}

/// A request sent on its own connection: its id (its `res` carries it) and the frames.
pub struct Followed {
    pub request_id: String,
    pub frames: Box<dyn FrameSource>,
}

/// What the MCP server needs from a gateway.
pub trait GatewayCalls: Send + Sync + 'static {
    /// Calls `method` with `params`; the answer's payload.
    fn call<'a>(
        &'a self,
        method: &'a str,
        params: Value,
    ) -> BoxFuture<'a, Result<Value, GatewayError>>;

    /// Sends `method` with `params` on a connection of its own and hands back that
    /// connection's frames, to follow what the request started.
    fn send_following<'a>(
        &'a self,
        method: &'a str,
        params: Value,
    ) -> BoxFuture<'a, Result<Followed, GatewayError>>;
}

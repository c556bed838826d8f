//! A small client for the local gateway's WebSocket protocol (OpenClaw's, as
//! `pincer_gateway::server` speaks it): wait for the `connect.challenge` event, send
//! `connect` with the token as an operator, then one `req` per call, answered by the `res`
//! with the same id; events in between are skipped by [`GatewayClient::call`] and read by
//! whoever follows them with [`GatewayClient::send_request`] and
//! [`GatewayClient::next_frame`] (`pincer chat --url`, which also reaches remote gateways
//! through [`GatewayClient::connect_url`]).
//!
//! Where the gateway is: `PINCER_GATEWAY_PORT`, else the port of the daemon the service file
//! names, else the config's `gateway.port`; reached through loopback unless the gateway binds
//! one specific address. The token: `PINCER_GATEWAY_TOKEN`, else `gateway.auth.token`, else
//! the token file — never a new one: with no token anywhere, no gateway with token auth can
//! be running, and creating one here would not make it match.
//!
//! "Not running" (nothing listens: connection refused) is its own error type, [`NotRunning`],
//! so a command can fall back to working on the files itself; a refused token and every
//! other failure are plain errors with what to do.

use std::net::SocketAddr;
use std::time::Duration;

use anyhow::{Context as _, Result, anyhow, bail};
use futures_util::{SinkExt as _, StreamExt as _};
use pincer_base::Secret;
use serde_json::{Value, json};
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

use crate::app::App;
use crate::service;

/// How long connecting plus the handshake may take: a local gateway answers at once, and a
/// command should not hang on something else that holds the port.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(2);
/// How long an ordinary call may take.
pub const CALL_TIMEOUT: Duration = Duration::from_secs(60);

/// The environment variable that stands in for `--port` of the gateway.
const PORT_ENV: &str = "PINCER_GATEWAY_PORT";

/// Where the local gateway listens and the token to present (a password: a [`Secret`], so
/// the derived `Debug` never prints it).
#[derive(Debug, Clone)]
pub struct Endpoint {
    pub addr: SocketAddr,
    pub token: Option<Secret>,
}

impl Endpoint {
    /// The gateway this home's `pincer gateway` would run, resolved as it resolves it.
    pub fn resolve(app: &App) -> Result<Self> {
        let gateway = &app.config.gateway;
        let from_env = app
            .env
            .var(PORT_ENV)
            .filter(|v| !v.trim().is_empty())
            .map(|v| {
                v.trim()
                    .parse::<u16>()
                    .map_err(|_| anyhow!("{PORT_ENV}={v:?} is not a port number (1 to 65535)"))
            })
            .transpose()?;
        let addr = match from_env {
            Some(port) => service::probe_addr(gateway.bind().ip(), port),
            // A daemon started with `--port` records where it really listens; the config
            // alone would send the command to the wrong port and, finding nothing there,
            // make it edit the files behind the running gateway's back.
            None => match service::running_daemon(&app.home) {
                Some(daemon) => daemon.probe_addr(),
                None => service::probe_addr(gateway.bind().ip(), gateway.port()),
            },
        };
        Ok(Self {
            addr,
            token: existing_token(app)?,
        })
    }
}

/// The token from the environment, the config or the token file, without creating one.
fn existing_token(app: &App) -> Result<Option<Secret>> {
    let configured = app.config.gateway.token();
    let env_set = app
        .env
        .var(service::TOKEN_ENV)
        .is_some_and(|v| !v.trim().is_empty());
    let config_set = configured.is_some_and(|v| !v.trim().is_empty());
    if !env_set && !config_set && !service::token_path(&app.home).exists() {
        return Ok(None);
    }
    Ok(Some(
        service::gateway_token(&app.home, app.env.as_ref(), configured)?.value,
    ))
}

/// Nothing listens where the gateway would: it is not running (or runs somewhere else).
#[derive(Debug)]
pub struct NotRunning {
    pub addr: SocketAddr,
}

impl std::fmt::Display for NotRunning {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "the gateway is not running (nothing listens on {}); start it with `pincer gateway \
             start --daemon`",
            self.addr
        )
    }
}

impl std::error::Error for NotRunning {}

/// A request the gateway answered with `ok: false`. Displays as the gateway's message.
#[derive(Debug)]
pub struct CallError {
    /// OpenClaw's error code (`INVALID_REQUEST`, `FORBIDDEN`, `UNAVAILABLE`, …).
    pub code: String,
    pub message: String,
    pub details: Option<Value>,
}

impl std::fmt::Display for CallError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for CallError {}

/// One operator connection to the gateway.
pub struct GatewayClient {
    ws: WebSocketStream<MaybeTlsStream<TcpStream>>,
    /// The gateway as messages name it: `127.0.0.1:18789` or the URL given.
    peer: String,
    next_id: u64,
    /// The connection failed or closed: nothing more can be asked over it.
    lost: bool,
}

impl GatewayClient {
    /// Connects and completes the handshake within [`CONNECT_TIMEOUT`]. A refused
    /// connection is a [`NotRunning`] error (see `anyhow::Error::downcast_ref`).
    pub async fn connect(endpoint: &Endpoint) -> Result<Self> {
        let addr = endpoint.addr;
        tokio::time::timeout(CONNECT_TIMEOUT, Self::handshake(endpoint))
            .await
            .map_err(|_| {
                anyhow!(
                    "{addr} accepted the connection but did not answer as a Pincer gateway \
                     within {} s",
                    CONNECT_TIMEOUT.as_secs()
                )
            })?
    }

    async fn handshake(endpoint: &Endpoint) -> Result<Self> {
        let addr = endpoint.addr;
        let stream = match TcpStream::connect(addr).await {
            Ok(stream) => stream,
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionRefused => {
                return Err(NotRunning { addr }.into());
            }
            Err(e) => return Err(e).context(format!("cannot reach the gateway at {addr}")),
        };
        let (ws, _) =
            tokio_tungstenite::client_async(format!("ws://{addr}/"), MaybeTlsStream::Plain(stream))
                .await
                .with_context(|| format!("{addr} answers, but not as a Pincer gateway"))?;
        let mut client = Self::over(ws, addr.to_string());
        match client
            .greet(endpoint.token.as_ref().map(Secret::expose))
            .await
        {
            Ok(()) => Ok(client),
            Err(e) => match e.downcast_ref::<CallError>() {
                Some(refused) if is_auth_refusal(refused) => {
                    let hint = if endpoint.token.is_none() {
                        " (no token is set here: PINCER_GATEWAY_TOKEN, gateway.auth.token and \
                         the token file are all missing)"
                    } else {
                        ""
                    };
                    bail!(
                        "the gateway refused the token: {}{hint}; `pincer gateway token` shows \
                         the token",
                        refused.message
                    )
                }
                Some(refused) => bail!("the gateway refused the connection: {}", refused.message),
                None => Err(e),
            },
        }
    }

    /// Connects to the gateway at `url` (`ws://` or `wss://`, any host) with `token` and
    /// completes the handshake within `timeout`; a refusal says the gateway's words.
    pub async fn connect_url(url: &str, token: Option<&str>, timeout: Duration) -> Result<Self> {
        let handshake = async {
            let (ws, _) = tokio_tungstenite::connect_async(url)
                .await
                .with_context(|| format!("cannot connect to the gateway at {url}"))?;
            let mut client = Self::over(ws, url.to_owned());
            client
                .greet(token)
                .await
                .map_err(|e| anyhow!("the gateway at {url} refused the connection: {e}"))?;
            Ok(client)
        };
        tokio::time::timeout(timeout, handshake)
            .await
            .map_err(|_| {
                anyhow!(
                    "{url} did not answer as a gateway within {} s",
                    timeout.as_secs()
                )
            })?
    }

    fn over(ws: WebSocketStream<MaybeTlsStream<TcpStream>>, peer: String) -> Self {
        Self {
            ws,
            peer,
            next_id: 0,
            lost: false,
        }
    }

    /// Waits for the server's `connect.challenge` (a `connect` before it would be refused),
    /// then connects as an operator with every scope (OpenClaw lets only an admin start a
    /// session over with `/new`).
    async fn greet(&mut self, token: Option<&str>) -> Result<()> {
        loop {
            let frame = self.next_frame().await?;
            if frame["type"] == "event" && frame["event"] == "connect.challenge" {
                break;
            }
        }
        let params = json!({
            "minProtocol": 3,
            "maxProtocol": 4,
            "client": {
                "id": "cli",
                "version": env!("CARGO_PKG_VERSION"),
                "platform": std::env::consts::OS,
                "mode": "cli",
            },
            "auth": { "token": token },
            "role": "operator",
            "scopes": ["operator.read", "operator.write", "operator.admin"],
        });
        self.call("connect", params).await.map(drop)
    }

    /// Whether the connection failed or closed.
    pub fn is_lost(&self) -> bool {
        self.lost
    }

    /// Calls `method` with [`CALL_TIMEOUT`]; the response's `payload`.
    pub async fn call(&mut self, method: &str, params: Value) -> Result<Value> {
        self.call_with_timeout(method, params, CALL_TIMEOUT).await
    }

    /// Calls `method` and waits up to `timeout` for its response. `ok: false` becomes a
    /// [`CallError`] carrying the gateway's message.
    pub async fn call_with_timeout(
        &mut self,
        method: &str,
        params: Value,
        timeout: Duration,
    ) -> Result<Value> {
        let id = self.send_request(method, params).await?;
        let response = tokio::time::timeout(timeout, async {
            loop {
                let frame = self.next_frame().await?;
                if frame["type"] == "res" && frame["id"] == id.as_str() {
                    return Ok::<_, anyhow::Error>(frame);
                }
            }
        })
        .await
        .map_err(|_| {
            anyhow!(
                "the gateway did not answer {method} within {} s",
                timeout.as_secs()
            )
        })??;
        if response["ok"] == true {
            return Ok(response.get("payload").cloned().unwrap_or(Value::Null));
        }
        let error = &response["error"];
        Err(CallError {
            code: error["code"].as_str().unwrap_or("UNKNOWN").to_owned(),
            message: error["message"]
                .as_str()
                .unwrap_or("the gateway refused the request without saying why")
                .to_owned(),
            details: error.get("details").cloned(),
        }
        .into())
    }

    /// Sends one request frame without waiting for its answer; the request's id, which its
    /// `res` frame carries.
    pub async fn send_request(&mut self, method: &str, params: Value) -> Result<String> {
        self.next_id += 1;
        let id = format!("{}:cli", self.next_id);
        let frame = json!({ "type": "req", "id": id, "method": method, "params": params });
        if let Err(e) = self.ws.send(Message::text(frame.to_string())).await {
            self.lost = true;
            return Err(e)
                .with_context(|| format!("cannot send {method} to the gateway at {}", self.peer));
        }
        Ok(id)
    }

    /// The next frame as JSON (a frame that is not JSON cannot be anyone's answer: skipped,
    /// with a warning). A closed connection is an error naming the gateway's reason, if it
    /// gave one, and leaves the client [lost](Self::is_lost).
    pub async fn next_frame(&mut self) -> Result<Value> {
        let frame = self.read_frame().await;
        if frame.is_err() {
            self.lost = true;
        }
        frame
    }

    async fn read_frame(&mut self) -> Result<Value> {
        loop {
            let message = match self.ws.next().await {
                Some(Ok(message)) => message,
                Some(Err(e)) => {
                    return Err(e).context(format!("the connection to {} failed", self.peer));
                }
                None => bail!("the gateway at {} closed the connection", self.peer),
            };
            match message {
                Message::Text(text) => match serde_json::from_str(text.as_str()) {
                    Ok(frame) => return Ok(frame),
                    Err(e) => tracing::warn!(
                        "the gateway at {} sent a frame that is not JSON: {e}",
                        self.peer
                    ),
                },
                Message::Close(frame) => {
                    let reason = frame
                        .map(|f| f.reason.to_string())
                        .filter(|r| !r.is_empty())
                        .unwrap_or_else(|| "no reason given".to_owned());
                    bail!(
                        "the gateway at {} closed the connection: {reason}",
                        self.peer
                    );
                }
                // Pings are answered by the library; binary frames are not in the protocol.
                _ => {}
            }
        }
    }

    /// Says goodbye; the gateway would notice a dropped socket too, this is just tidier.
    pub async fn close(mut self) {
        let _ = self.ws.close(None).await;
    }
}

/// Whether `connect` was refused for its token (missing or wrong), as opposed to the rate
/// limiter or a protocol mismatch.
fn is_auth_refusal(error: &CallError) -> bool {
    let detail = error
        .details
        .as_ref()
        .and_then(|d| d["code"].as_str())
        .unwrap_or("");
    detail.starts_with("AUTH_TOKEN") || (error.code == "FORBIDDEN" && detail.is_empty())
}

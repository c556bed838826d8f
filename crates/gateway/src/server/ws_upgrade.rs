//! The WebSocket upgrade of `/`, done by hand (RFC 6455 over HTTP/1.1) rather than with
//! axum's extractor, so that the upgraded stream is read through the pre-auth byte budget
//! (`preauth_io.rs`) before tungstenite sees it. The handshake is the standard one: `GET`
//! with `Connection: upgrade`, `Upgrade: websocket`, `Sec-WebSocket-Version: 13` and a
//! key, answered `101` with `Sec-WebSocket-Accept`; no subprotocol is chosen and no
//! extension (permessage-deflate) is offered, as before.

use std::future::Future;

use axum::body::Body;
use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, Version, header};
use axum::response::{IntoResponse, Response};
use hyper::upgrade::{OnUpgrade, Upgraded};
use hyper_util::rt::TokioIo;
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::handshake::derive_accept_key;
use tokio_tungstenite::tungstenite::protocol::{Role, WebSocketConfig};

use super::frames::MAX_PAYLOAD;
use super::preauth_io::{BudgetedIo, PREAUTH_READ_BUDGET, ReadBudget};

/// An upgraded connection: the WebSocket over the budgeted stream.
pub type Socket = WebSocketStream<BudgetedIo<TokioIo<Upgraded>>>;

/// Each socket read first zero-fills this much buffer; requests are small.
const READ_BUFFER_SIZE: usize = 16 * 1024;

/// A request to upgrade to a WebSocket.
pub struct WsUpgrade {
    key: HeaderValue,
    on_upgrade: OnUpgrade,
}

/// Why a request is not a WebSocket upgrade (`/` then serves the web chat page).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum NotUpgrade {
    #[error("not a WebSocket upgrade request")]
    NotWebSocket,
    #[error("the WebSocket upgrade needs Sec-WebSocket-Version: 13")]
    BadVersion,
    #[error("this connection cannot be upgraded")]
    NotUpgradable,
}

impl IntoResponse for NotUpgrade {
    fn into_response(self) -> Response {
        (StatusCode::BAD_REQUEST, self.to_string()).into_response()
    }
}

impl<S: Send + Sync> FromRequestParts<S> for WsUpgrade {
    type Rejection = NotUpgrade;

    async fn from_request_parts(parts: &mut Parts, _state: &S) -> Result<Self, NotUpgrade> {
        let key = upgrade_key(&parts.method, parts.version, &parts.headers)?;
        let on_upgrade = parts
            .extensions
            .remove::<OnUpgrade>()
            .ok_or(NotUpgrade::NotUpgradable)?;
        Ok(Self { key, on_upgrade })
    }
}

/// The `Sec-WebSocket-Key` of a valid upgrade request.
fn upgrade_key(
    method: &Method,
    version: Version,
    headers: &HeaderMap,
) -> Result<HeaderValue, NotUpgrade> {
    let has_token = |name: header::HeaderName, token: &str| {
        headers.get_all(name).iter().any(|value| {
            value
                .to_str()
                .is_ok_and(|v| v.split(',').any(|t| t.trim().eq_ignore_ascii_case(token)))
        })
    };
    if method != Method::GET
        || version != Version::HTTP_11
        || !has_token(header::CONNECTION, "upgrade")
        || !has_token(header::UPGRADE, "websocket")
    {
        return Err(NotUpgrade::NotWebSocket);
    }
    let key = headers
        .get(header::SEC_WEBSOCKET_KEY)
        .filter(|key| !key.is_empty())
        .ok_or(NotUpgrade::NotWebSocket)?;
    if headers
        .get(header::SEC_WEBSOCKET_VERSION)
        .is_none_or(|v| v.as_bytes() != b"13")
    {
        return Err(NotUpgrade::BadVersion);
    }
    Ok(key.clone())
}

/// The tungstenite settings of every connection: messages up to `maxPayload` once
/// authenticated (the read budget caps them before), a small read buffer.
pub fn socket_config() -> WebSocketConfig {
    WebSocketConfig::default()
        .read_buffer_size(READ_BUFFER_SIZE)
        .max_message_size(Some(MAX_PAYLOAD))
}

impl WsUpgrade {
    /// Answers `101 Switching Protocols` and runs `callback` on the socket once hyper hands
    /// the connection over.
    pub fn on_upgrade<C, F>(self, callback: C) -> Response
    where
        C: FnOnce(Socket) -> F + Send + 'static,
        F: Future<Output = ()> + Send + 'static,
    {
        let on_upgrade = self.on_upgrade;
        tokio::spawn(async move {
            let upgraded = match on_upgrade.await {
                Ok(upgraded) => upgraded,
                Err(e) => {
                    tracing::debug!(error = %e, "WebSocket upgrade failed");
                    return;
                }
            };
            let io = BudgetedIo::new(TokioIo::new(upgraded), ReadBudget::new(PREAUTH_READ_BUDGET));
            let socket =
                WebSocketStream::from_raw_socket(io, Role::Server, Some(socket_config())).await;
            callback(socket).await;
        });
        switching_protocols(&self.key)
    }
}

/// The `101` answer to an upgrade with `key`.
fn switching_protocols(key: &HeaderValue) -> Response {
    let accept = derive_accept_key(key.as_bytes());
    let mut response = Response::new(Body::empty());
    *response.status_mut() = StatusCode::SWITCHING_PROTOCOLS;
    let headers = response.headers_mut();
    headers.insert(header::CONNECTION, HeaderValue::from_static("upgrade"));
    headers.insert(header::UPGRADE, HeaderValue::from_static("websocket"));
    if let Ok(accept) = HeaderValue::from_str(&accept) {
        headers.insert(header::SEC_WEBSOCKET_ACCEPT, accept);
    }
    response
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    fn headers(pairs: &[(&str, &str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (k, v) in pairs {
            map.append(
                header::HeaderName::from_bytes(k.as_bytes()).unwrap(),
                HeaderValue::from_str(v).unwrap(),
            );
        }
        map
    }

    const GOOD: &[(&str, &str)] = &[
        ("connection", "keep-alive, Upgrade"),
        ("upgrade", "WebSocket"),
        ("sec-websocket-version", "13"),
        ("sec-websocket-key", "dGhlIHNhbXBsZSBub25jZQ=="),
    ];

    #[test]
    fn a_standard_upgrade_is_accepted_with_rfc_6455s_accept_key() {
        let key = upgrade_key(&Method::GET, Version::HTTP_11, &headers(GOOD)).unwrap();
        let response = switching_protocols(&key);
        assert_eq!(response.status(), StatusCode::SWITCHING_PROTOCOLS);
        // The example of RFC 6455 section 1.3.
        assert_eq!(
            response.headers()[header::SEC_WEBSOCKET_ACCEPT],
            "s3pPLMBiTxaQ9kYGzzhZRbK+xOo="
        );
        assert_eq!(response.headers()[header::UPGRADE], "websocket");
        assert_eq!(response.headers()[header::CONNECTION], "upgrade");
        assert!(
            response
                .headers()
                .get(header::SEC_WEBSOCKET_PROTOCOL)
                .is_none()
        );
        assert!(
            response
                .headers()
                .get(header::SEC_WEBSOCKET_EXTENSIONS)
                .is_none()
        );
    }

    #[test]
    fn anything_else_is_not_an_upgrade() {
        let without = |name: &str| {
            let pairs: Vec<_> = GOOD.iter().copied().filter(|(k, _)| *k != name).collect();
            upgrade_key(&Method::GET, Version::HTTP_11, &headers(&pairs))
        };
        assert_eq!(without("connection"), Err(NotUpgrade::NotWebSocket));
        assert_eq!(without("upgrade"), Err(NotUpgrade::NotWebSocket));
        assert_eq!(without("sec-websocket-key"), Err(NotUpgrade::NotWebSocket));
        assert_eq!(
            without("sec-websocket-version"),
            Err(NotUpgrade::BadVersion)
        );
        assert_eq!(
            upgrade_key(&Method::POST, Version::HTTP_11, &headers(GOOD)),
            Err(NotUpgrade::NotWebSocket)
        );
        assert_eq!(
            upgrade_key(&Method::GET, Version::HTTP_10, &headers(GOOD)),
            Err(NotUpgrade::NotWebSocket)
        );
        let mut wrong_version = headers(GOOD);
        wrong_version.insert(header::SEC_WEBSOCKET_VERSION, HeaderValue::from_static("8"));
        assert_eq!(
            upgrade_key(&Method::GET, Version::HTTP_11, &wrong_version),
            Err(NotUpgrade::BadVersion)
        );
        let mut not_upgrade = headers(GOOD);
        not_upgrade.insert(header::CONNECTION, HeaderValue::from_static("upgraded"));
        assert_eq!(
            upgrade_key(&Method::GET, Version::HTTP_11, &not_upgrade),
            Err(NotUpgrade::NotWebSocket)
        );
    }

    #[test]
    fn the_socket_keeps_the_previous_limits() {
        let config = socket_config();
        assert_eq!(config.max_message_size, Some(MAX_PAYLOAD));
        assert_eq!(config.read_buffer_size, READ_BUFFER_SIZE);
        assert_eq!(
            config.max_frame_size,
            WebSocketConfig::default().max_frame_size
        );
    }
}

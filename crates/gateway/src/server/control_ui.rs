//! OpenClaw's Control UI (the web app in the `openclaw` npm package's `dist/control-ui/`)
//! served at `/control/` from the directory the operator names (`gateway.controlUi.root`,
//! `pincer gateway run --control-ui <dir>`). Pincer ships none of its files: it serves
//! what an installed openclaw package holds, as OpenClaw's own gateway would at a base path:
//! - `/control/`, and any path under it without a file extension (the app's client-side
//!   routes), get the app's `index.html`, prepared for the prefix (`files::prepare_index`)
//!   with a CSP allowing only its own inline scripts, `Cache-Control: no-cache`;
//! - files under the root with their Content-Type; the bundler's hashed `assets/` are
//!   cached for a year and sent as their precompressed `.br`/`.gz` copy when there is one
//!   and the browser takes it, the rest revalidated; a missing file with an extension is 404;
//!   directories are never listed; nothing outside the root is ever read (`files.rs`);
//! - `/control/control-ui-config.json` (and OpenClaw's older `…/__openclaw/…` spelling): the
//!   app's bootstrap settings, for a caller with the gateway token (as OpenClaw's);
//! - `/control` is the app's WebSocket (it connects to its own base path); a plain GET of
//!   it is sent on to `/control/`.
//!
//! Only GET and HEAD are answered (others get 405). Files are read on the blocking pool.
//! Without a root every path here answers 404 saying how to turn the UI on. The page's
//! WebSocket passes `origin::guard` as the gateway's own origin (same host and port).

// Public for the fuzz target of the request path and the index preparation.
pub mod files;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

use axum::Router;
use axum::body::Body;
use axum::extract::{ConnectInfo, Extension, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use serde::Serialize;
use serde_json::{Value, json};

use super::auth::{Peer, Refusal};
use super::frames::Request;
use super::methods::{self, Caller};
use super::{Gateway, connection, ws_upgrade};
use files::{Found, Wanted};

pub use files::MAX_FILE_BYTES;

/// Where the app is mounted.
pub const BASE_PATH: &str = "/control";

/// The bootstrap settings' file names under the mount (OpenClaw's current and older one).
const BOOTSTRAP_PATHS: [&str; 2] = [
    "control-ui-config.json",
    "__openclaw/control-ui-config.json",
];

/// The answer under `/control/` when no root is configured.
const NOT_ENABLED: &str = "The Control UI is not enabled on this gateway. To serve OpenClaw's \
    Control UI here, install the openclaw npm package and point gateway.controlUi.root (in \
    pincer.json5) or `pincer gateway run --control-ui <dir>` at its dist/control-ui \
    directory, e.g. ~/node_modules/openclaw/dist/control-ui; then open /control/#token=<token>.\n";

/// The served directory (`None`: the UI is off).
#[derive(Debug, Clone)]
struct Site {
    root: Option<PathBuf>,
}

/// The routes under [`BASE_PATH`].
pub(super) fn routes(root: Option<PathBuf>) -> Router<Arc<Gateway>> {
    Router::new()
        .route(BASE_PATH, get(mount))
        .route("/control/", get(page))
        .route("/control/{*rest}", get(page))
        .layer(Extension(Arc::new(Site { root })))
}

/// `/control`: the app's WebSocket; a plain GET goes on to `/control/`.
async fn mount(
    State(gw): State<Arc<Gateway>>,
    Extension(site): Extension<Arc<Site>>,
    ConnectInfo(addr): ConnectInfo<SocketAddr>,
    headers: HeaderMap,
    uri: Uri,
    upgrade: Result<ws_upgrade::WsUpgrade, ws_upgrade::NotUpgrade>,
) -> Response {
    if site.root.is_none() {
        return not_enabled();
    }
    if let Ok(ws) = upgrade {
        return websocket(ws, gw, addr, &headers);
    }
    let location = match uri.query() {
        Some(query) => format!("{BASE_PATH}/?{query}"),
        None => format!("{BASE_PATH}/"),
    };
    let mut response = secured(
        StatusCode::FOUND,
        Body::empty(),
        "text/plain; charset=utf-8",
        "no-store",
    );
    if let Ok(value) = HeaderValue::from_str(&location) {
        response.headers_mut().insert(header::LOCATION, value);
    }
    response
}

/// A WebSocket of the page (its `Origin` already checked by `origin::guard`), as at `/`.
fn websocket(
    ws: ws_upgrade::WsUpgrade,
    gw: Arc<Gateway>,
    addr: SocketAddr,
    headers: &HeaderMap,
) -> Response {
    let peer = Peer::new(addr, headers);
    ws.on_upgrade(move |socket| connection::run(socket, gw, peer))
}

/// Everything under `/control/`.
async fn page(
    State(gw): State<Arc<Gateway>>,
    Extension(site): Extension<Arc<Site>>,
    ConnectInfo(addr): ConnectInfo<SocketAddr>,
    method: Method,
    headers: HeaderMap,
    uri: Uri,
    upgrade: Result<ws_upgrade::WsUpgrade, ws_upgrade::NotUpgrade>,
) -> Response {
    let Some(root) = site.root.clone() else {
        return not_enabled();
    };
    if let Ok(ws) = upgrade {
        return websocket(ws, gw, addr, &headers);
    }
    let rest = uri
        .path()
        .strip_prefix(BASE_PATH)
        .and_then(|p| p.strip_prefix('/'))
        .unwrap_or_default();
    if BOOTSTRAP_PATHS.contains(&rest) {
        return bootstrap(&gw, addr, &headers).await;
    }
    let head = method == Method::HEAD;
    match files::wanted(rest) {
        Err(files::Refused) => not_found(),
        Ok(Wanted::Index) => index(root).await,
        Ok(Wanted::Path(segments)) if segments.last().is_some_and(|s| s == "index.html") => {
            index(root).await
        }
        Ok(Wanted::Path(segments)) => {
            let spa_route = !files::has_extension(&segments);
            // The bundle's hashed assets may have precompressed copies next to them.
            let encodings = match headers.get(header::ACCEPT_ENCODING) {
                Some(value) if files::is_hashed_asset(&segments) => {
                    files::accepted_precompressed(value.to_str().unwrap_or_default())
                }
                _ => Vec::new(),
            };
            match read_encoded(root.clone(), segments.clone(), !head, encodings).await {
                Ok((Found::File { path, body, size }, encoding)) => {
                    let mut response = file(&path, &segments, body, size, head);
                    let headers = response.headers_mut();
                    if let Some(encoding) = encoding {
                        headers
                            .insert(header::CONTENT_ENCODING, HeaderValue::from_static(encoding));
                    }
                    if files::is_hashed_asset(&segments) {
                        headers.insert(header::VARY, HeaderValue::from_static("accept-encoding"));
                    }
                    response
                }
                Ok((found, _)) => match found {
                    Found::Missing if spa_route => index(root).await,
                    Found::TooLarge { path, size } => too_large(&path, size),
                    Found::File { .. } | Found::Missing => not_found(),
                },
                Err(e) => unreadable(&e),
            }
        }
    }
}

/// Reads `segments` under `root` on the blocking pool: the first precompressed copy of it
/// that exists among `encodings` (with its `Content-Encoding`), else the file itself. The
/// `path` of a copy found is the file's own, for its Content-Type.
async fn read_encoded(
    root: PathBuf,
    segments: Vec<String>,
    body: bool,
    encodings: Vec<(&'static str, &'static str)>,
) -> std::io::Result<(Found, Option<&'static str>)> {
    if encodings.is_empty() {
        return Ok((read(root, segments, body).await?, None));
    }
    tokio::task::spawn_blocking(move || {
        // Only a copy of a file that is there: never a `.br` without its source.
        let found = files::read_under(&root, &segments, false)?;
        let Found::File { path, .. } = found else {
            return Ok((found, None));
        };
        for (suffix, encoding) in encodings {
            let copy = files::read_under(&root, &files::with_suffix(&segments, suffix), body)?;
            if let Found::File { body, size, .. } = copy {
                return Ok((Found::File { path, body, size }, Some(encoding)));
            }
        }
        Ok((files::read_under(&root, &segments, body)?, None))
    })
    .await
    .map_err(std::io::Error::other)?
}

/// Reads `segments` under `root` on the blocking pool.
async fn read(root: PathBuf, segments: Vec<String>, body: bool) -> std::io::Result<Found> {
    tokio::task::spawn_blocking(move || files::read_under(&root, &segments, body))
        .await
        .map_err(std::io::Error::other)?
}

/// The app's page, prepared for the mount, with a CSP naming its inline scripts.
async fn index(root: PathBuf) -> Response {
    let found = read(root, vec!["index.html".to_owned()], true).await;
    let html = match found {
        Ok(Found::File { body, .. }) => match String::from_utf8(body) {
            Ok(html) => html,
            Err(_) => {
                return plain(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    "index.html is not UTF-8\n",
                );
            }
        },
        Ok(Found::Missing) => {
            return plain(
                StatusCode::SERVICE_UNAVAILABLE,
                "The Control UI's index.html is missing from gateway.controlUi.root: point it \
                 at an installed openclaw package's dist/control-ui directory.\n",
            );
        }
        Ok(Found::TooLarge { path, size }) => return too_large(&path, size),
        Err(e) => return unreadable(&e),
    };
    let html = files::prepare_index(&html);
    let csp = csp(&files::inline_script_hashes(&html));
    let mut response = secured(
        StatusCode::OK,
        Body::from(html),
        "text/html; charset=utf-8",
        "no-cache",
    );
    if let Ok(value) = HeaderValue::from_str(&csp) {
        response
            .headers_mut()
            .insert(header::CONTENT_SECURITY_POLICY, value);
    }
    response
}

/// A file of the app.
fn file(
    path: &std::path::Path,
    segments: &[String],
    body: Vec<u8>,
    size: u64,
    head: bool,
) -> Response {
    let cache = if files::is_hashed_asset(segments) {
        "public, max-age=31536000, immutable"
    } else {
        "no-cache"
    };
    let body = if head {
        Body::empty()
    } else {
        Body::from(body)
    };
    let mut response = secured(StatusCode::OK, body, files::content_type(path), cache);
    response
        .headers_mut()
        .insert(header::CONTENT_LENGTH, HeaderValue::from(size));
    response
}

/// The page's Content-Security-Policy: its own files and the listed inline scripts, its
/// WebSocket, images and media from itself or data/blob URLs; no plugins, no framing by
/// others. (OpenClaw's also allows a few web services the app can use; Pincer's does not.)
fn csp(script_hashes: &[String]) -> String {
    let mut scripts = String::from("'self'");
    for hash in script_hashes {
        scripts.push(' ');
        scripts.push_str(hash);
    }
    format!(
        "default-src 'self'; base-uri 'none'; object-src 'none'; frame-ancestors 'none'; \
         frame-src 'self'; script-src {scripts}; style-src 'self' 'unsafe-inline'; \
         img-src 'self' data: blob:; media-src 'self' data: blob:; font-src 'self'; \
         worker-src 'self'; connect-src 'self' ws: wss: data:"
    )
}

/// A response with its type and caching and the headers every answer under the mount
/// carries.
fn secured(
    status: StatusCode,
    body: Body,
    content_type: &'static str,
    cache_control: &'static str,
) -> Response {
    let mut response = (status, body).into_response();
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    headers.insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static(cache_control),
    );
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    headers.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    headers.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    if let Ok(value) = HeaderValue::from_str(&csp(&[])) {
        headers.insert(header::CONTENT_SECURITY_POLICY, value);
    }
    response
}

/// The content type of the JSON answers.
const JSON: &str = "application/json; charset=utf-8";

fn plain(status: StatusCode, text: &'static str) -> Response {
    secured(
        status,
        Body::from(text),
        "text/plain; charset=utf-8",
        "no-store",
    )
}

fn not_found() -> Response {
    plain(StatusCode::NOT_FOUND, "not found\n")
}

fn not_enabled() -> Response {
    plain(StatusCode::NOT_FOUND, NOT_ENABLED)
}

fn too_large(path: &std::path::Path, size: u64) -> Response {
    tracing::warn!(path = %path.display(), size, limit = MAX_FILE_BYTES, "a Control UI file is too large to serve");
    plain(
        StatusCode::INTERNAL_SERVER_ERROR,
        "this file is too large to serve\n",
    )
}

fn unreadable(e: &std::io::Error) -> Response {
    tracing::warn!(error = %e, "cannot read the Control UI's files");
    plain(
        StatusCode::INTERNAL_SERVER_ERROR,
        "cannot read the Control UI's files\n",
    )
}

/// The app's bootstrap settings (`control-ui-config.json`), in OpenClaw's shape: the mount,
/// the default agent's identity (as `agent.identity.get` answers it), the server's version,
/// and the features Pincer leaves off (terminal, CLI agents, the community card, fetching
/// link favicons from the web).
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct Bootstrap {
    base_path: &'static str,
    assistant_name: Value,
    assistant_avatar: Value,
    assistant_avatar_source: Value,
    assistant_avatar_status: Value,
    assistant_avatar_reason: Value,
    assistant_agent_id: Value,
    server_version: &'static str,
    embed_sandbox: &'static str,
    allow_external_embed_urls: bool,
    automatically_fetch_favicons: bool,
    community_invite: bool,
    terminal_enabled: bool,
    cli_agents_enabled: bool,
    plugin_assets_require_auth: bool,
    plugin_frame_grants: [(); 0],
}

/// `control-ui-config.json`: for a caller with `Authorization: Bearer <token>` (the app
/// sends the token it connects with), as OpenClaw's.
async fn bootstrap(gw: &Arc<Gateway>, addr: SocketAddr, headers: &HeaderMap) -> Response {
    let authorization = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok());
    if let Err(refusal) = gw
        .auth
        .check_bearer(authorization, Peer::new(addr, headers))
    {
        return unauthorized(&refusal);
    }
    let identity = default_identity(gw).await;
    let field = |name: &str| identity.get(name).cloned().unwrap_or(Value::Null);
    let body = Bootstrap {
        base_path: BASE_PATH,
        assistant_name: field("name"),
        assistant_avatar: field("avatar"),
        assistant_avatar_source: field("avatarSource"),
        assistant_avatar_status: field("avatarStatus"),
        assistant_avatar_reason: field("avatarReason"),
        assistant_agent_id: field("agentId"),
        server_version: env!("CARGO_PKG_VERSION"),
        embed_sandbox: "scripts",
        allow_external_embed_urls: false,
        automatically_fetch_favicons: false,
        community_invite: false,
        terminal_enabled: false,
        cli_agents_enabled: false,
        plugin_assets_require_auth: gw.auth.mode() == "token",
        plugin_frame_grants: [],
    };
    let json = serde_json::to_vec(&body).unwrap_or_default();
    secured(StatusCode::OK, Body::from(json), JSON, "no-cache")
}

/// The default agent's identity, asked of `agent.identity.get` itself so the page's header
/// and the method agree; `{}` if that fails.
async fn default_identity(gw: &Arc<Gateway>) -> Value {
    let caller = Caller {
        scopes: vec!["operator.read".to_owned()],
        sessions: Arc::default(),
    };
    let request = Request {
        id: "control-ui-config".to_owned(),
        method: "agent.identity.get".to_owned(),
        params: json!({}),
    };
    let send: methods::FrameSender = Arc::new(|_| {});
    methods::call(gw, &caller, &request, &send)
        .await
        .unwrap_or_else(|e| {
            tracing::debug!(error = %e.message, "no identity for the Control UI's bootstrap");
            json!({})
        })
}

/// A refused bootstrap request, in OpenClaw's shape.
fn unauthorized(refusal: &Refusal) -> Response {
    let (status, kind, message) = match refusal {
        Refusal::RateLimited { .. } => (
            StatusCode::TOO_MANY_REQUESTS,
            "rate_limited",
            "too many failed auth attempts; try again later",
        ),
        Refusal::Missing | Refusal::Mismatch => {
            (StatusCode::UNAUTHORIZED, "unauthorized", "Unauthorized")
        }
    };
    let body = json!({ "error": { "message": message, "type": kind } }).to_string();
    let mut response = secured(status, Body::from(body), JSON, "no-store");
    if let Refusal::RateLimited { retry_after } = refusal {
        response.headers_mut().insert(
            header::RETRY_AFTER,
            HeaderValue::from(retry_after.as_secs().max(1)),
        );
    }
    response
}

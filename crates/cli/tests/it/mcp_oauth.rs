//! OAuth for HTTP MCP servers through the real binary, against an OAuth-protected MCP
//! server written here (protected-resource and authorization-server metadata, dynamic
//! registration, an `/authorize` that redirects straight back, a `/token` that checks
//! PKCE and refreshes, an MCP endpoint that wants the bearer): without login the status
//! says what to run; `pincer mcp login` (the test plays the browser) saves a 0600 file;
//! `pincer mcp call` then works, refreshing the expired token once; malformed answers are
//! clear errors.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead, BufReader};
use std::os::unix::fs::PermissionsExt;
use std::process::Stdio;
use std::sync::{Arc, Mutex};

use axum::body::Body;
use axum::http::{HeaderMap, Method, StatusCode, Uri};
use axum::response::Response;
use base64::Engine;
use serde_json::{Value, json};
use sha2::Digest;

use crate::common::{Home, json_of};

/// What the test server serves wrong on purpose.
#[derive(Default, Clone, Copy, PartialEq)]
enum Fault {
    #[default]
    None,
    /// The metadata documents are not JSON.
    Metadata,
    /// The token endpoint answers with something that is not a token response.
    Token,
}

#[derive(Default)]
struct State {
    base: String,
    fault: Fault,
    /// The client id `/authorize` and `/token` expect.
    client: String,
    registrations: u32,
    /// code → (PKCE challenge, redirect_uri)
    codes: Vec<(String, String, String)>,
    access: Option<String>,
    refresh: Option<String>,
    issued: u32,
    refreshes: u32,
}

type Shared = Arc<Mutex<State>>;

fn reply(status: StatusCode, content_type: &str, body: String) -> Response {
    Response::builder()
        .status(status)
        .header("content-type", content_type)
        .body(Body::from(body))
        .unwrap()
}

fn json_reply(status: StatusCode, body: Value) -> Response {
    reply(status, "application/json", body.to_string())
}

fn form(body: &str) -> Vec<(String, String)> {
    reqwest::Url::parse(&format!("http://x/?{body}"))
        .unwrap()
        .query_pairs()
        .map(|(k, v)| (k.into_owned(), v.into_owned()))
        .collect()
}

fn field<'a>(pairs: &'a [(String, String)], key: &str) -> Option<&'a str> {
    pairs
        .iter()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v.as_str())
}

fn issue(state: &mut State, expires_in: u64) -> Response {
    if state.fault == Fault::Token {
        return reply(StatusCode::OK, "application/json", "{\"nope\":".into());
    }
    state.issued += 1;
    let access = format!("at-{}", state.issued);
    let refresh = format!("rt-{}", state.issued);
    state.access = Some(access.clone());
    state.refresh = Some(refresh.clone());
    json_reply(
        StatusCode::OK,
        json!({"access_token": access, "token_type": "Bearer", "expires_in": expires_in,
               "refresh_token": refresh, "scope": "mcp"}),
    )
}

async fn handle(
    axum::extract::State(shared): axum::extract::State<Shared>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: String,
) -> Response {
    let mut state = shared.lock().unwrap();
    let base = state.base.clone();
    let path = uri.path();
    let query = form(uri.query().unwrap_or_default());
    if path.starts_with("/.well-known/") && state.fault == Fault::Metadata {
        return reply(StatusCode::OK, "application/json", "<html>".into());
    }
    match (method.as_str(), path) {
        ("GET", p) if p.starts_with("/.well-known/oauth-protected-resource") => json_reply(
            StatusCode::OK,
            json!({"resource": format!("{base}/mcp"), "authorization_servers": [base],
                   "scopes_supported": ["mcp"]}),
        ),
        ("GET", p) if p.starts_with("/.well-known/oauth-authorization-server") => json_reply(
            StatusCode::OK,
            json!({"issuer": base, "authorization_endpoint": format!("{base}/authorize"),
                   "token_endpoint": format!("{base}/token"),
                   "registration_endpoint": format!("{base}/register"),
                   "response_types_supported": ["code"],
                   "grant_types_supported": ["authorization_code", "refresh_token"],
                   "code_challenge_methods_supported": ["S256"]}),
        ),
        ("POST", "/register") => {
            let request: Value = serde_json::from_str(&body).unwrap_or_default();
            state.registrations += 1;
            json_reply(
                StatusCode::CREATED,
                json!({"client_id": "client-1", "redirect_uris": request["redirect_uris"],
                       "token_endpoint_auth_method": "none"}),
            )
        }
        ("GET", "/authorize") => {
            assert_eq!(field(&query, "code_challenge_method"), Some("S256"));
            assert_eq!(field(&query, "client_id"), Some(state.client.as_str()));
            let code = format!("code-{}", state.codes.len() + 1);
            let redirect = field(&query, "redirect_uri").unwrap().to_owned();
            let challenge = field(&query, "code_challenge").unwrap().to_owned();
            state
                .codes
                .push((code.clone(), challenge, redirect.clone()));
            let csrf = field(&query, "state").unwrap();
            Response::builder()
                .status(StatusCode::FOUND)
                .header("location", format!("{redirect}?code={code}&state={csrf}"))
                .body(Body::empty())
                .unwrap()
        }
        ("POST", "/token") => {
            let pairs = form(&body);
            match field(&pairs, "grant_type") {
                Some("authorization_code") => {
                    let code = field(&pairs, "code").unwrap_or_default();
                    let verifier = field(&pairs, "code_verifier").unwrap_or_default();
                    let computed = base64::engine::general_purpose::URL_SAFE_NO_PAD
                        .encode(sha2::Sha256::digest(verifier.as_bytes()));
                    let client = state.client.clone();
                    let known = state.codes.iter().any(|(c, challenge, redirect)| {
                        c == code
                            && field(&pairs, "client_id") == Some(client.as_str())
                            && *challenge == computed
                            && Some(redirect.as_str()) == field(&pairs, "redirect_uri")
                    });
                    if !known {
                        return json_reply(
                            StatusCode::BAD_REQUEST,
                            json!({"error": "invalid_grant"}),
                        );
                    }
                    // Already expired: the first use must refresh.
                    issue(&mut state, 1)
                }
                Some("refresh_token")
                    if field(&pairs, "refresh_token") == state.refresh.as_deref() =>
                {
                    state.refreshes += 1;
                    issue(&mut state, 3600)
                }
                _ => json_reply(StatusCode::BAD_REQUEST, json!({"error": "invalid_grant"})),
            }
        }
        (_, "/mcp") => {
            let bearer = headers
                .get("authorization")
                .and_then(|v| v.to_str().ok())
                .and_then(|v| v.strip_prefix("Bearer "));
            if bearer.is_none() || bearer != state.access.as_deref() {
                return Response::builder()
                    .status(StatusCode::UNAUTHORIZED)
                    .header(
                        "www-authenticate",
                        format!(
                            "Bearer resource_metadata=\"{base}/.well-known/oauth-protected-resource/mcp\""
                        ),
                    )
                    .body(Body::empty())
                    .unwrap();
            }
            let token = bearer.unwrap().to_owned();
            drop(state);
            mcp(&method, &body, &token)
        }
        _ => reply(StatusCode::NOT_FOUND, "text/plain", "not found".into()),
    }
}

/// The MCP endpoint, JSON answers only: initialize, tools/list, tools/call.
fn mcp(method: &Method, body: &str, token: &str) -> Response {
    match method.as_str() {
        "POST" => {}
        "DELETE" => return reply(StatusCode::OK, "text/plain", String::new()),
        _ => return reply(StatusCode::METHOD_NOT_ALLOWED, "text/plain", String::new()),
    }
    let request: Value = serde_json::from_str(body).unwrap();
    let Some(id) = request.get("id").cloned() else {
        return reply(StatusCode::ACCEPTED, "text/plain", String::new());
    };
    let result = match request["method"].as_str().unwrap_or_default() {
        "initialize" => json!({
            "protocolVersion": request["params"]["protocolVersion"],
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "oauth-test", "version": "1"}
        }),
        "tools/list" => json!({"tools": [
            {"name": "whoami", "description": "The token used.", "inputSchema": {"type": "object"}}
        ]}),
        "tools/call" => {
            json!({"content": [{"type": "text", "text": format!("called with {token}")}]})
        }
        _ => {
            return json_reply(
                StatusCode::OK,
                json!({"jsonrpc": "2.0", "id": id,
                       "error": {"code": -32601, "message": "method not found"}}),
            );
        }
    };
    json_reply(
        StatusCode::OK,
        json!({"jsonrpc": "2.0", "id": id, "result": result}),
    )
}

async fn serve(fault: Fault) -> Shared {
    serve_for(fault, "client-1").await
}

async fn serve_for(fault: Fault, client: &str) -> Shared {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://127.0.0.1:{}", listener.local_addr().unwrap().port());
    let shared: Shared = Arc::new(Mutex::new(State {
        base,
        fault,
        client: client.to_owned(),
        ..State::default()
    }));
    let app = axum::Router::new()
        .fallback(handle)
        .with_state(Arc::clone(&shared));
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    shared
}

fn home_for(shared: &Shared) -> Home {
    home_with(shared, "")
}

/// A home whose server `remote` is the test server, with `extra` keys.
fn home_with(shared: &Shared, extra: &str) -> Home {
    let home = Home::new();
    let base = shared.lock().unwrap().base.clone();
    home.write_config(&format!(
        "{{ mcp: {{ servers: {{ remote: {{ url: \"{base}/mcp\" {extra} }} }} }} }}"
    ));
    home
}

/// Runs `pincer mcp login remote`, opens the URL it prints the way a browser would
/// (following the redirect back to its listener), and returns its output.
async fn login(home: &Home) -> (bool, String, String) {
    let mut child = home
        .command(&["mcp", "login", "remote"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let (url, printed) = tokio::task::spawn_blocking(move || {
        let mut printed = String::new();
        let mut lines = BufReader::new(stdout).lines();
        let mut url = None;
        for line in lines.by_ref() {
            let line = line.unwrap();
            printed.push_str(&line);
            printed.push('\n');
            if line.starts_with("Waiting for the redirect") {
                break;
            }
            if line.starts_with("http") {
                url = Some(line);
            }
        }
        (url, (printed, lines))
    })
    .await
    .unwrap();
    if let Some(url) = url {
        let browser = reqwest::Client::new();
        let page = browser.get(&url).send().await.unwrap();
        assert_eq!(page.status(), 200, "{url}");
        assert_eq!(
            page.text().await.unwrap(),
            "Pincer is authorized. You can close this window."
        );
    }
    tokio::task::spawn_blocking(move || {
        let (mut text, lines) = printed;
        for line in lines {
            text.push_str(&line.unwrap());
            text.push('\n');
        }
        let out = child.wait_with_output().unwrap();
        (
            out.status.success(),
            text,
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    })
    .await
    .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn login_then_call_refreshes_the_expired_token_once() {
    let shared = serve(Fault::None).await;
    let home = home_for(&shared);
    let run = home.run(&["mcp", "status", "--json"]);
    assert_eq!(run.code(), 1);
    let status: Value = serde_json::from_str(&run.stdout()).unwrap();
    assert_eq!(status["servers"][0]["state"], "failed", "{status}");
    assert_eq!(
        status["servers"][0]["error"],
        "needs login: run pincer mcp login remote"
    );

    let (ok, stdout, stderr) = login(&home).await;
    assert!(ok, "{stdout}{stderr}");
    let file = home.path().join("mcp-auth/remote.json");
    assert!(
        stdout.ends_with(&format!(
            "Logged in to remote; tokens saved in {}\n",
            file.display()
        )),
        "{stdout}"
    );
    let mode = std::fs::metadata(&file).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
    let saved: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert_eq!(saved["client_id"], "client-1");
    assert_eq!(saved["token_response"]["access_token"], "at-1");

    let call = home.run_ok(&["mcp", "call", "remote", "whoami"]);
    assert_eq!(call.stdout(), "called with at-2\n");
    assert_eq!(shared.lock().unwrap().refreshes, 1);
    let call = home.run_ok(&["mcp", "call", "remote", "whoami"]);
    assert_eq!(call.stdout(), "called with at-2\n");
    assert_eq!(shared.lock().unwrap().refreshes, 1);
    let status = json_of(&home.run_ok(&["mcp", "status", "--json"]));
    assert_eq!(status["servers"][0]["state"], "ready", "{status}");

    let out = home.run_ok(&["mcp", "logout", "remote"]);
    assert_eq!(
        out.stdout(),
        format!("Logged out of remote (deleted {})\n", file.display())
    );
    assert!(!file.exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn malformed_metadata_is_a_clear_error() {
    let shared = serve(Fault::Metadata).await;
    let home = home_for(&shared);
    let (ok, stdout, stderr) = login(&home).await;
    assert!(!ok, "{stdout}");
    // rmcp reads unusable metadata as none published.
    assert!(
        stderr.starts_with("error: MCP server remote: OAuth: http://127.0.0.1:")
            && stderr.contains("/mcp publishes no OAuth metadata"),
        "{stderr}"
    );
    assert!(!home.path().join("mcp-auth/remote.json").exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_malformed_token_answer_is_a_clear_error() {
    let shared = serve(Fault::Token).await;
    let home = home_for(&shared);
    let (ok, stdout, stderr) = login(&home).await;
    assert!(!ok, "{stdout}");
    assert!(
        stderr.starts_with(
            "error: MCP server remote: OAuth: OAuth token exchange failed: EOF while parsing"
        ),
        "{stderr}"
    );
    assert!(!home.path().join("mcp-auth/remote.json").exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_configured_client_id_is_used_without_registering() {
    let shared = serve_for(Fault::None, "pre-registered").await;
    let home = home_with(
        &shared,
        ", oauth: { clientId: \"pre-registered\", scopes: [\"mcp\"] }",
    );
    let (ok, stdout, stderr) = login(&home).await;
    assert!(ok, "{stdout}{stderr}");
    assert_eq!(shared.lock().unwrap().registrations, 0);
    let file = home.path().join("mcp-auth/remote.json");
    let saved: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert_eq!(saved["client_id"], "pre-registered");
    let call = home.run_ok(&["mcp", "call", "remote", "whoami"]);
    assert_eq!(call.stdout(), "called with at-2\n");
}

#[test]
fn oauth_config_is_checked() {
    let home = Home::new();
    home.write_config(
        "{ mcp: { servers: { local: { command: \"x\", oauth: { clientId: \"a\" } }, \
         remote: { url: \"http://h/mcp\", oauth: { clientId: \" \" } }, \
         typo: { url: \"http://h/mcp\", oauth: { clientID: \"a\" } } } } }",
    );
    let run = home.run(&["mcp", "list"]);
    assert_eq!(run.code(), 1);
    crate::common::assert_contains(
        &run.stderr(),
        &["mcp.servers.typo.oauth.clientID: unknown key, did you mean `clientId`?"],
    );
    home.write_config(
        "{ mcp: { servers: { local: { command: \"x\", oauth: { clientId: \"a\" } }, \
         remote: { url: \"http://h/mcp\", oauth: { clientId: \" \" } } } } }",
    );
    let run = home.run(&["mcp", "list"]);
    assert_eq!(run.code(), 1);
    crate::common::assert_contains(
        &run.stderr(),
        &[
            "mcp.servers.local.oauth: only for HTTP servers (`url`)",
            "mcp.servers.remote.oauth.clientId: must not be empty",
        ],
    );
}

#[test]
fn login_needs_a_configured_http_server() {
    let home = Home::new();
    home.write_config("{ mcp: { servers: { local: { command: \"x\" } } } }");
    home.run(&["mcp", "login", "nope"])
        .assert_fails(1, "no MCP server \"nope\" in mcp.servers");
    home.run(&["mcp", "login", "local"]).assert_fails(
        1,
        "MCP server local has no `url`: OAuth is for HTTP servers",
    );
    assert_eq!(
        home.run_ok(&["mcp", "logout", "local"]).stdout(),
        "Not logged in to local\n"
    );
}

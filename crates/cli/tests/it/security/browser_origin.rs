//! Finding 2: web pages driving the gateway. A page on another site must not open the
//! WebSocket (with or without auth), a re-pointed host name (DNS rebinding) must not be
//! served, a cross-site "simple" POST must not start a run, and a page guessing tokens is
//! throttled even on loopback — while the gateway's own page and clients that send no
//! `Origin` keep working.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use futures_util::{SinkExt as _, StreamExt as _};
use pincer_testkit::{Match, MockLlm, Reply, Rule, Scenario};
use serde_json::{Value, json};
use tokio_tungstenite::tungstenite::Message as Ws;
use tokio_tungstenite::tungstenite::client::IntoClientRequest as _;

use crate::common::gateway::{Foreground, WsClient};
use crate::common::{Home, mock};

const TOKEN: &str = "browser-origin-test-token";

async fn llm() -> MockLlm {
    mock(Scenario::new().rule(Rule::when(Match::any()).reply(Reply::text("hi")))).await
}

/// A gateway on a free port: with `TOKEN` when `token`, else `--auth none`.
fn gateway(llm: &MockLlm, token: bool) -> (Home, Foreground) {
    let home = Home::new();
    let auth = if token {
        format!("gateway: {{ auth: {{ token: \"{TOKEN}\" }} }},")
    } else {
        String::new()
    };
    home.use_mock(
        llm,
        &format!("agents: {{ defaults: {{ model: \"mock/primary\" }} }},\n  {auth}"),
    );
    let mut args = vec!["gateway", "--port", "0"];
    if !token {
        args.extend(["--auth", "none"]);
    }
    let gateway = Foreground::start(&home, &args);
    (home, gateway)
}

/// Sends `request` (a whole HTTP/1.1 request) and returns the status code and body (read
/// by its `Content-Length`: the connection may stay open, and after a 101 it does).
fn exchange(port: u16, request: &str) -> (u16, String) {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    stream.write_all(request.as_bytes()).unwrap();
    let mut response = Vec::new();
    let mut buf = [0u8; 4096];
    let complete = |response: &[u8]| {
        let text = String::from_utf8_lossy(response);
        let Some((head, body)) = text.split_once("\r\n\r\n") else {
            return false;
        };
        let length = head
            .lines()
            .find_map(|line| {
                let (name, value) = line.split_once(':')?;
                name.eq_ignore_ascii_case("content-length")
                    .then(|| value.trim().parse::<usize>().ok())?
            })
            .unwrap_or(0);
        body.len() >= length
    };
    while !complete(&response) {
        let n = stream.read(&mut buf).unwrap();
        assert_ne!(
            n,
            0,
            "closed mid-response: {:?}",
            String::from_utf8_lossy(&response)
        );
        response.extend_from_slice(&buf[..n]);
    }
    let text = String::from_utf8_lossy(&response).into_owned();
    let status = text
        .split(' ')
        .nth(1)
        .and_then(|code| code.parse().ok())
        .unwrap_or_else(|| panic!("no status line in {text:?}"));
    let body = text
        .split_once("\r\n\r\n")
        .map(|(_, body)| body.to_owned())
        .unwrap_or_default();
    (status, body)
}

/// The status of a WebSocket upgrade of `/` with `extra` header lines.
fn upgrade_status(port: u16, host: &str, extra: &str) -> u16 {
    exchange(
        port,
        &format!(
            "GET / HTTP/1.1\r\nHost: {host}\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\
             Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\
             {extra}\r\n"
        ),
    )
    .0
}

/// `GET path` with `Host: host`: the status and body.
fn get(port: u16, path: &str, host: &str, extra: &str) -> (u16, String) {
    exchange(
        port,
        &format!("GET {path} HTTP/1.1\r\nHost: {host}\r\n{extra}Connection: close\r\n\r\n"),
    )
}

type Socket =
    tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

/// The next text frame as JSON.
async fn next_frame(ws: &mut Socket) -> Value {
    loop {
        match tokio::time::timeout(Duration::from_secs(20), ws.next())
            .await
            .expect("a frame within 20 s")
        {
            Some(Ok(Ws::Text(text))) => return serde_json::from_str(&text).unwrap(),
            Some(Ok(_)) => {}
            other => panic!("connection ended: {other:?}"),
        }
    }
}

/// Opens the WebSocket with `origin` (if any), sends `connect` with `token`, and returns
/// the response frame.
async fn connect_as(port: u16, origin: Option<&str>, token: &str) -> Value {
    let mut request = format!("ws://127.0.0.1:{port}/")
        .into_client_request()
        .unwrap();
    if let Some(origin) = origin {
        request
            .headers_mut()
            .insert("origin", origin.parse().unwrap());
    }
    let (mut ws, _) = tokio_tungstenite::connect_async(request).await.unwrap();
    let challenge = next_frame(&mut ws).await;
    assert_eq!(challenge["event"], "connect.challenge", "{challenge}");
    let frame = json!({"type": "req", "id": "c1", "method": "connect", "params": {
        "minProtocol": 3, "maxProtocol": 4,
        "client": {"id": "test", "version": "1", "platform": "linux", "mode": "webchat"},
        "auth": {"token": token}, "role": "operator",
    }});
    ws.send(Ws::text(frame.to_string())).await.unwrap();
    loop {
        let frame = next_frame(&mut ws).await;
        if frame["type"] == "res" {
            return frame;
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_foreign_origin_cannot_open_the_websocket_with_or_without_auth() {
    let llm = llm().await;
    for token in [false, true] {
        let (_home, gw) = gateway(&llm, token);
        let port = gw.port;
        let host = format!("127.0.0.1:{port}");
        for origin in [
            "https://evil.example".to_owned(),
            "http://127.0.0.1:3000".to_owned(),
            format!("http://localhost:{port}"),
            "null".to_owned(),
            format!("http://127.0.0.1:{port}/path"),
        ] {
            assert_eq!(
                upgrade_status(port, &host, &format!("Origin: {origin}\r\n")),
                403,
                "Origin {origin:?}, token auth {token}"
            );
        }
        // The gateway's own page (as the browser reached it) and clients without Origin.
        assert_eq!(
            upgrade_status(port, &host, &format!("Origin: http://{host}\r\n")),
            101
        );
        assert_eq!(
            upgrade_status(
                port,
                &format!("localhost:{port}"),
                &format!("Origin: http://localhost:{port}\r\n")
            ),
            101
        );
        assert_eq!(upgrade_status(port, &host, ""), 101);
        let own = format!("http://{host}");
        let token_sent = if token { TOKEN } else { "" };
        let hello = connect_as(port, Some(&own), token_sent).await;
        assert_eq!(hello["ok"], true, "{hello}");
        let hello = connect_as(port, None, token_sent).await;
        assert_eq!(hello["ok"], true, "{hello}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_foreign_host_name_is_refused_on_every_route() {
    let llm = llm().await;
    let (_home, gw) = gateway(&llm, false);
    let port = gw.port;
    for path in ["/", "/readyz", "/healthz", "/v1/models"] {
        let (status, body) = get(port, path, &format!("attacker.example:{port}"), "");
        assert_eq!(status, 421, "{path}: {body}");
        assert_eq!(
            body,
            "this gateway does not answer to the host name \"attacker.example\"; if it is one \
             of this machine's names, add it to gateway.allowedHosts\n"
        );
        assert_eq!(get(port, path, "localhost.attacker.example", "").0, 421);
        assert_eq!(get(port, path, "bad host", "").0, 400);
        // Loopback names and addresses, with or without the port.
        for host in [
            format!("127.0.0.1:{port}"),
            "127.0.0.1".to_owned(),
            format!("localhost:{port}"),
            "[::1]".to_owned(),
        ] {
            assert_eq!(get(port, path, &host, "").0, 200, "{path} as {host}");
        }
    }
    // The rebinding page's WebSocket: its origin matches its (refused) host.
    assert_eq!(
        upgrade_status(
            port,
            &format!("attacker.example:{port}"),
            &format!("Origin: http://attacker.example:{port}\r\n")
        ),
        421
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn allowed_hosts_and_origins_come_from_the_config() {
    let llm = llm().await;
    let home = Home::new();
    home.use_mock(
        &llm,
        "agents: { defaults: { model: \"mock/primary\" } },\n  \
         gateway: { allowedHosts: [\"gateway.lan\"], \
         controlUi: { allowedOrigins: [\"https://chat.example.com\"] } },",
    );
    let gw = Foreground::start(&home, &["gateway", "--port", "0", "--auth", "none"]);
    let port = gw.port;
    assert_eq!(get(port, "/readyz", "gateway.lan", "").0, 200);
    assert_eq!(get(port, "/readyz", "other.lan", "").0, 421);
    let host = format!("127.0.0.1:{port}");
    assert_eq!(
        upgrade_status(port, &host, "Origin: https://chat.example.com\r\n"),
        101
    );
    assert_eq!(
        upgrade_status(port, &host, "Origin: https://evil.example\r\n"),
        403
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cross_site_simple_post_starts_no_run() {
    let llm = llm().await;
    let (_home, gw) = gateway(&llm, false);
    let port = gw.port;
    let post = |content_type: &str, message: &str| {
        let body = json!({ "message": message }).to_string();
        exchange(
            port,
            &format!(
                "POST /hooks/agent HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\
                 Content-Type: {content_type}\r\nContent-Length: {}\r\n\
                 Connection: close\r\n\r\n{body}",
                body.len()
            ),
        )
    };
    for content_type in [
        "text/plain",
        "text/plain;charset=UTF-8",
        "application/x-www-form-urlencoded",
        "multipart/form-data; boundary=x",
    ] {
        let (status, body) = post(content_type, "from a page");
        assert_eq!(status, 415, "{content_type}: {body}");
        let body: Value = serde_json::from_str(&body).unwrap();
        assert_eq!(
            body,
            json!({"ok": false, "error": "send the body as JSON, with Content-Type: application/json"})
        );
    }
    let (status, body) = post("application/json; charset=utf-8", "from the owner");
    assert_eq!(status, 200, "{body}");
    // The owner's run reaches the model; the refused ones never did (they would have
    // started first).
    let deadline = Instant::now() + Duration::from_secs(20);
    while llm.requests().is_empty() {
        assert!(Instant::now() < deadline, "the run did not reach the model");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let requests = serde_json::to_string(
        &llm.requests()
            .iter()
            .map(|r| r.body.clone())
            .collect::<Vec<_>>(),
    )
    .unwrap();
    assert!(requests.contains("from the owner"), "{requests}");
    assert!(!requests.contains("from a page"), "{requests}");

    // The OpenAI endpoint answers in its own error shape.
    let body = "{}";
    let (status, answer) = exchange(
        port,
        &format!(
            "POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: text/plain\r\n\
             Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        ),
    );
    assert_eq!(status, 415);
    let answer: Value = serde_json::from_str(&answer).unwrap();
    assert_eq!(
        answer["error"]["code"], "unsupported_media_type",
        "{answer}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_page_guessing_tokens_on_loopback_is_locked_out() {
    let llm = llm().await;
    let (_home, gw) = gateway(&llm, true);
    let port = gw.port;
    let own = format!("http://127.0.0.1:{port}");
    for attempt in 0..10 {
        let res = connect_as(port, Some(&own), "guess").await;
        assert_eq!(
            res["error"]["details"]["code"], "AUTH_TOKEN_MISMATCH",
            "attempt {attempt}: {res}"
        );
    }
    let res = connect_as(port, Some(&own), TOKEN).await;
    assert_eq!(res["ok"], false, "{res}");
    assert_eq!(
        res["error"]["details"]["code"], "AUTH_RATE_LIMITED",
        "{res}"
    );
    // The status of `/v1/models` asked on this address with the token and `headers`.
    let models = |headers: &str| {
        let auth = format!("{headers}Authorization: Bearer {TOKEN}\r\n");
        get(port, "/v1/models", &format!("127.0.0.1:{port}"), &auth).0
    };
    // The HTTP API shares the limiter for pages.
    assert_eq!(models(&format!("Origin: {own}\r\n")), 429);
    // The owner's clients on the same address (no Origin) are not locked out.
    let mut client = WsClient::connect(port, TOKEN).await;
    let health = client.call("health", json!({})).await;
    assert_eq!(health["ok"], true, "{health}");
    assert_eq!(models(""), 200);
}

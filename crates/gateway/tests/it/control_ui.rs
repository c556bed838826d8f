//! The Control UI's files at `/control/` against a real server on 127.0.0.1, served from a
//! temporary directory of stand-in files (never OpenClaw's): the prepared index and its CSP,
//! each kind of file with its Content-Type and caching, the app's client routes answered
//! with the index, HEAD, GET/HEAD only, the bootstrap settings behind the token, the
//! WebSocket at `/control` (same-origin page allowed, another site refused), paths that try
//! to leave the root (sent as raw bytes: an HTTP client would normalise them first), the size
//! cap, and the 404 that says how to turn it on when no root is set.

use crate::support;

use std::path::{Path, PathBuf};

use futures_util::StreamExt;
use pincer_testkit::Scenario;
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;

const TOKEN: &str = "control-ui-test-token";
const SECRET: &str = "the secret outside the root";
const INDEX: &str = "<!doctype html>\n<html lang=\"en\">\n<head>\n\
    <link rel=\"icon\" href=\"./favicon.svg\" />\n\
    <script>boot()</script>\n\
    <script type=\"module\" crossorigin src=\"./assets/app-abc123.js\"></script>\n\
    </head>\n<body><app-root></app-root></body>\n</html>\n";
const APP_JS: &str = "export const app = 1;\n";

/// `<tmp>/ui` (the root) with an app's kinds of files, `<tmp>/secret.txt` next to it, and
/// symlinks from inside the root to outside it and to a file inside it.
struct Files {
    dir: tempfile::TempDir,
}

impl Files {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("ui");
        for (path, body) in [
            ("index.html", INDEX.as_bytes()),
            ("assets/app-abc123.js", APP_JS.as_bytes()),
            ("assets/style-def456.css", b"body{}\n"),
            ("favicon.svg", b"<svg/>"),
            ("favicon.ico", b"\0\0\x01\0"),
            ("manifest.webmanifest", b"{}"),
            ("fonts/sans.woff2", b"wOF2"),
            ("themes/dark.css", b":root{}"),
            ("sw.js", b"self.x=1"),
            ("art/pic.webp", b"RIFF"),
            ("social-card.png", b"\x89PNG"),
            // Precompressed copies (stand-in bytes): of a hashed asset, of another file.
            ("assets/app-abc123.js.br", b"BR"),
            ("assets/app-abc123.js.gz", b"GZ"),
            ("assets/style-def456.css.gz", b"CSS-GZ"),
            ("assets/orphan-000.js.br", b"no source"),
            ("favicon.svg.br", b"BR-SVG"),
            (".hidden.js", b"hidden"),
        ] {
            let path = root.join(path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, body).unwrap();
        }
        std::fs::create_dir_all(dir.path().join("outside")).unwrap();
        std::fs::write(dir.path().join("secret.txt"), SECRET).unwrap();
        std::fs::write(dir.path().join("outside/secret.js"), SECRET).unwrap();
        std::os::unix::fs::symlink(dir.path().join("secret.txt"), root.join("leak.txt")).unwrap();
        std::os::unix::fs::symlink(dir.path().join("outside"), root.join("linkdir")).unwrap();
        std::os::unix::fs::symlink(root.join("assets/app-abc123.js"), root.join("alias.js"))
            .unwrap();
        // Sparse: over the cap without writing 32 MiB.
        let big = std::fs::File::create(root.join("assets/huge-000.js")).unwrap();
        big.set_len(pincer_gateway::server::control_ui::MAX_FILE_BYTES + 1)
            .unwrap();
        Self { dir }
    }

    fn root(&self) -> PathBuf {
        self.dir.path().join("ui")
    }
}

async fn start(root: Option<&Path>) -> support::Running {
    let root = root.map(Path::to_path_buf);
    support::start_server_with(Scenario::new(), TOKEN, move |o| o.control_ui_root = root).await
}

/// An answer read off the wire.
#[derive(Debug)]
struct Raw {
    status: u16,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

impl Raw {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
}

/// Sends `method target` exactly as given (no client normalises it) and reads the answer.
async fn raw(running: &support::Running, method: &str, target: &str, extra: &str) -> Raw {
    let mut stream = TcpStream::connect(running.addr).await.unwrap();
    let request = format!(
        "{method} {target} HTTP/1.1\r\nHost: {}\r\nConnection: close\r\n{extra}\r\n",
        running.addr
    );
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut bytes = Vec::new();
    stream.read_to_end(&mut bytes).await.unwrap();
    let split = bytes.windows(4).position(|w| w == b"\r\n\r\n").unwrap();
    let head = String::from_utf8(bytes[..split].to_vec()).unwrap();
    let mut lines = head.split("\r\n");
    let status = lines
        .next()
        .unwrap()
        .split(' ')
        .nth(1)
        .unwrap()
        .parse()
        .unwrap();
    let headers = lines
        .map(|line| {
            let (name, value) = line.split_once(':').unwrap();
            (name.to_owned(), value.trim().to_owned())
        })
        .collect::<Vec<_>>();
    let mut body = bytes[split + 4..].to_vec();
    // hyper may chunk a body of unknown length; these are small, one chunk.
    if headers
        .iter()
        .any(|(n, v)| n.eq_ignore_ascii_case("transfer-encoding") && v == "chunked")
    {
        let text = String::from_utf8(body.clone()).unwrap();
        let (size, rest) = text.split_once("\r\n").unwrap();
        let size = usize::from_str_radix(size, 16).unwrap();
        body = rest.as_bytes()[..size].to_vec();
    }
    Raw {
        status,
        headers,
        body,
    }
}

async fn get(running: &support::Running, target: &str) -> Raw {
    raw(running, "GET", target, "").await
}

/// The index as the server must send it.
fn prepared_index() -> String {
    INDEX
        .replace(
            "<html lang",
            "<html data-openclaw-control-ui-base-path=\"/control\" \
             data-openclaw-terminal-enabled=\"false\" lang",
        )
        .replace("\"./", "\"/control/")
}

fn assert_is_index(answer: &Raw, target: &str) {
    assert_eq!(answer.status, 200, "{target}: {}", answer.text());
    assert_eq!(answer.text(), prepared_index(), "{target}");
    assert_eq!(
        answer.header("content-type"),
        Some("text/html; charset=utf-8"),
        "{target}"
    );
    assert_eq!(answer.header("cache-control"), Some("no-cache"), "{target}");
}

#[tokio::test]
async fn the_index_is_prepared_for_the_mount_with_a_csp_naming_its_inline_script() {
    let files = Files::new();
    let server = start(Some(&files.root())).await;
    let answer = get(&server, "/control/").await;
    assert_is_index(&answer, "/control/");
    // sha256("boot()"), base64.
    let csp = answer.header("content-security-policy").unwrap();
    let directive = |name: &str| {
        csp.split("; ")
            .find(|d| d.split(' ').next() == Some(name))
            .unwrap_or_default()
            .to_owned()
    };
    // Only its own inline script runs (sha256("boot()")), not inline code in general.
    assert_eq!(
        directive("script-src"),
        "script-src 'self' 'sha256-MeZS89WlF0u+o0hCvHTBt4q1WHU+U+sJKgbdRUc36mY='"
    );
    assert_eq!(directive("frame-ancestors"), "frame-ancestors 'none'");
    assert_eq!(
        directive("connect-src"),
        "connect-src 'self' ws: wss: data:"
    );
    assert_eq!(answer.header("x-frame-options"), Some("DENY"));
    assert_eq!(answer.header("x-content-type-options"), Some("nosniff"));
    assert_eq!(answer.header("referrer-policy"), Some("no-referrer"));
    assert_is_index(
        &get(&server, "/control/index.html").await,
        "/control/index.html",
    );
    assert_is_index(&get(&server, "/control/?session=x").await, "with a query");
}

#[tokio::test]
async fn files_have_their_content_type_and_hashed_assets_are_cached_long() {
    let files = Files::new();
    let server = start(Some(&files.root())).await;
    const LONG: &str = "public, max-age=31536000, immutable";
    for (target, content_type, cache, body) in [
        (
            "/control/assets/app-abc123.js",
            "text/javascript; charset=utf-8",
            LONG,
            APP_JS.as_bytes(),
        ),
        (
            "/control/assets/style-def456.css",
            "text/css; charset=utf-8",
            LONG,
            b"body{}\n",
        ),
        (
            "/control/favicon.svg",
            "image/svg+xml",
            "no-cache",
            b"<svg/>",
        ),
        (
            "/control/favicon.ico",
            "image/x-icon",
            "no-cache",
            b"\0\0\x01\0",
        ),
        (
            "/control/manifest.webmanifest",
            "application/manifest+json; charset=utf-8",
            "no-cache",
            b"{}",
        ),
        (
            "/control/fonts/sans.woff2",
            "font/woff2",
            "no-cache",
            b"wOF2",
        ),
        (
            "/control/themes/dark.css?v=build-1",
            "text/css; charset=utf-8",
            "no-cache",
            b":root{}",
        ),
        (
            "/control/sw.js",
            "text/javascript; charset=utf-8",
            "no-cache",
            b"self.x=1",
        ),
        ("/control/art/pic.webp", "image/webp", "no-cache", b"RIFF"),
        (
            "/control/social-card.png",
            "image/png",
            "no-cache",
            b"\x89PNG",
        ),
        // A symlink that stays inside the root is followed.
        (
            "/control/alias.js",
            "text/javascript; charset=utf-8",
            "no-cache",
            APP_JS.as_bytes(),
        ),
        (
            "/control/assets//app-abc123.js",
            "text/javascript; charset=utf-8",
            LONG,
            APP_JS.as_bytes(),
        ),
        (
            "/control/assets/app%2Dabc123.js",
            "text/javascript; charset=utf-8",
            LONG,
            APP_JS.as_bytes(),
        ),
    ] {
        let answer = get(&server, target).await;
        assert_eq!(answer.status, 200, "{target}: {}", answer.text());
        assert_eq!(answer.body, body, "{target}");
        assert_eq!(
            answer.header("content-type"),
            Some(content_type),
            "{target}"
        );
        assert_eq!(answer.header("cache-control"), Some(cache), "{target}");
        assert_eq!(
            answer.header("x-content-type-options"),
            Some("nosniff"),
            "{target}"
        );
    }
}

#[tokio::test]
async fn the_apps_own_routes_get_the_index_and_missing_files_404() {
    let files = Files::new();
    let server = start(Some(&files.root())).await;
    for target in [
        "/control/chat",
        "/control/chat/main/db0d28acb74648019388f1a7a00b857a",
        "/control/sessions/agent%3Amain%3Amain",
        "/control/chat/",
        // A directory is never listed: without an extension it is one of the app's routes.
        "/control/assets",
        "/control/assets/",
        "/control/fonts/",
    ] {
        assert_is_index(&get(&server, target).await, target);
    }
    for target in [
        "/control/missing.js",
        "/control/assets/app-000000.js",
        "/control/chat/x.png",
        "/control/.hidden.js",
    ] {
        let answer = get(&server, target).await;
        assert_eq!(
            (answer.status, answer.text()),
            (404, "not found\n".to_owned()),
            "{target}"
        );
    }
}

#[tokio::test]
async fn paths_that_leave_the_root_are_refused() {
    let files = Files::new();
    let server = start(Some(&files.root())).await;
    for target in [
        "/control/../secret.txt",
        "/control/assets/../../secret.txt",
        "/control/%2e%2e/secret.txt",
        "/control/%2E%2E/%2E%2E/secret.txt",
        "/control/..%2fsecret.txt",
        "/control/assets%2f..%2f..%2fsecret.txt",
        "/control/..%5csecret.txt",
        "/control/.%2e/secret.txt",
        "/control/%00secret.txt",
        "/control/secret.txt%00.js",
        "/control/%zz.js",
        // Symlinks out of the root: to a file, and through a directory.
        "/control/leak.txt",
        "/control/linkdir/secret.js",
        "/control/%2fetc%2fpasswd",
        "/control//etc/hostname.txt",
    ] {
        let answer = get(&server, target).await;
        assert_eq!(answer.status, 404, "{target}: {}", answer.text());
        assert!(!answer.text().contains(SECRET), "{target} leaked the file");
    }
    // Without an extension these are client routes: the index, never the file.
    for target in [
        "/control/linkdir",
        "/control//etc/passwd",
        "/control/linkdir/secret",
    ] {
        assert_is_index(&get(&server, target).await, target);
    }
}

#[tokio::test]
async fn head_answers_the_headers_only_and_other_methods_are_refused() {
    let files = Files::new();
    let server = start(Some(&files.root())).await;
    let answer = raw(&server, "HEAD", "/control/assets/app-abc123.js", "").await;
    assert_eq!(answer.status, 200);
    assert_eq!(
        answer.header("content-length"),
        Some(APP_JS.len().to_string().as_str())
    );
    assert_eq!(
        answer.header("content-type"),
        Some("text/javascript; charset=utf-8")
    );
    assert!(answer.body.is_empty(), "{:?}", answer.text());
    let answer = raw(&server, "HEAD", "/control/", "").await;
    assert_eq!(answer.status, 200);
    assert_eq!(
        answer.header("content-length"),
        Some(prepared_index().len().to_string().as_str())
    );
    assert!(answer.body.is_empty());
    for method in ["POST", "PUT", "DELETE"] {
        let answer = raw(&server, method, "/control/", "Content-Length: 0\r\n").await;
        assert_eq!(answer.status, 405, "{method}");
    }
}

#[tokio::test]
async fn a_file_over_the_cap_is_not_served() {
    let files = Files::new();
    let server = start(Some(&files.root())).await;
    let answer = get(&server, "/control/assets/huge-000.js").await;
    assert_eq!(
        (answer.status, answer.text()),
        (500, "this file is too large to serve\n".to_owned())
    );
}

#[tokio::test]
async fn the_bootstrap_settings_need_the_token() {
    let files = Files::new();
    let server = start(Some(&files.root())).await;
    for target in [
        "/control/control-ui-config.json",
        "/control/__openclaw/control-ui-config.json",
    ] {
        let refused = get(&server, target).await;
        assert_eq!(refused.status, 401, "{target}");
        assert_eq!(
            serde_json::from_slice::<Value>(&refused.body).unwrap(),
            json!({"error": {"message": "Unauthorized", "type": "unauthorized"}})
        );
        let wrong = raw(&server, "GET", target, "Authorization: Bearer nope\r\n").await;
        assert_eq!(wrong.status, 401, "{target}");
        let answer = raw(
            &server,
            "GET",
            target,
            &format!("Authorization: Bearer {TOKEN}\r\n"),
        )
        .await;
        assert_eq!(answer.status, 200, "{target}: {}", answer.text());
        assert_eq!(
            answer.header("content-type"),
            Some("application/json; charset=utf-8")
        );
        assert_eq!(answer.header("cache-control"), Some("no-cache"));
        assert_eq!(
            serde_json::from_slice::<Value>(&answer.body).unwrap(),
            json!({
                "basePath": "/control",
                "assistantName": "Main",
                "assistantAvatar": "A",
                "assistantAvatarSource": null,
                "assistantAvatarStatus": null,
                "assistantAvatarReason": null,
                "assistantAgentId": "main",
                "serverVersion": env!("CARGO_PKG_VERSION"),
                "embedSandbox": "scripts",
                "allowExternalEmbedUrls": false,
                "automaticallyFetchFavicons": false,
                "communityInvite": false,
                "terminalEnabled": false,
                "cliAgentsEnabled": false,
                "pluginAssetsRequireAuth": true,
                "pluginFrameGrants": [],
            })
        );
    }
}

/// Opens a WebSocket to `path` with an `Origin`; the challenge frame, or the refusal's
/// status.
async fn websocket(running: &support::Running, path: &str, origin: &str) -> Result<Value, u16> {
    let mut request = format!("ws://{}{path}", running.addr)
        .into_client_request()
        .unwrap();
    request
        .headers_mut()
        .insert("origin", origin.parse().unwrap());
    match tokio_tungstenite::connect_async(request).await {
        Ok((mut ws, _)) => {
            let frame = ws.next().await.unwrap().unwrap();
            Ok(serde_json::from_str(frame.to_text().unwrap()).unwrap())
        }
        Err(tokio_tungstenite::tungstenite::Error::Http(response)) => {
            Err(response.status().as_u16())
        }
        Err(e) => panic!("{e}"),
    }
}

#[tokio::test]
async fn the_mount_is_the_pages_websocket_and_sends_browsers_on_to_the_app() {
    let files = Files::new();
    let server = start(Some(&files.root())).await;
    let own = format!("http://{}", server.addr);
    for path in ["/control", "/control/"] {
        let challenge = websocket(&server, path, &own).await.unwrap();
        assert_eq!(challenge["event"], "connect.challenge", "{path}");
    }
    assert_eq!(
        websocket(&server, "/control", "http://evil.example").await,
        Err(403),
        "a page of another site"
    );
    let answer = get(&server, "/control").await;
    assert_eq!(answer.status, 302);
    assert_eq!(answer.header("location"), Some("/control/"));
    let answer = get(&server, "/control?session=main").await;
    assert_eq!(answer.header("location"), Some("/control/?session=main"));
}

#[tokio::test]
async fn without_a_root_the_mount_says_how_to_turn_it_on() {
    let server = start(None).await;
    for target in [
        "/control/",
        "/control",
        "/control/assets/app.js",
        "/control/chat/main",
    ] {
        let answer = get(&server, target).await;
        assert_eq!(answer.status, 404, "{target}");
        assert_eq!(
            answer.header("content-type"),
            Some("text/plain; charset=utf-8")
        );
        let text = answer.text();
        assert!(text.contains("gateway.controlUi.root"), "{target}: {text}");
        assert!(text.contains("--control-ui <dir>"), "{text}");
        assert!(text.contains("dist/control-ui"), "{text}");
    }
    assert_eq!(
        websocket(&server, "/control", &format!("http://{}", server.addr)).await,
        Err(404)
    );
    // The rest of the gateway is unchanged.
    assert_eq!(get(&server, "/healthz").await.status, 200);
}

#[tokio::test]
async fn hashed_assets_go_out_precompressed_when_the_browser_takes_it() {
    let files = Files::new();
    let server = start(Some(&files.root())).await;
    let js = "/control/assets/app-abc123.js";
    for (accept, body, encoding) in [
        ("gzip, deflate, br, zstd", "BR", Some("br")),
        ("gzip", "GZ", Some("gzip")),
        ("br;q=0, gzip;q=0.8", "GZ", Some("gzip")),
        ("identity", APP_JS, None),
        ("", APP_JS, None),
    ] {
        let extra = if accept.is_empty() {
            String::new()
        } else {
            format!("Accept-Encoding: {accept}\r\n")
        };
        let answer = raw(&server, "GET", js, &extra).await;
        assert_eq!(answer.status, 200, "{accept}");
        assert_eq!(answer.text(), body, "{accept}");
        assert_eq!(answer.header("content-encoding"), encoding, "{accept}");
        assert_eq!(
            answer.header("content-type"),
            Some("text/javascript; charset=utf-8"),
            "{accept}"
        );
        assert_eq!(answer.header("vary"), Some("accept-encoding"), "{accept}");
    }
    let css = raw(
        &server,
        "GET",
        "/control/assets/style-def456.css",
        "Accept-Encoding: br, gzip\r\n",
    )
    .await;
    assert_eq!(
        (css.text(), css.header("content-encoding")),
        ("CSS-GZ".to_owned(), Some("gzip"))
    );
    let head = raw(&server, "HEAD", js, "Accept-Encoding: br\r\n").await;
    assert_eq!(head.header("content-length"), Some("2"));
    assert_eq!(head.header("content-encoding"), Some("br"));
    // Only next to a file that is there, and only for the bundle's hashed assets.
    let orphan = raw(
        &server,
        "GET",
        "/control/assets/orphan-000.js",
        "Accept-Encoding: br\r\n",
    )
    .await;
    assert_eq!(orphan.status, 404);
    let svg = raw(
        &server,
        "GET",
        "/control/favicon.svg",
        "Accept-Encoding: br\r\n",
    )
    .await;
    assert_eq!(
        (svg.text(), svg.header("content-encoding")),
        ("<svg/>".to_owned(), None)
    );
}

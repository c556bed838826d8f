//! The `browser` tool against a real headless Chromium on fixture pages served from
//! 127.0.0.1: open, snapshot (exact outlines), act, screenshot, pdf, tabs per session,
//! a second tool instance (as another process) on the same tab, the navigation guard,
//! evaluate's switch, a page that never loads, and a browser killed between calls.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::extract::Query;
use axum::response::{Html, IntoResponse, Redirect, Response};
use axum::routing::get;
use futures_util::future::BoxFuture;
use pincer_agent::{AgentTool, ToolContext, ToolError, ToolOutput};
use pincer_ai::ContentBlock;
use pincer_browser::tool::{BrowserToolOptions, browser_tool};
use pincer_browser::{BrowserRuntime, Endpoint, RuntimeError, RuntimeStatus};
use pincer_web::ssrf::NetworkPolicy;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

const CHROMIUM: &str = "/usr/bin/chromium";

/// A test-only runtime: one Chromium in its own process group, killed (the whole group)
/// on stop and on drop.
struct TestRuntime {
    dir: tempfile::TempDir,
    child: tokio::sync::Mutex<Option<(tokio::process::Child, Endpoint)>>,
    pid: Mutex<Option<u32>>,
}

impl TestRuntime {
    fn new() -> Arc<Self> {
        Arc::new(Self {
            dir: tempfile::tempdir().unwrap(),
            child: tokio::sync::Mutex::new(None),
            pid: Mutex::new(None),
        })
    }

    async fn launch(&self) -> Result<(tokio::process::Child, Endpoint), RuntimeError> {
        let profile = self.dir.path().join("profile");
        let port_file = profile.join("DevToolsActivePort");
        let _ = tokio::fs::remove_file(&port_file).await;
        let mut command = tokio::process::Command::new(CHROMIUM);
        command
            .args([
                "--headless=new",
                "--remote-debugging-port=0",
                "--no-first-run",
                "--no-default-browser-check",
                "--disable-gpu",
                "--disable-dev-shm-usage",
            ])
            .arg(format!("--user-data-dir={}", profile.display()))
            .args(if nix::unistd::geteuid().is_root() {
                &["--no-sandbox"][..]
            } else {
                &[][..]
            })
            .arg("about:blank")
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .process_group(0)
            .kill_on_drop(true);
        let child = command
            .spawn()
            .map_err(|e| RuntimeError::Start(e.to_string()))?;
        *self.pid.lock().unwrap() = child.id();
        for _ in 0..200 {
            if let Ok(text) = tokio::fs::read_to_string(&port_file).await {
                let mut lines = text.lines();
                if let (Some(port), Some(path)) = (lines.next(), lines.next()) {
                    let endpoint = Endpoint {
                        ws_url: format!("ws://127.0.0.1:{port}{path}"),
                        http_base: format!("http://127.0.0.1:{port}"),
                    };
                    return Ok((child, endpoint));
                }
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        Err(RuntimeError::Start("no DevToolsActivePort".to_owned()))
    }

    fn kill_group(&self) {
        if let Some(pid) = *self.pid.lock().unwrap() {
            let _ = nix::sys::signal::killpg(
                nix::unistd::Pid::from_raw(pid as i32),
                nix::sys::signal::Signal::SIGKILL,
            );
        }
    }

    /// Kills the browser as a crash would, without telling anyone.
    async fn crash(&self) {
        self.kill_group();
        if let Some((child, _)) = self.child.lock().await.as_mut() {
            let _ = child.wait().await;
        }
    }

    fn pid(&self) -> Option<u32> {
        *self.pid.lock().unwrap()
    }
}

impl Drop for TestRuntime {
    fn drop(&mut self) {
        self.kill_group();
    }
}

impl BrowserRuntime for TestRuntime {
    fn ensure_running(&self) -> BoxFuture<'_, Result<Endpoint, RuntimeError>> {
        Box::pin(async move {
            let mut child = self.child.lock().await;
            if let Some((process, endpoint)) = child.as_mut()
                && process.try_wait().ok().flatten().is_none()
            {
                return Ok(endpoint.clone());
            }
            self.kill_group();
            let launched = self.launch().await?;
            let endpoint = launched.1.clone();
            *child = Some(launched);
            Ok(endpoint)
        })
    }

    fn running(&self) -> BoxFuture<'_, Result<Option<Endpoint>, RuntimeError>> {
        Box::pin(async move {
            let mut child = self.child.lock().await;
            let Some((process, endpoint)) = child.as_mut() else {
                return Ok(None);
            };
            let alive = process.try_wait().ok().flatten().is_none();
            Ok(alive.then(|| endpoint.clone()))
        })
    }

    fn stop(&self) -> BoxFuture<'_, Result<bool, RuntimeError>> {
        Box::pin(async move {
            let mut child = self.child.lock().await;
            let Some((mut process, _)) = child.take() else {
                return Ok(false);
            };
            self.kill_group();
            let _ = process.wait().await;
            Ok(true)
        })
    }

    fn status(&self) -> BoxFuture<'_, Result<RuntimeStatus, RuntimeError>> {
        Box::pin(async move {
            let running = self.running().await?;
            Ok(RuntimeStatus {
                profile: "test".to_owned(),
                running: running.is_some(),
                pid: running.as_ref().and(self.pid()),
                ws_url: running.map(|e| e.ws_url),
                executable: Some(CHROMIUM.to_owned()),
                headless: true,
            })
        })
    }

    fn touch(&self) {}

    fn state_dir(&self) -> &Path {
        self.dir.path()
    }
}

// ---- fixture pages ----

const INDEX: &str = r#"<!doctype html><html><head><title>Fixture</title></head><body>
<h1>Fixture</h1>
<p id="status">Not clicked</p>
<a href="/other">Other page</a>
<button onclick="document.getElementById('status').textContent = 'Clicked!'">Change text</button>
</body></html>"#;

const FORM: &str = r#"<!doctype html><html><head><title>Form</title></head><body>
<form action="/submit">
<label for="name">Name</label> <input id="name" name="name">
<label for="color">Color</label>
<select id="color" name="color"><option value="red">Red</option><option value="green">Green</option></select>
<button type="submit">Send</button>
</form>
</body></html>"#;

const CONSOLE: &str = r#"<!doctype html><html><head><title>Console</title><link rel="icon" href="data:,"></head><body>
<p>Logs</p>
<script>console.log("hello from the page", 42); console.error("bad thing");</script>
</body></html>"#;

async fn submit(Query(q): Query<std::collections::HashMap<String, String>>) -> Html<String> {
    let get = |k: &str| q.get(k).cloned().unwrap_or_default();
    Html(format!(
        "<!doctype html><title>Thanks</title><p>You typed {} and chose {}</p>",
        get("name"),
        get("color")
    ))
}

/// Headers and a first chunk, then nothing, forever.
async fn slow() -> Response {
    let first = futures_util::stream::once(async {
        Ok::<_, std::io::Error>("<!doctype html><title>Slow</title><p>Partial content</p>")
    });
    let never = futures_util::stream::pending();
    let body = Body::from_stream(futures_util::StreamExt::chain(first, never));
    ([("content-type", "text/html")], body).into_response()
}

async fn serve() -> String {
    let app = Router::new()
        .route("/", get(|| async { Html(INDEX) }))
        .route(
            "/other",
            get(|| async { Html("<!doctype html><title>Other</title><p>The other page</p>") }),
        )
        .route("/form", get(|| async { Html(FORM) }))
        .route("/submit", get(submit))
        .route("/console", get(|| async { Html(CONSOLE) }))
        .route("/slow", get(slow))
        .route(
            "/redirect",
            get(|| async { Redirect::temporary("http://169.254.169.254/") }),
        );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    format!("http://{addr}")
}

// ---- the harness ----

struct Fixture {
    runtime: Arc<TestRuntime>,
    workspace: tempfile::TempDir,
    base: String,
    tool: Arc<dyn AgentTool>,
}

impl Fixture {
    async fn new() -> Self {
        Self::with(|_| {}).await
    }

    async fn with(change: impl FnOnce(&mut BrowserToolOptions)) -> Self {
        let runtime = TestRuntime::new();
        let workspace = tempfile::tempdir().unwrap();
        let base = serve().await;
        let mut options = options(workspace.path());
        change(&mut options);
        let tool = browser_tool(runtime.clone(), options);
        Self {
            runtime,
            workspace,
            base,
            tool,
        }
    }

    /// Another tool over the same browser and state, as another process would make.
    fn second_tool(&self) -> Arc<dyn AgentTool> {
        browser_tool(self.runtime.clone(), options(self.workspace.path()))
    }

    async fn call(&self, args: Value) -> Result<ToolOutput, ToolError> {
        call(&self.tool, "s1", args).await
    }

    async fn ok(&self, args: Value) -> ToolOutput {
        let shown = args.to_string();
        self.call(args)
            .await
            .unwrap_or_else(|e| panic!("{shown}: {e}"))
    }

    async fn text(&self, args: Value) -> String {
        self.ok(args).await.text_content()
    }

    fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    /// The snapshot text without its URL line's port.
    async fn snapshot(&self) -> String {
        let text = self.text(json!({"action": "snapshot"})).await;
        text.replace(&self.base, "BASE")
    }

    async fn finish(self) {
        let pid = self.runtime.pid();
        self.ok(json!({"action": "stop"})).await;
        if let Some(pid) = pid {
            let alive = nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid as i32), None);
            assert!(alive.is_err(), "chromium {pid} is still there");
        }
    }
}

fn options(workspace: &Path) -> BrowserToolOptions {
    let mut options = BrowserToolOptions::new(workspace);
    options.navigation_policy = NetworkPolicy {
        allow_private_network: false,
        allow_hosts: vec!["127.0.0.1".to_owned()],
    };
    options.action_timeout = Duration::from_secs(10);
    options
}

async fn call(
    tool: &Arc<dyn AgentTool>,
    session: &str,
    args: Value,
) -> Result<ToolOutput, ToolError> {
    let ctx = ToolContext::new("call", CancellationToken::new())
        .with_session_key(Some(Arc::from(session)));
    tool.execute(args, ctx).await
}

fn failure(result: Result<ToolOutput, ToolError>) -> String {
    match result {
        Ok(out) => panic!("expected a failure, got {}", out.text_content()),
        Err(e) => e.to_string(),
    }
}

fn saved_path(output: &ToolOutput) -> PathBuf {
    PathBuf::from(output.details.as_ref().unwrap()["path"].as_str().unwrap())
}

// ---- the flows ----

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn open_snapshot_click_and_snapshot_again() {
    let f = Fixture::new().await;
    let opened = f.text(json!({"action": "open", "url": f.url("/")})).await;
    assert!(
        opened.starts_with(&format!("opened {}/ (title \"Fixture\")", f.base)),
        "{opened}"
    );
    assert_eq!(
        f.snapshot().await,
        "Page: Fixture\nURL: BASE/\n\n\
         - heading \"Fixture\" [level=1] [ref=e1]\n\
         - text: Not clicked\n\
         - link \"Other page\" [url=\"/other\"] [ref=e2]\n\
         - button \"Change text\" [ref=e3]\n"
    );
    let clicked = f
        .text(json!({"action": "act", "kind": "click", "ref": "e3"}))
        .await;
    assert_eq!(clicked, "clicked e3");
    assert_eq!(
        f.snapshot().await,
        "Page: Fixture\nURL: BASE/\n\n\
         - heading \"Fixture\" [level=1] [ref=e1]\n\
         - text: Clicked!\n\
         - link \"Other page\" [url=\"/other\"] [ref=e2]\n\
         - button \"Change text\" [ref=e3]\n"
    );
    // A click that navigates says where it went; the old refs are then gone.
    let followed = f
        .text(json!({"action": "act", "kind": "click", "ref": "e2"}))
        .await;
    assert_eq!(
        followed,
        format!("clicked e2\nnow at {}/other (title \"Other\")", f.base)
    );
    let stale = failure(
        f.call(json!({"action": "act", "kind": "click", "ref": "e3"}))
            .await,
    );
    assert_eq!(stale, "ref e3 not found; take a new snapshot");
    f.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_form_is_typed_into_selected_and_submitted() {
    let f = Fixture::new().await;
    f.ok(json!({"action": "open", "url": f.url("/form")})).await;
    assert_eq!(
        f.snapshot().await,
        "Page: Form\nURL: BASE/form\n\n\
         - form [ref=e1]\n\
         \x20 - text: Name\n\
         \x20 - textbox \"Name\" [ref=e2]\n\
         \x20 - text: Color\n\
         \x20 - combobox \"Color\" [ref=e3]\n\
         \x20   - option \"Red\" [selected]\n\
         \x20   - option \"Green\"\n\
         \x20 - button \"Send\" [ref=e4]\n"
    );
    f.ok(json!({"action": "act", "kind": "type", "ref": "e2", "text": "Ada"}))
        .await;
    let selected = f
        .text(json!({"action": "act", "kind": "select", "ref": "e3", "values": ["Green"]}))
        .await;
    assert_eq!(selected, "selected Green in e3");
    let missing = failure(
        f.call(json!({"action": "act", "kind": "select", "ref": "e3", "values": ["blue"]}))
            .await,
    );
    assert_eq!(
        missing,
        r#"e3 has no option ["blue"]; its options are ["Red","Green"]"#
    );
    let snapshot = f.snapshot().await;
    assert!(
        snapshot.contains("- textbox \"Name\" [value=\"Ada\"] [ref=e2]"),
        "{snapshot}"
    );
    assert!(
        snapshot.contains("- option \"Green\" [selected]"),
        "{snapshot}"
    );
    // Enter in the field submits the form.
    let pressed = f
        .text(json!({"action": "act", "kind": "press", "ref": "e2", "key": "Enter"}))
        .await;
    assert_eq!(
        pressed,
        format!(
            "pressed Enter\nnow at {}/submit?name=Ada&color=green (title \"Thanks\")",
            f.base
        )
    );
    assert_eq!(
        f.snapshot().await,
        "Page: Thanks\nURL: BASE/submit?name=Ada&color=green\n\n- text: You typed Ada and chose green\n"
    );
    // type with submit, and fill.
    f.ok(json!({"action": "navigate", "url": f.url("/form")}))
        .await;
    f.snapshot().await;
    f.ok(json!({"action": "act", "kind": "fill", "ref": "e2", "text": "Grace"}))
        .await;
    let typed = f
        .text(json!({"action": "act", "kind": "type", "ref": "e2", "text": " H", "submit": true}))
        .await;
    assert!(
        typed.starts_with("typed 2 characters into e2 and pressed Enter\nnow at"),
        "{typed}"
    );
    assert!(
        f.snapshot()
            .await
            .contains("- text: You typed Grace H and chose red")
    );
    f.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn screenshots_and_pdfs_are_saved_in_the_workspace() {
    let f = Fixture::new().await;
    f.ok(json!({"action": "open", "url": f.url("/")})).await;
    let shot = f.ok(json!({"action": "screenshot"})).await;
    let path = saved_path(&shot);
    assert!(path.starts_with(f.workspace.path().join("browser")));
    assert_eq!(
        shot.text_content(),
        format!("screenshot saved to {}", path.display())
    );
    let bytes = tokio::fs::read(&path).await.unwrap();
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n");
    assert!(matches!(&shot.content[1], ContentBlock::Image(i) if i.mime_type == "image/png"));
    let full = f
        .ok(json!({"action": "screenshot", "fullPage": true}))
        .await;
    assert_ne!(saved_path(&full), path);
    f.snapshot().await;
    let element = f.ok(json!({"action": "screenshot", "ref": "e3"})).await;
    let bytes = tokio::fs::read(saved_path(&element)).await.unwrap();
    assert_eq!(&bytes[..4], b"\x89PNG");
    let pdf = f.ok(json!({"action": "pdf"})).await;
    let bytes = tokio::fs::read(saved_path(&pdf)).await.unwrap();
    assert_eq!(&bytes[..4], b"%PDF");
    f.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tabs_are_per_session_and_shared_across_tool_instances() {
    let f = Fixture::new().await;
    let first = f.ok(json!({"action": "open", "url": f.url("/")})).await;
    let first_id = first.details.unwrap()["targetId"]
        .as_str()
        .unwrap()
        .to_owned();
    let second = f
        .ok(json!({"action": "open", "url": f.url("/other")}))
        .await;
    let second_id = second.details.unwrap()["targetId"]
        .as_str()
        .unwrap()
        .to_owned();
    let tabs = f.text(json!({"action": "tabs"})).await;
    assert_eq!(
        tabs.replace(&f.base, "BASE"),
        format!("  {first_id} \"Fixture\" BASE/\n* {second_id} \"Other\" BASE/other")
    );
    f.ok(json!({"action": "focus", "targetId": first_id})).await;
    assert!(f.snapshot().await.starts_with("Page: Fixture\n"));
    f.ok(json!({"action": "act", "kind": "click", "ref": "e3"}))
        .await;

    // Another process: a new connection, the same state directory, the same tab and refs.
    let other = f.second_tool();
    let seen = call(&other, "s1", json!({"action": "snapshot"}))
        .await
        .unwrap();
    assert!(
        seen.text_content().contains("- text: Clicked!\n"),
        "{}",
        seen.text_content()
    );
    call(
        &other,
        "s1",
        json!({"action": "act", "kind": "click", "ref": "e2"}),
    )
    .await
    .unwrap();
    // Another session sees none of these tabs.
    let elsewhere = call(&other, "s2", json!({"action": "tabs"})).await.unwrap();
    assert_eq!(elsewhere.text_content(), "no tabs open in this session");
    let refused = failure(call(&other, "s2", json!({"action": "snapshot"})).await);
    assert_eq!(
        refused,
        "no tab is open in this session: open one with action open and a url"
    );
    let foreign = failure(
        call(
            &other,
            "s2",
            json!({"action": "snapshot", "targetId": first_id}),
        )
        .await,
    );
    assert_eq!(
        foreign,
        format!("tab {first_id} is not open in this session; call tabs to list them")
    );

    let closed = f.text(json!({"action": "close"})).await;
    assert_eq!(
        closed,
        format!("closed tab {first_id}; tab {second_id} is focused")
    );
    let tabs = f.text(json!({"action": "tabs"})).await;
    assert_eq!(
        tabs.replace(&f.base, "BASE"),
        format!("* {second_id} \"Other\" BASE/other")
    );
    f.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_navigation_guard_refuses_files_metadata_and_redirects() {
    let f = Fixture::new().await;
    let file = failure(
        f.call(json!({"action": "open", "url": "file:///etc/passwd"}))
            .await,
    );
    assert_eq!(
        file,
        "navigation refused: refused \"file:///etc/passwd\": only http and https URLs can be fetched, not file:"
    );
    let metadata = failure(
        f.call(json!({"action": "open", "url": "http://169.254.169.254/"}))
            .await,
    );
    assert!(metadata.starts_with("navigation refused: refused 169.254.169.254: it is 169.254.169.254, a cloud metadata service address"), "{metadata}");
    let redirect = failure(
        f.call(json!({"action": "open", "url": f.url("/redirect")}))
            .await,
    );
    assert!(redirect.starts_with("navigation refused: refused 169.254.169.254: it is 169.254.169.254, a cloud metadata service address"), "{redirect}");
    // No tab was left behind by the refused loads.
    assert_eq!(
        f.text(json!({"action": "tabs"})).await,
        "no tabs open in this session"
    );
    // A tab that exists is not taken to a refused page either.
    f.ok(json!({"action": "open", "url": f.url("/")})).await;
    let navigate = failure(
        f.call(json!({"action": "navigate", "url": f.url("/redirect")}))
            .await,
    );
    assert!(navigate.starts_with("navigation refused:"), "{navigate}");
    f.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn evaluate_is_off_by_default_and_console_is_kept() {
    let f = Fixture::new().await;
    f.ok(json!({"action": "open", "url": f.url("/console")}))
        .await;
    let refused = failure(
        f.call(json!({"action": "evaluate", "expression": "1 + 1"}))
            .await,
    );
    assert_eq!(
        refused,
        "evaluate is turned off in this configuration; read the page with snapshot and use act to interact with it"
    );
    let console = f.text(json!({"action": "console"})).await;
    assert_eq!(console, "[log] hello from the page 42\n[error] bad thing");
    // A new process sees what the page logged before it attached.
    let other = f.second_tool();
    let seen = call(&other, "s1", json!({"action": "console"}))
        .await
        .unwrap();
    assert_eq!(
        seen.text_content(),
        "[log] hello from the page 42\n[error] bad thing"
    );
    f.finish().await;

    let f = Fixture::with(|o| o.allow_evaluate = true).await;
    f.ok(json!({"action": "open", "url": f.url("/")})).await;
    let value = f
        .text(json!({"action": "evaluate", "expression": "({sum: 1 + 1, title: document.title})"}))
        .await;
    assert_eq!(value, r#"{"sum":2,"title":"Fixture"}"#);
    let thrown = failure(
        f.call(json!({"action": "evaluate", "expression": "nope()"}))
            .await,
    );
    assert!(
        thrown.starts_with("the script failed: ReferenceError: nope is not defined"),
        "{thrown}"
    );
    f.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_page_that_never_loads_returns_within_the_timeout() {
    let f = Fixture::with(|o| o.action_timeout = Duration::from_secs(3)).await;
    let started = std::time::Instant::now();
    let opened = f
        .text(json!({"action": "open", "url": f.url("/slow")}))
        .await;
    assert!(
        started.elapsed() < Duration::from_secs(8),
        "{:?}",
        started.elapsed()
    );
    assert!(
        opened.ends_with(
            "\nthe page did not finish loading within 3 s; snapshot shows what has loaded"
        ),
        "{opened}"
    );
    let snapshot = f.snapshot().await;
    assert_eq!(
        snapshot,
        "Page: Slow\nURL: BASE/slow\n(the page is still loading: this snapshot may be partial)\n\n- text: Partial content\n"
    );
    f.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_browser_killed_between_calls_is_started_again() {
    let f = Fixture::new().await;
    f.ok(json!({"action": "open", "url": f.url("/")})).await;
    let status = f.ok(json!({"action": "status"})).await;
    assert_eq!(status.details.unwrap()["running"], true);
    f.runtime.crash().await;
    // The dead browser's tabs are gone from the record; a new one starts.
    assert_eq!(
        f.text(json!({"action": "tabs"})).await,
        "no tabs open in this session"
    );
    f.ok(json!({"action": "open", "url": f.url("/other")}))
        .await;
    assert!(f.snapshot().await.contains("- text: The other page"));
    f.finish().await;
    let args = json!({"action": "bogus"});
    let tool = browser_tool(TestRuntime::new(), options(Path::new("/nonexistent")));
    let invalid = failure(call(&tool, "s1", args).await);
    assert!(
        invalid.starts_with("invalid arguments for browser: action: unknown variant `bogus`"),
        "{invalid}"
    );
}

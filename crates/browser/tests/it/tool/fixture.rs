//! The fixture: pages served from 127.0.0.1 (a heading, a link and a button that changes
//! the text; a form; a page that logs; one that never finishes loading; one that redirects
//! to the cloud metadata address), the profile's real runtime (`ProfileRuntime`, Chromium
//! in this process, no supervisor) in a temporary home, and the tool over both.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::extract::Query;
use axum::http::HeaderMap;
use axum::response::{Html, IntoResponse, Redirect, Response};
use axum::routing::get;
use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;
use pincer_agent::{AgentTool, ToolContext, ToolError, ToolOutput};
use pincer_browser::runtime::{ProfileRuntime, RuntimeOptions};
use pincer_browser::tool::{BrowserToolOptions, browser_tool};
use pincer_web::ssrf::NetworkPolicy;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

const CHROMIUM: &str = "/usr/bin/chromium";

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
<button onclick="alert('hi there')">Alert</button>
<script>console.log("hello from the page", 42); console.error("bad thing");</script>
</body></html>"#;

/// A picture, and a button that changes the text while the mouse is over it.
const HOVER: &str = r#"<!doctype html><title>Hover</title><img alt="A logo" src="data:,">
<p id="s">Out</p><button onmouseover="document.getElementById('s').textContent = 'Over'"
onmouseout="document.getElementById('s').textContent = 'Out'">Hover me</button>"#;

/// A button that copies itself, its ref attribute included.
const CLONE: &str = r#"<!doctype html><title>Clone</title><div><button
onclick="this.parentNode.appendChild(this.cloneNode(true))">Clone me</button></div>"#;

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

/// A link and a popup to `localhost` (another name for this server, which the policy
/// refuses unless allowed): a request that gets through is counted at `/secret`.
async fn links(headers: HeaderMap) -> Html<String> {
    let host = headers
        .get("host")
        .and_then(|h| h.to_str().ok())
        .unwrap_or_default()
        .replace("127.0.0.1", "localhost");
    let secret = format!("http://{host}/secret");
    Html(format!(
        "<!doctype html><title>Links</title><a href=\"{secret}\">Secret</a>\
         <button onclick=\"window.open('{secret}')\">Popup</button>"
    ))
}

/// Serves the fixture pages; the count is of requests that reached `/secret`.
pub async fn serve() -> (String, Arc<AtomicUsize>) {
    let hits = Arc::new(AtomicUsize::new(0));
    let counter = hits.clone();
    let app = Router::new()
        .route("/links", get(links))
        .route("/clone", get(|| async { Html(CLONE) }))
        .route("/hover", get(|| async { Html(HOVER) }))
        .route(
            "/secret",
            get(move || async move {
                counter.fetch_add(1, Ordering::SeqCst);
                Html("<!doctype html><title>Secret</title><p>Secret</p>")
            }),
        )
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
    (format!("http://{addr}"), hits)
}

/// One test's browser, pages, workspace and tool.
pub struct Fixture {
    home: tempfile::TempDir,
    pub runtime: Arc<ProfileRuntime>,
    pub workspace: tempfile::TempDir,
    pub base: String,
    /// Requests that reached `/secret`.
    pub hits: Arc<AtomicUsize>,
    tool: Arc<dyn AgentTool>,
}

/// The profile's runtime under `home`, its Chromium a child of this process.
pub fn runtime(home: &Path) -> Arc<ProfileRuntime> {
    Arc::new(
        ProfileRuntime::new(RuntimeOptions {
            executable: Some(CHROMIUM.into()),
            ..RuntimeOptions::new(home)
        })
        .unwrap(),
    )
}

impl Fixture {
    pub async fn new() -> Self {
        Self::with(|_| {}).await
    }

    pub async fn with(change: impl FnOnce(&mut BrowserToolOptions)) -> Self {
        let home = tempfile::tempdir().unwrap();
        let runtime = runtime(home.path());
        let workspace = tempfile::tempdir().unwrap();
        let (base, hits) = serve().await;
        let mut options = options(workspace.path());
        change(&mut options);
        let tool = browser_tool(runtime.clone(), options);
        Self {
            home,
            runtime,
            workspace,
            base,
            hits,
            tool,
        }
    }

    /// The tool another process would make: its own runtime over the same home (so the
    /// same browser and tabs.json), its own CDP connection.
    pub fn second_tool(&self) -> Arc<dyn AgentTool> {
        browser_tool(runtime(self.home.path()), options(self.workspace.path()))
    }

    pub fn tool(&self) -> &Arc<dyn AgentTool> {
        &self.tool
    }

    pub async fn call(&self, args: Value) -> Result<ToolOutput, ToolError> {
        call(&self.tool, "s1", args).await
    }

    pub async fn ok(&self, args: Value) -> ToolOutput {
        let shown = args.to_string();
        self.call(args)
            .await
            .unwrap_or_else(|e| panic!("{shown}: {e}"))
    }

    pub async fn text(&self, args: Value) -> String {
        self.ok(args).await.text_content()
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    /// The snapshot text, unwrapped, the server's address as BASE.
    pub async fn snapshot(&self) -> String {
        self.unwrapped(json!({"action": "snapshot"})).await
    }

    /// A call's text with its untrusted-content block unwrapped, the server's address as
    /// BASE.
    pub async fn unwrapped(&self, args: Value) -> String {
        unwrap_untrusted(&self.text(args).await).replace(&self.base, "BASE")
    }

    /// Kills the browser as a crash would, telling no one.
    pub async fn crash(&self) {
        let record = self
            .runtime
            .record()
            .await
            .unwrap()
            .expect("a running browser");
        kill(Pid::from_raw(record.pid as i32), Signal::SIGKILL).unwrap();
        for _ in 0..100 {
            if self.chromium_processes().await.is_empty() {
                return;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        panic!("the killed browser is still there");
    }

    /// The processes of this profile's Chromium (each carries its --user-data-dir=).
    pub async fn chromium_processes(&self) -> Vec<u32> {
        let needle = self.runtime.user_data_arg();
        let mut found = Vec::new();
        let mut entries = tokio::fs::read_dir("/proc").await.unwrap();
        while let Some(entry) = entries.next_entry().await.unwrap() {
            let Some(pid) = entry
                .file_name()
                .to_str()
                .and_then(|n| n.parse::<u32>().ok())
            else {
                continue;
            };
            let Ok(cmdline) = tokio::fs::read(entry.path().join("cmdline")).await else {
                continue;
            };
            let running = tokio::fs::read_to_string(entry.path().join("stat"))
                .await
                .is_ok_and(|stat| {
                    !stat
                        .rsplit(')')
                        .next()
                        .unwrap_or("")
                        .trim_start()
                        .starts_with('Z')
                });
            if running && String::from_utf8_lossy(&cmdline).contains(needle.as_str()) {
                found.push(pid);
            }
        }
        found
    }

    /// Stops the browser through the tool; then no process of it is left.
    pub async fn finish(&self) {
        self.ok(json!({"action": "stop"})).await;
        for _ in 0..100 {
            if self.chromium_processes().await.is_empty() {
                return;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        panic!(
            "chromium is still running: {:?}",
            self.chromium_processes().await
        );
    }
}

pub fn options(workspace: &Path) -> BrowserToolOptions {
    let mut options = BrowserToolOptions::new(workspace);
    options.navigation_policy = NetworkPolicy {
        allow_private_network: false,
        allow_hosts: vec!["127.0.0.1".to_owned()],
        ..NetworkPolicy::default()
    };
    options.action_timeout = Duration::from_secs(10);
    options
}

pub async fn call(
    tool: &Arc<dyn AgentTool>,
    session: &str,
    args: Value,
) -> Result<ToolOutput, ToolError> {
    let ctx = ToolContext::new("call", CancellationToken::new())
        .with_session_key(Some(Arc::from(session)));
    tool.execute(args, ctx).await
}

pub fn failure(result: Result<ToolOutput, ToolError>) -> String {
    match result {
        Ok(out) => panic!("expected a failure, got {}", out.text_content()),
        Err(e) => e.to_string(),
    }
}

pub fn saved_path(output: &ToolOutput) -> PathBuf {
    PathBuf::from(output.details.as_ref().unwrap()["path"].as_str().unwrap())
}

/// `text` with its untrusted-content block replaced by the block's content: the header
/// before the notice, then what the page said (checked to be inside the markers).
pub fn unwrap_untrusted(text: &str) -> String {
    let notice = text
        .find("The content below comes from the web page")
        .unwrap_or_else(|| panic!("no untrusted block in {text:?}"));
    let (head, block) = text.split_at(notice);
    assert!(block.contains("\n<<<UNTRUSTED_WEB_CONTENT id=\""), "{text}");
    let start = block.find("\n---\n").unwrap() + 5;
    let end = block.rfind("\n<<<END_UNTRUSTED_WEB_CONTENT id=\"").unwrap();
    format!("{head}{}\n", &block[start..end])
}

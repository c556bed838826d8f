//! The runtime's own navigation guard, against a real Chromium under the test supervisor
//! (`pincer-browser-supervisor`): a page that navigates by itself after the tool (and its
//! CDP connection) is gone is still checked, and the guard and a tool connected at the
//! same time both check a navigation without slowing it.
//!
//! The refused host is `localhost`, another name for the fixture server on 127.0.0.1
//! (which the policies allow): a request that gets through is counted at `/secret`.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::disallowed_methods,
    reason = "test helpers: panics are failures; the cleanup guard reads /proc and kills in Drop"
)]

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use axum::Router;
use axum::http::HeaderMap;
use axum::response::{Html, Redirect};
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
/// How long after loading the timer page navigates by itself.
const TIMER_MS: u64 = 2500;

/// Sends itself to `localhost` (refused unless allowed) [`TIMER_MS`] after it loaded.
async fn timer(headers: HeaderMap) -> Html<String> {
    let host = headers
        .get("host")
        .and_then(|h| h.to_str().ok())
        .unwrap_or_default()
        .replace("127.0.0.1", "localhost");
    Html(format!(
        "<!doctype html><title>Timer</title><p>Waiting</p>\
         <script>setTimeout(() => {{ location.href = 'http://{host}/secret' }}, {TIMER_MS})</script>"
    ))
}

/// The fixture server; the count is of requests that reached `/secret`.
async fn serve() -> (String, Arc<AtomicUsize>) {
    let hits = Arc::new(AtomicUsize::new(0));
    let counter = hits.clone();
    let app = Router::new()
        .route("/timer", get(timer))
        .route(
            "/secret",
            get(move || async move {
                counter.fetch_add(1, Ordering::SeqCst);
                Html("<!doctype html><title>Secret</title><p>Secret</p>")
            }),
        )
        .route(
            "/",
            get(|| async { Html("<!doctype html><title>Start</title><p>Start</p>") }),
        )
        .route(
            "/other",
            get(|| async { Html("<!doctype html><title>Other</title><p>Other</p>") }),
        )
        .route(
            "/redirect",
            get(|| async { Redirect::temporary("http://169.254.169.254/") }),
        );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (format!("http://{addr}"), hits)
}

fn policy(hosts: &[&str]) -> NetworkPolicy {
    NetworkPolicy {
        allow_private_network: false,
        allow_hosts: hosts.iter().map(|h| (*h).to_owned()).collect(),
        ..NetworkPolicy::default()
    }
}

/// A profile under a temporary home whose browser runs under the test supervisor (or in
/// this process) with the runtime's guard set to `guard`. Dropped, it kills whatever of the profile still runs.
struct Profile {
    home: tempfile::TempDir,
    workspace: tempfile::TempDir,
    guard: Option<NetworkPolicy>,
    /// Without a supervisor: the one runtime every tool shares (Chromium runs in it, as in
    /// a gateway process, and ends with it).
    direct: Option<Arc<ProfileRuntime>>,
}

impl Profile {
    fn new(guard: Option<NetworkPolicy>) -> Self {
        Self {
            home: tempfile::tempdir().unwrap(),
            workspace: tempfile::tempdir().unwrap(),
            guard,
            direct: None,
        }
    }

    /// The browser runs in this process, no supervisor.
    fn direct(guard: Option<NetworkPolicy>) -> Self {
        let mut profile = Self::new(guard);
        profile.direct = Some(profile.make_runtime(None));
        profile
    }

    /// The runtime a separate process would make (the same home, so the same browser), or
    /// the one in-process runtime.
    fn runtime(&self) -> Arc<ProfileRuntime> {
        match &self.direct {
            Some(runtime) => runtime.clone(),
            None => self.make_runtime(Some(vec![
                env!("CARGO_BIN_EXE_pincer-browser-supervisor").into(),
            ])),
        }
    }

    fn make_runtime(&self, supervisor: Option<Vec<std::ffi::OsString>>) -> Arc<ProfileRuntime> {
        Arc::new(
            ProfileRuntime::new(RuntimeOptions {
                executable: Some(CHROMIUM.into()),
                idle_timeout: Duration::from_secs(120),
                supervisor,
                navigation_guard: self.guard.clone(),
                ..RuntimeOptions::new(self.home.path())
            })
            .unwrap(),
        )
    }

    /// A fresh tool (as a new `pincer tools invoke browser` process makes), allowing
    /// 127.0.0.1 only.
    fn tool(&self) -> Arc<dyn AgentTool> {
        let mut options = BrowserToolOptions::new(self.workspace.path());
        options.navigation_policy = policy(&["127.0.0.1"]);
        options.action_timeout = Duration::from_secs(10);
        browser_tool(self.runtime(), options)
    }

    /// The live processes of the profile: its Chromium's and its supervisor's.
    fn processes(&self) -> Vec<u32> {
        processes_with(
            &self
                .home
                .path()
                .join("browser/default")
                .display()
                .to_string(),
        )
    }

    /// Stops the browser through a tool; then nothing of the profile is left.
    async fn finish(&self) {
        ok(&self.tool(), json!({"action": "stop"})).await;
        for _ in 0..100 {
            if self.processes().is_empty() {
                return;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        panic!("the profile still runs: {:?}", self.processes());
    }
}

impl Drop for Profile {
    fn drop(&mut self) {
        for pid in self.processes() {
            let _ = kill(Pid::from_raw(pid as i32), Signal::SIGKILL);
        }
    }
}

/// Live (not zombie) processes whose command line contains `needle`.
fn processes_with(needle: &str) -> Vec<u32> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<u32>().ok())
        else {
            continue;
        };
        let Ok(cmdline) = std::fs::read(entry.path().join("cmdline")) else {
            continue;
        };
        let zombie = std::fs::read_to_string(entry.path().join("stat")).is_ok_and(|stat| {
            stat.rsplit(')')
                .next()
                .unwrap_or("")
                .trim_start()
                .starts_with('Z')
        });
        if !zombie && String::from_utf8_lossy(&cmdline).contains(needle) {
            found.push(pid);
        }
    }
    found
}

async fn call(tool: &Arc<dyn AgentTool>, args: Value) -> Result<ToolOutput, ToolError> {
    let ctx =
        ToolContext::new("call", CancellationToken::new()).with_session_key(Some(Arc::from("s1")));
    tool.execute(args, ctx).await
}

async fn ok(tool: &Arc<dyn AgentTool>, args: Value) -> String {
    let shown = args.to_string();
    call(tool, args)
        .await
        .unwrap_or_else(|e| panic!("{shown}: {e}"))
        .text_content()
}

/// The snapshot's URL line and the page's own words (taken out of the untrusted-content
/// block), the server's address as BASE.
async fn snapshot(tool: &Arc<dyn AgentTool>, base: &str) -> String {
    let text = ok(tool, json!({"action": "snapshot"})).await;
    let notice = text
        .find("The content below comes from the web page")
        .unwrap_or_else(|| panic!("no untrusted block in {text:?}"));
    let (head, block) = text.split_at(notice);
    let start = block.find("\n---\n").unwrap() + 5;
    let end = block.rfind("\n<<<END_UNTRUSTED_WEB_CONTENT id=\"").unwrap();
    format!("{head}{}\n", &block[start..end]).replace(base, "BASE")
}

/// Waits up to `within` for a request at `/secret`; the count then.
async fn secret_hits(hits: &AtomicUsize, within: Duration) -> usize {
    let deadline = Instant::now() + within;
    while hits.load(Ordering::SeqCst) == 0 && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    hits.load(Ordering::SeqCst)
}

/// Opens the timer page with a one-shot tool, drops the tool and its runtime (as the
/// process would exit), waits past the timer, and returns the server's `/secret` count and
/// a new tool's snapshot of the tab.
async fn timer_navigation_with_no_tool_connected(profile: &Profile) -> (usize, String) {
    let (base, hits) = serve().await;
    let tool = profile.tool();
    let opened = ok(
        &tool,
        json!({"action": "open", "url": format!("{base}/timer")}),
    )
    .await;
    assert!(
        opened.starts_with(&format!("opened {base}/timer (title \"Timer\")")),
        "{opened}"
    );
    drop(tool);
    let count = secret_hits(&hits, Duration::from_millis(TIMER_MS + 3000)).await;
    // Time for a load that did get through to finish.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let later = profile.tool();
    let seen = snapshot(&later, &base).await;
    (
        count,
        seen.replace(&base.replace("127.0.0.1", "localhost"), "LOCALHOST"),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_page_navigating_by_itself_after_the_tool_exited_is_checked() {
    let guarded = Profile::new(Some(policy(&["127.0.0.1"])));
    let (count, seen) = timer_navigation_with_no_tool_connected(&guarded).await;
    assert_eq!(count, 0, "the refused URL reached the server");
    assert_eq!(seen, "URL: BASE/timer\n\nPage: Timer\n- text: Waiting\n");
    guarded.finish().await;

    // The same with localhost allowed by the guard (the tool's own policy still refuses
    // it, so this also shows no tool connection was left to check it): it gets through.
    let allowed = Profile::new(Some(policy(&["127.0.0.1", "localhost"])));
    let (count, seen) = timer_navigation_with_no_tool_connected(&allowed).await;
    assert_eq!(count, 1);
    assert_eq!(
        seen,
        "URL: LOCALHOST/secret\n\nPage: Secret\n- text: Secret\n"
    );
    allowed.finish().await;

    // And without the runtime's guard, nothing checks it once the tool is gone (what the
    // guard is for).
    let unguarded = Profile::new(None);
    let (count, _) = timer_navigation_with_no_tool_connected(&unguarded).await;
    assert_eq!(count, 1);
    unguarded.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_supervisor_the_runtime_keeps_the_guard() {
    let guarded = Profile::direct(Some(policy(&["127.0.0.1"])));
    let (count, seen) = timer_navigation_with_no_tool_connected(&guarded).await;
    assert_eq!(count, 0, "the refused URL reached the server");
    assert_eq!(seen, "URL: BASE/timer\n\nPage: Timer\n- text: Waiting\n");
    guarded.finish().await;

    let allowed = Profile::direct(Some(policy(&["127.0.0.1", "localhost"])));
    let (count, _) = timer_navigation_with_no_tool_connected(&allowed).await;
    assert_eq!(count, 1);
    allowed.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_guard_and_a_tool_both_check_without_slowing_navigation() {
    let profile = Profile::new(Some(policy(&["127.0.0.1"])));
    let (base, hits) = serve().await;
    let tool = profile.tool();
    ok(&tool, json!({"action": "open", "url": format!("{base}/")})).await;
    // Each interceptor continues the paused request: the load completes, at once.
    let started = Instant::now();
    let navigated = ok(
        &tool,
        json!({"action": "navigate", "url": format!("{base}/other")}),
    )
    .await;
    let took = started.elapsed();
    assert!(
        navigated.starts_with(&format!("opened {base}/other (title \"Other\")")),
        "{navigated}"
    );
    assert!(
        took < Duration::from_secs(2),
        "the navigation took {took:?}"
    );
    // A redirect to a refused address is refused, and the tool says why.
    let refused = call(
        &tool,
        json!({"action": "navigate", "url": format!("{base}/redirect")}),
    )
    .await
    .map(|o| o.text_content());
    let refused = refused.unwrap_err().to_string();
    assert!(
        refused.starts_with("navigation refused: refused 169.254.169.254"),
        "{refused}"
    );
    assert_eq!(
        snapshot(&tool, &base).await,
        "URL: BASE/other\n\nPage: Other\n- text: Other\n"
    );
    assert_eq!(hits.load(Ordering::SeqCst), 0);
    profile.finish().await;
}

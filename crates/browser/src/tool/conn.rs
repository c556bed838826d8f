//! One CDP connection and the pages it attached to: each page's flattened session, its
//! console buffer and the navigation guard.
//!
//! The guard: every page of the browser runs `Fetch.enable` with a `Document` pattern on a
//! session of this connection — the pages there are when it connects, and every page opened
//! later (`Target.setAutoAttach` pauses a new one, a popup too, until its guard is on) — so
//! each document request (the first load, every redirect hop, a link clicked, a form sent,
//! a script setting `location`, `window.open`) pauses until the network policy has checked
//! its URL; a refused one is aborted (the page stays as it was: a blocked one would show
//! an error page) and the reason is kept for the action to say. Limits: subresources
//! (images, fetch/XHR) are not checked, and a connection's guard lives as long as the
//! connection: so the runtime keeps one of its own ([`Connection::guard`], opened by the
//! supervisor, or the in-process runtime, for the browser's whole life) and a page that
//! navigates by itself after a one-shot `pincer tools invoke` exited is still checked.
//! With both connected, each has `Fetch` on every page and Chromium pauses a document
//! request for each in turn: it goes out only when both continued it.
//!
//! The console: `Runtime.enable` replays what V8 kept of the page's console (so a call from
//! a new process still sees messages logged before it attached), then live messages,
//! exceptions, `Log` entries and dialogs are kept, the last [`CONSOLE_LINES`] per page, for
//! as long as this connection lives. Dialogs are accepted at once (they would block every
//! script the tool runs) and noted in the console.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use pincer_web::ssrf::NetworkPolicy;
use serde_json::{Value, json};
use tokio::sync::mpsc;

use super::cdp::{Cdp, CdpError, CdpEvent, EventHook, lock};
use super::snapshot::truncate_chars;

/// Console lines kept per page.
pub const CONSOLE_LINES: usize = 200;
/// The longest console line kept.
const CONSOLE_LINE_CHARS: usize = 1000;
/// Paused requests and dialogs waiting for the guard task.
const GUARD_QUEUE: usize = 256;
/// How often [`Connection::closed`] looks at the socket.
const CLOSED_POLL: Duration = Duration::from_millis(200);

/// A page this connection attached to.
#[derive(Debug)]
pub struct PageState {
    pub target_id: String,
    pub session_id: String,
    console: Mutex<VecDeque<String>>,
    refusals: Refusals,
}

impl PageState {
    pub fn console(&self) -> Vec<String> {
        lock(&self.console).iter().cloned().collect()
    }

    /// The last navigation the guard refused since the last call, and why.
    pub fn take_refused(&self) -> Option<String> {
        lock(&self.refusals).remove(&self.target_id)
    }

    fn push_console(&self, line: String) {
        let mut console = lock(&self.console);
        if console.len() >= CONSOLE_LINES {
            console.pop_front();
        }
        console.push_back(truncate_chars(&line, CONSOLE_LINE_CHARS));
    }
}

/// A tab of the browser, as `Target.getTargets` lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TargetInfo {
    pub target_id: String,
    pub title: String,
    pub url: String,
}

/// Work the reader hands to the guard task (it must not block the reader).
enum GuardWork {
    Paused {
        session_id: String,
        request_id: String,
        url: String,
    },
    Dialog {
        session_id: String,
    },
    /// A page target this connection was attached to (by `setAutoAttach` or by us).
    Attached {
        session_id: String,
        waiting: bool,
    },
}

impl GuardState {
    /// Forgets what is kept about `target` (its pages, sessions and refusal).
    fn detached(&self, target: &str) {
        let page = lock(&self.by_target).remove(target);
        if let Some(page) = page {
            lock(&self.pages).remove(&page.session_id);
        }
        lock(&self.targets).retain(|_, t| t != target);
        lock(&self.refusals).remove(target);
    }
}

/// Attached pages by session.
type Sessions = Arc<Mutex<HashMap<String, Arc<PageState>>>>;
/// The last refusal per target.
type Refusals = Arc<Mutex<HashMap<String, String>>>;

/// What the reader and the guard share.
#[derive(Default)]
struct GuardState {
    pages: Sessions,
    /// The same pages by target.
    by_target: Mutex<HashMap<String, Arc<PageState>>>,
    /// Every session of this connection, by target: the auto-attached ones too.
    targets: Mutex<HashMap<String, String>>,
    refusals: Refusals,
}

/// A connection to the browser with its attached pages.
pub struct Connection {
    pub cdp: Arc<Cdp>,
    pub ws_url: String,
    guard: Arc<GuardState>,
    attaching: tokio::sync::Mutex<()>,
}

impl Connection {
    /// Connects to `ws_url`; calls wait at most `timeout`. Downloads go to
    /// `download_dir`.
    pub async fn open(
        ws_url: &str,
        timeout: Duration,
        policy: Arc<NetworkPolicy>,
        download_dir: &std::path::Path,
    ) -> Result<Arc<Self>, CdpError> {
        Self::connect(ws_url, timeout, policy, Some(download_dir)).await
    }

    /// A connection that is only the navigation guard (what the runtime keeps while the
    /// browser lives): it attaches to every page for `Fetch` alone and leaves the
    /// browser's download behaviour to the tool's connections.
    pub async fn guard(
        ws_url: &str,
        timeout: Duration,
        policy: Arc<NetworkPolicy>,
    ) -> Result<Arc<Self>, CdpError> {
        Self::connect(ws_url, timeout, policy, None).await
    }

    /// Returns once the socket has closed (the browser ended, or the connection broke).
    pub async fn closed(&self) {
        // The reader only sets a flag; a few checks a second are enough for a watcher.
        while !self.cdp.is_closed() {
            tokio::time::sleep(CLOSED_POLL).await;
        }
    }

    async fn connect(
        ws_url: &str,
        timeout: Duration,
        policy: Arc<NetworkPolicy>,
        download_dir: Option<&std::path::Path>,
    ) -> Result<Arc<Self>, CdpError> {
        let guard = Arc::new(GuardState::default());
        let (guard_tx, guard_rx) = mpsc::channel(GUARD_QUEUE);
        let hook = event_hook(guard.clone(), guard_tx);
        let cdp = Cdp::connect(ws_url, timeout, hook).await?;
        tokio::spawn(guard_task(
            Arc::downgrade(&cdp),
            guard.clone(),
            policy,
            guard_rx,
        ));
        // Every page, and every page opened from now on (held until its guard is on).
        let pages_only = json!([{"type": "page", "exclude": false}, {"exclude": true}]);
        cdp.call(
            "Target.setAutoAttach",
            json!({"autoAttach": true, "waitForDebuggerOnStart": true, "flatten": true,
                "filter": pages_only}),
            None,
        )
        .await?;
        // Downloads land in the workspace, not in a home directory nobody looks at.
        if let Some(download_dir) = download_dir {
            let _ = tokio::fs::create_dir_all(download_dir).await;
            let path = download_dir.display().to_string();
            let downloads = cdp
                .call(
                    "Browser.setDownloadBehavior",
                    json!({"behavior": "allow", "downloadPath": path}),
                    None,
                )
                .await;
            if let Err(e) = downloads {
                tracing::debug!("browser: downloads stay with the browser's default: {e}");
            }
        }
        Ok(Arc::new(Self {
            cdp,
            ws_url: ws_url.to_owned(),
            guard,
            attaching: tokio::sync::Mutex::new(()),
        }))
    }

    /// The browser's page targets.
    pub async fn page_targets(&self) -> Result<Vec<TargetInfo>, CdpError> {
        let result = self.cdp.call("Target.getTargets", json!({}), None).await?;
        Ok(target_infos(&result))
    }

    /// Attaches to `target_id` (once per connection) and turns on what the tool needs.
    pub async fn attach(&self, target_id: &str) -> Result<Arc<PageState>, CdpError> {
        if let Some(page) = lock(&self.guard.by_target).get(target_id) {
            return Ok(page.clone());
        }
        let _one_at_a_time = self.attaching.lock().await;
        if let Some(page) = lock(&self.guard.by_target).get(target_id) {
            return Ok(page.clone());
        }
        let attached = self
            .cdp
            .call(
                "Target.attachToTarget",
                json!({"targetId": target_id, "flatten": true}),
                None,
            )
            .await?;
        let session_id = attached
            .get("sessionId")
            .and_then(Value::as_str)
            .ok_or_else(|| CdpError::Protocol {
                method: "Target.attachToTarget".to_owned(),
                message: "no sessionId in the answer".to_owned(),
            })?
            .to_owned();
        let page = Arc::new(PageState {
            target_id: target_id.to_owned(),
            session_id: session_id.clone(),
            console: Mutex::default(),
            refusals: self.guard.refusals.clone(),
        });
        // Registered before the domains are enabled, so the replayed console lands in it.
        lock(&self.guard.pages).insert(session_id.clone(), page.clone());
        lock(&self.guard.targets).insert(session_id.clone(), target_id.to_owned());
        let session = Some(session_id.as_str());
        self.cdp
            .call("Fetch.enable", guard_patterns(), session)
            .await?;
        for domain in ["Page.enable", "Runtime.enable", "Log.enable"] {
            self.cdp.call(domain, json!({}), session).await?;
        }
        lock(&self.guard.by_target).insert(target_id.to_owned(), page.clone());
        Ok(page)
    }

    /// Forgets a page whose tab was closed.
    pub fn forget(&self, target_id: &str) {
        self.guard.detached(target_id);
    }
}

/// `Fetch.enable`'s parameters for the guard: every document request, before it is sent.
fn guard_patterns() -> Value {
    json!({"patterns": [
        {"urlPattern": "*", "resourceType": "Document", "requestStage": "Request"}
    ]})
}

/// The page targets in a `Target.getTargets` answer (tolerant of anything else).
pub fn target_infos(result: &Value) -> Vec<TargetInfo> {
    let text = |info: &Value, key: &str| {
        info.get(key)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned()
    };
    result
        .get("targetInfos")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(|info| info.get("type").and_then(Value::as_str) == Some("page"))
        .map(|info| TargetInfo {
            target_id: text(info, "targetId"),
            title: text(info, "title"),
            url: text(info, "url"),
        })
        .filter(|t| !t.target_id.is_empty())
        .collect()
}

fn event_hook(state: Arc<GuardState>, guard: mpsc::Sender<GuardWork>) -> EventHook {
    Arc::new(move |event: &CdpEvent| {
        let params = &event.params;
        let Some(session_id) = event.session_id.as_deref() else {
            // The browser's own events: sessions coming and going.
            let session_id = str_at(params, &["sessionId"]).to_owned();
            match event.method.as_str() {
                "Target.attachedToTarget" if !session_id.is_empty() => {
                    let target = str_at(params, &["targetInfo", "targetId"]).to_owned();
                    lock(&state.targets).insert(session_id.clone(), target);
                    let waiting = params.get("waitingForDebugger") == Some(&Value::Bool(true));
                    let work = GuardWork::Attached {
                        session_id,
                        waiting,
                    };
                    if guard.try_send(work).is_err() {
                        tracing::warn!("browser: the navigation guard's queue is full");
                    }
                }
                "Target.detachedFromTarget" => {
                    // A tab closed (by us, the page or another process): forget it.
                    let target = lock(&state.targets).remove(&session_id);
                    if let Some(target) = target {
                        state.detached(&target);
                    }
                }
                _ => {}
            }
            return;
        };
        let page = lock(&state.pages).get(session_id).cloned();
        if let Some(page) = &page
            && let Some(line) = console_line(event)
        {
            page.push_console(line);
        }
        let work = match event.method.as_str() {
            "Fetch.requestPaused" => GuardWork::Paused {
                session_id: session_id.to_owned(),
                request_id: str_at(params, &["requestId"]).to_owned(),
                url: str_at(params, &["request", "url"]).to_owned(),
            },
            "Page.javascriptDialogOpening" if page.is_some() => GuardWork::Dialog {
                session_id: session_id.to_owned(),
            },
            _ => return,
        };
        if guard.try_send(work).is_err() {
            tracing::warn!("browser: the navigation guard's queue is full");
        }
    })
}

fn str_at<'a>(value: &'a Value, path: &[&str]) -> &'a str {
    let mut at = value;
    for key in path {
        at = match at.get(key) {
            Some(v) => v,
            None => return "",
        };
    }
    at.as_str().unwrap_or_default()
}

/// The console line an event makes, if it is a console message, an exception, a log entry
/// or a dialog.
pub fn console_line(event: &CdpEvent) -> Option<String> {
    let params = &event.params;
    match event.method.as_str() {
        "Runtime.consoleAPICalled" => {
            let kind = params.get("type").and_then(Value::as_str).unwrap_or("log");
            let args: Vec<String> = params
                .get("args")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .take(20)
                .map(remote_object_text)
                .collect();
            Some(format!("[{kind}] {}", args.join(" ")))
        }
        "Runtime.exceptionThrown" => {
            let details = params.get("exceptionDetails")?;
            let text = details
                .get("exception")
                .and_then(|e| e.get("description"))
                .and_then(Value::as_str)
                .or_else(|| details.get("text").and_then(Value::as_str))
                .unwrap_or("exception");
            Some(format!("[exception] {text}"))
        }
        "Log.entryAdded" => {
            let entry = params.get("entry")?;
            let level = entry.get("level").and_then(Value::as_str).unwrap_or("info");
            let text = entry.get("text").and_then(Value::as_str).unwrap_or("");
            let url = entry.get("url").and_then(Value::as_str).unwrap_or("");
            Some(if url.is_empty() {
                format!("[{level}] {text}")
            } else {
                format!("[{level}] {text} ({url})")
            })
        }
        "Page.javascriptDialogOpening" => Some(format!(
            "[dialog] {} {:?} (accepted)",
            str_at(params, &["type"]),
            str_at(params, &["message"])
        )),
        _ => None,
    }
}

fn remote_object_text(object: &Value) -> String {
    match object.get("value") {
        Some(Value::String(s)) => s.clone(),
        Some(value) => value.to_string(),
        None => object
            .get("description")
            .or_else(|| object.get("type"))
            .and_then(Value::as_str)
            .unwrap_or("?")
            .to_owned(),
    }
}

/// Answers paused document requests (checked by the policy) and dialogs. Holds the
/// connection weakly: it ends with it.
async fn guard_task(
    cdp: Weak<Cdp>,
    state: Arc<GuardState>,
    policy: Arc<NetworkPolicy>,
    mut work: mpsc::Receiver<GuardWork>,
) {
    while let Some(item) = work.recv().await {
        let Some(cdp) = cdp.upgrade() else { return };
        let state = state.clone();
        let policy = policy.clone();
        // Each request on its own: a slow DNS answer does not hold up the others.
        tokio::spawn(async move {
            match item {
                GuardWork::Paused {
                    session_id,
                    request_id,
                    url,
                } => {
                    let session = Some(session_id.as_str());
                    match policy.check_navigation(&url).await {
                        Ok(_) => {
                            let params = json!({"requestId": request_id});
                            let _ = cdp.call("Fetch.continueRequest", params, session).await;
                        }
                        Err(refusal) => {
                            let target = lock(&state.targets).get(&session_id).cloned();
                            if let Some(target) = target {
                                lock(&state.refusals).insert(target, refusal.to_string());
                            }
                            let params = json!({"requestId": request_id, "errorReason": "Aborted"});
                            let _ = cdp.call("Fetch.failRequest", params, session).await;
                        }
                    }
                }
                GuardWork::Dialog { session_id } => {
                    let params = json!({"accept": true});
                    let _ = cdp
                        .call("Page.handleJavaScriptDialog", params, Some(&session_id))
                        .await;
                }
                GuardWork::Attached {
                    session_id,
                    waiting,
                } => {
                    let session = Some(session_id.as_str());
                    if let Err(e) = cdp.call("Fetch.enable", guard_patterns(), session).await {
                        tracing::debug!("browser: no navigation guard on a new page: {e}");
                    }
                    if waiting {
                        let _ = cdp
                            .call("Runtime.runIfWaitingForDebugger", json!({}), session)
                            .await;
                    }
                }
            }
        });
    }
}

//! The `browser` tool (OpenClaw's shape: one tool, an `action` field): tabs per session,
//! snapshots whose element refs live in the page, real input events, screenshots and PDFs,
//! driving the profile's Chromium through a small CDP client ([`cdp`]).
//!
//! Each call: `runtime.touch()`, then (except `status`/`stop`) `ensure_running` and the
//! connection to it — kept between calls, replaced when the browser changed or the socket
//! closed (a crash, a stop). The session's tabs come from `tabs.json` ([`tabs`]), pruned of
//! targets the browser no longer has. Every CDP call waits at most `action_timeout`; an
//! aborted run (`ctx.cancel`) ends the call at once.

pub mod args;
pub mod capture;
pub mod cdp;
pub mod conn;
pub mod keys;
pub mod page;
pub mod snapshot;
pub mod tabs;

use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use pincer_agent::{AgentTool, ToolContext, ToolError, ToolOutput, TypedTool};
use pincer_web::fetch::{neutralize, wrap_untrusted};
use pincer_web::ssrf::NetworkPolicy;
use serde_json::{Value, json};

use crate::BrowserRuntime;
use args::{Action, BrowserArgs};
use conn::{Connection, PageState};
use page::{ActRequest, Loaded, cdp_failed};
use snapshot::Snapshot;
use tabs::TabStore;

/// How the tool behaves; the binary fills it from the config.
#[derive(Debug, Clone)]
pub struct BrowserToolOptions {
    /// Whether `evaluate` (arbitrary JavaScript from the model) runs. Default false.
    pub allow_evaluate: bool,
    /// The most one action (and each CDP call) may take. Default 30 s.
    pub action_timeout: Duration,
    /// What pages may be loaded (every document request is checked, redirects included).
    pub navigation_policy: NetworkPolicy,
    /// Screenshots and PDFs go to `<workspace>/browser/`, downloads to
    /// `<workspace>/downloads/`.
    pub workspace: PathBuf,
    /// The default (and the most) characters of a snapshot. Default 20 000.
    pub max_snapshot_chars: usize,
}

impl BrowserToolOptions {
    /// The defaults, saving into `workspace`.
    pub fn new(workspace: impl Into<PathBuf>) -> Self {
        Self {
            allow_evaluate: false,
            action_timeout: Duration::from_secs(30),
            navigation_policy: NetworkPolicy::default(),
            workspace: workspace.into(),
            max_snapshot_chars: DEFAULT_SNAPSHOT_CHARS,
        }
    }
}

/// The snapshot size when the options and the call name none.
pub const DEFAULT_SNAPSHOT_CHARS: usize = 20_000;

/// The session key of calls made outside a session.
const DEFAULT_SESSION: &str = "default";

/// The `browser` tool over `runtime`.
pub fn browser_tool(
    runtime: Arc<dyn BrowserRuntime>,
    options: BrowserToolOptions,
) -> Arc<dyn AgentTool> {
    pincer_agent::typed(BrowserTool::new(runtime, options))
}

/// The tool itself (use [`browser_tool`]).
pub struct BrowserTool {
    runtime: Arc<dyn BrowserRuntime>,
    options: BrowserToolOptions,
    policy: Arc<NetworkPolicy>,
    tabs: TabStore,
    connection: tokio::sync::Mutex<Option<Arc<Connection>>>,
}

impl BrowserTool {
    pub fn new(runtime: Arc<dyn BrowserRuntime>, options: BrowserToolOptions) -> Self {
        Self {
            tabs: TabStore::new(runtime.state_dir()),
            policy: Arc::new(options.navigation_policy.clone()),
            runtime,
            options,
            connection: tokio::sync::Mutex::new(None),
        }
    }
}

const DESCRIPTION: &str = "Control a headless web browser (Chromium). Actions: \
open {url} opens a tab and focuses it; snapshot returns the page as an outline of roles, \
names and element refs like [ref=e12]; act {ref, kind: click|type|press|hover|select|fill, \
text?, key?, values?, submit?} uses a ref from the latest snapshot (snapshot again after the \
page changes); navigate {url}; tabs lists this session's tabs, focus/close {targetId}; \
screenshot {fullPage?, ref?} and pdf save files in the workspace; console shows the tab's \
recent console messages and errors; status/start/stop manage the browser. targetId \
defaults to the focused tab. Private and local addresses are refused unless allowed.";

impl TypedTool for BrowserTool {
    type Args = BrowserArgs;

    const NAME: &'static str = "browser";
    const LABEL: &'static str = "Browser";
    const DESCRIPTION: &'static str = DESCRIPTION;

    async fn run(&self, args: BrowserArgs, ctx: ToolContext) -> Result<ToolOutput, ToolError> {
        self.runtime.touch();
        let session = ctx.session_key().unwrap_or(DEFAULT_SESSION).to_owned();
        let result = tokio::select! {
            result = self.dispatch(&args, &session) => result,
            () = ctx.cancel.cancelled() => Err(ToolError::Aborted),
        };
        self.runtime.touch();
        result
    }
}

impl BrowserTool {
    async fn dispatch(&self, args: &BrowserArgs, session: &str) -> Result<ToolOutput, ToolError> {
        match args.action {
            Action::Status => self.status().await,
            Action::Stop => self.stop().await,
            Action::Start => {
                let conn = self.connection().await?;
                Ok(
                    ToolOutput::text(format!("the browser is running ({})", conn.ws_url))
                        .with_details(json!({"ok": true, "running": true})),
                )
            }
            Action::Open => self.open(args, session).await,
            Action::Tabs => self.list_tabs(session).await,
            Action::Focus => self.focus(args, session).await,
            Action::Close => self.close(args, session).await,
            Action::Navigate => {
                let url = args.required_url().map_err(ToolError::failed)?;
                let (conn, page) = self.page(args, session).await?;
                self.load(&conn, &page, url).await
            }
            Action::Snapshot => {
                let (conn, page) = self.page(args, session).await?;
                self.snapshot(&conn, &page, args.max_chars).await
            }
            Action::Act => self.act(args, session).await,
            Action::Screenshot => {
                let (conn, page) = self.page(args, session).await?;
                let req = capture::ScreenshotRequest {
                    full_page: args.full_page.unwrap_or(false),
                    element: args.element.clone(),
                };
                capture::screenshot(&conn.cdp, &page, &self.files_dir(), &req).await
            }
            Action::Pdf => {
                let (conn, page) = self.page(args, session).await?;
                capture::pdf(&conn.cdp, &page, &self.files_dir()).await
            }
            Action::Console => {
                let (_, page) = self.page(args, session).await?;
                let lines = page.console();
                let text = if lines.is_empty() {
                    "no console messages (kept while the page is attached; messages from \
                     before are shown as far as the browser kept them)"
                        .to_owned()
                } else {
                    let joined = neutralize(&lines.join("\n"));
                    wrap_untrusted("browser console", &joined)
                };
                Ok(ToolOutput::text(text).with_details(
                    json!({"ok": true, "targetId": page.target_id, "messages": lines}),
                ))
            }
            Action::Evaluate => self.evaluate(args, session).await,
        }
    }

    fn files_dir(&self) -> PathBuf {
        self.options.workspace.join("browser")
    }

    /// The connection to the running browser (started when none runs).
    async fn connection(&self) -> Result<Arc<Connection>, ToolError> {
        let endpoint = self
            .runtime
            .ensure_running()
            .await
            .map_err(|e| ToolError::failed(e.to_string()))?;
        let mut current = self.connection.lock().await;
        if let Some(conn) = current.as_ref()
            && conn.ws_url == endpoint.ws_url
            && !conn.cdp.is_closed()
        {
            return Ok(conn.clone());
        }
        let conn = Connection::open(
            &endpoint.ws_url,
            self.options.action_timeout,
            self.policy.clone(),
            &self.options.workspace.join("downloads"),
        )
        .await
        .map_err(|e| ToolError::failed(e.to_string()))?;
        *current = Some(conn.clone());
        Ok(conn)
    }

    /// This session's tabs that still exist (the record pruned), with the browser's view
    /// of each.
    async fn session_tabs(
        &self,
        conn: &Connection,
        session: &str,
    ) -> Result<(Vec<conn::TargetInfo>, Option<String>), ToolError> {
        let live = conn
            .page_targets()
            .await
            .map_err(|e| cdp_failed("cannot list the tabs", &e))?;
        let ids: HashSet<String> = live.iter().map(|t| t.target_id.clone()).collect();
        let record = self
            .tabs
            .session(session, move |tabs| {
                tabs.retain(|t| ids.contains(t));
                tabs.clone()
            })
            .await
            .map_err(|e| ToolError::failed(e.to_string()))?;
        let ours = record
            .targets
            .iter()
            .filter_map(|id| live.iter().find(|t| &t.target_id == id).cloned())
            .collect();
        Ok((ours, record.focused))
    }

    /// The target `requested` names among this session's tabs (its id or a unique
    /// prefix), else the focused one.
    async fn resolve_target(
        &self,
        conn: &Connection,
        session: &str,
        requested: Option<&str>,
    ) -> Result<String, ToolError> {
        let (tabs, focused) = self.session_tabs(conn, session).await?;
        match requested.map(str::trim).filter(|r| !r.is_empty()) {
            Some(wanted) => {
                let matches: Vec<&conn::TargetInfo> = tabs
                    .iter()
                    .filter(|t| t.target_id == wanted || t.target_id.starts_with(wanted))
                    .collect();
                match matches.as_slice() {
                    [one] => Ok(one.target_id.clone()),
                    [] => Err(ToolError::failed(format!(
                        "tab {wanted} is not open in this session; call tabs to list them"
                    ))),
                    _ => Err(ToolError::failed(format!(
                        "{wanted} matches several tabs; give the whole targetId"
                    ))),
                }
            }
            None => focused.ok_or_else(|| {
                ToolError::failed(
                    "no tab is open in this session: open one with action open and a url",
                )
            }),
        }
    }

    /// The connection and the attached page of the call's tab.
    async fn page(
        &self,
        args: &BrowserArgs,
        session: &str,
    ) -> Result<(Arc<Connection>, Arc<PageState>), ToolError> {
        let conn = self.connection().await?;
        let target = self
            .resolve_target(&conn, session, args.target_id.as_deref())
            .await?;
        let page = conn
            .attach(&target)
            .await
            .map_err(|e| cdp_failed("cannot attach to the tab", &e))?;
        Ok((conn, page))
    }

    async fn status(&self) -> Result<ToolOutput, ToolError> {
        let status = self
            .runtime
            .status()
            .await
            .map_err(|e| ToolError::failed(e.to_string()))?;
        let text = if status.running {
            format!(
                "the browser is running (profile {}, pid {})",
                status.profile,
                status.pid.map_or_else(|| "?".to_owned(), |p| p.to_string())
            )
        } else {
            format!(
                "the browser is not running (profile {}); any action starts it",
                status.profile
            )
        };
        let details = serde_json::to_value(&status).unwrap_or(Value::Null);
        Ok(ToolOutput::text(text).with_details(details))
    }

    async fn stop(&self) -> Result<ToolOutput, ToolError> {
        *self.connection.lock().await = None;
        let stopped = self
            .runtime
            .stop()
            .await
            .map_err(|e| ToolError::failed(e.to_string()))?;
        self.tabs
            .update(|file| file.sessions.clear())
            .await
            .map_err(|e| ToolError::failed(e.to_string()))?;
        let text = if stopped {
            "the browser is stopped; its tabs are closed"
        } else {
            "the browser was not running"
        };
        Ok(ToolOutput::text(text).with_details(json!({"ok": true, "stopped": stopped})))
    }

    async fn open(&self, args: &BrowserArgs, session: &str) -> Result<ToolOutput, ToolError> {
        let url = args.required_url().map_err(ToolError::failed)?;
        self.check_url(url).await?;
        let conn = self.connection().await?;
        let created = conn
            .cdp
            .call("Target.createTarget", json!({"url": "about:blank"}), None)
            .await
            .map_err(|e| cdp_failed("cannot open a tab", &e))?;
        let target = created
            .get("targetId")
            .and_then(Value::as_str)
            .ok_or_else(|| ToolError::failed("the browser opened no tab"))?
            .to_owned();
        let recorded = target.clone();
        self.tabs
            .session(session, move |tabs| tabs.add_focused(&recorded))
            .await
            .map_err(|e| ToolError::failed(e.to_string()))?;
        let page = conn
            .attach(&target)
            .await
            .map_err(|e| cdp_failed("cannot attach to the new tab", &e))?;
        let loaded = self.load(&conn, &page, url).await;
        if loaded.is_err() {
            // A refused or failed first load leaves no empty tab behind.
            let _ = self.close_target(&conn, session, &target).await;
        }
        loaded
    }

    async fn check_url(&self, url: &str) -> Result<(), ToolError> {
        self.policy
            .check_navigation(url)
            .await
            .map(drop)
            .map_err(|e| ToolError::failed(format!("navigation refused: {e}")))
    }

    /// Loads `url` in `page` (checked first), and says where it ended up.
    async fn load(
        &self,
        conn: &Connection,
        page: &PageState,
        url: &str,
    ) -> Result<ToolOutput, ToolError> {
        self.check_url(url).await?;
        let loaded = page::navigate(&conn.cdp, page, url, self.options.action_timeout).await?;
        let (now_url, title) = page::location(&conn.cdp, page).await.unwrap_or_default();
        let note = match loaded {
            Loaded::Yes => String::new(),
            Loaded::TimedOut => format!(
                "\nthe page did not finish loading within {} s; snapshot shows what has loaded",
                self.options.action_timeout.as_secs()
            ),
        };
        Ok(ToolOutput::text(format!(
            "opened {now_url} (title {title:?}) in tab {}{note}",
            page.target_id
        ))
        .with_details(
            json!({"ok": true, "targetId": page.target_id, "url": now_url,
            "title": title, "loaded": loaded == Loaded::Yes}),
        ))
    }

    async fn list_tabs(&self, session: &str) -> Result<ToolOutput, ToolError> {
        let none = || {
            ToolOutput::text("no tabs open in this session")
                .with_details(json!({"ok": true, "tabs": []}))
        };
        // Listing tabs does not start a browser: none running, none open.
        if matches!(self.runtime.running().await, Ok(None)) {
            return Ok(none());
        }
        let conn = self.connection().await?;
        let (tabs, focused) = self.session_tabs(&conn, session).await?;
        if tabs.is_empty() {
            return Ok(none());
        }
        let mut lines = Vec::new();
        let mut details = Vec::new();
        for tab in &tabs {
            let is_focused = focused.as_deref() == Some(tab.target_id.as_str());
            lines.push(format!(
                "{}{} {:?} {}",
                if is_focused { "* " } else { "  " },
                tab.target_id,
                tab.title,
                tab.url
            ));
            details.push(json!({"targetId": tab.target_id, "title": tab.title,
                "url": tab.url, "focused": is_focused}));
        }
        Ok(ToolOutput::text(lines.join("\n")).with_details(json!({"ok": true, "tabs": details})))
    }

    async fn focus(&self, args: &BrowserArgs, session: &str) -> Result<ToolOutput, ToolError> {
        if args.target_id.is_none() {
            return Err(ToolError::failed(
                "give targetId: the tab to focus (see tabs)",
            ));
        }
        let conn = self.connection().await?;
        let target = self
            .resolve_target(&conn, session, args.target_id.as_deref())
            .await?;
        let _ = conn
            .cdp
            .call("Target.activateTarget", json!({"targetId": target}), None)
            .await;
        let recorded = target.clone();
        self.tabs
            .session(session, move |tabs| tabs.add_focused(&recorded))
            .await
            .map_err(|e| ToolError::failed(e.to_string()))?;
        Ok(ToolOutput::text(format!("focused tab {target}"))
            .with_details(json!({"ok": true, "targetId": target})))
    }

    async fn close(&self, args: &BrowserArgs, session: &str) -> Result<ToolOutput, ToolError> {
        let conn = self.connection().await?;
        let target = self
            .resolve_target(&conn, session, args.target_id.as_deref())
            .await?;
        let focused = self.close_target(&conn, session, &target).await?;
        let text = match &focused {
            Some(next) => format!("closed tab {target}; tab {next} is focused"),
            None => format!("closed tab {target}; no tabs are left in this session"),
        };
        Ok(ToolOutput::text(text)
            .with_details(json!({"ok": true, "targetId": target, "focused": focused})))
    }

    /// Closes `target` and forgets it; the session's focused tab afterwards.
    async fn close_target(
        &self,
        conn: &Connection,
        session: &str,
        target: &str,
    ) -> Result<Option<String>, ToolError> {
        conn.cdp
            .call("Target.closeTarget", json!({"targetId": target}), None)
            .await
            .map_err(|e| cdp_failed("cannot close the tab", &e))?;
        conn.forget(target);
        let gone = target.to_owned();
        self.tabs
            .session(session, move |tabs| {
                tabs.remove(&gone);
                tabs.focused.clone()
            })
            .await
            .map_err(|e| ToolError::failed(e.to_string()))
    }

    async fn snapshot(
        &self,
        conn: &Connection,
        page: &PageState,
        max_chars: Option<usize>,
    ) -> Result<ToolOutput, ToolError> {
        let max = max_chars
            .unwrap_or(self.options.max_snapshot_chars)
            .clamp(50, snapshot::SNAPSHOT_CHARS_CAP);
        let value = page::eval(&conn.cdp, page, &snapshot::snapshot_expression(max)).await?;
        let snapshot = Snapshot::from_value(&value, max);
        Ok(ToolOutput::text(snapshot.render()).with_details(snapshot.details(&page.target_id)))
    }

    async fn act(&self, args: &BrowserArgs, session: &str) -> Result<ToolOutput, ToolError> {
        let kind = args.kind.ok_or_else(|| {
            ToolError::failed("give kind: click, type, press, hover, select or fill")
        })?;
        let (conn, page) = self.page(args, session).await?;
        let req = ActRequest {
            kind,
            element: args.element.clone(),
            text: args.text.clone(),
            key: args.key.clone(),
            values: args.values.clone().unwrap_or_default(),
            submit: args.submit.unwrap_or(false),
        };
        let before = page::location(&conn.cdp, &page).await?;
        page.take_refused();
        let mut events = conn.cdp.subscribe();
        let mut text = page::act(&conn.cdp, &page, &req).await?;
        let navigated = page::settle(&mut events, &page, self.options.action_timeout).await;
        if let Some(reason) = page.take_refused() {
            text.push_str(&format!("\na navigation was refused: {reason}"));
        }
        if navigated == Some(Loaded::TimedOut) {
            text.push_str("\nthe new page did not finish loading in time");
        }
        let after = page::location(&conn.cdp, &page).await.unwrap_or_default();
        if after != before {
            text.push_str(&format!("\nnow at {} (title {:?})", after.0, after.1));
        }
        Ok(ToolOutput::text(text).with_details(
            json!({"ok": true, "targetId": page.target_id, "url": after.0, "title": after.1}),
        ))
    }

    async fn evaluate(&self, args: &BrowserArgs, session: &str) -> Result<ToolOutput, ToolError> {
        if !self.options.allow_evaluate {
            return Err(ToolError::failed(
                "evaluate is turned off in this configuration; read the page with snapshot \
                 and use act to interact with it",
            ));
        }
        let expression = args
            .expression
            .as_deref()
            .ok_or_else(|| ToolError::failed("give expression: the JavaScript to run"))?;
        let (conn, page) = self.page(args, session).await?;
        let value =
            page::eval_user(&conn.cdp, &page, expression, self.options.action_timeout).await?;
        let text = snapshot::truncate_chars(
            &serde_json::to_string(&value).unwrap_or_default(),
            self.options.max_snapshot_chars,
        );
        let text = wrap_untrusted("browser evaluate", &neutralize(&text));
        Ok(ToolOutput::text(text).with_details(json!({"ok": true, "targetId": page.target_id})))
    }
}

//! One configured server: its connection (if any), what it offers, and its state as
//! `pincer mcp status` and the gateway's `status` show it. Starting is serialised (one
//! start at a time per server); a server that fails to start is retried with a growing
//! delay, one that exited is started again at the next use.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use pincer_config::McpServerConfig;
use serde::Serialize;
use serde_json::{Map, Value};

use super::McpError;
use super::connect::{self, Connection, ListedTool, StderrTail};
use super::names::tool_allowed;

/// The longest wait between two start attempts.
const MAX_BACKOFF: Duration = Duration::from_secs(60);

/// Where a server is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ServerState {
    /// Not started yet (servers start when an agent first needs them).
    Idle,
    Starting,
    Ready,
    Failed,
    /// Stopped after being idle, or at shutdown; started again when next needed.
    Stopped,
}

/// A server as status reports show it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct McpServerStatus {
    pub name: String,
    /// `stdio` or `http`.
    pub transport: &'static str,
    pub state: ServerState,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Tools offered to agents (after `allowTools`/`denyTools`).
    pub tools: usize,
    pub resources: bool,
    pub prompts: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pid: Option<u32>,
}

/// What is known of a server without waiting for it.
#[derive(Debug, Clone)]
struct Snapshot {
    state: ServerState,
    error: Option<String>,
    tools: Arc<Vec<ListedTool>>,
    has_resources: bool,
    prompts: Vec<String>,
    pid: Option<u32>,
}

struct Inner {
    conn: Option<Arc<Connection>>,
    failures: u32,
    retry_at: Option<Instant>,
    shut_down: bool,
}

pub struct Server {
    pub name: String,
    pub config: McpServerConfig,
    /// Paths a sandboxed stdio server must not see (`$PINCER_HOME`: keys and transcripts).
    hide: Vec<std::path::PathBuf>,
    /// Where OAuth credentials are kept (`$PINCER_HOME/mcp-auth`); `None`: no OAuth.
    pub(super) auth_dir: Option<std::path::PathBuf>,
    inner: tokio::sync::Mutex<Inner>,
    snapshot: Mutex<Snapshot>,
    stderr_tail: StderrTail,
    last_used: Mutex<Instant>,
}

impl Server {
    pub fn new(name: String, config: McpServerConfig, hide: Vec<std::path::PathBuf>) -> Self {
        Self {
            name,
            config,
            hide,
            auth_dir: None,
            inner: tokio::sync::Mutex::new(Inner {
                conn: None,
                failures: 0,
                retry_at: None,
                shut_down: false,
            }),
            snapshot: Mutex::new(Snapshot {
                state: ServerState::Idle,
                error: None,
                tools: Arc::new(Vec::new()),
                has_resources: false,
                prompts: Vec::new(),
                pid: None,
            }),
            stderr_tail: StderrTail::default(),
            last_used: Mutex::new(Instant::now()),
        }
    }

    fn snap(&self) -> std::sync::MutexGuard<'_, Snapshot> {
        self.snapshot.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub fn status(&self) -> McpServerStatus {
        let snap = self.snap();
        McpServerStatus {
            name: self.name.clone(),
            transport: if self.config.url.is_some() {
                "http"
            } else {
                "stdio"
            },
            state: snap.state,
            error: snap.error.clone(),
            tools: snap.tools.len(),
            resources: snap.has_resources,
            prompts: snap.prompts.clone(),
            pid: snap.pid,
        }
    }

    /// The tools as last listed (empty unless the server is ready).
    pub fn tools_now(&self) -> Option<Arc<Vec<ListedTool>>> {
        let snap = self.snap();
        (snap.state == ServerState::Ready).then(|| Arc::clone(&snap.tools))
    }

    pub fn has_resources(&self) -> bool {
        let snap = self.snap();
        snap.state == ServerState::Ready && snap.has_resources
    }

    fn touch(&self) {
        *self.last_used.lock().unwrap_or_else(|e| e.into_inner()) = Instant::now();
    }

    /// A live connection: the current one, or a new one started now.
    pub async fn ensure(&self) -> Result<Arc<Connection>, McpError> {
        if !self.config.is_enabled() {
            return Err(McpError::Disabled(self.name.clone()));
        }
        self.touch();
        let mut inner = self.inner.lock().await;
        if inner.shut_down {
            return Err(McpError::ShutDown);
        }
        if let Some(conn) = &inner.conn {
            if !conn.is_dead() {
                let conn = Arc::clone(conn);
                if conn
                    .handler
                    .tools_stale
                    .swap(false, std::sync::atomic::Ordering::SeqCst)
                {
                    self.refresh_tools(&conn).await;
                }
                return Ok(conn);
            }
            // It exited (or the connection broke): say so, and start it again below.
            inner.conn = None;
            let why = self.exit_reason();
            tracing::warn!(server = %self.name, "MCP server {why}; starting it again");
        }
        if let (Some(at), Some(error)) = (inner.retry_at, self.snap().error.clone())
            && Instant::now() < at
        {
            return Err(McpError::Backoff {
                error,
                retry_in_s: at.saturating_duration_since(Instant::now()).as_secs() + 1,
            });
        }
        self.snap().state = ServerState::Starting;
        match self.start().await {
            Ok(conn) => {
                inner.conn = Some(Arc::clone(&conn));
                inner.failures = 0;
                inner.retry_at = None;
                Ok(conn)
            }
            Err(e) => {
                inner.failures += 1;
                let delay = Duration::from_secs(1u64 << inner.failures.min(6).saturating_sub(1))
                    .min(MAX_BACKOFF);
                inner.retry_at = Some(Instant::now() + delay);
                tracing::warn!(server = %self.name, error = %e, "MCP server failed to start");
                let mut snap = self.snap();
                snap.state = ServerState::Failed;
                snap.error = Some(e.to_string());
                snap.pid = None;
                snap.tools = Arc::new(Vec::new());
                Err(e)
            }
        }
    }

    fn exit_reason(&self) -> String {
        let tail = self.stderr_tail.lock().unwrap_or_else(|e| e.into_inner());
        match tail.back() {
            Some(last) => format!("exited (stderr: {last})"),
            None => "exited".to_owned(),
        }
    }

    async fn start(&self) -> Result<Arc<Connection>, McpError> {
        let conn = connect::connect(
            &self.name,
            &self.config,
            &self.hide,
            self.auth_dir.as_deref(),
            &self.stderr_tail,
        )
        .await?;
        let tools = connect::list_tools(conn.peer()).await?;
        let prompts = if conn.has_prompts {
            connect::list_prompt_names(conn.peer())
                .await
                .unwrap_or_default()
        } else {
            Vec::new()
        };
        let mut snap = self.snap();
        snap.state = ServerState::Ready;
        snap.error = None;
        snap.tools = Arc::new(self.accept(tools));
        snap.has_resources = conn.has_resources;
        snap.prompts = prompts;
        snap.pid = conn.pid;
        drop(snap);
        tracing::info!(server = %self.name, pid = ?conn.pid, "MCP server ready");
        Ok(Arc::new(conn))
    }

    async fn refresh_tools(&self, conn: &Connection) {
        match connect::list_tools(conn.peer()).await {
            Ok(tools) => self.snap().tools = Arc::new(self.accept(tools)),
            Err(e) => tracing::warn!(server = %self.name, error = %e, "cannot list tools again"),
        }
    }

    /// The tools `allowTools`/`denyTools` let through, with usable schemas.
    fn accept(&self, tools: Vec<ListedTool>) -> Vec<ListedTool> {
        tools
            .into_iter()
            .filter(|t| tool_allowed(&t.name, &self.config.allow_tools, &self.config.deny_tools))
            .map(|mut t| {
                t.schema = Some(clean_schema(&self.name, &t.name, t.schema.take()));
                t
            })
            .collect()
    }

    /// A call failed because the connection broke: mark the server so the next use starts
    /// it again.
    pub fn note_broken(&self, conn: &Connection) {
        conn.broken.store(true, std::sync::atomic::Ordering::SeqCst);
        let mut snap = self.snap();
        if snap.state == ServerState::Ready {
            snap.state = ServerState::Failed;
            snap.error = Some(format!("the server {}", self.exit_reason()));
            snap.pid = None;
        }
    }

    /// Stop the server if it has been unused for `idle` and no call is running.
    pub async fn stop_if_idle(&self, idle: Duration) {
        let last = *self.last_used.lock().unwrap_or_else(|e| e.into_inner());
        if last.elapsed() < idle {
            return;
        }
        let Ok(mut inner) = self.inner.try_lock() else {
            return;
        };
        // A running call holds its own reference to the connection.
        if inner
            .conn
            .as_ref()
            .is_some_and(|c| Arc::strong_count(c) == 1)
        {
            tracing::info!(server = %self.name, "stopping the idle MCP server");
            let conn = inner.conn.take();
            close(conn).await;
            self.mark_stopped();
        }
    }

    /// Stop the server for good (process shutdown).
    pub async fn shutdown(&self) {
        let mut inner = self.inner.lock().await;
        inner.shut_down = true;
        let conn = inner.conn.take();
        close(conn).await;
        self.mark_stopped();
    }

    fn mark_stopped(&self) {
        let mut snap = self.snap();
        if matches!(snap.state, ServerState::Ready | ServerState::Starting) {
            snap.state = ServerState::Stopped;
        }
        snap.pid = None;
    }
}

/// Close a connection: the child gets its stdin closed, then SIGTERM, then SIGKILL (to its
/// whole process group) if it lingers.
async fn close(conn: Option<Arc<Connection>>) {
    let Some(conn) = conn else { return };
    match Arc::try_unwrap(conn) {
        Ok(mut conn) => {
            let _ = conn
                .service
                .close_with_timeout(Duration::from_secs(5))
                .await;
        }
        // A call still holds it: cancelling ends the service, whose transport then kills
        // the child when the last reference goes.
        Err(conn) => conn.service.cancellation_token().cancel(),
    }
}

/// A tool's schema as providers take it: a JSON object with `type: object`, `$ref`s
/// inlined. A server's schema that is not an object is replaced (with a warning).
fn clean_schema(
    server: &str,
    tool: &str,
    schema: Option<Map<String, Value>>,
) -> Map<String, Value> {
    let Some(schema) = schema else {
        tracing::warn!(
            server,
            tool,
            "the tool's inputSchema is not a JSON object; using {{\"type\":\"object\"}}"
        );
        return object_schema();
    };
    let mut cleaned = match pincer_ai::schema::inline_refs(&Value::Object(schema)) {
        Value::Object(map) => map,
        _ => object_schema(),
    };
    if !cleaned.contains_key("type") {
        cleaned.insert("type".into(), Value::String("object".into()));
    }
    cleaned
}

fn object_schema() -> Map<String, Value> {
    let mut map = Map::new();
    map.insert("type".into(), Value::String("object".into()));
    map
}

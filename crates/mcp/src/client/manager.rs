//! The manager all agents share: the configured servers, which of them an agent uses
//! (`agents.list[].mcp`), their tools under agent-facing names, their status, the reaper
//! that stops idle servers, and shutdown.

use std::collections::{BTreeMap, HashSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use pincer_agent::{AgentTool, ToolContext, ToolError, ToolOutput};
use pincer_config::McpConfig;
use serde_json::Value;

use super::McpError;
use super::names::{tool_name, unique};
use super::resources::ResourcesTool;
use super::result::DEFAULT_MAX_RESULT_TEXT;
use super::server::{McpServerStatus, Server};
use super::tool::{McpTool, call_tool};

pub struct McpManager {
    servers: BTreeMap<String, Arc<Server>>,
    idle: Option<Duration>,
    reaper: AtomicBool,
    /// Names already warned about (a collision is reported once, not every turn).
    warned: Mutex<HashSet<String>>,
    max_text: usize,
}

impl McpManager {
    /// A manager for `config.servers` (nothing is started yet).
    pub fn new(config: &McpConfig) -> Arc<Self> {
        Self::hiding(config, Vec::new())
    }

    /// [`Self::new`] whose sandboxed servers (`sandbox: true`) cannot see `hide`.
    pub fn hiding(config: &McpConfig, hide: Vec<std::path::PathBuf>) -> Arc<Self> {
        Arc::new(Self {
            servers: config
                .servers
                .iter()
                .map(|(name, c)| {
                    let server = Server::new(name.clone(), c.clone(), hide.clone());
                    (name.clone(), Arc::new(server))
                })
                .collect(),
            idle: config.idle_timeout_ms().map(Duration::from_millis),
            reaper: AtomicBool::new(false),
            warned: Mutex::new(HashSet::new()),
            max_text: DEFAULT_MAX_RESULT_TEXT,
        })
    }

    /// Caps the text of one tool result (default [`DEFAULT_MAX_RESULT_TEXT`]).
    pub fn with_max_result_text(self: Arc<Self>, max: usize) -> Arc<Self> {
        match Arc::try_unwrap(self) {
            Ok(mut this) => {
                this.max_text = max;
                Arc::new(this)
            }
            Err(this) => this,
        }
    }

    /// Keeps the OAuth credentials of HTTP servers in `dir` (`$PINCER_HOME/mcp-auth`,
    /// written by `pincer mcp login`). Call right after building the manager.
    pub fn with_auth_dir(self: Arc<Self>, dir: std::path::PathBuf) -> Arc<Self> {
        match Arc::try_unwrap(self) {
            Ok(mut this) => {
                for server in this.servers.values_mut() {
                    if let Some(server) = Arc::get_mut(server) {
                        server.auth_dir = Some(dir.clone());
                    }
                }
                Arc::new(this)
            }
            Err(this) => this,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.servers.is_empty()
    }

    /// The enabled servers `selection` names (`None`: all).
    fn selected(&self, selection: Option<&[String]>) -> Vec<Arc<Server>> {
        self.servers
            .values()
            .filter(|s| s.config.is_enabled())
            .filter(|s| selection.is_none_or(|names| names.iter().any(|n| n == &s.name)))
            .cloned()
            .collect()
    }

    /// Start the selected servers that are not running (all at once); a server that fails
    /// is left out (its status says why).
    pub async fn prepare(self: &Arc<Self>, selection: Option<&[String]>) {
        self.start_reaper();
        let servers = self.selected(selection);
        let starts = servers.iter().map(|s| async move {
            let _ = s.ensure().await;
        });
        futures_util::future::join_all(starts).await;
    }

    /// The tools of the selected servers that are ready now (no waiting; see
    /// [`Self::prepare`]). `taken` holds the names of the agent's other tools: a clash
    /// gets a suffix and a warning.
    pub fn tools(
        &self,
        selection: Option<&[String]>,
        taken: &HashSet<String>,
    ) -> Vec<Arc<dyn AgentTool>> {
        let mut taken = taken.clone();
        let mut out: Vec<Arc<dyn AgentTool>> = Vec::new();
        let servers = self.selected(selection);
        for server in &servers {
            let Some(listed) = server.tools_now() else {
                continue;
            };
            for tool in listed.iter() {
                let wanted = tool_name(&server.name, &tool.name);
                let name = unique(wanted.clone(), &mut taken);
                if name != wanted {
                    self.warn_once(&name, || {
                        tracing::warn!(server = %server.name, tool = %tool.name, "tool name {wanted} is taken; calling it {name}");
                    });
                }
                let schema = Value::Object(tool.schema.clone().unwrap_or_default());
                out.push(Arc::new(McpTool {
                    server: Arc::clone(server),
                    name,
                    remote: tool.name.clone(),
                    description: tool.description.clone(),
                    schema,
                    max_text: self.max_text,
                }));
            }
        }
        let with_resources: Vec<Arc<Server>> =
            servers.into_iter().filter(|s| s.has_resources()).collect();
        if !with_resources.is_empty() {
            out.push(pincer_agent::typed(ResourcesTool {
                servers: with_resources,
                max_text: self.max_text,
            }));
        }
        out
    }

    /// [`Self::prepare`], then [`Self::tools`].
    pub async fn tools_for(
        self: &Arc<Self>,
        selection: Option<&[String]>,
        taken: &HashSet<String>,
    ) -> Vec<Arc<dyn AgentTool>> {
        self.prepare(selection).await;
        self.tools(selection, taken)
    }

    fn warn_once(&self, key: &str, warn: impl FnOnce()) {
        let mut warned = self.warned.lock().unwrap_or_else(|e| e.into_inner());
        if warned.insert(key.to_owned()) {
            warn();
        }
    }

    /// Every configured server as it is now.
    pub fn status(&self) -> Vec<McpServerStatus> {
        self.servers.values().map(|s| s.status()).collect()
    }

    /// The status of one server.
    pub fn server_status(&self, name: &str) -> Option<McpServerStatus> {
        self.servers.get(name).map(|s| s.status())
    }

    /// The names of the configured servers.
    pub fn names(&self) -> Vec<String> {
        self.servers.keys().cloned().collect()
    }

    /// Start one server (if needed) and say whether it is usable.
    pub async fn start(self: &Arc<Self>, name: &str) -> Result<(), McpError> {
        self.start_reaper();
        let server = self.server(name)?;
        server.ensure().await.map(|_| ())
    }

    fn server(&self, name: &str) -> Result<&Arc<Server>, McpError> {
        self.servers
            .get(name)
            .ok_or_else(|| McpError::UnknownServer(name.to_owned()))
    }

    /// Call `tool` (the server's own name) on `server` by hand (`pincer mcp call`).
    pub async fn call(
        self: &Arc<Self>,
        server: &str,
        tool: &str,
        args: Value,
        ctx: ToolContext,
    ) -> Result<ToolOutput, ToolError> {
        self.start_reaper();
        let server = self
            .server(server)
            .map_err(|e| ToolError::Failed(e.to_string()))?;
        call_tool(server, tool, tool, args, ctx, self.max_text).await
    }

    /// Stop every server (their process groups included) and refuse new starts.
    pub async fn shutdown(&self) {
        let stops = self.servers.values().map(|s| s.shutdown());
        futures_util::future::join_all(stops).await;
    }

    /// Once: a task that stops servers idle for `mcp.idleTimeoutMs`. It holds the manager
    /// weakly and ends with it.
    fn start_reaper(self: &Arc<Self>) {
        let Some(idle) = self.idle else { return };
        if self.reaper.swap(true, Ordering::SeqCst) {
            return;
        }
        let weak: Weak<Self> = Arc::downgrade(self);
        let tick = (idle / 4).clamp(Duration::from_millis(50), Duration::from_secs(30));
        tokio::spawn(async move {
            loop {
                tokio::time::sleep(tick).await;
                let Some(this) = weak.upgrade() else { return };
                for server in this.servers.values() {
                    server.stop_if_idle(idle).await;
                }
            }
        });
    }
}

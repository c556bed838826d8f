//! Opening one connection to an MCP server: a child process in its own process group
//! (stdio; its stderr goes to the log line by line) or a Streamable HTTP endpoint; then the
//! `initialize` handshake under the start-up deadline, and the lists a server offers.
//! The handler here receives what the server sends unasked: progress and list changes.

use std::collections::{HashMap, VecDeque};
use std::process::Stdio;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use pincer_config::McpServerConfig;
use rmcp::ClientHandler;
use rmcp::handler::client::progress::ProgressDispatcher;
use rmcp::model::{
    ClientCapabilities, ClientConfig, ClientRequest, CustomRequest, Implementation,
    ProgressNotificationParam, ServerResult,
};
use rmcp::service::{NotificationContext, Peer, RoleClient, RunningService, ServiceExt};
use serde_json::{Map, Value};
use tokio::io::AsyncReadExt;

use super::McpError;

/// Longest stderr line logged; the rest of the line is dropped.
const MAX_STDERR_LINE: usize = 4096;
/// Stderr lines kept to explain a server that exits (its last words).
const STDERR_TAIL: usize = 5;
/// Most pages of `tools/list` followed (a server that always answers with a cursor).
const MAX_PAGES: usize = 64;

/// Receives what the server sends on its own.
#[derive(Clone)]
pub struct Handler {
    pub progress: ProgressDispatcher,
    /// Set by `notifications/tools/list_changed`; the tool list is read again before the
    /// next use.
    pub tools_stale: Arc<AtomicBool>,
    server: Arc<str>,
}

impl ClientHandler for Handler {
    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        self.progress.handle_notification(params).await;
    }

    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        tracing::debug!(server = %self.server, "MCP tool list changed");
        self.tools_stale.store(true, Ordering::SeqCst);
    }

    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(
            ClientCapabilities::default(),
            Implementation::new("pincer", env!("CARGO_PKG_VERSION")),
        )
    }
}

/// One live connection.
pub struct Connection {
    pub service: RunningService<RoleClient, Handler>,
    pub handler: Handler,
    pub pid: Option<u32>,
    pub has_resources: bool,
    pub has_prompts: bool,
    /// Set when a request failed because the transport broke.
    pub broken: AtomicBool,
}

impl Connection {
    pub fn peer(&self) -> &Peer<RoleClient> {
        self.service.peer()
    }

    /// Whether the connection can no longer be used (the server exited, or it broke).
    pub fn is_dead(&self) -> bool {
        self.service.is_closed()
            || self.peer().is_transport_closed()
            || self.broken.load(Ordering::SeqCst)
    }
}

/// The last lines a child wrote on stderr.
pub type StderrTail = Arc<Mutex<VecDeque<String>>>;

/// Start the server `name` and complete `initialize` within `startupTimeoutMs`.
pub async fn connect(
    name: &str,
    config: &McpServerConfig,
    hide: &[std::path::PathBuf],
    auth_dir: Option<&std::path::Path>,
    stderr_tail: &StderrTail,
) -> Result<Connection, McpError> {
    let handler = Handler {
        progress: ProgressDispatcher::new(),
        tools_stale: Arc::new(AtomicBool::new(false)),
        server: Arc::from(name),
    };
    let timeout = Duration::from_millis(config.startup_timeout_ms());
    let (service, pid) = if let Some(command) = &config.command {
        let (transport, pid) = spawn(name, command, config, hide, stderr_tail)?;
        // A timed-out handshake drops the transport, which kills the process group.
        let service = tokio::time::timeout(timeout, handler.clone().serve(transport))
            .await
            .map_err(|_| McpError::StartTimeout(timeout.as_millis() as u64))?
            .map_err(|e| McpError::Initialize(with_tail(e.to_string(), stderr_tail)))?;
        (service, pid)
    } else if let Some(url) = &config.url {
        let http = http_config(url, &config.headers)?;
        let client = match auth_dir {
            Some(dir) => {
                let path = super::auth::credentials_path(dir, name);
                let start = super::auth::auth_client(url, config, path);
                tokio::time::timeout(timeout, start)
                    .await
                    .map_err(|_| McpError::StartTimeout(timeout.as_millis() as u64))??
            }
            None => None,
        };
        // A 401 without credentials: the one thing to say is how to get them.
        let failed = |e: rmcp::service::ClientInitializeError| {
            if super::auth::is_auth_required(&e) {
                McpError::NeedsLogin(name.to_owned())
            } else {
                McpError::Initialize(e.to_string())
            }
        };
        let service = match client {
            Some(client) => {
                let transport =
                    rmcp::transport::StreamableHttpClientTransport::with_client(client, http);
                tokio::time::timeout(timeout, handler.clone().serve(transport))
                    .await
                    .map_err(|_| McpError::StartTimeout(timeout.as_millis() as u64))?
                    .map_err(failed)?
            }
            None => {
                let transport = rmcp::transport::StreamableHttpClientTransport::from_config(http);
                tokio::time::timeout(timeout, handler.clone().serve(transport))
                    .await
                    .map_err(|_| McpError::StartTimeout(timeout.as_millis() as u64))?
                    .map_err(failed)?
            }
        };
        (service, None)
    } else {
        return Err(McpError::Config("needs `command` or `url`".to_owned()));
    };
    let (has_resources, has_prompts) = service
        .peer_info()
        .map(|info| {
            (
                info.capabilities.resources.is_some(),
                info.capabilities.prompts.is_some(),
            )
        })
        .unwrap_or((false, false));
    Ok(Connection {
        service,
        handler,
        pid,
        has_resources,
        has_prompts,
        broken: AtomicBool::new(false),
    })
}

fn with_tail(message: String, tail: &StderrTail) -> String {
    let tail = tail.lock().unwrap_or_else(|e| e.into_inner());
    match tail.back() {
        Some(last) => format!("{message} (stderr: {last})"),
        None => message,
    }
}

fn spawn(
    name: &str,
    command: &str,
    config: &McpServerConfig,
    hide: &[std::path::PathBuf],
    stderr_tail: &StderrTail,
) -> Result<(rmcp::transport::TokioChildProcess, Option<u32>), McpError> {
    use process_wrap::tokio::{CommandWrap, KillOnDrop, ProcessGroup};
    let (program, args) = match (&config.sandbox, &config.cwd) {
        (Some(true), Some(cwd)) => {
            // Only its directory writable, no network, the rest of the system read-only,
            // Pincer's own state (keys, transcripts) not there at all.
            let mut policy =
                pincer_sandbox::SandboxPolicy::new(pincer_sandbox::SandboxMode::Bwrap, cwd);
            policy.hide = hide.to_vec();
            let args: Vec<std::ffi::OsString> = config.args.iter().map(Into::into).collect();
            pincer_sandbox::wrap(&policy, command.as_ref(), &args)
                .map_err(|e| McpError::Spawn(format!("{command}: sandbox: {e}")))?
        }
        (Some(true), None) => {
            return Err(McpError::Config("`sandbox` needs `cwd`".to_owned()));
        }
        _ => (command.into(), config.args.iter().map(Into::into).collect()),
    };
    let mut cmd = tokio::process::Command::new(program);
    cmd.args(args).envs(&config.env);
    if let Some(cwd) = &config.cwd {
        cmd.current_dir(cwd);
    }
    let mut wrap = CommandWrap::from(cmd);
    // Its own process group: stopping the server also stops whatever it started
    // (`npx` → `node`, shells), so no orphan outlives the gateway.
    wrap.wrap(ProcessGroup::leader()).wrap(KillOnDrop);
    let (transport, stderr) = rmcp::transport::TokioChildProcess::builder(wrap)
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| McpError::Spawn(format!("{command}: {e}")))?;
    let pid = transport.id();
    if let Some(stderr) = stderr {
        tokio::spawn(log_stderr(Arc::from(name), stderr, Arc::clone(stderr_tail)));
    }
    Ok((transport, pid))
}

/// Each stderr line at `info` (cut at [`MAX_STDERR_LINE`]); the last few kept.
async fn log_stderr(server: Arc<str>, mut stderr: tokio::process::ChildStderr, tail: StderrTail) {
    let mut line: Vec<u8> = Vec::new();
    let mut cut = false;
    let mut chunk = [0u8; 4096];
    let emit = |line: &mut Vec<u8>, cut: &mut bool| {
        let text = String::from_utf8_lossy(line).trim_end().to_owned();
        if !text.is_empty() {
            tracing::info!(server = %server, "mcp stderr: {text}{}", if *cut { " …" } else { "" });
            let mut tail = tail.lock().unwrap_or_else(|e| e.into_inner());
            if tail.len() == STDERR_TAIL {
                tail.pop_front();
            }
            tail.push_back(text);
        }
        line.clear();
        *cut = false;
    };
    loop {
        let n = match stderr.read(&mut chunk).await {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        for &b in &chunk[..n] {
            if b == b'\n' {
                emit(&mut line, &mut cut);
            } else if line.len() < MAX_STDERR_LINE {
                line.push(b);
            } else {
                cut = true;
            }
        }
    }
    emit(&mut line, &mut cut);
}

fn http_config(
    url: &str,
    headers: &std::collections::BTreeMap<String, String>,
) -> Result<rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig, McpError>
{
    use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
    let mut config = StreamableHttpClientTransportConfig::with_uri(url.to_owned());
    let mut custom = HashMap::new();
    for (key, value) in headers {
        if key.eq_ignore_ascii_case("authorization")
            && let Some(token) = value.strip_prefix("Bearer ")
        {
            config = config.auth_header(token.to_owned());
            continue;
        }
        let name = http::HeaderName::from_bytes(key.as_bytes())
            .map_err(|e| McpError::Config(format!("header {key:?}: {e}")))?;
        let value = http::HeaderValue::from_str(value)
            .map_err(|e| McpError::Config(format!("header {key:?}: {e}")))?;
        custom.insert(name, value);
    }
    Ok(config.custom_headers(custom))
}

/// A tool as listed by the server, read leniently: one malformed entry does not hide the
/// others.
#[derive(Debug, Clone, PartialEq)]
pub struct ListedTool {
    pub name: String,
    pub description: String,
    /// The input schema, or `None` when the server's is not a JSON object.
    pub schema: Option<Map<String, Value>>,
}

/// Every tool of the server (all pages). Sent as a raw request and read from JSON, so a
/// tool whose schema rmcp's types refuse still comes through (with a placeholder schema).
pub async fn list_tools(peer: &Peer<RoleClient>) -> Result<Vec<ListedTool>, McpError> {
    let mut tools = Vec::new();
    let mut cursor: Option<String> = None;
    for _ in 0..MAX_PAGES {
        let params = cursor.take().map(|c| serde_json::json!({ "cursor": c }));
        let response = peer
            .send_request(ClientRequest::CustomRequest(CustomRequest::new(
                "tools/list",
                params,
            )))
            .await
            .map_err(|e| McpError::Protocol(format!("tools/list: {e}")))?;
        let page = match response {
            ServerResult::ListToolsResult(result) => serde_json::to_value(result)
                .map_err(|e| McpError::Protocol(format!("tools/list: {e}")))?,
            ServerResult::CustomResult(value) => value.0,
            _ => return Err(McpError::Protocol("tools/list: unexpected answer".into())),
        };
        let (page_tools, next) = parse_tools_page(&page);
        tools.extend(page_tools);
        match next {
            Some(next) => cursor = Some(next),
            None => return Ok(tools),
        }
    }
    Ok(tools)
}

/// One page of `tools/list`: the tools (entries without a string `name` skipped) and the
/// next cursor.
pub fn parse_tools_page(page: &Value) -> (Vec<ListedTool>, Option<String>) {
    let tools = page
        .get("tools")
        .and_then(Value::as_array)
        .map(|list| {
            list.iter()
                .filter_map(|tool| {
                    let name = tool.get("name")?.as_str()?.to_owned();
                    let description = tool
                        .get("description")
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        .to_owned();
                    let schema = tool.get("inputSchema").and_then(Value::as_object).cloned();
                    Some(ListedTool {
                        name,
                        description,
                        schema,
                    })
                })
                .collect()
        })
        .unwrap_or_default();
    let next = page
        .get("nextCursor")
        .and_then(Value::as_str)
        .filter(|c| !c.is_empty())
        .map(str::to_owned);
    (tools, next)
}

/// The names of the server's prompts (for status), all pages.
pub async fn list_prompt_names(peer: &Peer<RoleClient>) -> Result<Vec<String>, McpError> {
    let prompts = peer
        .list_all_prompts()
        .await
        .map_err(|e| McpError::Protocol(format!("prompts/list: {e}")))?;
    Ok(prompts.into_iter().map(|p| p.name).collect())
}

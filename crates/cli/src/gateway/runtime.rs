//! The gateway's `Runtime` port, implemented from the configuration: each turn gets its
//! agent the way `pincer ask` does (`turn_setup`), with state that must outlive one turn —
//! the process registry (background `exec` sessions) and one credential source, whose
//! OAuth refresh gate only works if every turn shares it.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use anyhow::Result;
use pincer_agent::AgentTool;
use pincer_automation::cron::CronService;
use pincer_gateway::server::{ModelDefaults, PlanError, Runtime, TurnOrigin, TurnRequest};
use pincer_store::SessionStore;
use pincer_tools::{ProcessRegistry, ToolProfile};
use pincer_turns::turn::TurnPlan;

use crate::app::App;
use crate::credentials::SharedCredentials;
use crate::gateway::run_settings::RunSettings;
use crate::rpc::runner::RpcRunner;
use crate::turn_setup::{AgentSetup, Llm, prepare_agent};

/// The runtime of one gateway process.
pub struct GatewayRuntime {
    app: Arc<App>,
    processes: ProcessRegistry,
    /// The scheduler behind each agent's `cron` tool.
    cron: Option<Arc<CronService>>,
    credentials: SharedCredentials,
    llm: Llm,
    /// Each agent's tools, built on its first turn: they hold no per-turn state (running
    /// processes live in the shared registry), and building 13 schemas per turn showed up
    /// in profiles.
    tools: Mutex<HashMap<String, Vec<Arc<dyn AgentTool>>>>,
    /// One store per agent, so every turn shares its in-memory index.
    stores: Mutex<HashMap<String, SessionStore>>,
    /// When session maintenance last ran per agent: it lists the sessions directory, so it
    /// runs at most once per [`MAINTENANCE_INTERVAL`], not after every turn.
    maintained: Mutex<HashMap<String, std::time::Instant>>,
    /// The worker pool when turns run on RPC workers (`agent.runner: "rpc"`).
    rpc: Option<RpcRunner>,
    /// What the session tools, sub-agents and delegations share (bound to the server as
    /// it starts).
    team: Arc<pincer_team::Team>,
    /// The `message` tool's way to the channels, bound as the server starts.
    message_port: pincer_team::PortSlot<dyn pincer_team::message::MessagePort>,
    /// The run's `gateway start` settings (flags over `gateway.default`).
    settings: RunSettings,
}

/// The tool profiles by name, as `tools.catalog` lists them.
const PROFILES: [(&str, ToolProfile); 4] = [
    ("minimal", ToolProfile::Minimal),
    ("coding", ToolProfile::Coding),
    ("messaging", ToolProfile::Messaging),
    ("full", ToolProfile::Full),
];

/// How often the gateway applies `session.maintenance` to an agent that has turns.
const MAINTENANCE_INTERVAL: std::time::Duration = std::time::Duration::from_secs(60);

impl GatewayRuntime {
    pub fn new(
        app: Arc<App>,
        processes: ProcessRegistry,
        cron: Option<Arc<CronService>>,
        settings: RunSettings,
    ) -> Result<Self> {
        let credentials = SharedCredentials::new(&app, settings.profile.value.as_deref())?;
        let llm = Llm::new(&app)?;
        let rpc = RpcRunner::from_config(&app)?;
        let app_config = app.config.clone();
        let subagent_records = app.home.join("subagents").join("runs.json");
        Ok(Self {
            app,
            processes,
            cron,
            credentials,
            llm,
            tools: Mutex::default(),
            stores: Mutex::default(),
            maintained: Mutex::default(),
            rpc,
            team: pincer_team::Team::with_state(
                crate::team_setup::team_settings(&app_config),
                Some(subagent_records),
            ),
            message_port: pincer_team::PortSlot::new(),
            settings,
        })
    }

    /// The tools this run lets the model use: none with tools off, else those of
    /// `toolAllow` (all when it is empty).
    fn allowed_tools(&self, tools: Vec<Arc<dyn AgentTool>>) -> Vec<Arc<dyn AgentTool>> {
        if !self.settings.with_tools.value {
            return Vec::new();
        }
        let allow = &self.settings.tool_allow.value;
        if allow.is_empty() {
            return tools;
        }
        tools
            .into_iter()
            .filter(|t| allow.iter().any(|name| name == t.name()))
            .collect()
    }

    /// The team tools' shared state, for the server (`/subagents`, `subagents.*`).
    pub fn team(&self) -> Arc<pincer_team::Team> {
        Arc::clone(&self.team)
    }

    /// The slot the `message` tools send through: bound by the server as it starts
    /// (`pincer_gateway::server::message_port::bind_message_port`).
    pub fn message_port(&self) -> pincer_team::PortSlot<dyn pincer_team::message::MessagePort> {
        self.message_port.clone()
    }

    /// The RPC runner's pool, when turns run on workers (stopped with the gateway).
    pub fn rpc_runner(&self) -> Option<&RpcRunner> {
        self.rpc.as_ref()
    }

    /// Whether this turn should run session maintenance for `agent_id` (and, if so, notes
    /// that it did).
    fn maintenance_due(&self, agent_id: &str) -> bool {
        let mut maintained = self.maintained.lock().unwrap_or_else(|e| e.into_inner());
        let now = std::time::Instant::now();
        match maintained.get(agent_id) {
            Some(last) if now.duration_since(*last) < MAINTENANCE_INTERVAL => false,
            _ => {
                maintained.insert(agent_id.to_owned(), now);
                true
            }
        }
    }

    /// The agent's tools (built once per agent).
    fn agent_tools(
        &self,
        agent_id: &str,
        workspace: &std::path::Path,
    ) -> Result<Vec<Arc<dyn AgentTool>>> {
        // MCP tools change (servers start, stop, send list_changed): with MCP servers the
        // list is built afresh for every turn, after starting the agent's servers.
        let with_mcp = !self.app.mcp.is_empty();
        if with_mcp {
            prepare_mcp_blocking(&self.app, agent_id);
        }
        let mut cache = self.tools.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(tools) = cache.get(agent_id).filter(|_| !with_mcp) {
            return Ok(tools.clone());
        }
        let mut extra: Vec<Arc<dyn AgentTool>> = self
            .cron
            .iter()
            .map(|cron| {
                pincer_automation::cron::tool::cron_tool(Arc::clone(cron), agent_id.to_owned())
            })
            .collect();
        extra.extend(self.team.tools(agent_id));
        extra.push(crate::message_setup::message_tool(
            &self.app,
            agent_id,
            self.message_port.clone(),
        )?);
        let tools = self
            .app
            .tools_with(agent_id, workspace, &self.processes, extra, &[])?;
        cache.insert(agent_id.to_owned(), tools.clone());
        Ok(tools)
    }
}

/// Start the agent's MCP servers from a blocking thread (tools are built on the blocking
/// pool); on a single-threaded runtime, where it cannot wait, start them in the
/// background for the next turn instead.
fn prepare_mcp_blocking(app: &Arc<crate::app::App>, agent_id: &str) {
    let Ok(handle) = tokio::runtime::Handle::try_current() else {
        return;
    };
    if handle.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread {
        tokio::task::block_in_place(|| handle.block_on(app.prepare_mcp(agent_id)));
    } else {
        let app = Arc::clone(app);
        let agent_id = agent_id.to_owned();
        handle.spawn(async move { app.prepare_mcp(&agent_id).await });
    }
}

impl Runtime for GatewayRuntime {
    fn default_agent_id(&self) -> String {
        pincer_turns::router::default_agent_id(&self.app.config)
    }

    fn is_known_agent(&self, agent_id: &str) -> bool {
        pincer_turns::router::is_known_agent(&self.app.config, agent_id)
    }

    fn main_session_key(&self, agent_id: &str) -> String {
        pincer_turns::router::main_session_key(agent_id, &self.app.config.session)
    }

    fn sessions(&self, agent_id: &str) -> SessionStore {
        let mut stores = self.stores.lock().unwrap_or_else(|e| e.into_inner());
        stores
            .entry(agent_id.to_owned())
            .or_insert_with(|| self.app.sessions(agent_id))
            .clone()
    }

    fn model_defaults(&self, agent_id: &str) -> ModelDefaults {
        let request = pincer_turns::model_select::ModelRequest {
            agent: self
                .app
                .agent_entry(agent_id)
                .and_then(|a| a.model.as_ref()),
            defaults: self.app.config.agents.defaults.model.as_ref(),
            ..Default::default()
        };
        let custom = self.app.custom_providers();
        let choice = crate::credentials::profile_providers(&self.app)
            .ok()
            .and_then(|profiles| {
                let cx = pincer_turns::model_select::SelectionContext {
                    registry: &self.llm.registry,
                    env: self.app.env.as_ref(),
                    custom_providers: &custom,
                    profile_providers: &profiles,
                };
                pincer_turns::model_select::select_model(&request, &cx).ok()
            });
        match choice {
            Some(c) => ModelDefaults {
                provider: c.primary.provider,
                model: c.primary.id,
                context_tokens: c.primary.context_window,
            },
            None => ModelDefaults::default(),
        }
    }

    fn models(&self) -> Vec<pincer_ai::Model> {
        self.llm.registry.models().to_vec()
    }

    fn config(&self) -> &pincer_config::PincerConfig {
        &self.app.config
    }

    fn skills(&self, agent_id: &str) -> pincer_turns::skills::SkillSet {
        let home_dir = self.app.env.var("HOME").map(PathBuf::from);
        let dirs = pincer_turns::skills::SkillDirs::new(
            &self.app.workspace(agent_id),
            home_dir.as_deref(),
            &self.app.home,
            &self.app.config.skills,
        );
        pincer_turns::skills::load_skills(&dirs)
    }

    fn log_file(&self) -> Option<PathBuf> {
        // Where the detached gateway logs; a gateway in the foreground logs to stderr, and
        // the file (if any) is an earlier daemon's.
        Some(crate::service::log_path(&self.app.home))
    }

    fn tools(&self, agent_id: &str) -> Vec<serde_json::Value> {
        let workspace = self.app.workspace(agent_id);
        let tools = pincer_turns::workspace::ensure_workspace(&workspace)
            .map_err(anyhow::Error::from)
            .and_then(|_| self.agent_tools(agent_id, &workspace));
        match tools {
            Ok(tools) => tools
                .iter()
                .map(|t| {
                    // The profiles that include the tool (`tools.catalog` shows them).
                    let profiles: Vec<&str> = PROFILES
                        .iter()
                        .filter(|(_, p)| p.includes(t.name()))
                        .map(|(name, _)| *name)
                        .collect();
                    serde_json::json!({
                        "name": t.name(), "description": t.description(),
                        "inputSchema": t.parameters(), "profiles": profiles,
                    })
                })
                .collect(),
            Err(e) => {
                tracing::warn!(agent = agent_id, error = %e, "cannot list tools");
                Vec::new()
            }
        }
    }

    fn agent_tool(
        &self,
        agent_id: &str,
        session_key: &str,
        name: &str,
    ) -> Option<Arc<dyn AgentTool>> {
        let workspace = self.app.workspace(agent_id);
        pincer_turns::workspace::ensure_workspace(&workspace).ok()?;
        let tools = self.agent_tools(agent_id, &workspace).ok()?;
        self.team
            .tools_for_session(agent_id, session_key, tools)
            .into_iter()
            .find(|t| t.name() == name)
    }

    fn config_redacted(&self) -> (String, serde_json::Value) {
        let path = &self.app.config_path;
        let raw = pincer_config::read_raw(path)
            .ok()
            .flatten()
            .unwrap_or_else(|| serde_json::json!({}));
        (path.display().to_string(), pincer_config::redact(&raw))
    }

    fn route(&self, input: &pincer_turns::router::RouteInput) -> pincer_turns::router::Route {
        let route = pincer_turns::router::resolve_route(&self.app.config, input);
        // The session's role decides which workers may serve its turns.
        if let Some(rpc) = &self.rpc {
            rpc.note_route(&route);
        }
        route
    }

    fn status_extras(&self) -> serde_json::Map<String, serde_json::Value> {
        let mut extras = serde_json::Map::new();
        if !self.app.mcp.is_empty() {
            extras.insert(
                "mcp".to_owned(),
                serde_json::json!({ "servers": self.app.mcp.status() }),
            );
        }
        if let Some(sandbox) = crate::sandbox_cmd::status_value(&self.app) {
            extras.insert("sandbox".to_owned(), sandbox);
        }
        extras
    }

    fn runner_status(&self) -> serde_json::Value {
        match &self.rpc {
            Some(rpc) => rpc.status(),
            None => serde_json::json!({ "kind": "embedded" }),
        }
    }

    fn workspace(&self, agent_id: &str) -> Option<PathBuf> {
        let workspace = self.app.workspace(agent_id);
        // Created with its starter files first: a fresh agent's heartbeat then finds the
        // empty HEARTBEAT.md template and skips, instead of calling the model on a
        // missing file.
        if let Err(e) = pincer_turns::workspace::ensure_workspace(&workspace) {
            tracing::warn!(agent = agent_id, error = %e, "cannot create the workspace");
        }
        Some(workspace)
    }

    fn plan(&self, request: TurnRequest) -> Result<TurnPlan, PlanError> {
        let app = &self.app;
        let store = self.sessions(&request.agent_id);
        let workspace: PathBuf = app.workspace(&request.agent_id);
        pincer_turns::workspace::ensure_workspace(&workspace)
            .map_err(|e| PlanError::Workspace(e.into()))?;
        let entry = store
            .entry(&request.session_key)
            .map_err(|e| PlanError::Session(e.into()))?;
        let agent = |e: anyhow::Error| PlanError::Agent(e.into());
        let tools = self
            .agent_tools(&request.agent_id, &workspace)
            .map_err(agent)?;
        // A sub-agent or delegate past its nesting limit loses the tools that go deeper.
        let tools = self
            .team
            .tools_for_session(&request.agent_id, &request.session_key, tools);
        let tools = self.allowed_tools(tools);
        // An isolated cron run starts a fresh session each time (OpenClaw's), on the
        // job's own model when it names one.
        let (new_session, cron_model) = match &request.origin {
            TurnOrigin::Cron { model, .. } => (true, model.as_deref()),
            _ => (false, None),
        };
        let prepared = prepare_agent(
            app,
            AgentSetup {
                agent_id: &request.agent_id,
                session_key: &request.session_key,
                workspace: &workspace,
                // A fresh session does not inherit the old one's overrides.
                entry: if new_session { None } else { entry.as_ref() },
                cli_provider: self.settings.provider.value.as_deref(),
                cli_model: cron_model,
                tools,
                auth: self.credentials.for_turn().map_err(agent)?,
                llm: &self.llm,
                channel: "webchat",
                thinking: request.thinking,
            },
        )
        .map_err(agent)?;
        let mut prepared = prepared;
        if let Some(max) = self.settings.tool_max_steps.value {
            prepared.config.max_tool_rounds = Some(max as usize);
        }
        // Blocking (files read, voice notes transcribed): `plan` runs on the blocking pool.
        let input = crate::media_setup::user_message(
            app,
            &workspace,
            &request.message,
            &request.media,
            &prepared.config.model,
        );
        let rpc = self.rpc.as_ref().map(|runner| {
            runner.target(
                app,
                &request.agent_id,
                &request.session_key,
                &workspace,
                &prepared.config,
                &request.origin,
            )
        });
        Ok(TurnPlan {
            store,
            session_key: request.session_key.clone(),
            new_session,
            agent: prepared.config,
            input: vec![input],
            session_patch: self
                .settings
                .memory
                .value
                .map(|on| serde_json::json!({ "memoryEnabled": on })),
            retention: if self.maintenance_due(&request.agent_id) {
                crate::media_setup::prune_inbox(app, &request.agent_id, &workspace);
                Some(app.retention().map_err(agent)?)
            } else {
                None
            },
            abort: None,
            rpc,
            // A heartbeat is not the user's conversation: it never runs the memory flush.
            memory: Some(crate::memory_setup::turn_memory(
                app,
                &request.agent_id,
                &workspace,
                !matches!(request.origin, TurnOrigin::Heartbeat { .. }),
            )),
        })
    }
}

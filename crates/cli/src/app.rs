//! The composition root of one `pincer` invocation: where `$PINCER_HOME` is, the loaded
//! configuration, and the pieces every command builds from it — an agent's id, workspace,
//! session store, tools and system prompt, the model registry, and the LLM client with the
//! keys of configured providers.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{Context as _, Result, bail};
use pincer_agent::AgentTool;
use pincer_ai::env::{EnvSource, ProcessEnv};
use pincer_ai::{LlmClient, Model, ModelRegistry};
use pincer_config::{AgentEntry, ExecSecurityName, PincerConfig, ToolProfileName, ToolsConfig};
use pincer_store::SessionStore;
use pincer_tools::{
    ExecSecurity, MemorySource, PathPolicy, ProcessRegistry, ToolFilter, ToolProfile, basic_tools,
    file_tools,
};

/// What every command starts from.
pub struct App {
    pub env: Arc<dyn EnvSource>,
    pub home: PathBuf,
    pub config_path: PathBuf,
    pub config: PincerConfig,
    /// Each agent's memory as its tools see it, made once per process (its embedding client
    /// and its open index are reused by every turn; the gateway puts its watched ones here).
    memory_sources: std::sync::Mutex<std::collections::HashMap<String, MemorySource>>,
    /// The profile's browser as this process drives it (`web_setup`), made on first use.
    pub(crate) browser: std::sync::OnceLock<Arc<pincer_browser::runtime::ProfileRuntime>>,
    /// Who answers `exec`'s approval requests (`tools.exec.ask`): bound by the gateway as
    /// it starts, empty without one (see `approval_setup`).
    pub exec_approver: pincer_team::PortSlot<dyn pincer_tools::exec::approval::ExecApprover>,
    /// The MCP servers' tools (`mcp.servers`), shared by every agent of the process.
    pub mcp: Arc<pincer_mcp::McpManager>,
    /// Whether skills are found in the standard directories; `pincer rpc --no-skills`
    /// (pi's flag) turns it off, leaving only `skills.load.extraDirs` (its `--skill`s).
    pub discover_skills: bool,
}

impl App {
    /// Finds `$PINCER_HOME` and loads the configuration strictly.
    pub fn load() -> Result<Self> {
        let env: Arc<dyn EnvSource> = Arc::new(ProcessEnv);
        let home = pincer_config::pincer_home(env.as_ref())?;
        crate::private_home::secure_home(&home)?;
        let config_path = pincer_config::config_path(&home);
        let loaded = pincer_config::load(&config_path, env.as_ref())?;
        let mcp = pincer_mcp::McpManager::hiding(&loaded.config.mcp, vec![home.clone()])
            .with_auth_dir(crate::mcp_login::auth_dir(&home));
        Ok(Self {
            env,
            home,
            config_path,
            config: loaded.config,
            memory_sources: Default::default(),
            browser: Default::default(),
            exec_approver: Default::default(),
            mcp,
            discover_skills: true,
        })
    }

    /// Creates `$PINCER_HOME` (0700) if it does not exist yet.
    pub fn ensure_home(&self) -> Result<()> {
        crate::service::ensure_home(&self.home)
    }

    /// The agent a command runs as: the one asked for (validated), else the default.
    pub fn agent_id(&self, requested: Option<&str>) -> Result<String> {
        match requested {
            Some(id) => {
                let id = pincer_turns::router::validate_agent_id(id)?;
                if !pincer_turns::router::is_known_agent(&self.config, &id) {
                    bail!(
                        "unknown agent {id:?}; known agents: {} (add one under agents.list in {})",
                        pincer_turns::router::known_agent_ids(&self.config).join(", "),
                        self.config_path.display()
                    );
                }
                Ok(id)
            }
            None => Ok(pincer_turns::router::default_agent_id(&self.config)),
        }
    }

    /// The agent's entry in `agents.list`, if it has one.
    pub fn agent_entry(&self, agent_id: &str) -> Option<&AgentEntry> {
        self.config.agents.list.iter().find(|a| a.id == agent_id)
    }

    /// `$PINCER_HOME/agents/<id>`.
    pub fn agent_dir(&self, agent_id: &str) -> PathBuf {
        self.home.join("agents").join(agent_id)
    }

    /// The agent's workspace: configured, else `agents/<id>/workspace`.
    pub fn workspace(&self, agent_id: &str) -> PathBuf {
        match self
            .agent_entry(agent_id)
            .and_then(|a| a.workspace.as_deref())
        {
            Some(dir) => expand_home(dir, self.env.as_ref()),
            None => self.agent_dir(agent_id).join("workspace"),
        }
    }

    /// The agent's session store.
    pub fn sessions(&self, agent_id: &str) -> SessionStore {
        SessionStore::new(self.agent_dir(agent_id).join("sessions"))
    }

    /// `session.maintenance` as the store's retention policy (OpenClaw's defaults: warn,
    /// 30 days, 500 sessions).
    pub fn retention(&self) -> Result<pincer_store::RetentionPolicy> {
        let m = &self.config.session.maintenance;
        let mut policy = pincer_store::RetentionPolicy {
            mode: match m.mode {
                pincer_config::MaintenanceMode::Warn => pincer_store::RetentionMode::Warn,
                pincer_config::MaintenanceMode::Enforce => pincer_store::RetentionMode::Enforce,
            },
            ..pincer_store::RetentionPolicy::default()
        };
        if let Some(after) = &m.prune_after {
            policy.prune_after = Some(
                pincer_base::duration::parse_duration(after)
                    .map_err(|e| anyhow::anyhow!("session.maintenance.pruneAfter: {e}"))?,
            );
        }
        if let Some(max) = m.max_entries {
            policy.max_entries = Some(max);
        }
        Ok(policy)
    }

    /// `$PINCER_HOME/auth-profiles.json`.
    pub fn auth_path(&self) -> PathBuf {
        self.home.join("auth-profiles.json")
    }

    /// The user's `--session` as a full session key of `agent_id`.
    pub fn session_key(&self, agent_id: &str, input: &str) -> Result<String> {
        Ok(pincer_turns::router::normalize_cli_session_key(
            agent_id,
            input,
            &self.config.session,
        )?)
    }

    /// The built-in catalog, re-pointed by `*_BASE_URL`, plus the config's providers.
    pub fn registry(&self) -> Result<ModelRegistry> {
        let mut registry = ModelRegistry::builtin()?;
        registry.apply_env_overrides(self.env.as_ref());
        registry
            .apply_models(&self.config.models)
            .with_context(|| format!("{}: models", self.config_path.display()))?;
        Ok(registry)
    }

    /// Custom providers named in the config, in order.
    pub fn custom_providers(&self) -> Vec<String> {
        self.config
            .models
            .providers
            .iter()
            .filter(|(_, p)| !p.models.is_empty())
            .map(|(name, _)| name.clone())
            .collect()
    }

    /// Gives `client` the configured keys (`models.providers.<p>.apiKey`) of the providers
    /// in `models`, skipping those in `done` (and adding the rest to it). `!command` keys
    /// run only for providers actually used.
    pub fn add_keys(
        &self,
        client: &LlmClient,
        registry: &ModelRegistry,
        models: &[Model],
        done: &mut Vec<String>,
    ) -> Result<()> {
        for model in models {
            let provider = model.provider.as_str();
            if done.iter().any(|d| d == provider) {
                continue;
            }
            if let Some(spec) = registry.configured_key(provider) {
                let key = spec.resolve(provider, self.env.as_ref())?;
                client.set_api_key(provider, key);
            }
            done.push(provider.to_owned());
        }
        Ok(())
    }

    /// The agent's tools: the basics, the file tools and `exec`/`process`, confined to
    /// the workspace, and the memory tools (unless `memorySearch.enabled` is false), filtered by the agent's (or the global) `tools` section, then by
    /// `only` when it is not empty.
    pub fn tools(
        &self,
        agent_id: &str,
        workspace: &Path,
        processes: &ProcessRegistry,
        only: &[String],
    ) -> Result<Vec<Arc<dyn AgentTool>>> {
        self.tools_with(agent_id, workspace, processes, Vec::new(), only)
    }

    /// [`Self::tools`] plus `extra` (the gateway's own tools, e.g. `cron`), filtered by the
    /// same policy.
    pub fn tools_with(
        &self,
        agent_id: &str,
        workspace: &Path,
        processes: &ProcessRegistry,
        extra: Vec<Arc<dyn AgentTool>>,
        only: &[String],
    ) -> Result<Vec<Arc<dyn AgentTool>>> {
        let policy = PathPolicy::workspace(workspace)
            .with_context(|| format!("workspace {}", workspace.display()))?;
        let section = self
            .agent_entry(agent_id)
            .and_then(|a| a.tools.as_ref())
            .unwrap_or(&self.config.tools);
        let mut tools = basic_tools(policy.clone());
        tools.extend(file_tools(policy.clone()));
        tools.push(crate::vision_setup::image_tool(
            self,
            agent_id,
            policy.clone(),
        )?);
        tools.extend(crate::web_setup::web_tools(self, self.web_config(agent_id)));
        tools.extend(crate::web_setup::browser_tools(self, workspace)?);
        tools.extend(pincer_tools::exec::exec_tools_sandboxed(
            policy,
            processes.clone(),
            exec_security(section),
            agent_id,
            section.exec.as_ref().and_then(|e| e.notify_on_exit),
            crate::approval_setup::exec_approval(self, section),
            crate::sandbox_cmd::exec_sandbox(self, agent_id)?,
        ));
        if let Some(source) = self.memory_source(agent_id)? {
            tools.extend(pincer_tools::memory_tools(source));
        }
        tools.extend(extra);
        let mcp = self.mcp_tools(agent_id, &tools);
        tools.extend(mcp);
        let mut tools = tool_filter(section).apply(tools);
        if !only.is_empty() {
            tools.retain(|t| only.iter().any(|name| name == t.name()));
        }
        Ok(tools)
    }
}

impl App {
    /// The MCP servers the agent uses (`agents.list[].mcp`; `None`: all).
    fn mcp_selection(&self, agent_id: &str) -> Option<&[String]> {
        self.agent_entry(agent_id).and_then(|a| a.mcp.as_deref())
    }

    /// Start the agent's MCP servers that are not running, so its next tool list has their
    /// tools (a server that fails is left out; `pincer mcp status` says why).
    pub async fn prepare_mcp(&self, agent_id: &str) {
        if !self.mcp.is_empty() {
            self.mcp.prepare(self.mcp_selection(agent_id)).await;
        }
    }

    /// The tools of the agent's running MCP servers, named apart from `others`.
    fn mcp_tools(&self, agent_id: &str, others: &[Arc<dyn AgentTool>]) -> Vec<Arc<dyn AgentTool>> {
        if self.mcp.is_empty() {
            return Vec::new();
        }
        let taken = others.iter().map(|t| t.name().to_owned()).collect();
        self.mcp.tools(self.mcp_selection(agent_id), &taken)
    }

    /// The agent's memory for its tools (`None` when `memorySearch.enabled` is false).
    fn memory_source(&self, agent_id: &str) -> Result<Option<MemorySource>> {
        let mut sources = self
            .memory_sources
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        if let Some(source) = sources.get(agent_id) {
            return Ok(Some(source.clone()));
        }
        let Some(memory) = crate::memory_setup::AgentMemory::of(self, agent_id) else {
            return Ok(None);
        };
        let source = memory.source(self)?;
        sources.insert(agent_id.to_owned(), source.clone());
        Ok(Some(source))
    }

    /// Makes `source` the agent's memory for every later turn (the gateway's watched index).
    pub fn set_memory_source(&self, agent_id: &str, source: MemorySource) {
        self.memory_sources
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(agent_id.to_owned(), source);
    }
}

fn tool_filter(section: &ToolsConfig) -> ToolFilter {
    ToolFilter {
        profile: match section.profile {
            None | Some(ToolProfileName::Full) => ToolProfile::Full,
            Some(ToolProfileName::Coding) => ToolProfile::Coding,
            Some(ToolProfileName::Messaging) => ToolProfile::Messaging,
            Some(ToolProfileName::Minimal) => ToolProfile::Minimal,
        },
        allow: section.allow.clone(),
        deny: section.deny.clone(),
    }
}

/// `exec` is the operator's own shell by default (OpenClaw's `security=full`): `pincer`
/// runs as the user who typed the command.
fn exec_security(section: &ToolsConfig) -> ExecSecurity {
    match section.exec.as_ref() {
        None => ExecSecurity::Full,
        Some(exec) => match exec.security {
            None | Some(ExecSecurityName::Full) => ExecSecurity::Full,
            Some(ExecSecurityName::Deny) => ExecSecurity::Deny,
            Some(ExecSecurityName::Allowlist) => ExecSecurity::Allowlist(exec.allow.clone()),
        },
    }
}

/// `~/x` → `$HOME/x`.
pub(crate) fn expand_home(path: &str, env: &dyn EnvSource) -> PathBuf {
    match (path.strip_prefix("~/"), env.var("HOME")) {
        (Some(rest), Some(home)) => Path::new(&home).join(rest),
        _ => PathBuf::from(path),
    }
}

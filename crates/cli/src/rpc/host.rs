//! The `pincer rpc` worker's host: the agent it runs composed from this program's
//! configuration as every turn's is (model, keys, credentials, tools, system prompt), the
//! configured models, the agent's skills, and the background processes its tools start.

use std::future::Future;
use std::path::Path;
use std::pin::Pin;
use std::sync::Arc;

use anyhow::Result;
use pincer_agent::AgentConfig;
use pincer_ai::Model;
use pincer_rpc::worker::{ConfigRequest, HostError, SkillCommand, WorkerHost};
use pincer_tools::ProcessRegistry;

use crate::app::App;
use crate::turn_setup::{AgentSetup, Llm, prepare_agent};

/// One worker's host (a `pincer rpc` process runs one worker).
pub struct AppHost {
    app: Arc<App>,
    llm: Llm,
    processes: ProcessRegistry,
}

impl AppHost {
    pub fn new(app: Arc<App>) -> Result<Self> {
        let llm = Llm::new(&app)?;
        Ok(Self {
            app,
            llm,
            processes: ProcessRegistry::new(),
        })
    }

    fn compose(&self, request: &ConfigRequest<'_>) -> Result<AgentConfig> {
        let app = &self.app;
        // A worker the gateway started reaches the tools that live there.
        let extra = if app
            .env
            .var(super::gateway_tools::GATEWAY_TOOLS_ENV)
            .is_some()
        {
            let endpoint = crate::gateway::client::Endpoint::resolve(app)?;
            super::gateway_tools::gateway_tools(request.agent_id, endpoint)
        } else {
            Vec::new()
        };
        let tools = app.tools_with(
            request.agent_id,
            request.cwd,
            &self.processes,
            extra,
            request.tools,
        )?;
        let auth = crate::credentials::for_run(app, None)?;
        let key = format!("agent:{}:rpc", request.agent_id);
        let prepared = prepare_agent(
            app,
            AgentSetup {
                agent_id: request.agent_id,
                session_key: &key,
                workspace: request.cwd,
                entry: None,
                cli_provider: request.provider,
                cli_model: request.model,
                tools,
                auth,
                llm: &self.llm,
                channel: "rpc",
                thinking: None,
            },
        )?;
        Ok(prepared.config)
    }
}

impl WorkerHost for AppHost {
    fn agent_config(&self, request: &ConfigRequest<'_>) -> Result<AgentConfig, HostError> {
        // The whole chain: it is the command's `error` on the wire.
        self.compose(request)
            .map_err(|e| HostError::new(format!("{e:#}")))
    }

    /// The agent's exec sandbox, for the user's `bash` commands as for the model's `exec`.
    fn bash_sandbox(
        &self,
        agent_id: &str,
        session_key: Option<&str>,
        cwd: &Path,
    ) -> Result<Option<pincer_sandbox::SandboxPolicy>, HostError> {
        let sandbox = crate::sandbox_cmd::exec_sandbox(&self.app, agent_id)
            .map_err(|e| HostError::new(format!("{e:#}")))?;
        let Some(sandbox) = sandbox else {
            return Ok(None);
        };
        let workspace = std::fs::canonicalize(cwd)
            .map_err(|e| HostError::new(format!("{}: {e}", cwd.display())))?;
        Ok(sandbox.policy_for(agent_id, session_key, &workspace, &workspace))
    }

    fn models(&self) -> Vec<Model> {
        self.llm.registry.models().to_vec()
    }

    /// `agents.defaults.model`'s primary and fallbacks.
    fn scoped_models(&self) -> Vec<String> {
        match &self.app.config.agents.defaults.model {
            Some(selection) => std::iter::once(selection.primary())
                .chain(selection.fallbacks().iter().map(String::as_str))
                .map(str::to_owned)
                .collect(),
            None => Vec::new(),
        }
    }

    fn skills(&self, cwd: &Path) -> Vec<SkillCommand> {
        let dirs = crate::prompt::skill_dirs(&self.app, cwd);
        pincer_turns::skills::load_skills(&dirs)
            .skills
            .iter()
            .map(|s| SkillCommand {
                name: s.name.clone(),
                description: s.description.clone(),
            })
            .collect()
    }

    /// The session of the agent's store whose transcript `session_file` is.
    fn session_key(&self, agent_id: &str, session_file: &Path) -> Option<String> {
        let id = session_file.file_stem()?.to_str()?;
        self.app
            .sessions(agent_id)
            .list()
            .ok()?
            .into_iter()
            .find(|(_, entry)| entry.session_id == id)
            .map(|(key, _)| key)
    }

    fn shutdown(&self) -> Pin<Box<dyn Future<Output = ()> + Send + '_>> {
        Box::pin(self.processes.shutdown())
    }
}

//! The in-process backend of `pincer chat`: each message is one turn run here, composed
//! as `pincer ask` composes it (`turn_setup::prepare_agent`, `run_turn`), on the session
//! the chat was opened on. The session's model and thinking level live in its index entry
//! (`model`, `thinkingLevel`, `queueMode`, `verboseLevel`), where the gateway's
//! `sessions.patch` puts them too, so a session chatted with here and over a gateway
//! behaves the same; `/usage`, `/queue`, `/verbose` and `/compact` answer with the
//! gateway's own texts.

use std::path::PathBuf;
use std::sync::Arc;

use anyhow::{Context as _, Result, bail};
use pincer_agent::{AgentEvent, AgentTool};
use pincer_ai::{Message, ThinkingLevel};
use pincer_store::{SessionEntry, SessionStore};
use pincer_tools::ProcessRegistry;
use pincer_turns::turn::{TurnPlan, open_session, run_turn};
use serde_json::{Value, json};

use super::Interrupts;
use super::render::{Ending, Renderer, Shown};
use crate::app::App;
use crate::turn_setup::{AgentSetup, Llm, PreparedAgent, prepare_agent};
use pincer_turns::command_answers::{
    configured_model_refs, queue_text, queue_value, unknown_model_text, usage_text, usage_totals,
    verbose_text, verbose_value,
};
use pincer_turns::commands::{Command, Setting, status_lines};
use pincer_turns::compact::{COMPACT_TIMEOUT, compact_reply, compact_session};

/// Where and as whom the chat runs, from the command line.
pub struct LocalOptions {
    pub agent: Option<String>,
    pub session: String,
    pub provider: Option<String>,
    pub model: Option<String>,
    pub profile: Option<String>,
}

/// One agent's session, chatted with in process.
pub struct Local<'a> {
    app: &'a App,
    agent_id: String,
    key: String,
    workspace: PathBuf,
    store: SessionStore,
    llm: Llm,
    tools: Vec<Arc<dyn AgentTool>>,
    /// Background processes the agent's tools start; stopped when the chat ends.
    processes: ProcessRegistry,
    /// `--provider` / `--model`: they win over the session's model until `/model` says
    /// otherwise.
    cli_provider: Option<String>,
    cli_model: Option<String>,
    profile: Option<String>,
}

impl<'a> Local<'a> {
    pub fn open(app: &'a App, options: LocalOptions) -> Result<Self> {
        app.ensure_home()?;
        let agent_id = app.agent_id(options.agent.as_deref())?;
        let key = app.session_key(&agent_id, &options.session)?;
        let workspace = app.workspace(&agent_id);
        pincer_turns::workspace::ensure_workspace(&workspace)
            .with_context(|| format!("cannot prepare the workspace {}", workspace.display()))?;
        let processes = ProcessRegistry::new();
        let tools = app.tools(&agent_id, &workspace, &processes, &[])?;
        Ok(Self {
            store: app.sessions(&agent_id),
            llm: Llm::new(app)?,
            app,
            agent_id,
            key,
            workspace,
            tools,
            processes,
            cli_provider: options.provider,
            cli_model: options.model,
            profile: options.profile,
        })
    }

    pub fn session_key(&self) -> &str {
        &self.key
    }

    /// The session's index entry; a corrupt index is rebuilt (and said so).
    fn entry(&self) -> Result<Option<SessionEntry>> {
        let (index, rebuilt) = self.store.index_or_rebuild()?;
        if let Some(report) = &rebuilt {
            crate::report::rebuilt(report);
        }
        Ok(index.get(&self.key).cloned())
    }

    /// The agent the next turn would run with.
    fn prepare(&self, entry: Option<&SessionEntry>) -> Result<PreparedAgent> {
        let auth = crate::credentials::for_run(self.app, self.profile.as_deref())?;
        prepare_agent(
            self.app,
            AgentSetup {
                agent_id: &self.agent_id,
                session_key: &self.key,
                workspace: &self.workspace,
                entry,
                cli_provider: self.cli_provider.as_deref(),
                cli_model: self.cli_model.as_deref(),
                tools: self.tools.clone(),
                auth,
                llm: &self.llm,
                channel: "cli",
                thinking: None,
            },
        )
    }

    /// One turn: `text` to the agent, the reply streamed to `renderer`. Ctrl-C aborts it
    /// (the partial reply is kept in the session, as `pincer ask` keeps it).
    pub async fn send(
        &mut self,
        text: String,
        new_session: bool,
        renderer: &mut Renderer,
        ctrl_c: &mut Interrupts,
    ) -> Result<Ending> {
        // Only a Ctrl-C from here on is for this turn.
        ctrl_c.forget_earlier();
        let entry = if new_session { None } else { self.entry()? };
        let config = self.prepare(entry.as_ref())?.config;
        let abort = pincer_ai::CancellationToken::new();
        let plan = TurnPlan {
            store: self.store.clone(),
            session_key: self.key.clone(),
            new_session,
            agent: config,
            input: vec![Message::user(text)],
            session_patch: None,
            retention: Some(self.app.retention()?),
            abort: Some(abort.clone()),
            rpc: None,
            memory: Some(crate::memory_setup::turn_memory(
                self.app,
                &self.agent_id,
                &self.workspace,
                true,
            )),
        };
        let outcome = {
            let turn = run_turn(plan, |event: &AgentEvent| {
                if let Some(shown) = Shown::of_agent_event(event) {
                    renderer.show(&shown);
                }
            });
            tokio::pin!(turn);
            loop {
                tokio::select! {
                    outcome = &mut turn => break outcome?,
                    () = ctrl_c.next() => abort.cancel(),
                }
            }
        };
        crate::report::load_report(&outcome.load_report);
        if let Some(report) = &outcome.pruned {
            crate::report::pruned(report);
        }
        for error in &outcome.persist_errors {
            eprintln!("warning: could not save to the transcript: {error}");
        }
        Ok(if abort.is_cancelled() {
            Ending::Aborted
        } else if let Some(error) = outcome.error() {
            Ending::Failed(error)
        } else {
            Ending::Done
        })
    }

    /// `/new` without a message: a new transcript under the same key.
    pub fn new_session(&mut self) -> Result<String> {
        let session = open_session(&self.store, &self.key, true)?;
        Ok(format!(
            "New session started. sessionId={}",
            session.entry.session_id
        ))
    }

    /// `/model`: shows the model the next turn uses, or sets the session's.
    pub fn model(&mut self, setting: Option<Setting>) -> Result<String> {
        let value = match setting {
            None => {
                let entry = self.entry()?;
                let model = self.prepare(entry.as_ref())?.config.model.reference();
                return Ok(format!("model: {model}"));
            }
            Some(Setting::Default) => Value::Null,
            Some(Setting::Value(reference)) => match self.llm.registry.resolve(&reference) {
                Ok(model) => json!(model.reference()),
                // Answered as the gateway answers it: with the models one may name.
                Err(_) => bail!(
                    "{}",
                    unknown_model_text(
                        &reference,
                        &configured_model_refs(&self.app.config, &self.agent_id)
                    )
                ),
            },
        };
        self.patch(json!({ "model": value }))?;
        // The session's choice now; `--model` was only where the chat started.
        self.cli_provider = None;
        self.cli_model = None;
        self.model(None)
    }

    /// `/think`: shows the thinking level the next turn uses, or sets the session's.
    pub fn think(&mut self, setting: Option<Setting>) -> Result<String> {
        let value = match setting {
            None => {
                let entry = self.entry()?;
                let level = self.prepare(entry.as_ref())?.config.thinking_level;
                return Ok(format!("thinking: {}", level.as_str()));
            }
            Some(Setting::Default) => Value::Null,
            Some(Setting::Value(level)) => {
                if serde_json::from_value::<ThinkingLevel>(json!(level)).is_err() {
                    bail!(
                        "thinking level {level:?} is not one of off, minimal, low, medium, high, \
                         xhigh"
                    );
                }
                json!(level)
            }
        };
        self.patch(json!({ "thinkingLevel": value }))?;
        self.think(None)
    }

    fn patch(&self, patch: Value) -> Result<()> {
        // A session that has not started yet gets its entry now, so the setting has
        // somewhere to live.
        open_session(&self.store, &self.key, false)?;
        self.store.patch(&self.key, &patch)?;
        Ok(())
    }

    /// `/status`: the session, the model and level its next turn uses, its token counts.
    pub fn status(&self) -> Result<Vec<String>> {
        let entry = self.entry()?;
        let config = self.prepare(entry.as_ref())?.config;
        Ok(status_lines(
            &self.key,
            entry.as_ref(),
            &config.model.reference(),
            config.thinking_level.as_str(),
            "in process",
        ))
    }

    /// `/usage`, `/queue`, `/verbose` and `/compact`, answered as the gateway answers them
    /// (the same texts and checks: [`pincer_turns::command_answers`],
    /// [`pincer_turns::compact`]). Ctrl-C stops a compaction.
    pub async fn answer(&mut self, command: Command, ctrl_c: &mut Interrupts) -> Result<String> {
        let bad = anyhow::Error::msg;
        match command {
            Command::Usage => {
                let totals = usage_totals(&self.store, &self.key)?;
                let entry = self.entry()?;
                Ok(usage_text(&totals, entry.and_then(|e| e.total_tokens)))
            }
            Command::Queue(setting) => {
                if let Some(setting) = setting {
                    self.patch(json!({ "queueMode": queue_value(setting).map_err(bad)? }))?;
                }
                let default = self.app.config.messages.queue.mode.unwrap_or_default();
                Ok(queue_text(self.entry()?.as_ref(), default))
            }
            Command::Verbose(setting) => {
                if let Some(setting) = setting {
                    self.patch(json!({ "verboseLevel": verbose_value(setting).map_err(bad)? }))?;
                }
                Ok(verbose_text(self.entry()?.as_ref()))
            }
            Command::Compact { instructions } => self.compact(instructions, ctrl_c).await,
            Command::Activation(_) => {
                Ok("⚙️ Group activation only applies to group chats.".to_owned())
            }
            Command::Subagents { .. } => Ok("Sub-agents run in the gateway: chat through it \
                 (`pincer chat --url ws://127.0.0.1:18789`) to list them."
                .to_owned()),
            Command::Approve { .. } => Ok("Nothing waits for approval here: exec approvals \
                 (tools.exec.ask) are answered through the gateway."
                .to_owned()),
            _ => bail!("that command is answered by a gateway (`pincer chat --url …`)"),
        }
    }

    /// `/compact [instructions]`: the older conversation summarised by the model the next
    /// turn would use.
    async fn compact(
        &mut self,
        instructions: Option<String>,
        ctrl_c: &mut Interrupts,
    ) -> Result<String> {
        ctrl_c.forget_earlier();
        let Some(entry) = self.entry()? else {
            return Ok("⚙️ Compaction unavailable (missing session id).".to_owned());
        };
        let config = self.prepare(Some(&entry))?.config;
        let window = config.model.context_window;
        let abort = pincer_ai::CancellationToken::new();
        let plan = TurnPlan {
            store: self.store.clone(),
            session_key: self.key.clone(),
            new_session: false,
            agent: config,
            input: Vec::new(),
            session_patch: None,
            retention: None,
            abort: Some(abort.clone()),
            rpc: None,
            memory: None,
        };
        let attempt = {
            let compaction = compact_session(plan, instructions.as_deref(), COMPACT_TIMEOUT);
            tokio::pin!(compaction);
            loop {
                tokio::select! {
                    outcome = &mut compaction => break outcome,
                    () = ctrl_c.next() => abort.cancel(),
                }
            }
        };
        Ok(compact_reply(&attempt, window))
    }

    /// `/sessions`: the agent's sessions, most recent first.
    pub fn sessions(&self) -> Result<Vec<(String, SessionEntry)>> {
        Ok(self.store.list()?)
    }

    /// `/stop`: nothing runs in the background of an in-process chat.
    pub fn stop(&self) -> String {
        "nothing is running (Ctrl-C stops a reply while it streams)".to_owned()
    }

    /// Stops the background processes the agent's tools started.
    pub async fn close(self) {
        self.processes.shutdown().await;
    }
}

//! The state of a `pincer rpc` worker and what each of pi's RPC commands does to it: one
//! agent (pincer-agent, pi's loop) over one session file, its events written as pi writes
//! them and every message appended to the session file as it ends, so a crash loses
//! nothing that was said and the next worker resumes from the file.
//!
//! Commands answer at once; a `prompt` answers once it is accepted and the run goes on in
//! the background (pi's order: the response, then `agent_start` …).

use std::sync::{Arc, Mutex, MutexGuard};

use pincer_agent::{Agent, AgentConfig, AgentEvent, QueueMode};
use pincer_ai::{ImageContent, Message};
use serde_json::{Value, json};

use crate::StreamingBehavior;
use crate::worker::WorkerOptions;
use crate::worker::error::{SessionFileError, WorkerError};
use crate::worker::host::{ConfigRequest, WorkerHost};
use crate::worker::output::{EventEncoder, Output};
use crate::worker::parts::{Queues, parse_thinking_level, user_message, user_text};
use crate::worker::session_file::SessionFile;

mod session_cmds;

type Result<T, E = WorkerError> = std::result::Result<T, E>;

/// One worker.
pub struct Worker {
    host: Arc<dyn WorkerHost>,
    options: WorkerOptions,
    out: Output,
    agent: Agent,
    /// The open session file; `new_session` and `switch_session` replace it, mutex and all,
    /// and the agent's events task keeps the one it was started with.
    session: Arc<Mutex<SessionFile>>,
    /// The gateway session the current session file belongs to (the host's answer), for
    /// the tools' context.
    session_key: Option<Arc<str>>,
    /// The events task of the current agent.
    forwarder: Option<tokio::task::JoinHandle<()>>,
    steering_mode: QueueMode,
    follow_up_mode: QueueMode,
    auto_compaction: bool,
    auto_retry: bool,
    compaction: pincer_agent::compaction::CompactionSettings,
    /// `bash` commands run since the last prompt: they reach the model with it, as pi's
    /// `bashExecution` messages do.
    pending_bash: Arc<Mutex<Vec<String>>>,
    /// Cancels the running `bash` command (`abort_bash`).
    bash_cancel: Option<tokio_util::sync::CancellationToken>,
    /// The texts of the queued messages, as pi's session tracks them for `queue_update`.
    queues: Arc<Mutex<Queues>>,
}

impl Worker {
    /// Opens (or creates) the session and prepares the agent.
    pub async fn start(
        host: Arc<dyn WorkerHost>,
        options: WorkerOptions,
        out: Output,
    ) -> Result<Self> {
        let config = agent_config(host.as_ref(), &options, None)?;
        let session = {
            let options = options.clone();
            let (provider, model_id) = (config.model.provider.clone(), config.model.id.clone());
            let thinking = config.thinking_level.as_str();
            off_thread(move || open_session(&options, &provider, &model_id, thinking)).await??
        };
        let messages = session.messages();
        let mut worker = Self {
            host,
            options,
            out,
            agent: Agent::new(config.clone()),
            session: Arc::new(Mutex::new(session)),
            session_key: None,
            forwarder: None,
            // pi's defaults.
            steering_mode: QueueMode::OneAtATime,
            follow_up_mode: QueueMode::OneAtATime,
            auto_compaction: true,
            auto_retry: true,
            compaction: config.compaction,
            pending_bash: Arc::default(),
            bash_cancel: None,
            queues: Arc::default(),
        };
        worker.session_key = worker.find_session_key().await;
        worker.install(config, messages);
        Ok(worker)
    }

    /// Asks the host which gateway session the current session file is.
    async fn find_session_key(&self) -> Option<Arc<str>> {
        let (host, agent) = (Arc::clone(&self.host), self.options.agent_id.clone());
        let path = self.session().path().to_owned();
        off_thread(move || host.session_key(&agent, &path))
            .await
            .ok()
            .flatten()
            .map(Arc::from)
    }

    fn session(&self) -> MutexGuard<'_, SessionFile> {
        self.session.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Runs `config` over `messages` as the worker's agent, its events going to stdout and
    /// the session file.
    fn install(&mut self, mut config: AgentConfig, messages: Vec<Message>) {
        config.messages = messages;
        if let Some(key) = &self.session_key {
            config.session_key = Some(Arc::clone(key));
        }
        config.steering_mode = self.steering_mode;
        config.follow_up_mode = self.follow_up_mode;
        config.compaction = pincer_agent::compaction::CompactionSettings {
            enabled: self.auto_compaction,
            ..config.compaction
        };
        if !self.auto_retry {
            config.stream_options.retry.max_retries = 0;
        }
        let agent = Agent::new(config);
        let mut events = agent.subscribe();
        let out = self.out.clone();
        let session = Arc::clone(&self.session);
        let queues = Arc::clone(&self.queues);
        if let Some(old) = self.forwarder.take() {
            old.abort();
        }
        self.forwarder = Some(tokio::spawn(async move {
            let mut encoder = EventEncoder::default();
            while let Some(event) = events.recv().await {
                // A queued message being taken: the queue shrinks first, as pi reports it.
                if let AgentEvent::MessageStart {
                    message: Message::User(user),
                } = event.as_ref()
                {
                    let mut queues = queues.lock().unwrap_or_else(|e| e.into_inner());
                    if queues.take(&user_text(user)) {
                        out.json(&queues.event());
                    }
                }
                // The line goes out before the file append: a message that arrives whole
                // (`message_start` + `message_end` back to back) must reach the client as
                // one piece, as in pi, or a command read while the append is on the blocking
                // pool (a steer's `queue_update`) lands between the two. `agent_end` still
                // follows every append: this loop is the only writer and runs in order.
                out.json(&encoder.encode(&event));
                if let AgentEvent::MessageEnd { message } = event.as_ref() {
                    let message = message.clone();
                    let appended =
                        on_session(&session, move |session| session.append_message(message)).await;
                    if let Err(e) = appended.and_then(|appended| appended) {
                        tracing::error!(error = %e, "cannot append to the session file");
                    }
                }
            }
        }));
        self.agent = agent;
    }

    /// A fresh configuration on the agent's current model and thinking level (both may
    /// have been changed over RPC since the worker started).
    fn current_config(&self) -> Result<AgentConfig> {
        let config = agent_config(self.host.as_ref(), &self.options, None)?;
        let state = self.agent.state();
        Ok(AgentConfig {
            model: state.model,
            thinking_level: state.thinking_level,
            ..config
        })
    }

    fn is_streaming(&self) -> bool {
        self.agent.state().is_streaming
    }

    /// `prompt`: starts a run, or queues the message while one is going as
    /// `streaming_behavior` says (pi refuses without one).
    pub fn prompt(
        &mut self,
        message: &str,
        images: Vec<ImageContent>,
        streaming_behavior: Option<StreamingBehavior>,
    ) -> Result<()> {
        let ran = if self.is_streaming() {
            Vec::new()
        } else {
            std::mem::take(&mut *self.pending_bash.lock().unwrap_or_else(|e| e.into_inner()))
        };
        let text = if ran.is_empty() {
            message.to_owned()
        } else {
            let mut parts = ran;
            parts.push(message.to_owned());
            parts.join("\n\n")
        };
        let user = user_message(&text, images);
        if self.is_streaming() {
            return match streaming_behavior {
                Some(StreamingBehavior::Steer) => {
                    self.queue(text, true);
                    self.agent.steer(user);
                    Ok(())
                }
                Some(StreamingBehavior::FollowUp) => {
                    self.queue(text, false);
                    self.agent.follow_up(user);
                    Ok(())
                }
                None => Err(WorkerError::Busy),
            };
        }
        let agent = self.agent.clone();
        tokio::spawn(async move {
            if let Err(e) = agent.prompt_messages(vec![user]).await {
                tracing::warn!(error = %e, "the run failed");
            }
        });
        Ok(())
    }

    pub fn steer(&self, message: &str, images: Vec<ImageContent>) {
        self.queue(message.to_owned(), true);
        self.agent.steer(user_message(message, images));
    }

    pub fn follow_up(&self, message: &str, images: Vec<ImageContent>) {
        self.queue(message.to_owned(), false);
        self.agent.follow_up(user_message(message, images));
    }

    /// Notes a queued text and tells the client (`queue_update`).
    fn queue(&self, text: String, steering: bool) {
        let mut queues = self.queues.lock().unwrap_or_else(|e| e.into_inner());
        if steering {
            queues.steering.push(text);
        } else {
            queues.follow_up.push(text);
        }
        self.out.json(&queues.event());
    }

    pub fn abort(&self) {
        self.agent.abort();
    }

    /// `get_state`.
    pub fn get_state(&self) -> Value {
        let state = self.agent.state();
        let session = self.session();
        let mut out = json!({
            "model": state.model,
            "thinkingLevel": state.thinking_level.as_str(),
            "isStreaming": state.is_streaming,
            "isCompacting": false,
            "steeringMode": self.steering_mode.as_str(),
            "followUpMode": self.follow_up_mode.as_str(),
            "sessionFile": session.path().display().to_string(),
            "sessionId": session.id(),
            "autoCompactionEnabled": self.auto_compaction,
            "messageCount": state.messages.len(),
            "pendingMessageCount": state.steering.len() + state.follow_up.len(),
        });
        if let Some(name) = session.name() {
            out["sessionName"] = json!(name);
        }
        out
    }

    /// `get_messages`.
    pub fn get_messages(&self) -> Value {
        json!({ "messages": self.agent.state().messages })
    }

    /// `set_model{provider, modelId}`: the next turn's model; answers with the model.
    pub async fn set_model(&mut self, provider: &str, model_id: &str) -> Result<Value> {
        if self.is_streaming() {
            return Err(WorkerError::ModelWhileStreaming);
        }
        let config = agent_config(
            self.host.as_ref(),
            &self.options,
            Some((provider, model_id)),
        )?;
        let model = config.model.clone();
        let (provider, model_id) = (model.provider.clone(), model.id.clone());
        on_session(&self.session, move |session| {
            session.record_model(&provider, &model_id)
        })
        .await??;
        let messages = self.agent.state().messages;
        let thinking = self.agent.state().thinking_level;
        self.install(
            AgentConfig {
                thinking_level: thinking,
                ..config
            },
            messages,
        );
        Ok(json!(model))
    }

    /// `cycle_model`: the next of the host's scoped models (pi's); `null` with fewer than
    /// two.
    pub async fn cycle_model(&mut self) -> Result<Value> {
        let scoped = self.host.scoped_models();
        if scoped.len() < 2 {
            return Ok(Value::Null);
        }
        let current = self.agent.state().model.reference();
        let index = scoped.iter().position(|m| *m == current);
        let next = &scoped[index.map_or(0, |i| (i + 1) % scoped.len())];
        let Some((provider, model_id)) = next.split_once('/') else {
            return Err(WorkerError::NotProviderModel(next.clone()));
        };
        let model = self.set_model(provider, model_id).await?;
        Ok(json!({
            "model": model,
            "thinkingLevel": self.agent.state().thinking_level.as_str(),
            "isScoped": true,
        }))
    }

    /// `get_available_models`.
    pub fn get_available_models(&self) -> Value {
        json!({ "models": self.host.models() })
    }

    /// `set_thinking_level{level}`.
    pub async fn set_thinking_level(&self, level: &str) -> Result<()> {
        let parsed = parse_thinking_level(level)?;
        self.agent.set_thinking_level(parsed);
        on_session(&self.session, move |session| {
            session.record_thinking(parsed.as_str())
        })
        .await??;
        Ok(())
    }

    /// `cycle_thinking_level`: the next level, or `null` for a model without reasoning.
    pub async fn cycle_thinking_level(&self) -> Result<Value> {
        let state = self.agent.state();
        if !state.model.reasoning {
            return Ok(Value::Null);
        }
        let levels = ["off", "minimal", "low", "medium", "high"];
        let current = state.thinking_level.as_str();
        let index = levels.iter().position(|l| *l == current).unwrap_or(0);
        let next = levels[(index + 1) % levels.len()];
        self.set_thinking_level(next).await?;
        Ok(json!({ "level": next }))
    }

    pub fn set_steering_mode(&mut self, mode: QueueMode) {
        self.steering_mode = mode;
        self.agent.set_steering_mode(self.steering_mode);
    }

    pub fn set_follow_up_mode(&mut self, mode: QueueMode) {
        self.follow_up_mode = mode;
        self.agent.set_follow_up_mode(self.follow_up_mode);
    }

    pub fn set_auto_compaction(&mut self, enabled: bool) {
        self.auto_compaction = enabled;
        self.compaction.enabled = enabled;
        self.agent.set_compaction_settings(self.compaction);
    }

    /// `set_auto_retry{enabled}`: whether a failed model call is retried (with backoff)
    /// before anything streamed; applies from the next run.
    pub fn set_auto_retry(&mut self, enabled: bool) -> Result<()> {
        if enabled == self.auto_retry {
            return Ok(());
        }
        if self.is_streaming() {
            return Err(WorkerError::RetryWhileStreaming);
        }
        self.auto_retry = enabled;
        let config = self.current_config()?;
        self.install(config, self.agent.state().messages);
        Ok(())
    }

    /// `get_last_assistant_text`.
    pub fn get_last_assistant_text(&self) -> Value {
        let text = self
            .agent
            .state()
            .messages
            .iter()
            .rev()
            .find_map(|m| match m {
                Message::Assistant(a) => Some(a.text()),
                _ => None,
            });
        json!({ "text": text })
    }

    /// The agent (for work that answers later: `compact`).
    pub fn agent(&self) -> Agent {
        self.agent.clone()
    }

    /// Starts `bash{command}`: answers through `respond` when it ends; what it printed
    /// reaches the model with the next prompt.
    pub fn bash(&mut self, command: String, respond: impl FnOnce(Result<Value>) + Send + 'static) {
        let cancel = tokio_util::sync::CancellationToken::new();
        if let Some(old) = self.bash_cancel.replace(cancel.clone()) {
            old.cancel();
        }
        let cwd = self.options.cwd.clone();
        let pending = Arc::clone(&self.pending_bash);
        let sandbox =
            match self
                .host
                .bash_sandbox(&self.options.agent_id, self.session_key.as_deref(), &cwd)
            {
                Ok(sandbox) => sandbox,
                Err(e) => {
                    respond(Err(WorkerError::Bash(std::io::Error::other(e.to_string()))));
                    return;
                }
            };
        tokio::spawn(async move {
            match crate::worker::bash::run(&command, &cwd, cancel, sandbox.as_ref()).await {
                Ok(result) => {
                    pending
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .push(result.for_model(&command));
                    respond(Ok(result.to_json()));
                }
                Err(e) => respond(Err(WorkerError::Bash(e))),
            }
        });
    }

    /// `abort_bash`.
    pub fn abort_bash(&mut self) {
        if let Some(cancel) = self.bash_cancel.take() {
            cancel.cancel();
        }
    }

    /// `get_commands`: the skills, as pi lists them (`skill:<name>`).
    pub fn get_commands(&self) -> Value {
        let commands: Vec<Value> = self
            .host
            .skills(&self.options.cwd)
            .iter()
            .map(|s| json!({ "name": format!("skill:{}", s.name), "description": s.description, "source": "skill" }))
            .collect();
        json!({ "commands": commands })
    }

    /// Stops what runs: the agent, then background processes.
    pub async fn shutdown(&mut self) {
        self.agent.abort();
        self.agent.wait_for_idle().await;
        self.host.shutdown().await;
        if let Some(forwarder) = self.forwarder.take() {
            // Let the last events out.
            let _ = tokio::time::timeout(std::time::Duration::from_secs(1), forwarder).await;
        }
    }
}

/// The agent's configuration from the host and pi's flags; `model` overrides the flags' one.
fn agent_config(
    host: &dyn WorkerHost,
    options: &WorkerOptions,
    model: Option<(&str, &str)>,
) -> Result<AgentConfig> {
    let (provider, model_id) = match model {
        Some((p, m)) => (Some(p), Some(m)),
        None => (options.provider.as_deref(), options.model.as_deref()),
    };
    let tools = tool_names(options);
    let mut config = host.agent_config(&ConfigRequest {
        agent_id: &options.agent_id,
        cwd: &options.cwd,
        provider,
        model: model_id,
        tools: &tools,
    })?;
    if !tools.is_empty() && config.tools.is_empty() {
        tracing::warn!("none of the --tools names is a tool this agent has");
    }
    if let Some(level) = options.thinking {
        config.thinking_level = level;
    }
    if let Some(prompt) = &options.system_prompt {
        config.system_prompt = prompt.clone();
    }
    for extra in &options.append_system_prompt {
        config.system_prompt.push_str("\n\n");
        config.system_prompt.push_str(extra);
    }
    Ok(config)
}

/// The tools the flags ask for, by Pincer's names (pi's `bash` is `exec` with `process`);
/// empty: the agent's.
fn tool_names(options: &WorkerOptions) -> Vec<String> {
    match &options.tools {
        None => Vec::new(),
        Some(names) => names
            .iter()
            .flat_map(|name| match name.as_str() {
                "bash" => vec!["exec".to_owned(), "process".to_owned()],
                other => vec![other.to_owned()],
            })
            .collect(),
    }
}

/// The session the flags ask for (its file is read: call it off the runtime's threads).
fn open_session(
    options: &WorkerOptions,
    provider: &str,
    model_id: &str,
    thinking: &str,
) -> Result<SessionFile, SessionFileError> {
    if let Some(path) = &options.session_file {
        return SessionFile::open(path);
    }
    if options.continue_session
        && let Some(newest) = SessionFile::newest_in(&options.session_dir)
    {
        return SessionFile::open(&newest);
    }
    SessionFile::create(
        &options.session_dir,
        &options.cwd,
        None,
        provider,
        model_id,
        thinking,
    )
}

/// Runs `work` on the blocking pool: the session file's reads, appends and fsyncs must not
/// stall the runtime's thread (the worker's stdin loop and its event stream run there).
async fn off_thread<T: Send + 'static>(
    work: impl FnOnce() -> T + Send + 'static,
) -> Result<T, SessionFileError> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(SessionFileError::Blocking)
}

/// Runs `work` on the open session file, on the blocking pool.
async fn on_session<T: Send + 'static>(
    session: &Arc<Mutex<SessionFile>>,
    work: impl FnOnce(&mut SessionFile) -> T + Send + 'static,
) -> Result<T, SessionFileError> {
    let session = Arc::clone(session);
    off_thread(move || work(&mut session.lock().unwrap_or_else(|e| e.into_inner()))).await
}

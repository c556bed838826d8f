//! The `Agent`: owns the conversation state, runs the loop on a task of its own, and lets
//! callers steer, queue follow-ups, abort, wait and subscribe while it runs (pi's `Agent`).

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex, MutexGuard};

use pincer_ai::{
    AssistantMessage, AssistantStream, Context, LlmClient, Message, Model, PartialMessage,
    StopReason, StreamOptions, ThinkingLevel,
};
use tokio::sync::{mpsc, watch};
use tokio_util::sync::CancellationToken;

use crate::compaction::{
    self, CompactionEnd, CompactionError, CompactionReason, CompactionResult, CompactionSettings,
};
use crate::event::AgentEvent;
use crate::hooks::Hooks;
use crate::queue::{MessageQueue, QueueMode};
use crate::tool::{AgentTool, ExecutionMode};

/// How the agent gets a streamed reply (pi's `streamFn`): the LLM client by default, a
/// proxy, or anything else that yields an `AssistantStream`.
pub type StreamFn = Arc<dyn Fn(&Model, &Context, StreamOptions) -> AssistantStream + Send + Sync>;

/// A stream function backed by an [`LlmClient`].
pub fn llm_stream_fn(client: LlmClient) -> StreamFn {
    Arc::new(move |model, context, options| client.stream(model, context, options))
}

/// Why an agent call was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AgentError {
    #[error(
        "Agent is already processing a prompt. Use steer() or follow_up() to queue messages, or wait for completion."
    )]
    Busy,
    #[error("Cannot continue: {0}")]
    CannotContinue(String),
    #[error("the agent run failed: {0}")]
    RunFailed(String),
    #[error(transparent)]
    Compaction(#[from] CompactionError),
}

/// Everything an agent starts with.
#[derive(Clone)]
pub struct AgentConfig {
    pub system_prompt: String,
    pub model: Model,
    pub thinking_level: ThinkingLevel,
    pub tools: Vec<Arc<dyn AgentTool>>,
    pub messages: Vec<Message>,
    pub steering_mode: QueueMode,
    pub follow_up_mode: QueueMode,
    /// Parallel by default; a tool that asks for sequential makes its whole batch sequential.
    pub tool_execution: ExecutionMode,
    pub stream_fn: StreamFn,
    /// Template for every call (retry policy, timeouts, headers); cancel and reasoning are set per call.
    pub stream_options: StreamOptions,
    pub hooks: Hooks,
    /// Automatic compaction (threshold and overflow); defaults to pi's settings.
    pub compaction: CompactionSettings,
    /// Most tool rounds (replies with tool calls that run) in one run; `None` is no cap.
    /// Calls past the cap get an error result ("tool call loop exceeded max steps (N)")
    /// and the run ends without another LLM call (lainclaw's `--tool-max-steps`).
    pub max_tool_rounds: Option<usize>,
    /// The session the agent runs in (`agent:main:main`, …), handed to every tool call so
    /// tools can keep per-session state (browser tabs, search caches); `None` outside one.
    pub session_key: Option<Arc<str>>,
}

impl AgentConfig {
    pub fn new(model: Model, stream_fn: StreamFn) -> Self {
        Self {
            system_prompt: String::new(),
            model,
            thinking_level: ThinkingLevel::Off,
            tools: Vec::new(),
            messages: Vec::new(),
            steering_mode: QueueMode::OneAtATime,
            follow_up_mode: QueueMode::OneAtATime,
            tool_execution: ExecutionMode::Parallel,
            stream_fn,
            stream_options: StreamOptions::default(),
            hooks: Hooks::default(),
            compaction: CompactionSettings::default(),
            max_tool_rounds: None,
            session_key: None,
        }
    }
}

/// A snapshot of the agent's state (pi's `AgentState`).
#[derive(Debug, Clone)]
pub struct AgentState {
    pub system_prompt: String,
    pub model: Model,
    pub thinking_level: ThinkingLevel,
    pub tool_names: Vec<String>,
    pub messages: Vec<Message>,
    pub is_streaming: bool,
    /// The assistant message being streamed, as it stands.
    pub stream_message: Option<AssistantMessage>,
    pub pending_tool_calls: BTreeSet<String>,
    /// The last run's error, if it ended in one.
    pub error: Option<String>,
    pub steering: Vec<Message>,
    pub follow_up: Vec<Message>,
}

pub(crate) struct Core {
    pub(crate) config: AgentConfig,
    pub(crate) is_streaming: bool,
    pub(crate) partial: Option<PartialMessage>,
    pub(crate) pending_tool_calls: BTreeSet<String>,
    pub(crate) error: Option<String>,
    pub(crate) steering: MessageQueue,
    pub(crate) follow_up: MessageQueue,
    pub(crate) cancel: Option<CancellationToken>,
    /// The last run stopped at `max_tool_rounds`.
    pub(crate) tool_limit_reached: bool,
}

pub(crate) struct Inner {
    core: Mutex<Core>,
    subscribers: Mutex<Vec<mpsc::UnboundedSender<Arc<AgentEvent>>>>,
    idle: watch::Sender<bool>,
}

impl Inner {
    // The lock is never held across an await, and a panic while holding it cannot leave
    // the state half-written in a way later readers could not handle, so poisoning is ignored.
    pub(crate) fn core(&self) -> MutexGuard<'_, Core> {
        self.core.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Update the state for an event, then deliver it to every subscriber.
    pub(crate) fn emit(&self, event: AgentEvent) {
        {
            let mut core = self.core();
            match &event {
                AgentEvent::MessageStart {
                    message: Message::Assistant(a),
                } => {
                    core.partial = Some(PartialMessage::new(a.clone()));
                }
                AgentEvent::MessageUpdate {
                    assistant_message_event,
                } => {
                    if let Some(p) = core.partial.as_mut() {
                        p.apply(assistant_message_event);
                    }
                }
                AgentEvent::MessageEnd { message } => {
                    if matches!(message, Message::Assistant(_)) {
                        core.partial = None;
                    }
                    core.config.messages.push(message.clone());
                }
                AgentEvent::ToolExecutionStart { tool_call_id, .. } => {
                    core.pending_tool_calls.insert(tool_call_id.clone());
                }
                AgentEvent::ToolExecutionEnd { tool_call_id, .. } => {
                    core.pending_tool_calls.remove(tool_call_id);
                }
                AgentEvent::TurnEnd {
                    message: Message::Assistant(a),
                    ..
                } => {
                    if matches!(a.stop_reason, StopReason::Error | StopReason::Aborted) {
                        core.error = a
                            .error_message
                            .clone()
                            .or_else(|| Some(a.stop_reason.as_str().into()));
                    }
                }
                _ => {}
            }
        }
        let event = Arc::new(event);
        self.subscribers
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .retain(|tx| tx.send(Arc::clone(&event)).is_ok());
    }

    /// Back to idle, whatever way the run ended.
    pub(crate) fn finish_run(&self) {
        {
            let mut core = self.core();
            core.is_streaming = false;
            core.partial = None;
            core.pending_tool_calls.clear();
            core.cancel = None;
        }
        self.idle.send_replace(true);
    }
}

/// An agent. Cheap to clone: clones share the same state.
#[derive(Clone)]
pub struct Agent {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for Agent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Agent").finish_non_exhaustive()
    }
}

impl Agent {
    pub fn new(config: AgentConfig) -> Self {
        let core = Core {
            steering: MessageQueue::new(config.steering_mode),
            follow_up: MessageQueue::new(config.follow_up_mode),
            config,
            is_streaming: false,
            partial: None,
            pending_tool_calls: BTreeSet::new(),
            error: None,
            cancel: None,
            tool_limit_reached: false,
        };
        let (idle, _) = watch::channel(true);
        Self {
            inner: Arc::new(Inner {
                core: Mutex::new(core),
                subscribers: Mutex::default(),
                idle,
            }),
        }
    }

    /// Every event from now on, in order. Dropping the receiver unsubscribes.
    pub fn subscribe(&self) -> mpsc::UnboundedReceiver<Arc<AgentEvent>> {
        let (tx, rx) = mpsc::unbounded_channel();
        self.inner
            .subscribers
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(tx);
        rx
    }

    pub fn state(&self) -> AgentState {
        let core = self.inner.core();
        AgentState {
            system_prompt: core.config.system_prompt.clone(),
            model: core.config.model.clone(),
            thinking_level: core.config.thinking_level,
            tool_names: core
                .config
                .tools
                .iter()
                .map(|t| t.name().to_owned())
                .collect(),
            messages: core.config.messages.clone(),
            is_streaming: core.is_streaming,
            stream_message: core.partial.as_ref().map(|p| p.message().clone()),
            pending_tool_calls: core.pending_tool_calls.clone(),
            error: core.error.clone(),
            steering: core.steering.iter().cloned().collect(),
            follow_up: core.follow_up.iter().cloned().collect(),
        }
    }

    /// Send a user message and run until the agent stops. Refused while a run is going:
    /// use [`Agent::steer`] or [`Agent::follow_up`] then.
    pub async fn prompt(&self, text: impl Into<String>) -> Result<(), AgentError> {
        self.prompt_messages(vec![Message::user(text)]).await
    }

    /// Like [`Agent::prompt`] with ready-made messages (images, several messages).
    pub async fn prompt_messages(&self, messages: Vec<Message>) -> Result<(), AgentError> {
        self.start_run(messages).await
    }

    /// Run again from the current context (retry after an error, or deliver queued
    /// messages), as pi's `continue()`.
    pub async fn continue_run(&self) -> Result<(), AgentError> {
        let queued = {
            let mut core = self.inner.core();
            match core.config.messages.last() {
                None => return Err(AgentError::CannotContinue("no messages in context".into())),
                Some(Message::Assistant(_)) => {
                    let steering = core.steering.poll();
                    if steering.is_empty() {
                        core.follow_up.poll()
                    } else {
                        steering
                    }
                }
                Some(_) => Vec::new(),
            }
        };
        let last_is_assistant = matches!(
            self.inner.core().config.messages.last(),
            Some(Message::Assistant(_))
        );
        if queued.is_empty() && last_is_assistant {
            return Err(AgentError::CannotContinue(
                "the last message is from the assistant and nothing is queued".into(),
            ));
        }
        self.start_run(queued).await
    }

    async fn start_run(&self, messages: Vec<Message>) -> Result<(), AgentError> {
        let cancel = {
            let mut core = self.inner.core();
            if core.is_streaming {
                return Err(AgentError::Busy);
            }
            core.is_streaming = true;
            core.error = None;
            core.tool_limit_reached = false;
            let cancel = CancellationToken::new();
            core.cancel = Some(cancel.clone());
            cancel
        };
        self.inner.idle.send_replace(false);
        let inner = Arc::clone(&self.inner);
        // The run lives on its own task: dropping this future does not stop it.
        let task = tokio::spawn(async move {
            let guard = FinishGuard(Arc::clone(&inner));
            crate::run::run(&inner, messages, cancel).await;
            drop(guard);
        });
        task.await.map_err(|e| AgentError::RunFailed(e.to_string()))
    }

    /// Queue a message delivered after the current tool batch.
    pub fn steer(&self, message: Message) {
        self.inner.core().steering.push(message);
    }

    /// Queue a message delivered when the agent would otherwise stop.
    pub fn follow_up(&self, message: Message) {
        self.inner.core().follow_up.push(message);
    }

    pub fn clear_steering_queue(&self) -> Vec<Message> {
        self.inner.core().steering.clear()
    }

    pub fn clear_follow_up_queue(&self) -> Vec<Message> {
        self.inner.core().follow_up.clear()
    }

    pub fn set_steering_mode(&self, mode: QueueMode) {
        self.inner.core().steering.mode = mode;
    }

    pub fn set_follow_up_mode(&self, mode: QueueMode) {
        self.inner.core().follow_up.mode = mode;
    }

    /// Abort the current run: the stream and running tools are cancelled; the run ends
    /// with an `aborted` assistant message, `turn_end` and `agent_end`.
    pub fn abort(&self) {
        if let Some(cancel) = self.inner.core().cancel.as_ref() {
            cancel.cancel();
        }
    }

    /// Wait until no run is going.
    pub async fn wait_for_idle(&self) {
        let mut rx = self.inner.idle.subscribe();
        // The sender lives in `inner`, which we hold, so this cannot fail.
        let _ = rx.wait_for(|idle| *idle).await;
    }

    /// Abort any run, then forget the conversation, the queues and the last error.
    pub async fn reset(&self) {
        self.abort();
        self.wait_for_idle().await;
        let mut core = self.inner.core();
        core.config.messages.clear();
        core.steering.clear();
        core.follow_up.clear();
        core.error = None;
    }

    pub fn set_model(&self, model: Model) {
        self.inner.core().config.model = model;
    }

    pub fn set_system_prompt(&self, prompt: impl Into<String>) {
        self.inner.core().config.system_prompt = prompt.into();
    }

    pub fn set_thinking_level(&self, level: ThinkingLevel) {
        self.inner.core().config.thinking_level = level;
    }

    pub fn set_tools(&self, tools: Vec<Arc<dyn AgentTool>>) {
        self.inner.core().config.tools = tools;
    }

    /// Summarise older messages now (pi's manual `compact`). Refused while a run is going.
    pub async fn compact(
        &self,
        custom_instructions: Option<&str>,
    ) -> Result<CompactionResult, AgentError> {
        let (cancel, settings) = {
            let mut core = self.inner.core();
            if core.is_streaming {
                return Err(AgentError::Busy);
            }
            core.is_streaming = true;
            let cancel = CancellationToken::new();
            core.cancel = Some(cancel.clone());
            (cancel, core.config.compaction)
        };
        self.inner.idle.send_replace(false);
        let _guard = FinishGuard(Arc::clone(&self.inner));
        let reason = CompactionReason::Manual;
        self.inner.emit(AgentEvent::CompactionStart { reason });
        let outcome = compaction::in_agent::compact_agent(
            &self.inner,
            &settings,
            custom_instructions,
            &cancel,
        )
        .await;
        self.inner
            .emit(AgentEvent::CompactionEnd(CompactionEnd::new(
                reason, &outcome,
            )));
        Ok(outcome?)
    }

    pub fn set_compaction_settings(&self, settings: CompactionSettings) {
        self.inner.core().config.compaction = settings;
    }

    /// Whether the last run stopped because it hit `max_tool_rounds`.
    pub fn tool_limit_reached(&self) -> bool {
        self.inner.core().tool_limit_reached
    }

    /// Replace the conversation (resume from a transcript, or after compaction).
    pub fn replace_messages(&self, messages: Vec<Message>) {
        self.inner.core().config.messages = messages;
    }
}

/// Returns the agent to idle even if the run task panicked.
struct FinishGuard(Arc<Inner>);

impl Drop for FinishGuard {
    fn drop(&mut self) {
        self.0.finish_run();
    }
}

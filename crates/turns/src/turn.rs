//! One turn of a persistent session: open (or create, or reset) the session, give the
//! agent its context from the transcript, run the prompt, and append every message to the
//! transcript as it completes (`message_end`), so a crash mid-turn keeps everything that
//! finished. At the end the transcript is flushed and the index updated (tokens, time).
//!
//! The transcript lock is taken per append and never held across an LLM call; the index
//! lock only around the index's read-modify-write. All of that file work runs off the async
//! runtime ([`crate::turn_store`]). A failed LLM call is recorded like any
//! other reply and never resets the session: the next turn continues the same one.
//!
//! A [`SteerHandle`] lets a caller reach the turn's agent while it runs (the gateway's steer
//! queue mode); [`run_turn`] itself takes none, so `pincer ask` behaves as before.

use std::sync::{Arc, Mutex};

use pincer_agent::{Agent, AgentConfig, AgentEvent};
use pincer_ai::{AssistantMessage, Message, StopReason};
use pincer_store::{
    LoadReport, PruneReport, RebuildReport, RetentionPolicy, SessionStore, StoreError, TurnStats,
};
use serde_json::Value;

use crate::turn_store::{self, AfterTurn, Closed, Opened, TranscriptWriter};
pub use crate::turn_store::{AppendedMessage, MessageObserver, RUN_MARKER};

/// A command that acts on the session itself instead of going to the model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SessionCommand {
    /// `/new` or `/reset`, optionally followed by a first message for the new session.
    NewSession { rest: Option<String> },
}

/// Recognises a session command of [`crate::commands::COMMANDS`] (`/new`, `/reset`) at the
/// start of a message; the other commands are for whoever answers them (the gateway,
/// `pincer chat`).
pub fn session_command(text: &str) -> Option<SessionCommand> {
    match crate::commands::parse(text)? {
        crate::commands::Command::NewSession { rest } => Some(SessionCommand::NewSession { rest }),
        _ => None,
    }
}

/// Everything one turn needs.
pub struct TurnPlan {
    pub store: SessionStore,
    pub session_key: String,
    /// Start a new session under the key first (`/new`, `--new-session`).
    pub new_session: bool,
    /// The agent: model, stream function, tools, system prompt, caps. Its messages are
    /// replaced by the session's context.
    pub agent: AgentConfig,
    /// The user's message(s) for this turn.
    pub input: Vec<Message>,
    /// Fields merged into the session's index entry at the start (e.g. `memoryEnabled`,
    /// `lastChannel`); `null` clears.
    pub session_patch: Option<Value>,
    /// Session maintenance run after the turn (`session.maintenance`); the turn's own
    /// session is never pruned.
    pub retention: Option<RetentionPolicy>,
    /// Cancelling it aborts the run (Ctrl-C, `chat.abort`): the partial reply is kept as an
    /// `aborted` message and running tools are stopped.
    pub abort: Option<pincer_ai::CancellationToken>,
    /// Run the turn on an RPC worker of this pool instead of in process
    /// (`agent.runner: "rpc"`); `agent` then only names the model.
    pub rpc: Option<crate::turn_rpc::RpcTarget>,
    /// Per-session memory and the pre-compaction flush (`None`: neither). In-process
    /// turns only: an RPC worker keeps its own context.
    pub memory: Option<crate::session_memory::TurnMemory>,
}

/// What a turn did.
#[derive(Debug, Clone)]
pub struct TurnOutcome {
    pub session_key: String,
    pub session_id: String,
    /// The session was created (or reset) by this turn.
    pub created: bool,
    /// What loading the transcript found and repaired.
    pub load_report: LoadReport,
    /// The index was corrupt and rebuilt from the transcripts (the old file kept).
    pub rebuilt: Option<RebuildReport>,
    /// What session maintenance pruned (enforce) or would prune (warn).
    pub pruned: Option<PruneReport>,
    /// Messages the turn added, in order (the input first).
    pub added: Vec<Message>,
    /// The last assistant reply, if the model was reached at all.
    pub reply: Option<AssistantMessage>,
    /// The run stopped at the tool-round cap.
    pub tool_limit_reached: bool,
    /// Transcript or index writes that failed (the turn still completed; each is reported).
    pub persist_errors: Vec<String>,
    /// What per-session memory did (all off when the session's memory is).
    pub memory: crate::session_memory::SessionMemoryOutcome,
    /// The pre-compaction memory flush that ran before the turn, if one did.
    pub memory_flush: Option<crate::memory_flush::FlushOutcome>,
}

impl TurnOutcome {
    /// The outcome of a turn closed on `session` with what `recorder` kept: no tool cap
    /// reached, no session memory, no flush (the in-process turn sets those it has).
    pub(crate) fn closed(
        session_key: String,
        session: pincer_store::OpenSession,
        recorder: turn_store::Recorder,
        pruned: Option<PruneReport>,
    ) -> Self {
        Self {
            session_key,
            session_id: session.entry.session_id,
            created: session.created,
            load_report: session.report,
            rebuilt: session.rebuilt,
            pruned,
            reply: recorder.reply,
            added: recorder.added,
            tool_limit_reached: false,
            persist_errors: recorder.errors,
            memory: Default::default(),
            memory_flush: None,
        }
    }

    /// The reply's error, if it ended in one.
    pub fn error(&self) -> Option<String> {
        let reply = self.reply.as_ref()?;
        matches!(reply.stop_reason, StopReason::Error | StopReason::Aborted).then(|| {
            reply
                .error_message
                .clone()
                .unwrap_or_else(|| reply.stop_reason.as_str().to_owned())
        })
    }
}

/// Why a turn could not run at all.
#[derive(Debug, thiserror::Error)]
pub enum TurnError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("the agent run failed: {0}")]
    Agent(#[from] pincer_agent::AgentError),
    /// The RPC worker could not be had, or failed the turn.
    #[error("{0}")]
    Worker(String),
}

/// Opens the session of `plan.session_key` (resetting it first if asked), returning the
/// store's view of it. Shared by [`run_turn`] and commands that only reset.
#[expect(
    clippy::disallowed_methods,
    reason = "runs on the blocking pool: turn_store::open, turn_rpc (on_blocking_pool) and the CLI's one-shot commands"
)]
pub fn open_session(
    store: &SessionStore,
    key: &str,
    new_session: bool,
) -> Result<pincer_store::OpenSession, StoreError> {
    if new_session {
        store.reset(key)
    } else {
        store.get_or_create(key)
    }
}

/// A way into a turn's agent while it runs: messages given to [`SteerHandle::steer`] go to
/// the agent's steering queue, which pi's loop drains after the current tool batch (or
/// after a reply without tool calls), so the running turn continues with them. Messages
/// steered before the agent exists are held and handed over when it starts. Once
/// [`SteerHandle::close`] is called nothing more is accepted, and whatever the agent never
/// picked up comes back to the caller: a steered message is never silently dropped.
#[derive(Clone, Default)]
pub struct SteerHandle {
    slot: Arc<Mutex<SteerSlot>>,
}

#[derive(Default)]
struct SteerSlot {
    target: Option<SteerTarget>,
    /// Steered before the agent was attached (or left over by a worker), in order.
    held: Vec<Message>,
    closed: bool,
}

/// Where steered messages go.
enum SteerTarget {
    Agent(Agent),
    Worker(crate::turn_rpc::WorkerSteer),
}

impl std::fmt::Debug for SteerHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SteerHandle").finish_non_exhaustive()
    }
}

impl SteerHandle {
    pub fn new() -> Self {
        Self::default()
    }

    fn slot(&self) -> std::sync::MutexGuard<'_, SteerSlot> {
        self.slot.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Queues `message` for the running turn. `Err` gives it back when the turn is over (or
    /// ending): the caller must deliver it some other way.
    pub fn steer(&self, message: Message) -> Result<(), Box<Message>> {
        let mut slot = self.slot();
        if slot.closed {
            return Err(Box::new(message));
        }
        match &slot.target {
            Some(SteerTarget::Agent(agent)) => agent.steer(message),
            Some(SteerTarget::Worker(worker)) => {
                if !worker.steer(&message) {
                    return Err(Box::new(message));
                }
            }
            None => slot.held.push(message),
        }
        Ok(())
    }

    /// Hands the held messages to `agent` (before its run starts, so its first poll of the
    /// steering queue delivers them) and routes later ones straight to it.
    fn attach(&self, agent: &Agent) {
        let mut slot = self.slot();
        if slot.closed {
            return;
        }
        for message in slot.held.drain(..) {
            agent.steer(message);
        }
        slot.target = Some(SteerTarget::Agent(agent.clone()));
    }

    /// [`Self::attach`] for a worker whose turn has started: held messages are sent to it.
    pub(crate) fn attach_worker(&self, worker: crate::turn_rpc::WorkerSteer) {
        let mut slot = self.slot();
        if slot.closed {
            return;
        }
        let held = std::mem::take(&mut slot.held);
        for message in held {
            if !worker.steer(&message) {
                slot.held.push(message);
            }
        }
        slot.target = Some(SteerTarget::Worker(worker));
    }

    /// A worker's turn ended: nothing more is accepted, and what the worker did not take
    /// is held for [`Self::close`]. Returns how many messages that is.
    pub(crate) fn finish_worker(&self) -> usize {
        let mut slot = self.slot();
        slot.closed = true;
        if let Some(SteerTarget::Worker(worker)) = slot.target.take() {
            let left = worker.unconsumed();
            slot.held.extend(left);
        }
        slot.held.len()
    }

    /// Ends steering and returns the messages the agent did not pick up, oldest first. The
    /// agent drains its queue in order, so these are always the last ones steered.
    pub fn close(&self) -> Vec<Message> {
        let mut slot = self.slot();
        slot.closed = true;
        let mut left = std::mem::take(&mut slot.held);
        match slot.target.take() {
            Some(SteerTarget::Agent(agent)) => left.extend(agent.clear_steering_queue()),
            Some(SteerTarget::Worker(worker)) => left.extend(worker.unconsumed()),
            None => {}
        }
        left
    }
}

/// Runs one turn; `on_event` sees every agent event as it happens (for streaming output).
pub async fn run_turn(
    plan: TurnPlan,
    on_event: impl FnMut(&AgentEvent) + Send,
) -> Result<TurnOutcome, TurnError> {
    let turn = open_on_blocking_pool(plan).await?;
    run_open_turn(turn, None, on_event).await
}

/// A turn whose session is open and whose agent has the session's context: what
/// [`open_turn`] gives and [`run_open_steerable_turn`] runs. A turn on an RPC worker is
/// opened by the worker, so it is only carried through.
pub struct OpenTurn(Opening);

enum Opening {
    Rpc(Box<(TurnPlan, crate::turn_rpc::RpcTarget)>),
    Embedded(Box<(OpenPlan, Opened)>),
}

/// What of a [`TurnPlan`] the run still needs once the session is open.
struct OpenPlan {
    store: SessionStore,
    session_key: String,
    input: Vec<Message>,
    retention: Option<RetentionPolicy>,
    abort: Option<pincer_ai::CancellationToken>,
    memory: Option<crate::session_memory::TurnMemory>,
}

/// Opens (or creates, or resets) the plan's session, applies its patch and gives the agent
/// the session's context. Blocking file work: the server calls it on the blocking pool in
/// the same trip as the turn's planning, so the chat message reaches the model without a
/// second hop between threads.
pub fn open_turn(mut plan: TurnPlan) -> Result<OpenTurn, TurnError> {
    if let Some(target) = plan.rpc.take() {
        return Ok(OpenTurn(Opening::Rpc(Box::new((plan, target)))));
    }
    let TurnPlan {
        store,
        session_key,
        new_session,
        agent,
        input,
        session_patch,
        retention,
        abort,
        rpc: _,
        memory,
    } = plan;
    let workspace = memory.as_ref().map(|m| m.workspace.as_path());
    let opened = turn_store::open(
        &store,
        &session_key,
        new_session,
        session_patch.as_ref(),
        agent,
        workspace,
    )?;
    let rest = OpenPlan {
        store,
        session_key,
        input,
        retention,
        abort,
        memory,
    };
    Ok(OpenTurn(Opening::Embedded(Box::new((rest, opened)))))
}

impl OpenTurn {
    /// Marks the turn's messages in the transcript as run `run_id`'s (see
    /// [`crate::turn_store`]) and hands each one to `observer` as it is appended. An RPC
    /// worker writes its own transcript: there this does nothing.
    pub fn observe_messages(&mut self, run_id: &str, observer: MessageObserver) {
        if let Opening::Embedded(both) = &mut self.0 {
            let recorder = &mut both.1.recorder;
            recorder.run_id = Some(run_id.to_owned());
            recorder.observer = Some(observer);
        }
    }
}

/// Runs a turn [`open_turn`] opened, as [`run_turn`] does, with its agent steerable through
/// `steer` while it runs. The handle stays open when the turn ends: the caller closes it
/// and delivers what is left.
pub async fn run_open_steerable_turn(
    turn: OpenTurn,
    steer: &SteerHandle,
    on_event: impl FnMut(&AgentEvent) + Send,
) -> Result<TurnOutcome, TurnError> {
    run_open_turn(turn, Some(steer), on_event).await
}

async fn open_on_blocking_pool(plan: TurnPlan) -> Result<OpenTurn, TurnError> {
    match tokio::task::spawn_blocking(move || open_turn(plan)).await {
        Ok(opened) => opened,
        Err(e) => Err(StoreError::Task(e.to_string()).into()),
    }
}

async fn run_open_turn(
    turn: OpenTurn,
    steer: Option<&SteerHandle>,
    mut on_event: impl FnMut(&AgentEvent) + Send,
) -> Result<TurnOutcome, TurnError> {
    let (rest, opened) = match turn.0 {
        Opening::Rpc(both) => {
            let (plan, target) = *both;
            return crate::turn_rpc::run_rpc_turn(plan, target, steer, on_event).await;
        }
        Opening::Embedded(both) => *both,
    };
    let OpenPlan {
        store,
        session_key,
        input,
        retention,
        abort,
        memory,
    } = rest;
    let Opened {
        mut session,
        mut recorder,
        agent,
        memory_on,
    } = opened;
    let memory_flush = match memory.as_ref().and_then(|m| m.flush.as_ref()) {
        Some(settings) => {
            let (flush, back) = crate::memory_flush::before_turn(
                &store,
                session,
                &agent,
                &input,
                settings,
                abort.as_ref(),
                &mut recorder.errors,
            )
            .await?;
            session = back;
            flush
        }
        None => None,
    };
    let agent = Agent::new(agent);
    if let Some(steer) = steer {
        steer.attach(&agent);
    }
    let mut events = agent.subscribe();
    let runner = agent.clone();
    let mut run = tokio::spawn(async move { runner.prompt_messages(input).await });
    let watcher = abort.map(|abort| {
        let agent = agent.clone();
        tokio::spawn(async move {
            abort.cancelled().await;
            agent.abort();
        })
    });
    // Appends happen on the blocking pool, in event order, without holding the events up.
    let mut writer = TranscriptWriter::start(store.clone(), session, recorder);
    let result = loop {
        tokio::select! {
            biased;
            Some(event) = events.recv() => {
                writer.record(&event).await;
                on_event(&event);
            }
            result = &mut run => break result,
        }
    };
    if let Some(watcher) = watcher {
        watcher.abort();
    }
    while let Ok(event) = events.try_recv() {
        writer.record(&event).await;
        on_event(&event);
    }
    let written = writer.finish().await?;
    // Whatever the run's outcome, what it appended is made durable and counted (with what
    // a memory flush spent).
    let flush_usage = memory_flush
        .iter()
        .flat_map(|f| f.usage.iter().cloned())
        .collect();
    let after = match result {
        Ok(Ok(())) => AfterTurn {
            memory_workspace: memory.filter(|_| memory_on).map(|m| m.workspace),
            retention,
        },
        // A failed run is made durable but not summarised or maintained.
        _ => AfterTurn::default(),
    };
    let closed = turn_store::close(store, written, flush_usage, session_key.clone(), after).await?;
    match result {
        Ok(Ok(())) => {}
        Ok(Err(e)) => return Err(e.into()),
        Err(join) => return Err(pincer_agent::AgentError::RunFailed(join.to_string()).into()),
    }
    let Closed {
        session,
        recorder,
        memory,
        pruned,
    } = closed;
    Ok(TurnOutcome {
        tool_limit_reached: agent.tool_limit_reached(),
        memory,
        memory_flush,
        ..TurnOutcome::closed(session_key, session, recorder, pruned)
    })
}

/// What a turn that added `messages` adds to the index entry: the usage of every reply.
pub(crate) fn usage_stats(messages: &[Message]) -> TurnStats {
    let mut stats = TurnStats::default();
    for message in messages {
        if let Message::Assistant(a) = message {
            stats.add_usage(&a.usage);
        }
    }
    stats
}

/// Session maintenance after a turn of `key` (never pruning `key` itself); what it pruned
/// or would prune, if anything. A failure is logged: the turn already succeeded.
#[expect(
    clippy::disallowed_methods,
    reason = "runs on the blocking pool: turn_store::close, run_rpc_turn (on_blocking_pool)"
)]
pub(crate) fn maintain(
    store: &SessionStore,
    policy: &RetentionPolicy,
    key: &str,
) -> Option<PruneReport> {
    match store.prune(policy, &[key], pincer_store::ids::now_ms()) {
        Ok(report) => (!report.is_empty()).then_some(report),
        Err(e) => {
            tracing::warn!(error = %e, "session maintenance failed");
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn session_commands() {
        assert_eq!(
            session_command("/new"),
            Some(SessionCommand::NewSession { rest: None })
        );
        assert_eq!(
            session_command("  /reset  "),
            Some(SessionCommand::NewSession { rest: None })
        );
        assert_eq!(
            session_command("/new hello there"),
            Some(SessionCommand::NewSession {
                rest: Some("hello there".into())
            })
        );
        assert_eq!(session_command("/newer"), None);
        assert_eq!(session_command("say /new"), None);
    }
}

//! A turn's file work, off the async runtime: opening the session and noting its settings
//! ([`open`], called on the blocking pool by its caller, the server in the same trip as the
//! turn's planning), appending each finished message as the run goes ([`TranscriptWriter`]:
//! in event order, without the turn waiting for them), and making it durable, summarising
//! memory and maintaining the store at the end ([`close`], one trip that also appends what
//! the writer still held).
//! A slow disk or a held index lock never stalls the runtime's worker threads.
//!
//! A turn given a run id ([`crate::turn::OpenTurn::observe_messages`]) marks where its
//! messages begin with a `custom` entry of type [`RUN_MARKER`] (`data: {runId}`): pi skips
//! custom entries when it builds the context, and the gateway reads the marker back to give
//! `chat.history`'s messages their run (OpenClaw's `idempotencyKey: "<runId>:user"`). Each
//! message appended is then also handed to the turn's observer, with its entry id and its
//! 1-based position among the context's messages, on the thread that appended it.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use pincer_agent::{AgentConfig, AgentEvent};
use pincer_ai::{AssistantMessage, Message, Usage};
use pincer_store::{
    CompactionEntry, CustomEntry, EntryBody, MessageEntry, ModelChangeEntry, OpenSession,
    PruneReport, RetentionPolicy, SessionStore, StoreError, ThinkingLevelChangeEntry, Transcript,
    TurnStats, on_blocking_pool,
};
use serde_json::Value;
use tokio::task::JoinHandle;

use crate::session_memory::SessionMemoryOutcome;
use crate::turn::{maintain, open_session, usage_stats};

/// The `customType` of the entry that marks where a run's messages begin (`data: {runId}`).
pub const RUN_MARKER: &str = "openclaw.run";

/// A message a turn appended to its transcript.
#[derive(Debug, Clone)]
pub struct AppendedMessage {
    /// The transcript entry's id.
    pub entry_id: String,
    pub message: Message,
    /// 1-based position among the session context's messages.
    pub seq: usize,
    /// The run the turn was given, if any.
    pub run_id: Option<String>,
}

/// Called with each message a turn appends, on the (blocking) thread that appended it.
pub type MessageObserver = Arc<dyn Fn(&AppendedMessage) + Send + Sync>;

/// A session opened for a turn, with the agent's context loaded from it.
pub(crate) struct Opened {
    pub session: OpenSession,
    pub recorder: Recorder,
    pub agent: AgentConfig,
    /// The session's per-session memory is on (its snippet is in the agent's prompt).
    pub memory_on: bool,
}

/// Opens (or creates, or resets) the session of `key`, applies `patch`, records the model
/// and thinking level when they changed, gives `agent` the session's context and, with a
/// `memory_workspace`, the session memory's snippet.
/// Blocking: call it on the blocking pool ([`crate::turn::open_turn`] is called there by
/// the server together with the turn's planning, [`crate::turn::run_turn`] sends it there).
#[expect(
    clippy::disallowed_methods,
    reason = "runs on the blocking pool: open_turn's callers"
)]
pub(crate) fn open(
    store: &SessionStore,
    key: &str,
    new_session: bool,
    patch: Option<&Value>,
    mut agent: AgentConfig,
    memory_workspace: Option<&Path>,
) -> Result<Opened, StoreError> {
    let mut session = open_session(store, key, new_session)?;
    if let Some(patch) = patch {
        session.entry = store.patch(key, patch)?;
    }
    // Each append reaches the file at once (a killed process loses nothing it finished);
    // the fsync waits for the end of the turn.
    session.transcript.set_sync_each_append(false);
    let mut recorder = Recorder::default();
    recorder.note_settings(&mut session.transcript, &agent);
    agent.messages = session.transcript.context();
    crate::media_input::drop_old_images(
        &mut agent.messages,
        crate::media_input::IMAGE_HISTORY_TURNS,
    );
    recorder.seen = agent.messages.len();
    let memory_on = memory_workspace.is_some_and(|workspace| {
        crate::session_memory::before_turn(&session, workspace, &mut agent)
    });
    Ok(Opened {
        session,
        recorder,
        agent,
        memory_on,
    })
}

/// Appends a running turn's messages to its transcript on the blocking pool, in event order,
/// without holding the turn up: the first message starts an append task, which also takes
/// every message that comes while it runs and ends when none is left, so each message
/// reaches the file moments after it finishes while the run goes on (a tool's call is on
/// disk while the tool runs). A reply without tool calls, the run's last, is left for
/// [`close`] to append in the trip that makes the turn durable: a plain turn costs no extra
/// trip for it.
pub(crate) struct TranscriptWriter {
    store: SessionStore,
    /// With the writer while no append task runs; `None` for good once one failed
    /// (`failed` says why).
    idle: Option<(OpenSession, Recorder)>,
    /// The append task: it gives the session and recorder back when the queue is empty.
    away: Option<JoinHandle<(OpenSession, Recorder)>>,
    queue: Arc<Mutex<Queue>>,
    failed: Option<String>,
}

/// Events waiting for the append task, and whether it runs (it stops only with the lock
/// held and the queue empty, so an event queued while it runs is never left behind).
#[derive(Default)]
struct Queue {
    events: Vec<AgentEvent>,
    running: bool,
}

/// What the writer hands back when the run ends.
pub(crate) struct Written {
    pub session: OpenSession,
    pub recorder: Recorder,
    /// Events not appended yet: [`close`] appends them first.
    pub waiting: Vec<AgentEvent>,
}

impl TranscriptWriter {
    pub(crate) fn start(store: SessionStore, session: OpenSession, recorder: Recorder) -> Self {
        Self {
            store,
            idle: Some((session, recorder)),
            away: None,
            queue: Arc::default(),
            failed: None,
        }
    }

    /// Queues what `event` adds to the transcript (a finished message, a compaction) and
    /// starts the append task unless it runs (then it takes this one too).
    pub(crate) async fn record(&mut self, event: &AgentEvent) {
        if !matches!(
            event,
            AgentEvent::MessageEnd { .. } | AgentEvent::CompactionEnd(_)
        ) {
            return;
        }
        // A reply without tool calls ends the run (or the next message takes it along):
        // it goes with the close, a moment later, not on a trip of its own.
        let last_reply = matches!(
            event,
            AgentEvent::MessageEnd { message: Message::Assistant(a) } if a.tool_calls().next().is_none()
        );
        {
            let mut queue = lock(&self.queue);
            queue.events.push(event.clone());
            if queue.running || last_reply {
                return;
            }
            queue.running = true;
        }
        self.collect().await;
        let Some((mut session, mut recorder)) = self.idle.take() else {
            return;
        };
        let (store, queue) = (self.store.clone(), Arc::clone(&self.queue));
        self.away = Some(tokio::task::spawn_blocking(move || {
            loop {
                let events = {
                    let mut queue = lock(&queue);
                    if queue.events.is_empty() {
                        queue.running = false;
                        break;
                    }
                    std::mem::take(&mut queue.events)
                };
                for event in &events {
                    recorder.record(&store, &mut session, event);
                }
            }
            (session, recorder)
        }));
    }

    /// Waits for the append task, if one ran.
    async fn collect(&mut self) {
        if let Some(task) = self.away.take() {
            match task.await {
                Ok(state) => self.idle = Some(state),
                Err(e) => self.failed = Some(e.to_string()),
            }
        }
    }

    /// Gives the session and recorder back once the append task is done, with what waits.
    pub(crate) async fn finish(mut self) -> Result<Written, StoreError> {
        self.collect().await;
        let waiting = std::mem::take(&mut lock(&self.queue).events);
        match (self.idle, self.failed) {
            (Some((session, recorder)), _) => Ok(Written {
                session,
                recorder,
                waiting,
            }),
            (None, failed) => Err(StoreError::Task(failed.unwrap_or_default())),
        }
    }
}

fn lock(queue: &Mutex<Queue>) -> std::sync::MutexGuard<'_, Queue> {
    queue.lock().unwrap_or_else(|e| e.into_inner())
}

/// What to do after a turn that succeeded (nothing for one that failed).
#[derive(Default)]
pub(crate) struct AfterTurn {
    /// Summarise into the session memory file of this workspace.
    pub memory_workspace: Option<PathBuf>,
    pub retention: Option<RetentionPolicy>,
}

/// A turn made durable.
pub(crate) struct Closed {
    pub session: OpenSession,
    pub recorder: Recorder,
    pub memory: SessionMemoryOutcome,
    pub pruned: Option<PruneReport>,
}

/// Appends what still waited, makes what the turn appended durable and counts its usage
/// (with `flush_usage`, what a memory flush before it spent) in the index entry; then, as
/// `after` says, summarises the session memory and maintains the store. Failures of these
/// are logged and kept in the recorder's errors: the turn itself happened.
#[expect(
    clippy::disallowed_methods,
    reason = "the body is one on_blocking_pool call"
)]
pub(crate) async fn close(
    store: SessionStore,
    written: Written,
    flush_usage: Vec<Usage>,
    key: String,
    after: AfterTurn,
) -> Result<Closed, StoreError> {
    let Written {
        mut session,
        mut recorder,
        waiting,
    } = written;
    on_blocking_pool(move || {
        for event in &waiting {
            recorder.record(&store, &mut session, event);
        }
        let mut stats = recorder.stats();
        for usage in &flush_usage {
            stats.add_usage(usage);
        }
        if let Err(e) = store.finish_turn(&mut session, &stats) {
            tracing::error!(error = %e, "cannot finish the turn in the session store");
            recorder.errors.push(e.to_string());
        }
        let memory = match &after.memory_workspace {
            Some(workspace) => crate::session_memory::after_turn(
                &store,
                &mut session,
                workspace,
                &mut recorder.errors,
            ),
            None => SessionMemoryOutcome::default(),
        };
        let pruned = after
            .retention
            .and_then(|policy| maintain(&store, &policy, &key));
        Ok(Closed {
            session,
            recorder,
            memory,
            pruned,
        })
    })
    .await
}

/// Appends `result` to the session's transcript as pi's `compaction` entry (and counts it,
/// `compactionCount`, in the same step), its first kept message found on the current
/// branch. `None`, with nothing written, when that message is not there.
#[expect(
    clippy::disallowed_methods,
    reason = "runs on the blocking pool: Recorder::record and compact::compact_session"
)]
pub(crate) fn record_compaction(
    store: &SessionStore,
    session: &mut OpenSession,
    result: &pincer_agent::compaction::CompactionResult,
) -> Result<Option<pincer_store::Entry>, StoreError> {
    let transcript = &session.transcript;
    let leaf = transcript.leaf_id().map(str::to_owned).unwrap_or_default();
    let kept = transcript
        .branch(&leaf)
        .into_iter()
        .rev()
        .find_map(|e| match &e.body {
            EntryBody::Message(m) if m.message == result.first_kept_message => Some(e.id.clone()),
            _ => None,
        });
    let Some(first_kept_entry_id) = kept else {
        return Ok(None);
    };
    let entry = CompactionEntry {
        summary: result.summary.clone(),
        first_kept_entry_id,
        tokens_before: result.tokens_before,
        details: serde_json::to_value(&result.details).ok(),
        from_hook: None,
    };
    store.record_compaction(session, entry).map(Some)
}

/// Turns agent events into transcript entries.
#[derive(Default)]
pub(crate) struct Recorder {
    pub(crate) added: Vec<Message>,
    pub(crate) reply: Option<AssistantMessage>,
    pub(crate) errors: Vec<String>,
    /// The context's messages so far (the position of the next one is this plus one).
    seen: usize,
    /// The run whose marker goes before the first message, and who is told of each one.
    pub(crate) run_id: Option<String>,
    marked: bool,
    pub(crate) observer: Option<MessageObserver>,
}

impl Recorder {
    #[expect(
        clippy::disallowed_methods,
        reason = "runs on the blocking pool: TranscriptWriter::record and turn_store::open"
    )]
    fn append(&mut self, transcript: &mut Transcript, body: EntryBody) {
        if let Err(e) = transcript.append_body(body) {
            tracing::error!(error = %e, "cannot append to the transcript");
            self.errors.push(e.to_string());
        }
    }

    /// pi records the model and thinking level when they change (and at the start).
    fn note_settings(&mut self, transcript: &mut Transcript, agent: &AgentConfig) {
        let (mut model, mut level) = (None, None);
        for entry in transcript.entries() {
            match &entry.body {
                EntryBody::ModelChange(m) => model = Some((m.provider.clone(), m.model_id.clone())),
                EntryBody::ThinkingLevelChange(t) => level = Some(t.thinking_level.clone()),
                _ => {}
            }
        }
        let current = (agent.model.provider.clone(), agent.model.id.clone());
        if model.as_ref() != Some(&current) {
            self.append(
                transcript,
                EntryBody::ModelChange(ModelChangeEntry {
                    provider: current.0,
                    model_id: current.1,
                }),
            );
        }
        let thinking = agent.thinking_level.as_str().to_owned();
        if level.as_deref() != Some(thinking.as_str()) {
            self.append(
                transcript,
                EntryBody::ThinkingLevelChange(ThinkingLevelChangeEntry {
                    thinking_level: thinking,
                }),
            );
        }
    }

    #[expect(
        clippy::disallowed_methods,
        reason = "runs on the blocking pool: TranscriptWriter::record and close"
    )]
    fn record(&mut self, store: &SessionStore, session: &mut OpenSession, event: &AgentEvent) {
        match event {
            AgentEvent::MessageEnd { message } => {
                if let Message::Assistant(a) = message {
                    self.reply = Some(a.clone());
                }
                self.added.push(message.clone());
                if let Some(run_id) = self.run_id.clone().filter(|_| !self.marked) {
                    self.marked = true;
                    self.append(
                        &mut session.transcript,
                        EntryBody::Custom(CustomEntry {
                            custom_type: RUN_MARKER.to_owned(),
                            data: Some(serde_json::json!({ "runId": run_id })),
                        }),
                    );
                }
                let appended = session
                    .transcript
                    .append_body(EntryBody::Message(MessageEntry {
                        message: message.clone(),
                    }));
                match appended {
                    Ok(entry) => {
                        self.seen += 1;
                        if let Some(observer) = &self.observer {
                            observer(&AppendedMessage {
                                entry_id: entry.id.clone(),
                                message: message.clone(),
                                seq: self.seen,
                                run_id: self.run_id.clone(),
                            });
                        }
                    }
                    Err(e) => {
                        tracing::error!(error = %e, "cannot append to the transcript");
                        self.errors.push(e.to_string());
                    }
                }
            }
            AgentEvent::CompactionEnd(end) => {
                let Some(result) = &end.result else { return };
                match record_compaction(store, session, result) {
                    Ok(Some(_)) => {}
                    Ok(None) => tracing::warn!(
                        "compaction's first kept message is not in the transcript; the full history stays in context on resume"
                    ),
                    Err(e) => {
                        tracing::error!(error = %e, "cannot record the compaction");
                        self.errors.push(e.to_string());
                    }
                }
            }
            _ => {}
        }
    }

    /// What the turn adds to the index entry: the usage of every reply.
    pub(crate) fn stats(&self) -> TurnStats {
        usage_stats(&self.added)
    }
}

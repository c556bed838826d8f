//! One turn of a persistent session on an RPC worker (`agent.runner: "rpc"`): the same
//! [`TurnPlan`] in, the same [`AgentEvent`]s and [`TurnOutcome`] out as the in-process
//! runner, so the server does not care which one ran a session.
//!
//! The session store stays the owner of sessions: it opens (or creates, or resets) the
//! session, and the worker is pointed at that session's transcript (`switch_session`) and
//! appends to it itself — the store's transcripts are pi session files. A worker is
//! pointed again whenever it was serving another session or the file changed since it
//! last let go of it (a heartbeat's pruned acknowledgement, `chat.inject`, a compaction):
//! its in-memory copy would be stale.
//!
//! Faults: a worker that dies mid-turn fails the turn with a clear error and is dropped by
//! the pool; what it finished is in the transcript, so the session's next message gets a
//! fresh worker that resumes from it. An abort is sent as pi-gateway sends it (no wait for
//! the answer); a worker that has not ended the turn 5 s later is killed. A worker still
//! holding steered messages when its turn ended is stopped (its queue would leak into the
//! next session it serves) and the messages go back to the caller to run as turns of
//! their own.

use std::collections::{HashMap, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use pincer_agent::AgentEvent;
use pincer_ai::Message;
use pincer_store::{OpenSession, on_blocking_pool};
use serde_json::Value;
use tokio::sync::broadcast::error::RecvError;

use crate::turn::{SteerHandle, TurnError, TurnOutcome, TurnPlan, maintain, open_session};
use crate::turn_store::Recorder;
use pincer_rpc::{
    CapabilityProfile, ExtensionUiRequest, ExtensionUiResponse, PooledWorker, RpcClient,
    RpcCommand, RpcPool, UiAnswerer, agent_event,
};

/// How long a worker may take to end its turn after an abort before it is killed
/// (pi-gateway's 5 s).
pub const ABORT_GRACE: Duration = Duration::from_secs(5);
/// How long `switch_session` and `prompt` may take to be answered (pi-gateway's 30 s).
const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);
/// How long a person has to answer a dialog that sets no `timeout` of its own, before the
/// worker gets the automatic answer.
pub const DIALOG_TIMEOUT: Duration = Duration::from_secs(300);

/// Who answers a worker's dialogs during a turn (the server: its connected clients).
pub trait DialogBroker: Send + Sync + 'static {
    /// Shows dialog `request` to someone who can answer it; `None` when nobody can, and the
    /// worker gets pi-gateway's automatic answer (first option, yes, or cancel).
    fn ask(
        &self,
        request: &ExtensionUiRequest,
    ) -> Option<tokio::sync::oneshot::Receiver<ExtensionUiResponse>>;
}

/// The pool and what the gateway remembers about the sessions its workers served. One per
/// gateway; cheap to share.
pub struct RpcTurns {
    pool: RpcPool,
    /// Per session key: its transcript and the file's length when a worker last let go of
    /// it. A different length now means someone else wrote it since.
    seen: Mutex<HashMap<String, (PathBuf, u64)>>,
}

impl RpcTurns {
    pub fn new(pool: RpcPool) -> Arc<Self> {
        Arc::new(Self {
            pool,
            seen: Mutex::default(),
        })
    }

    pub fn pool(&self) -> &RpcPool {
        &self.pool
    }

    fn seen(&self) -> MutexGuard<'_, HashMap<String, (PathBuf, u64)>> {
        self.seen.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Whether the worker bound to `key` has `path` as it is now (`len` long).
    fn is_current(&self, key: &str, path: &Path, len: Option<u64>) -> bool {
        self.seen()
            .get(key)
            .is_some_and(|(p, l)| p == path && Some(*l) == len)
    }

    fn remember(&self, key: &str, path: &Path, len: Option<u64>) {
        match len {
            Some(len) => {
                self.seen().insert(key.to_owned(), (path.to_owned(), len));
            }
            None => self.forget(key),
        }
    }

    fn forget(&self, key: &str) {
        self.seen().remove(key);
    }
}

/// The transcript's length (blocking: call it on the blocking pool).
#[expect(
    clippy::disallowed_methods,
    reason = "runs on the blocking pool: run_rpc_turn (on_blocking_pool)"
)]
fn file_len(path: &Path) -> Option<u64> {
    std::fs::metadata(path).ok().map(|m| m.len())
}

/// The error of a background turn that found no idle worker with its profile: it was
/// skipped, not failed (the heartbeat reports it as `skipped`, and the run's system
/// events wait for the next turn).
pub const NO_IDLE_WORKER: &str =
    "no idle agent worker has this session's profile; the background turn is skipped";

/// Where a turn runs when it runs on a worker.
#[derive(Clone)]
pub struct RpcTarget {
    pub turns: Arc<RpcTurns>,
    /// The worker the session needs (role, workspace, tools, model).
    pub profile: CapabilityProfile,
    /// Among requests waiting for a worker, higher goes first (users before cron).
    pub priority: u8,
    /// Background turns (the heartbeat) only take an idle worker whose profile matches
    /// (pi-gateway's `findBestMatch`): they never start, evict or wait for one, so a user is
    /// never held up by them. Without one they fail with [`NO_IDLE_WORKER`] before
    /// anything is written.
    pub background: bool,
    /// Where the worker's dialogs go (set by the server for each run); `None`: answered
    /// automatically.
    pub dialogs: Option<Arc<dyn DialogBroker>>,
}

impl std::fmt::Debug for RpcTarget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RpcTarget")
            .field("role", &self.profile.role)
            .field("priority", &self.priority)
            .field("background", &self.background)
            .finish_non_exhaustive()
    }
}

impl RpcTarget {
    async fn acquire(&self, key: &str) -> Result<PooledWorker, TurnError> {
        let pool = self.turns.pool();
        if self.background {
            return pool
                .find_best_match(key, &self.profile)
                .await
                .ok_or_else(|| TurnError::Worker(NO_IDLE_WORKER.into()));
        }
        pool.acquire(key, &self.profile, self.priority)
            .await
            .map_err(|e| TurnError::Worker(e.to_string()))
    }
}

/// Steering into a worker's running turn: each message is sent as a `steer` command, and
/// the turn notes which of them the worker took (their `message_start`).
pub(crate) struct WorkerSteer {
    client: Arc<RpcClient>,
    /// Texts sent and not yet seen starting, oldest first.
    pending: Arc<Mutex<VecDeque<String>>>,
}

impl WorkerSteer {
    fn pending(&self) -> MutexGuard<'_, VecDeque<String>> {
        self.pending.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Sends `message`; `false` when the worker is gone.
    pub(crate) fn steer(&self, message: &Message) -> bool {
        let text = message_text(message);
        let sent = self.client.send_no_wait(RpcCommand::Steer {
            message: text.clone(),
            images: None,
        });
        if sent.is_ok() {
            self.pending().push_back(text);
        }
        sent.is_ok()
    }

    /// The messages sent that the worker never started, oldest first.
    pub(crate) fn unconsumed(&self) -> Vec<Message> {
        self.pending().drain(..).map(Message::user).collect()
    }
}

fn message_text(message: &Message) -> String {
    match message {
        Message::User(user) => user.text(),
        Message::Assistant(assistant) => assistant.text(),
        Message::ToolResult(_) => String::new(),
    }
}

fn message_images(message: &Message) -> Vec<pincer_ai::ImageContent> {
    match message {
        Message::User(pincer_ai::UserMessage {
            content: pincer_ai::UserContent::Blocks(blocks),
            ..
        }) => blocks
            .iter()
            .filter_map(|b| match b {
                pincer_ai::ContentBlock::Image(image) => Some(image.clone()),
                _ => None,
            })
            .collect(),
        _ => Vec::new(),
    }
}

/// How the event loop ended.
enum Ending {
    /// `agent_end` arrived.
    Ended,
    /// The worker exited or closed its output first.
    Died(String),
    /// It ignored an abort for [`ABORT_GRACE`].
    AbortIgnored,
}

/// Runs `plan` on a worker of `target`'s pool; see the module doc.
pub(crate) async fn run_rpc_turn(
    plan: TurnPlan,
    target: RpcTarget,
    steer: Option<&SteerHandle>,
    mut on_event: impl FnMut(&AgentEvent) + Send,
) -> Result<TurnOutcome, TurnError> {
    let TurnPlan {
        store,
        session_key,
        new_session,
        input,
        session_patch,
        retention,
        abort,
        ..
    } = plan;
    // The worker writes the transcript; the gateway opens the session and updates the index
    // (on the blocking pool).
    #[expect(clippy::disallowed_methods, reason = "inside on_blocking_pool")]
    let (session, len): (OpenSession, _) = {
        let (store, key) = (store.clone(), session_key.clone());
        on_blocking_pool(move || {
            let session = open_session(&store, &key, new_session)?;
            if let Some(patch) = &session_patch {
                store.patch(&key, patch)?;
            }
            let len = file_len(session.transcript.path());
            Ok((session, len))
        })
        .await?
    };
    let path = session.transcript.path().to_path_buf();
    let turns = Arc::clone(&target.turns);
    let aborted = abort.clone().unwrap_or_default();
    // A run aborted while it waits for a worker never reaches one.
    let worker = tokio::select! {
        worker = target.acquire(&session_key) => worker?,
        () = aborted.cancelled(), if abort.is_some() => {
            return Err(TurnError::Worker("aborted while waiting for a free agent worker".into()));
        }
    };
    let client = worker.shared_client();
    // Subscribed before anything is sent: no event of this turn can be missed.
    let mut events = client.subscribe();
    // The commands that start the turn: a worker that fails one is in an unknown state.
    let mut commands = Vec::with_capacity(2);
    if worker.reuse.needs_session_switch() || !turns.is_current(&session_key, &path, len) {
        let session_path = path.display().to_string();
        commands.push((
            RpcCommand::SwitchSession { session_path },
            "could not open the session",
        ));
    }
    let message = input
        .iter()
        .map(message_text)
        .collect::<Vec<_>>()
        .join("\n\n");
    // pi's `prompt` takes the images beside the text.
    let images: Vec<pincer_ai::ImageContent> = input.iter().flat_map(message_images).collect();
    let prompt = RpcCommand::Prompt {
        message,
        images: (!images.is_empty()).then_some(images),
        streaming_behavior: None,
    };
    commands.push((prompt, "did not take the message"));
    for (command, failed) in commands {
        if let Err(e) = client.request(command, REQUEST_TIMEOUT).await {
            turns.forget(&session_key);
            worker.discard().await;
            return Err(TurnError::Worker(format!("the agent worker {failed}: {e}")));
        }
    }
    let pending = Arc::new(Mutex::new(VecDeque::new()));
    if let Some(steer) = steer {
        steer.attach_worker(WorkerSteer {
            client: Arc::clone(&client),
            pending: Arc::clone(&pending),
        });
    }

    let mut recorder = Recorder::default();
    let mut started = false;
    let mut abort_deadline: Option<tokio::time::Instant> = None;
    let ending = loop {
        let deadline = abort_deadline;
        tokio::select! {
            biased;
            received = events.recv() => match received {
                Ok(line) => {
                    if let Some(request) = dialog_of(&line) {
                        answer_dialog(request, client.ui_answerer(), target.dialogs.as_deref());
                    }
                    if let Some(ending) = recorder.feed(&line, &mut started, &pending, &mut on_event) {
                        break ending;
                    }
                }
                Err(RecvError::Lagged(n)) => {
                    tracing::warn!(missed = n, "rpc turn: fell behind the worker's events");
                }
                Err(RecvError::Closed) => break Ending::Died(exit_message(&client)),
            },
            _ = client.exited() => {
                // What it wrote before dying still counts.
                let mut ended = None;
                while let Ok(line) = events.try_recv() {
                    ended = ended.or(recorder.feed(&line, &mut started, &pending, &mut on_event));
                }
                break ended.unwrap_or_else(|| Ending::Died(exit_message(&client)));
            }
            () = aborted.cancelled(), if abort_deadline.is_none() && abort.is_some() => {
                let _ = client.send_no_wait(RpcCommand::Abort);
                abort_deadline = Some(tokio::time::Instant::now() + ABORT_GRACE);
            }
            () = sleep_until(deadline), if deadline.is_some() => break Ending::AbortIgnored,
        }
    };

    // Steering ends with the turn: whatever the worker did not take goes back.
    let left = steer.map_or(0, |s| s.finish_worker());
    let mut keep_bound = false;
    let result = match ending {
        Ending::Ended if left == 0 => {
            // The worker keeps the session: remembered below with the file's length.
            keep_bound = true;
            drop(worker);
            Ok(())
        }
        Ending::Ended => {
            turns.forget(&session_key);
            worker.discard().await;
            Ok(())
        }
        Ending::AbortIgnored => {
            tracing::warn!(session = %session_key, "rpc turn: the worker ignored an abort; killing it");
            turns.forget(&session_key);
            worker.discard().await;
            Ok(())
        }
        Ending::Died(why) => {
            turns.forget(&session_key);
            drop(worker);
            Err(TurnError::Worker(format!(
                "the agent worker stopped mid-turn ({why}); what it finished is kept, and the \
                 next message continues the session on a new worker"
            )))
        }
    };
    let stats = recorder.stats();
    #[expect(clippy::disallowed_methods, reason = "inside on_blocking_pool")]
    let (session, finished, pruned, len) = {
        let key = session_key.clone();
        let retention = retention.filter(|_| result.is_ok());
        on_blocking_pool(move || {
            let mut session = session;
            let finished = store.finish_turn(&mut session, &stats);
            let pruned = retention.and_then(|policy| maintain(&store, &policy, &key));
            let len = file_len(session.transcript.path());
            Ok((session, finished, pruned, len))
        })
        .await?
    };
    if keep_bound {
        turns.remember(&session_key, &path, len);
    }
    if let Err(e) = finished {
        tracing::error!(error = %e, "cannot finish the turn in the session store");
        recorder.errors.push(e.to_string());
    }
    result?;
    // Per-session memory and the flush need the agent's context, which the worker keeps.
    Ok(TurnOutcome::closed(session_key, session, recorder, pruned))
}

/// The dialog a worker's line opens, if it is one.
fn dialog_of(line: &Value) -> Option<ExtensionUiRequest> {
    ExtensionUiRequest::from_event(line).filter(ExtensionUiRequest::is_dialog)
}

/// Gets `request` answered: by whoever `broker` shows it to (within the dialog's own
/// `timeout`, else [`DIALOG_TIMEOUT`]), or automatically. Never blocks the turn's events.
fn answer_dialog(
    request: ExtensionUiRequest,
    answerer: UiAnswerer,
    broker: Option<&dyn DialogBroker>,
) {
    let automatic = request.auto_answer();
    let Some(asked) = broker.and_then(|b| b.ask(&request)) else {
        if let Some(answer) = automatic {
            let _ = answerer.answer(&answer);
        }
        return;
    };
    let wait = request
        .fields
        .get("timeout")
        .and_then(Value::as_u64)
        .map_or(DIALOG_TIMEOUT, Duration::from_millis);
    tokio::spawn(async move {
        let answer = match tokio::time::timeout(wait, asked).await {
            Ok(Ok(answer)) => Some(answer),
            // Unanswered in time, or nobody will answer any more.
            _ => automatic,
        };
        if let Some(answer) = answer {
            // A worker gone meanwhile needs no answer.
            let _ = answerer.answer(&answer);
        }
    });
}

async fn sleep_until(deadline: Option<tokio::time::Instant>) {
    match deadline {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}

fn exit_message(client: &RpcClient) -> String {
    match client.exit_info() {
        Some(info) => info.to_error().to_string(),
        None => "it closed its output".to_owned(),
    }
}

/// What the turn added, from the worker's events (the worker writes the transcript; the
/// gateway's side only keeps the messages).
impl Recorder {
    /// Feeds one worker line. Lines before this turn's `agent_start` are skipped: a late
    /// `agent_end` of an earlier, aborted turn must not end this one.
    fn feed(
        &mut self,
        line: &Value,
        started: &mut bool,
        pending: &Mutex<VecDeque<String>>,
        on_event: &mut impl FnMut(&AgentEvent),
    ) -> Option<Ending> {
        let event = agent_event(line)?;
        if !*started {
            if !matches!(event, AgentEvent::AgentStart) {
                return None;
            }
            *started = true;
        }
        match &event {
            AgentEvent::MessageStart {
                message: message @ Message::User(_),
            } => {
                // A steered message the worker took now.
                let text = message_text(message);
                let mut pending = pending.lock().unwrap_or_else(|e| e.into_inner());
                if let Some(at) = pending.iter().position(|t| *t == text) {
                    pending.remove(at);
                }
            }
            AgentEvent::MessageEnd { message } => {
                if let Message::Assistant(a) = message {
                    self.reply = Some(a.clone());
                }
                self.added.push(message.clone());
            }
            _ => {}
        }
        on_event(&event);
        matches!(event, AgentEvent::AgentEnd { .. }).then_some(Ending::Ended)
    }
}

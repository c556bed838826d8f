//! The heartbeat executor: one [`HeartbeatWake`] per agent that has a heartbeat, and the run
//! it calls (OpenClaw's `runHeartbeatOnce`): check the active hours and the main session's
//! lane, read HEARTBEAT.md, pick the prompt from the pending system events, run a turn on an
//! idle session only, and decide by the `HEARTBEAT_OK` rules whether its reply reaches anyone.
//! Every run ends in a `heartbeat` event (OpenClaw's `HeartbeatEventPayload`: `sent`,
//! `ok-token`, `ok-empty`, `skipped`, `failed`).
//!
//! [`Heartbeats`] is the handle the composition root creates before the server starts and
//! shares with everything that wakes an agent (exec exits, cron): the server fills it in.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use serde_json::{Value, json};

use super::Gateway;
use super::runs::RunState;
use super::runtime::{TurnOrigin, TurnRequest, on_blocking_pool};
use pincer_automation::heartbeat::{
    HEARTBEAT_OK, HeartbeatFile, HeartbeatSettings, HeartbeatTarget, HeartbeatWake, PromptOptions,
    RunOutcome, WakeRequest, WakeStatus, build_heartbeat_prompt_with, heartbeat_reply_delivery,
    read_heartbeat_file,
};

/// The longest a heartbeat waits for its turn; a turn is bounded by its own limits long
/// before this.
const RUN_WAIT: Duration = Duration::from_secs(6 * 3600);
/// How much of a delivered reply the `heartbeat` event shows.
const PREVIEW_CHARS: usize = 200;

/// The agents' heartbeat clocks. Clones share them.
#[derive(Clone, Default)]
pub struct Heartbeats {
    inner: Arc<Mutex<Inner>>,
}

#[derive(Default)]
struct Inner {
    wakes: HashMap<String, HeartbeatWake>,
    /// Where each agent's heartbeat replies go (for `status`).
    targets: HashMap<String, HeartbeatTarget>,
    /// The last `heartbeat` event's payload (`last-heartbeat`).
    last_event: Option<Value>,
}

impl std::fmt::Debug for Heartbeats {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let agents: Vec<String> = self.lock().wakes.keys().cloned().collect();
        f.debug_struct("Heartbeats")
            .field("agents", &agents)
            .finish()
    }
}

impl Heartbeats {
    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Asks for a heartbeat of `agent_id` soon (coalesced, retried while its session is
    /// busy). `false` when the agent has no heartbeat (then queued events wait for the
    /// session's next turn).
    pub fn request_now(&self, agent_id: &str, reason: &str) -> bool {
        match self.lock().wakes.get(agent_id) {
            Some(wake) => {
                wake.request_now(reason);
                true
            }
            None => false,
        }
    }

    /// The clock of `agent_id`, for status displays.
    pub fn status(&self, agent_id: &str) -> Option<WakeStatus> {
        self.lock().wakes.get(agent_id).map(HeartbeatWake::status)
    }

    /// Where `agent_id`'s heartbeat replies go, if it has a heartbeat.
    pub fn target(&self, agent_id: &str) -> Option<HeartbeatTarget> {
        self.lock().targets.get(agent_id).cloned()
    }

    /// Every agent with a heartbeat and its clock's state, by agent id.
    pub fn statuses(&self) -> Vec<(String, WakeStatus)> {
        let mut all: Vec<(String, WakeStatus)> = self
            .lock()
            .wakes
            .iter()
            .map(|(id, wake)| (id.clone(), wake.status()))
            .collect();
        all.sort_by(|a, b| a.0.cmp(&b.0));
        all
    }

    /// The payload of the last `heartbeat` event, if there was one.
    pub fn last_event(&self) -> Option<Value> {
        self.lock().last_event.clone()
    }

    /// Starts a clock for each agent in `settings` (the server does this as it starts).
    pub(super) fn start(&self, gw: &Arc<Gateway>, settings: Vec<(String, HeartbeatSettings)>) {
        for (agent_id, settings) in settings {
            let every = settings.every();
            self.lock()
                .targets
                .insert(agent_id.clone(), settings.target.clone());
            let runner = AgentHeartbeat {
                gw: Arc::clone(gw),
                agent_id: agent_id.clone(),
                settings: Arc::new(settings),
            };
            let wake = HeartbeatWake::spawn(every, Arc::clone(&gw.clock), move |request| {
                let runner = runner.clone();
                async move { runner.run(request).await }
            });
            if let Some(old) = self.lock().wakes.insert(agent_id, wake) {
                old.stop();
            }
        }
    }

    /// Stops every clock (the server is shutting down).
    pub(super) fn stop_all(&self) {
        let wakes: Vec<HeartbeatWake> = self.lock().wakes.drain().map(|(_, w)| w).collect();
        for wake in wakes {
            wake.stop();
        }
    }

    fn record(&self, payload: &Value) {
        self.lock().last_event = Some(payload.clone());
    }
}

/// A transcript before a heartbeat run: its session id, path and length.
type TranscriptMark = (String, std::path::PathBuf, u64);

/// Cuts the transcript back to `mark` if the session of `key` is still the one marked.
#[expect(
    clippy::disallowed_methods,
    reason = "runs on the blocking pool: AgentHeartbeat::prune"
)]
fn prune_idle(
    store: &pincer_store::SessionStore,
    key: &str,
    (session_id, path, len): TranscriptMark,
) -> Result<bool, pincer_store::StoreError> {
    match store.entry(key) {
        Ok(Some(entry)) if entry.session_id == session_id => {}
        _ => return Ok(false),
    }
    pincer_store::truncate_transcript(&path, len)
}

/// One agent's run callback.
#[derive(Clone)]
struct AgentHeartbeat {
    gw: Arc<Gateway>,
    agent_id: String,
    settings: Arc<HeartbeatSettings>,
}

/// How a run ended, for the `heartbeat` event.
enum Ended {
    Skipped(&'static str),
    Sent { text: String },
    OkToken,
    OkEmpty,
    Failed(String),
}

impl AgentHeartbeat {
    async fn run(&self, request: WakeRequest) -> RunOutcome {
        let gw = &self.gw;
        let started = gw.clock.now_ms();
        if !self.settings.is_active_at(started) {
            return self.end(&request, started, Ended::Skipped("quiet-hours"));
        }
        let key = gw.runtime.main_session_key(&self.agent_id);
        if gw.runs.is_busy(&key) {
            return self.busy(&request, started);
        }
        let events = gw.system_events.peek(&key);
        let agent_id = self.agent_id.clone();
        #[expect(clippy::disallowed_methods, reason = "inside on_blocking_pool")]
        let file = on_blocking_pool(&gw.runtime, move |runtime| {
            match runtime.workspace(&agent_id) {
                Some(dir) => read_heartbeat_file(&dir),
                None => HeartbeatFile::Missing,
            }
        })
        .await
        .unwrap_or(HeartbeatFile::Missing);
        if !request.kind().is_event_driven() && file.skips_tick(!events.is_empty()) {
            return self.end(&request, started, Ended::Skipped("empty-heartbeat-file"));
        }
        let deliver = self.settings.delivers();
        let prompt = build_heartbeat_prompt_with(
            &events,
            &PromptOptions {
                override_prompt: self.settings.prompt.as_deref(),
                reason: Some(&request.reason),
                deliver_to_user: deliver,
            },
        );
        let before = self.transcript_mark(&key).await;
        let run_id = format!("heartbeat-{}", pincer_store::ids::session_id());
        let turn = TurnRequest {
            agent_id: self.agent_id.clone(),
            session_key: key.clone(),
            // The turn itself puts the pending events in front (and drains them).
            message: prompt.body,
            origin: TurnOrigin::Heartbeat {
                kind: prompt.kind,
                ack_max_chars: self.settings.ack_max_chars,
                deliver,
            },
            media: Vec::new(),
            thinking: None,
        };
        if !gw
            .runs
            .start_if_idle(Arc::clone(&gw.runtime), &run_id, turn)
        {
            // A user's message got there first: never wait in front of or behind it.
            return self.busy(&request, started);
        }
        let result = match gw.runs.wait(&run_id, RUN_WAIT).await {
            Some((RunState::Done(result), _)) => result,
            _ => {
                let message = "the heartbeat turn did not finish in time".to_owned();
                return self.end(&request, started, Ended::Failed(message));
            }
        };
        // On an RPC pool the heartbeat only takes an idle worker (never starts one).
        if result.error.as_deref() == Some(pincer_turns::turn_rpc::NO_IDLE_WORKER) {
            return self.end(&request, started, Ended::Skipped("no-idle-worker"));
        }
        let ended = if let Some(error) = &result.error {
            Ended::Failed(error.clone())
        } else {
            match heartbeat_reply_delivery(&result.text, prompt.kind, self.settings.ack_max_chars) {
                Some(text) => Ended::Sent { text },
                None if result.text.contains(HEARTBEAT_OK) => Ended::OkToken,
                None => Ended::OkEmpty,
            }
        };
        if matches!(ended, Ended::OkToken | Ended::OkEmpty) {
            self.prune(&key, before).await;
        }
        if let Ended::Sent { text } = &ended {
            self.to_channel(&key, text).await;
        }
        self.end(&request, started, ended)
    }

    /// Sends a kept heartbeat reply to its target's chat channel: the one the main session
    /// last heard from (`last`), or the named channel (its `to`, else the chat it last heard
    /// from there).
    async fn to_channel(&self, key: &str, text: &str) {
        let Some(channels) = self.gw.channels.get() else {
            return;
        };
        if !super::send_policy::may_deliver(&self.gw, &self.agent_id, key).await {
            return;
        }
        let last = channels.last_route(key);
        let (channel, account, to) = match &self.settings.target {
            HeartbeatTarget::None => return,
            HeartbeatTarget::Last => match last {
                Some(route) => route,
                None => return,
            },
            HeartbeatTarget::Channel { channel, to } => {
                let last = last.filter(|(c, ..)| c == channel);
                match (to, last) {
                    (Some(to), _) => (channel.clone(), None, to.clone()),
                    (None, Some(route)) => route,
                    (None, None) => {
                        tracing::warn!(%channel, "heartbeat target has no `to` and no chat to reply to yet");
                        return;
                    }
                }
            }
        };
        if let Err(e) = channels
            .deliver_to(&channel, account.as_deref(), &to, &self.agent_id, text)
            .await
        {
            tracing::warn!(%channel, error = %e, "heartbeat reply not delivered to the channel");
        }
    }

    /// The session is busy. Something that happened (an exec exit, a cron reminder, a wake)
    /// waits: retried in a second until the session is free. A plain timer beat is dropped
    /// with `skipWhenBusy` (the default; the next beat comes at the interval), else retried
    /// too.
    fn busy(&self, request: &WakeRequest, started: i64) -> RunOutcome {
        let kind = request.kind();
        let waits =
            kind.is_event_driven() || kind == pincer_automation::heartbeat::ReasonKind::Manual;
        if self.settings.skip_when_busy && !waits {
            return self.end(request, started, Ended::Skipped("busy"));
        }
        RunOutcome::Busy
    }

    /// The main session's transcript and its length before a run, to cut an ack away.
    async fn transcript_mark(&self, key: &str) -> Option<TranscriptMark> {
        let store = self.gw.runtime.sessions(&self.agent_id);
        let key = key.to_owned();
        #[expect(clippy::disallowed_methods, reason = "inside SessionStore::run")]
        let mark = store
            .run(move |s| {
                let Some(entry) = s.entry(&key)? else {
                    return Ok(None);
                };
                let path = s.transcript_path(&entry.session_id);
                let len = std::fs::metadata(&path).ok().map(|m| m.len());
                Ok(len.map(|len| (entry.session_id, path, len)))
            })
            .await;
        mark.ok().flatten()
    }

    /// Removes an acknowledged run's turn from the transcript (OpenClaw prunes these too:
    /// a poll every 30 minutes would otherwise fill the context with acks). Only while the
    /// session is idle and still the same one; the files on the blocking pool.
    async fn prune(&self, key: &str, before: Option<TranscriptMark>) {
        let Some(mark) = before else {
            return;
        };
        let store = self.gw.runtime.sessions(&self.agent_id);
        let pruned = self
            .gw
            .runs
            .on_idle_session(key, store, move |store, key| prune_idle(store, key, mark))
            .await;
        match pruned {
            Ok(Some(Err(e))) => {
                tracing::warn!(session = %key, error = %e, "cannot prune the heartbeat's turn")
            }
            Ok(None) => {
                tracing::debug!(session = %key, "session busy: the heartbeat's turn stays")
            }
            Err(e) => {
                tracing::warn!(session = %key, error = %e, "the heartbeat's prune task failed")
            }
            Ok(Some(Ok(_))) => {}
        }
    }

    /// Sends the `heartbeat` event for a settled run and tells the clock how it went.
    fn end(&self, request: &WakeRequest, started: i64, ended: Ended) -> RunOutcome {
        let gw = &self.gw;
        let now = gw.clock.now_ms();
        let mut payload = json!({
            "ts": now,
            "agentId": self.agent_id,
            "reason": request.reason,
            "durationMs": (now - started).max(0),
        });
        let (status, outcome) = match &ended {
            Ended::Skipped(why) => {
                payload["skipReason"] = json!(why);
                ("skipped", RunOutcome::Skipped((*why).to_owned()))
            }
            Ended::Sent { text } => {
                payload["preview"] = json!(text.chars().take(PREVIEW_CHARS).collect::<String>());
                ("sent", RunOutcome::Ran)
            }
            Ended::OkToken => ("ok-token", RunOutcome::Ran),
            Ended::OkEmpty => ("ok-empty", RunOutcome::Ran),
            Ended::Failed(error) => {
                payload["error"] = json!(error);
                ("failed", RunOutcome::Failed(error.clone()))
            }
        };
        payload["status"] = json!(status);
        match &self.settings.target {
            HeartbeatTarget::None => payload["silent"] = json!(true),
            HeartbeatTarget::Last => {}
            HeartbeatTarget::Channel { channel, to } => {
                payload["channel"] = json!(channel);
                if let Some(to) = to {
                    payload["to"] = json!(to);
                }
            }
        }
        match &ended {
            Ended::Failed(error) => {
                tracing::warn!(agent = %self.agent_id, reason = %request.reason, %error, "heartbeat failed")
            }
            _ => {
                tracing::debug!(agent = %self.agent_id, reason = %request.reason, status, "heartbeat")
            }
        }
        gw.heartbeats.record(&payload);
        gw.runs.broadcast("heartbeat", payload);
        outcome
    }
}

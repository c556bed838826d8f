//! How a cron job's run reaches an agent in this server (the [`CronExecutor`] port of
//! [`pincer_automation::cron::CronService`]): a `main` job becomes a `[CRON:<id>] <text>` system event in
//! the agent's main session plus a heartbeat; an `isolated` job runs a turn in the session
//! `cron:<jobId>` and its reply is delivered as `delivery` says — `announce` into the agent's
//! main session (a `chat` final clients show, kept in the transcript), `webhook` as a JSON
//! POST, `none` not at all. A reply that is only `HEARTBEAT_OK` is never announced.

use std::sync::Arc;
use std::time::Duration;

use futures_util::future::BoxFuture;
use pincer_ai::Message;
use pincer_store::SessionStore;
use serde_json::{Value, json};

use super::Gateway;
use super::methods::injected_message;
use super::runs::RunState;
use super::runtime::{TurnOrigin, TurnRequest};
use pincer_automation::cron::{
    CronDelivery, CronExecutor, CronJob, CronPayload, CronRunOutput, DeliveryMode, RunStatus,
};
use pincer_automation::heartbeat::{cron_reason, sanitize_for_delivery};

/// A turn with no `timeoutSeconds` of its own gets this long (OpenClaw's agent default).
const DEFAULT_TURN_TIMEOUT: Duration = Duration::from_secs(600);
/// How long a webhook endpoint gets to answer.
const WEBHOOK_TIMEOUT: Duration = Duration::from_secs(10);
/// How much of a reply the run log keeps as its summary.
const SUMMARY_CHARS: usize = 500;

/// Runs cron jobs on a gateway.
pub(super) struct GatewayCronExecutor {
    gw: Arc<Gateway>,
    http: reqwest::Client,
}

impl GatewayCronExecutor {
    pub(super) fn new(gw: Arc<Gateway>) -> Self {
        Self {
            gw,
            http: reqwest::Client::new(),
        }
    }

    /// The job's agent: its own when known, else the default one.
    fn agent_of(&self, job: &CronJob) -> Result<String, String> {
        match job.agent_id.as_deref().map(str::trim) {
            Some(id) if self.gw.runtime.is_known_agent(id) => Ok(id.to_owned()),
            Some(id) => Err(format!(
                "the job's agent {id:?} is not configured; set agentId to a configured agent"
            )),
            None => Ok(self.gw.runtime.default_agent_id()),
        }
    }
}

impl CronExecutor for GatewayCronExecutor {
    fn enqueue_main(&self, job: &CronJob, text: &str) -> Result<(), String> {
        let agent_id = self.agent_of(job)?;
        let key = self.gw.runtime.main_session_key(&agent_id);
        let line = format!("[CRON:{}] {text}", job.id);
        let events = &self.gw.system_events;
        events
            .inject(&key, &line, events.now_ms())
            .map_err(|e| e.to_string())?;
        if job.wake_mode == pincer_automation::cron::WakeMode::Now {
            self.gw
                .heartbeats
                .request_now(&agent_id, &cron_reason(&job.id));
        }
        Ok(())
    }

    fn run_isolated(&self, job: CronJob) -> BoxFuture<'static, CronRunOutput> {
        let gw = Arc::clone(&self.gw);
        let http = self.http.clone();
        let agent = self.agent_of(&job);
        Box::pin(async move {
            let agent_id = match agent {
                Ok(id) => id,
                Err(e) => return CronRunOutput::failed(e),
            };
            run_isolated(gw, http, agent_id, job).await
        })
    }
}

async fn run_isolated(
    gw: Arc<Gateway>,
    http: reqwest::Client,
    agent_id: String,
    job: CronJob,
) -> CronRunOutput {
    let (text, timeout, model, thinking) = match &job.payload {
        CronPayload::AgentTurn(turn) => (
            turn.message.clone(),
            turn.timeout_seconds.map(Duration::from_secs),
            turn.model.clone().filter(|m| !m.trim().is_empty()),
            job_thinking(&job.id, turn.thinking.as_deref()),
        ),
        CronPayload::SystemEvent(event) => (event.text.clone(), None, None, None),
    };
    let session_key = pincer_turns::router::cron_session_key(&job.id);
    let run_id = format!("cron-{}-{}", job.id, gw.clock.now_ms());
    let request = TurnRequest {
        agent_id: agent_id.clone(),
        session_key: session_key.clone(),
        // OpenClaw's isolated-run prefix, so the model knows which job this is.
        message: format!("[cron:{} {}] {text}", job.id, job.name),
        origin: TurnOrigin::Cron {
            job_id: job.id.clone(),
            model,
        },
        media: Vec::new(),
        thinking,
    };
    gw.runs.start(Arc::clone(&gw.runtime), &run_id, request);
    let timeout = timeout.unwrap_or(DEFAULT_TURN_TIMEOUT);
    let result = match gw.runs.wait(&run_id, timeout).await {
        Some((RunState::Done(result), _)) => result,
        _ => {
            gw.runs.abort(&session_key, Some(&run_id));
            let mut out = CronRunOutput::failed(format!(
                "the turn did not finish within {} s (payload.timeoutSeconds)",
                timeout.as_secs()
            ));
            out.session_key = Some(session_key);
            return out;
        }
    };
    let mut out = if let Some(error) = &result.error {
        CronRunOutput::failed(error.clone())
    } else {
        CronRunOutput::default()
    };
    out.session_key = Some(session_key);
    out.session_id = Some(result.session_id.clone()).filter(|s| !s.is_empty());
    out.model = Some(result.model.clone()).filter(|s| !s.is_empty());
    out.provider = Some(result.provider.clone()).filter(|s| !s.is_empty());
    if out.status == RunStatus::Error {
        return out;
    }
    let reply = sanitize_for_delivery(&result.text);
    out.summary = Some(match &reply {
        Some(text) => text.chars().take(SUMMARY_CHARS).collect(),
        None => "nothing to report (the reply was only an acknowledgement)".to_owned(),
    });
    let delivery = job
        .delivery
        .clone()
        .unwrap_or_else(|| CronDelivery::new(DeliveryMode::None));
    let delivered = match (delivery.mode, &reply) {
        (DeliveryMode::None, _) => {
            out.delivery_status = Some("not-requested".into());
            return out;
        }
        // Nothing worth a message: not sent, and not an error.
        (_, None) => Ok(false),
        (DeliveryMode::Announce, Some(text)) => match named_channel(&delivery) {
            Some(channel) => to_channel(&gw, &agent_id, channel, &delivery, text).await,
            None => announce(&gw, &agent_id, &job, text).await,
        },
        (DeliveryMode::Webhook, Some(text)) => {
            webhook(&http, &job, &delivery, text, &result.session_id).await
        }
    };
    match delivered {
        Ok(sent) => {
            out.delivered = Some(sent);
            out.delivery_status = Some(if sent { "delivered" } else { "not-delivered" }.into());
        }
        Err(error) => {
            out.delivered = Some(false);
            out.delivery_status = Some("not-delivered".into());
            out.delivery_error = Some(error.clone());
            if delivery.best_effort != Some(true) {
                out.status = RunStatus::Error;
                out.error = Some(format!("delivery failed: {error}"));
            }
        }
    }
    out
}

/// A job's `payload.thinking` as a level. A level the store holds but Pincer does not know
/// (written by hand, or by a newer OpenClaw) does not fail the run: as OpenClaw does, the run
/// falls back to the session's or the configured level, and the log says so.
fn job_thinking(job_id: &str, level: Option<&str>) -> Option<pincer_ai::ThinkingLevel> {
    let level = level.map(str::trim).filter(|l| !l.is_empty())?;
    match super::runtime::parse_thinking(level) {
        Ok(level) => Some(level),
        Err(e) => {
            tracing::warn!(job = job_id, error = %e, "ignoring the job's thinking level");
            None
        }
    }
}

/// The channel `delivery` names, unless it is `last` (or none).
fn named_channel(delivery: &CronDelivery) -> Option<&str> {
    delivery
        .channel
        .as_deref()
        .filter(|c| !c.is_empty() && *c != "last")
}

/// Sends the reply to chat `delivery.to` of a running chat channel.
async fn to_channel(
    gw: &Gateway,
    agent_id: &str,
    channel: &str,
    delivery: &CronDelivery,
    text: &str,
) -> Result<bool, String> {
    let Some(channels) = gw.channels.get() else {
        return Err(format!(
            "channel {channel:?} is not configured on this gateway; use channel \"last\" (the \
             main session) or delivery mode webhook"
        ));
    };
    let Some(to) = delivery.to.as_deref().filter(|t| !t.is_empty()) else {
        return Err(format!(
            "delivery to {channel} needs delivery.to (a chat id)"
        ));
    };
    channels
        .deliver_to(channel, None, to, agent_id, text)
        .await
        .map(|()| true)
}

/// Appends `message` to the session of `key` (created if new); the new entry's id.
#[expect(
    clippy::disallowed_methods,
    reason = "runs on the blocking pool: announce"
)]
fn append_note(store: &SessionStore, key: &str, message: Message) -> Result<String, String> {
    let mut session = store.get_or_create(key).map_err(|e| e.to_string())?;
    session
        .transcript
        .append_message(message)
        .map(|entry| entry.id.clone())
        .map_err(|e| format!("cannot write the main session's transcript: {e}"))
}

/// Puts the reply into the agent's main session, where its user reads: the clients, and
/// the chat channel the main session last heard from.
async fn announce(gw: &Gateway, agent_id: &str, job: &CronJob, text: &str) -> Result<bool, String> {
    let key = gw.runtime.main_session_key(agent_id);
    // Written as `chat.inject` writes a gateway note, labelled with the job.
    let label = format!("cron: {}", job.name);
    let message = Message::Assistant(injected_message(text, Some(&label)));
    // Kept in the transcript only between turns: an entry written during one would split
    // the turn's chain of entries. During a turn the clients still get it.
    // On the blocking pool: the session is opened (maybe created) and appended to.
    let stored = message.clone();
    let stored = gw
        .runs
        .on_idle_session(&key, gw.runtime.sessions(agent_id), move |store, key| {
            append_note(store, key, stored)
        })
        .await
        .map_err(|e| format!("the announcement's task failed: {e}"))?;
    let id = match stored {
        Some(Ok(id)) => id,
        Some(Err(e)) => return Err(e),
        None => {
            tracing::info!(session = %key, job = %job.id, "session busy: the announcement is sent, not stored");
            format!("{}-{}", job.id, pincer_ai::now_ms())
        }
    };
    gw.runs.broadcast(
        "chat",
        json!({
            "runId": format!("cron-announce-{id}"), "sessionKey": key, "seq": 0,
            "state": "final", "message": message,
        }),
    );
    if let Some(channels) = gw.channels.get()
        && let Some((channel, account, to)) = channels.last_route(&key)
        && super::send_policy::may_deliver(gw, agent_id, &key).await
    {
        let channels = std::sync::Arc::clone(channels);
        let (agent_id, text) = (agent_id.to_owned(), text.to_owned());
        tokio::spawn(async move {
            if let Err(e) = channels
                .deliver_to(&channel, account.as_deref(), &to, &agent_id, &text)
                .await
            {
                tracing::warn!(%channel, error = %e, "cron announcement not delivered to the channel");
            }
        });
    }
    Ok(true)
}

/// POSTs the result to `delivery.to` (an http(s) URL); a non-2xx answer is a failure.
async fn webhook(
    http: &reqwest::Client,
    job: &CronJob,
    delivery: &CronDelivery,
    text: &str,
    session_id: &str,
) -> Result<bool, String> {
    let Some(url) = delivery.to.as_deref().filter(|u| !u.is_empty()) else {
        return Err("webhook delivery needs delivery.to (an http or https URL)".into());
    };
    let body: Value = json!({
        "jobId": job.id, "name": job.name, "status": "ok", "text": text,
        "sessionId": session_id, "ts": pincer_ai::now_ms(),
    });
    // A query string may carry a secret: errors show the URL without it.
    let shown = url.split(['?', '#']).next().unwrap_or_default();
    let response = http
        .post(url)
        .timeout(WEBHOOK_TIMEOUT)
        .json(&body)
        .send()
        .await
        .map_err(|e| format!("webhook {shown}: {}", e.without_url()))?;
    if !response.status().is_success() {
        return Err(format!("webhook {shown} answered {}", response.status()));
    }
    Ok(true)
}

//! Exec approvals in the gateway (OpenClaw's shape): the registry of commands waiting for
//! the owner's decision and the [`ExecApprover`] port the agents' `exec` asks through
//! ([`bind_exec_approvals`] binds it as the server starts).
//!
//! A request gets a fresh id (a UUID) bound to that one request: its exact command line,
//! cwd, agent and session. It is announced as the `exec.approval.requested` event (only to
//! connections holding `operator.approvals` or `operator.admin`) and, when the session's
//! conversation came from a channel, as a message in that chat ([`chat`]). It ends with the
//! first decision (`exec.approval.resolve`, `/approve` from that chat, the web chat's
//! buttons), the timeout (denied), or the call's abort (withdrawn); each end is announced
//! as `exec.approval.resolved` (`resolvedBy` says `timeout` or `withdrawn` for the last two,
//! with `decision: "deny"`). Pending approvals live in memory: a restart forgets them and
//! the commands that waited were aborted with their runs.

pub mod chat;

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, Weak};

use pincer_team::PortSlot;
use pincer_team::message::{ChatTarget, MessagePort};
use pincer_tools::exec::approval::{
    ApprovalFuture, ApprovalRequest, Decision, ExecApprover, Outcome,
};
use serde_json::{Value, json};
use tokio::sync::watch;

use super::message_port::GatewayMessagePort;
use super::{Gateway, OnStart};

/// The event announcing a request.
pub const REQUESTED: &str = "exec.approval.requested";
/// The event announcing its end.
pub const RESOLVED: &str = "exec.approval.resolved";
/// The shortest id prefix accepted for a full id (people type ids from a chat).
pub const MIN_ID_PREFIX: usize = 8;

/// One waiting command.
#[derive(Debug)]
pub struct Pending {
    pub id: String,
    pub request: ApprovalRequest,
    pub created_at_ms: i64,
    pub expires_at_ms: i64,
    /// The chat the request was also sent to (the session's channel conversation).
    pub chat: Option<ChatTarget>,
    decided: watch::Sender<Option<Decision>>,
}

impl Pending {
    /// OpenClaw's `request` object.
    pub fn request_json(&self) -> Value {
        let r = &self.request;
        let allowed: Vec<&str> = r.allowed.iter().map(|d| d.as_str()).collect();
        let chat = self.chat.as_ref();
        json!({
            "command": r.command,
            "cwd": r.cwd,
            "host": "gateway",
            "ask": r.ask.as_str(),
            "agentId": r.agent_id,
            "sessionKey": r.session_key,
            "toolCallId": r.tool_call_id,
            "allowedDecisions": allowed,
            "turnSourceChannel": chat.map(|c| &c.channel),
            "turnSourceTo": chat.map(|c| &c.to),
            "turnSourceAccountId": chat.and_then(|c| c.account_id.as_ref()),
            "turnSourceThreadId": chat.and_then(|c| c.thread_id.as_ref()),
        })
    }

    /// The decision as it comes (`None` until decided; the sender is gone when the
    /// approval ended undecided).
    pub fn subscribe(&self) -> watch::Receiver<Option<Decision>> {
        self.decided.subscribe()
    }

    /// What `exec.approval.list` and the requested event carry.
    pub fn entry_json(&self) -> Value {
        json!({
            "id": self.id,
            "request": self.request_json(),
            "createdAtMs": self.created_at_ms,
            "expiresAtMs": self.expires_at_ms,
        })
    }
}

/// Why an id does not name a pending approval.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LookupError {
    #[error("unknown or expired approval id")]
    Missing,
    #[error("ambiguous approval id prefix; use the full id")]
    Ambiguous,
}

/// Why a decision was not taken.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ResolveError {
    #[error(transparent)]
    Lookup(#[from] LookupError),
    #[error("{} is unavailable for this command (allowed: {allowed})", decision.as_str())]
    NotAllowed { decision: Decision, allowed: String },
}

/// The pending approvals of one gateway.
#[derive(Debug, Default)]
pub struct Approvals {
    pending: Mutex<BTreeMap<String, Arc<Pending>>>,
}

impl Approvals {
    fn map(&self) -> std::sync::MutexGuard<'_, BTreeMap<String, Arc<Pending>>> {
        self.pending.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Every pending approval, oldest first.
    pub fn list(&self) -> Vec<Arc<Pending>> {
        let mut all: Vec<Arc<Pending>> = self.map().values().cloned().collect();
        all.sort_by_key(|p| p.created_at_ms);
        all
    }

    /// The pending approval `input` names: its id, or a prefix of at least
    /// [`MIN_ID_PREFIX`] characters that only it has.
    pub fn find(&self, input: &str) -> Result<Arc<Pending>, LookupError> {
        let input = input.trim();
        let map = self.map();
        if let Some(found) = map.get(input) {
            return Ok(Arc::clone(found));
        }
        if input.len() < MIN_ID_PREFIX {
            return Err(LookupError::Missing);
        }
        let mut matches = map
            .range(input.to_owned()..)
            .take_while(|(id, _)| id.starts_with(input));
        match (matches.next(), matches.next()) {
            (Some((_, only)), None) => Ok(Arc::clone(only)),
            (Some(_), Some(_)) => Err(LookupError::Ambiguous),
            (None, _) => Err(LookupError::Missing),
        }
    }

    fn insert(&self, pending: Arc<Pending>) {
        self.map().insert(pending.id.clone(), pending);
    }

    /// Takes `id` out if it is still pending.
    fn take(&self, id: &str) -> Option<Arc<Pending>> {
        self.map().remove(id)
    }

    /// Decides the approval `input` names (checked by `accept` first, e.g. that it went to
    /// the chat answering); returns it, decided and announced.
    pub fn resolve(
        &self,
        gw: &Gateway,
        input: &str,
        decision: Decision,
        resolved_by: &str,
        accept: impl Fn(&Pending) -> bool,
    ) -> Result<Arc<Pending>, ResolveError> {
        let found = self.find(input)?;
        if !accept(&found) {
            return Err(LookupError::Missing.into());
        }
        if !found.request.allowed.contains(&decision) {
            let allowed: Vec<&str> = found.request.allowed.iter().map(|d| d.as_str()).collect();
            return Err(ResolveError::NotAllowed {
                decision,
                allowed: allowed.join(", "),
            });
        }
        // Whoever takes it out decides (under the lock, so a timeout that finds it gone
        // finds the decision): a racing timeout or second answer finds nothing.
        let taken = {
            let mut map = self.map();
            let Some(taken) = map.remove(&found.id) else {
                return Err(LookupError::Missing.into());
            };
            taken.decided.send_replace(Some(decision));
            taken
        };
        announce_resolved(gw, &taken, decision.as_str(), resolved_by);
        Ok(taken)
    }
}

/// Sends `exec.approval.resolved` (OpenClaw's payload).
fn announce_resolved(gw: &Gateway, pending: &Pending, decision: &str, resolved_by: &str) {
    gw.runs.broadcast(
        RESOLVED,
        json!({
            "id": pending.id,
            "decision": decision,
            "resolvedBy": resolved_by,
            "ts": pincer_ai::now_ms(),
            "request": pending.request_json(),
        }),
    );
}

/// The hook that binds `slot` to the starting gateway's approvals (for
/// [`super::ServeOptions::on_start`]).
pub fn bind_exec_approvals(slot: PortSlot<dyn ExecApprover>) -> OnStart {
    Arc::new(move |gw: &Arc<Gateway>| {
        slot.bind(Arc::new(GatewayApprover {
            gw: Arc::downgrade(gw),
        }));
    })
}

/// [`ExecApprover`] over a running gateway. Keeps the gateway weakly: the gateway's
/// runtime holds the tools that hold this.
pub struct GatewayApprover {
    gw: Weak<Gateway>,
}

impl ExecApprover for GatewayApprover {
    fn request(&self, request: ApprovalRequest) -> ApprovalFuture<'_> {
        Box::pin(async move {
            let Some(gw) = self.gw.upgrade() else {
                return Outcome::Unavailable("the gateway is stopping".into());
            };
            wait_for_decision(&gw, request).await
        })
    }
}

/// Registers `request`, announces it and waits for its end.
async fn wait_for_decision(gw: &Arc<Gateway>, request: ApprovalRequest) -> Outcome {
    let created_at_ms = pincer_ai::now_ms();
    let timeout_ms = i64::try_from(request.timeout.as_millis()).unwrap_or(i64::MAX);
    let chat = request
        .session_key
        .as_deref()
        .and_then(|key| GatewayMessagePort::new(gw).current_chat(key));
    let (decided, mut rx) = watch::channel(None);
    let pending = Arc::new(Pending {
        id: pincer_base::id::uuid_v4(),
        request,
        created_at_ms,
        expires_at_ms: created_at_ms.saturating_add(timeout_ms),
        chat,
        decided,
    });
    gw.approvals.insert(Arc::clone(&pending));
    let mut guard = Withdraw {
        gw,
        id: &pending.id,
        reason: "withdrawn",
    };
    gw.runs.broadcast(REQUESTED, pending.entry_json());
    chat::send_request(gw, &pending);
    tracing::info!(id = %pending.id, agent = %pending.request.agent_id, "exec approval requested");
    let waited = tokio::time::timeout(pending.request.timeout, rx.wait_for(Option::is_some))
        .await
        .map(|decided| decided.map(|d| *d));
    match waited {
        Ok(Ok(decision)) => {
            guard.reason = "";
            decision.map_or(Outcome::TimedOut, Outcome::Decided)
        }
        // The sender lives in `pending`, which this function holds: unreachable, and
        // denied if it ever happens.
        Ok(Err(_)) => Outcome::TimedOut,
        Err(_) => {
            guard.reason = "";
            if let Some(taken) = gw.approvals.take(&pending.id) {
                tracing::info!(id = %pending.id, "exec approval timed out");
                announce_resolved(gw, &taken, Decision::Deny.as_str(), "timeout");
                return Outcome::TimedOut;
            }
            // A decision taken as the time ran out wins.
            let decided = *rx.borrow();
            decided.map_or(Outcome::TimedOut, Outcome::Decided)
        }
    }
}

/// Takes a request that ended without a decision out of the registry and announces it.
struct Withdraw<'a> {
    gw: &'a Arc<Gateway>,
    id: &'a str,
    /// `""`: decided, nothing to do.
    reason: &'static str,
}

impl Drop for Withdraw<'_> {
    fn drop(&mut self) {
        if self.reason.is_empty() {
            return;
        }
        if let Some(taken) = self.gw.approvals.take(self.id) {
            tracing::info!(id = %self.id, reason = self.reason, "exec approval ended undecided");
            announce_resolved(self.gw, &taken, Decision::Deny.as_str(), self.reason);
        }
    }
}

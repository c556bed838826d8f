//! Per-session lanes: the state [`super::runs::Runs`] keeps for each session key so that one
//! turn at a time touches a session, and so that a message arriving while the session is busy
//! can follow its queue mode. A lane owns:
//!
//! - the gate, a FIFO async mutex held by the turn that owns the session (queued turns get
//!   it in arrival order);
//! - how many turns are admitted and not finished (the session is busy while any are);
//! - the active turn: its run id, abort token, [`SteerHandle`] and the tickets of the
//!   messages steered into it;
//! - the open `collect` batch, gathering messages until its turn starts.
//!
//! Everything here is synchronous and runs under one std mutex (never held across an
//! await); the async work (waiting for the gate, running turns) lives in `runs.rs`. A lane
//! disappears when it is idle, so the map only holds sessions with work.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};

use pincer_ai::CancellationToken;
use tokio::sync::{Notify, watch};

use super::runs::RunState;
use super::runtime::TurnRequest;
use pincer_turns::turn::SteerHandle;

/// One admitted request: where its result goes and how it is cancelled. Every request has
/// one, whether it runs as its own turn, is steered into another or gathered into a batch.
pub(super) struct Ticket {
    pub run_id: String,
    pub tx: watch::Sender<RunState>,
    pub abort: CancellationToken,
    /// The request as sent: a steered message that misses its turn runs as this.
    pub request: TurnRequest,
}

/// The turn that holds a lane's gate.
pub(super) struct ActiveTurn {
    pub run_id: String,
    pub abort: CancellationToken,
    pub steer: SteerHandle,
    /// Whether messages may be steered into it: not into a heartbeat, whose reply is held
    /// back and may be dropped as an acknowledgement (a user's message waits its own turn).
    pub steerable: bool,
    /// Tickets of the messages steered into this turn, in the order they were steered.
    pub steered: Vec<Ticket>,
}

/// Messages gathered in `collect` mode for one later turn.
pub(super) struct CollectBatch {
    /// The run id the batch was created under (its first message's), for responses.
    pub lead_run_id: String,
    items: Mutex<Vec<Ticket>>,
    /// Signalled on each message added (and when the batch fills), restarting the quiet
    /// window. `notify_one` keeps a permit, so a signal sent before the waiter arrives
    /// still counts.
    pub arrived: Notify,
}

impl CollectBatch {
    fn items(&self) -> MutexGuard<'_, Vec<Ticket>> {
        self.items.lock().unwrap_or_else(|e| e.into_inner())
    }
}

#[derive(Default)]
struct Lane {
    gate: Arc<tokio::sync::Mutex<()>>,
    /// Turns admitted and not finished: waiting for the gate, holding it, or an open batch's
    /// turn.
    pending: usize,
    active: Option<ActiveTurn>,
    /// The batch still accepting messages, if any.
    collect: Option<Arc<CollectBatch>>,
}

/// What [`Lanes::admit`] decided for a message.
pub(super) enum Admission {
    /// Run as a turn of its own; wait for `gate` first.
    Run {
        gate: Arc<tokio::sync::Mutex<()>>,
        /// Boxed: a ticket carries the whole request, the other answers a few words.
        ticket: Box<Ticket>,
        /// The session was busy: the turn waits behind others.
        queued: bool,
        /// The active turn this message aborted (interrupt mode).
        interrupted: Option<String>,
    },
    /// Handed to the running turn.
    Steered { active_run_id: String },
    /// Added to the open batch.
    Collected { lead_run_id: String },
    /// Not admitted: the session is busy and the caller only runs on an idle one.
    Refused,
    /// Started a new batch: its turn waits for `gate`, then for the quiet window.
    NewBatch {
        gate: Arc<tokio::sync::Mutex<()>>,
        batch: Arc<CollectBatch>,
    },
}

/// How an admitted message should be treated when the session is busy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Busy {
    Steer,
    Followup,
    Collect {
        cap: usize,
    },
    Interrupt,
    /// Do not run at all (a heartbeat never waits behind, or in front of, a user's turn).
    Refuse,
}

/// The lanes of every session with work.
#[derive(Default)]
pub(super) struct Lanes {
    lanes: Mutex<HashMap<String, Lane>>,
}

impl Lanes {
    fn lock(&self) -> MutexGuard<'_, HashMap<String, Lane>> {
        self.lanes.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Decides what `ticket`'s message does: a turn of its own when the session is idle,
    /// else what `busy` says.
    pub fn admit(&self, key: &str, ticket: Ticket, busy: Busy) -> Admission {
        let mut lanes = self.lock();
        let lane = lanes.entry(key.to_owned()).or_default();
        if lane.pending == 0 {
            return Self::own_turn(lane, ticket, false, None);
        }
        match busy {
            Busy::Refuse => Admission::Refused,
            Busy::Followup => Self::own_turn(lane, ticket, true, None),
            Busy::Interrupt => {
                let interrupted = lane.active.as_ref().map(|active| {
                    active.abort.cancel();
                    active.run_id.clone()
                });
                Self::own_turn(lane, ticket, true, interrupted)
            }
            Busy::Steer => {
                let Some(active) = lane.active.as_mut().filter(|a| a.steerable) else {
                    // Between turns (the next one has not taken the gate yet), or a turn
                    // that takes no steering: the message waits its turn.
                    return Self::own_turn(lane, ticket, true, None);
                };
                let message =
                    pincer_ai::Message::user(super::queue::steer_text(&ticket.request.message));
                match active.steer.steer(message) {
                    Ok(()) => {
                        let active_run_id = active.run_id.clone();
                        // Pushed under the same lock as the message, so the order of
                        // `steered` is the order the agent sees.
                        active.steered.push(ticket);
                        Admission::Steered { active_run_id }
                    }
                    Err(_) => Self::own_turn(lane, ticket, true, None),
                }
            }
            Busy::Collect { cap } => {
                if let Some(batch) = &lane.collect {
                    let mut items = batch.items();
                    if items.len() < cap.max(1) {
                        items.push(ticket);
                        let full = items.len() >= cap.max(1);
                        drop(items);
                        let lead_run_id = batch.lead_run_id.clone();
                        batch.arrived.notify_one();
                        if full {
                            // Sealed: it runs without waiting for quiet; the next message
                            // starts a new batch.
                            lane.collect = None;
                        }
                        return Admission::Collected { lead_run_id };
                    }
                }
                let batch = Arc::new(CollectBatch {
                    lead_run_id: ticket.run_id.clone(),
                    items: Mutex::new(vec![ticket]),
                    arrived: Notify::new(),
                });
                lane.pending += 1;
                lane.collect = (cap > 1).then(|| Arc::clone(&batch));
                Admission::NewBatch {
                    gate: Arc::clone(&lane.gate),
                    batch,
                }
            }
        }
    }

    fn own_turn(
        lane: &mut Lane,
        ticket: Ticket,
        queued: bool,
        interrupted: Option<String>,
    ) -> Admission {
        lane.pending += 1;
        Admission::Run {
            gate: Arc::clone(&lane.gate),
            ticket: Box::new(ticket),
            queued,
            interrupted,
        }
    }

    /// Admits a turn of its own regardless of the session's state (a steered message that
    /// missed its turn). Returns the gate to wait for.
    pub fn admit_turn(&self, key: &str) -> Arc<tokio::sync::Mutex<()>> {
        let mut lanes = self.lock();
        let lane = lanes.entry(key.to_owned()).or_default();
        lane.pending += 1;
        Arc::clone(&lane.gate)
    }

    /// Whether `batch` still accepts messages.
    pub fn is_open(&self, key: &str, batch: &Arc<CollectBatch>) -> bool {
        self.lock()
            .get(key)
            .and_then(|lane| lane.collect.as_ref())
            .is_some_and(|open| Arc::ptr_eq(open, batch))
    }

    /// Closes `batch` to new messages and returns what it gathered, oldest first.
    pub fn take_batch(&self, key: &str, batch: &Arc<CollectBatch>) -> Vec<Ticket> {
        let mut lanes = self.lock();
        if let Some(lane) = lanes.get_mut(key)
            && lane
                .collect
                .as_ref()
                .is_some_and(|open| Arc::ptr_eq(open, batch))
        {
            lane.collect = None;
        }
        std::mem::take(&mut *batch.items())
    }

    /// The turn `run_id` holds the gate of `key` and can be steered through `steer`.
    pub fn set_active(
        &self,
        key: &str,
        run_id: &str,
        abort: &CancellationToken,
        steer: &SteerHandle,
        steerable: bool,
    ) {
        let mut lanes = self.lock();
        let lane = lanes.entry(key.to_owned()).or_default();
        lane.active = Some(ActiveTurn {
            run_id: run_id.to_owned(),
            abort: abort.clone(),
            steer: steer.clone(),
            steerable,
            steered: Vec::new(),
        });
    }

    /// The active turn of `key` ended: closes its steering and returns the steered tickets
    /// whose messages the turn took, then those it never picked up (to run on their own).
    pub fn end_active(&self, key: &str) -> (Vec<Ticket>, Vec<Ticket>) {
        let active = self.lock().get_mut(key).and_then(|lane| lane.active.take());
        let Some(active) = active else {
            return (Vec::new(), Vec::new());
        };
        // Closing under no lane lock is fine: the turn is no longer active, so nothing new
        // can be steered into it.
        let missed = active.steer.close().len();
        let mut taken = active.steered;
        // The agent drains its steering queue in order, so what it missed is the tail.
        let left = taken.split_off(taken.len().saturating_sub(missed));
        (taken, left)
    }

    /// A turn of `key` finished (after releasing the gate); an idle lane is dropped.
    pub fn turn_done(&self, key: &str) {
        let mut lanes = self.lock();
        if let Some(lane) = lanes.get_mut(key) {
            lane.pending = lane.pending.saturating_sub(1);
            if lane.pending == 0 && lane.active.is_none() && lane.collect.is_none() {
                lanes.remove(key);
            }
        }
    }

    /// Aborts the turn holding the gate of `key`, if one does; whether one did.
    pub fn abort_active(&self, key: &str) -> bool {
        let lanes = self.lock();
        let active = lanes.get(key).and_then(|lane| lane.active.as_ref());
        if let Some(active) = active {
            active.abort.cancel();
        }
        active.is_some()
    }

    /// Whether `key` has a turn admitted, running or being gathered.
    pub fn is_busy(&self, key: &str) -> bool {
        self.lock().get(key).is_some_and(|lane| lane.pending > 0)
    }

    /// Takes the gate of an idle `key` for exclusive work outside a turn (rewriting the
    /// transcript); `None` when the session is busy. Turns admitted meanwhile wait for it.
    /// Call [`Lanes::forget_if_idle`] after dropping the guard.
    pub fn try_exclusive(&self, key: &str) -> Option<tokio::sync::OwnedMutexGuard<()>> {
        let mut lanes = self.lock();
        let lane = lanes.entry(key.to_owned()).or_default();
        if lane.pending > 0 {
            return None;
        }
        Arc::clone(&lane.gate).try_lock_owned().ok()
    }

    /// Drops the lane of `key` if nothing is admitted or gathered.
    pub fn forget_if_idle(&self, key: &str) {
        let mut lanes = self.lock();
        if lanes
            .get(key)
            .is_some_and(|l| l.pending == 0 && l.active.is_none() && l.collect.is_none())
        {
            lanes.remove(key);
        }
    }
}

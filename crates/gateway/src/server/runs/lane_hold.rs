//! A session's lane held outside a turn, for async work that must not interleave with
//! one (`/compact`'s summary calls): [`Runs::hold_lane`] and the [`LaneHold`] it gives.

use std::sync::Arc;
use std::time::Duration;

use super::Runs;

/// A session's lane held outside a turn ([`Runs::hold_lane`]); dropping it lets the next
/// turn in.
pub struct LaneHold {
    runs: Arc<Runs>,
    key: String,
    guard: Option<tokio::sync::OwnedMutexGuard<()>>,
}

impl Drop for LaneHold {
    fn drop(&mut self) {
        // The gate first, then the count: a turn waiting for the gate may start at once.
        drop(self.guard.take());
        self.runs.lanes.turn_done(&self.key);
    }
}

impl Runs {
    /// Takes session `key`'s lane for async work outside a turn (`/compact`'s summary
    /// calls), as OpenClaw's `/compact` does: the turn running there is aborted first when
    /// `stop_active`, then the gate is awaited behind the turns admitted before, for at most
    /// `wait`. Turns admitted meanwhile wait until the hold is dropped. `None`: the wait ran
    /// out.
    pub async fn hold_lane(
        self: &Arc<Self>,
        key: &str,
        stop_active: bool,
        wait: Duration,
    ) -> Option<LaneHold> {
        if stop_active {
            self.lanes.abort_active(key);
        }
        let gate = self.lanes.admit_turn(key);
        match tokio::time::timeout(wait, gate.lock_owned()).await {
            Ok(guard) => Some(LaneHold {
                runs: Arc::clone(self),
                key: key.to_owned(),
                guard: Some(guard),
            }),
            Err(_) => {
                self.lanes.turn_done(key);
                None
            }
        }
    }
}

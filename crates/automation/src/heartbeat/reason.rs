//! Why a heartbeat runs (OpenClaw's `src/infra/heartbeat-reason.ts`): the reason strings
//! `request_now` callers pass, what kind each is, and which wins when requests coalesce.
//!
//! Pincer's exec notifier asks with `exec:<id>:exit` (as the seed's `maybeNotifyOnExit`
//! does); OpenClaw's later code says `exec-event`. Both are the exec kind here.

/// The timer's reason.
pub const REASON_INTERVAL: &str = "interval";
/// A run retried after the lane was busy or the run failed.
pub const REASON_RETRY: &str = "retry";
/// A user or operator asking for a run now (`pincer system event --mode now`).
pub const REASON_MANUAL: &str = "manual";
/// What an empty reason becomes.
pub const REASON_REQUESTED: &str = "requested";

/// The reason a background exec's exit wakes the heartbeat with.
pub fn exec_exit_reason(exec_id: &str) -> String {
    format!("exec:{exec_id}:exit")
}

/// The reason a `sessionTarget: "main"` cron job wakes the heartbeat with.
pub fn cron_reason(job_id: &str) -> String {
    format!("cron:{job_id}")
}

/// What a reason string means.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReasonKind {
    Retry,
    Interval,
    Manual,
    ExecEvent,
    Wake,
    Cron,
    Hook,
    Other,
}

impl ReasonKind {
    /// OpenClaw's `resolveHeartbeatReasonKind`, plus `exec:` reasons as exec events.
    pub fn of(reason: &str) -> Self {
        match reason.trim() {
            REASON_RETRY => Self::Retry,
            REASON_INTERVAL => Self::Interval,
            REASON_MANUAL => Self::Manual,
            "exec-event" => Self::ExecEvent,
            "wake" => Self::Wake,
            r if r.starts_with("exec:") => Self::ExecEvent,
            r if r.starts_with("cron:") => Self::Cron,
            r if r.starts_with("hook:") => Self::Hook,
            _ => Self::Other,
        }
    }

    /// Runs for something that happened (events wait), as opposed to a timer tick: these
    /// run even when HEARTBEAT.md is effectively empty.
    pub fn is_event_driven(self) -> bool {
        matches!(self, Self::ExecEvent | Self::Cron | Self::Wake | Self::Hook)
    }

    /// Which pending reason survives when requests coalesce (OpenClaw's
    /// `REASON_PRIORITY`): an action a user or process is waiting on beats a plain
    /// request, which beats the timer, which beats a retry. Equal priorities: newest wins.
    pub fn priority(self) -> u8 {
        match self {
            Self::Retry => 0,
            Self::Interval => 1,
            Self::Wake | Self::Cron | Self::Other => 2,
            Self::Manual | Self::ExecEvent | Self::Hook => 3,
        }
    }
}

/// A reason with an empty one replaced by `requested`.
pub fn normalize_reason(reason: &str) -> String {
    let trimmed = reason.trim();
    if trimmed.is_empty() {
        REASON_REQUESTED.to_owned()
    } else {
        trimmed.to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reasons_have_kinds_and_priorities() {
        assert_eq!(
            ReasonKind::of(&exec_exit_reason("abc")),
            ReasonKind::ExecEvent
        );
        assert_eq!(ReasonKind::of("exec-event"), ReasonKind::ExecEvent);
        assert_eq!(ReasonKind::of(&cron_reason("job-1")), ReasonKind::Cron);
        assert_eq!(ReasonKind::of("hook:wake"), ReasonKind::Hook);
        assert_eq!(ReasonKind::of(" interval "), ReasonKind::Interval);
        assert_eq!(ReasonKind::of("requested"), ReasonKind::Other);
        assert!(ReasonKind::ExecEvent.priority() > ReasonKind::Other.priority());
        assert!(ReasonKind::Other.priority() > ReasonKind::Interval.priority());
        assert!(ReasonKind::Interval.priority() > ReasonKind::Retry.priority());
        assert!(ReasonKind::Cron.is_event_driven());
        assert!(!ReasonKind::Interval.is_event_driven());
        assert_eq!(normalize_reason("  "), "requested");
    }
}

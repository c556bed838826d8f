//! The heartbeat (OpenClaw's `src/infra/heartbeat-*.ts` and `src/auto-reply/heartbeat.ts`):
//! periodic and on-demand agent turns in the agent's main session that let the model act on
//! its own — work through HEARTBEAT.md, relay a finished background command, deliver a cron
//! reminder — and stay silent when nothing needs the user.
//!
//! This module owns the rules and the scheduling, not the turn itself:
//! - [`token`]: the `HEARTBEAT_OK` contract (strip it, stay silent on acks, never deliver it);
//! - [`file`]: reading HEARTBEAT.md and deciding whether it is effectively empty;
//! - [`active_hours`]: the `activeHours` window in a time zone;
//! - [`prompts`]: the default, cron-event and exec-event prompts and which one a run uses;
//! - [`wake`]: [`HeartbeatWake`], the per-agent timer and `request_now` coalescer that calls
//!   the gateway's run callback;
//! - [`config`]: [`HeartbeatSettings`] with OpenClaw's defaults and the `every` parser.
//!
//! The gateway wires these together: its run callback checks active hours and the session
//! lane, reads HEARTBEAT.md, drains the session's system events, builds the prompt, runs an
//! idle turn and passes the reply through [`token::heartbeat_reply_delivery`].

pub mod active_hours;
pub mod config;
pub mod file;
pub mod prompts;
pub mod reason;
pub mod token;
pub mod wake;
mod wake_driver;

pub use active_hours::{ActiveHours, ActiveHoursZone};
pub use config::{
    DEFAULT_EVERY, HeartbeatConfigError, HeartbeatSettings, HeartbeatTarget, parse_every,
};
pub use file::{
    HEARTBEAT_FILENAME, HeartbeatFile, is_heartbeat_content_effectively_empty, read_heartbeat_file,
};
pub use prompts::{
    EXEC_EVENT_PROMPT, EXEC_EVENT_PROMPT_INTERNAL, HEARTBEAT_PROMPT, HeartbeatPrompt, PromptKind,
    PromptOptions, build_heartbeat_prompt, build_heartbeat_prompt_with,
};
pub use reason::{
    REASON_INTERVAL, REASON_MANUAL, REASON_RETRY, ReasonKind, cron_reason, exec_exit_reason,
};
pub use token::{
    DEFAULT_ACK_MAX_CHARS, HEARTBEAT_OK, StripMode, StripResult, heartbeat_reply_delivery,
    sanitize_for_delivery, strip_heartbeat_token, strip_heartbeat_token_with,
};
pub use wake::{
    BUSY_RETRY, COALESCE_WINDOW, HeartbeatRunner, HeartbeatWake, RunFuture, RunOutcome,
    WakeRequest, WakeStatus,
};

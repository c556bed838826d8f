//! Queue modes (`messages.queue.mode`, and the WS protocol's per-request `queueMode`): what a
//! message does when its session already has a run going. The config takes the canonical
//! names; [`QueueMode::parse`] also takes OpenClaw's aliases, for requests and commands.

use std::fmt;
use std::str::FromStr;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// What a message does when its session is busy.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum QueueMode {
    /// Inject into the running turn (OpenClaw's current default).
    #[default]
    Steer,
    /// Run as its own turn after the current one.
    Followup,
    /// Gather while busy, then run everything gathered as one turn.
    Collect,
    /// Abort the running turn, then run this message.
    Interrupt,
}

/// Every spelling [`QueueMode::parse`] accepts, for error messages.
pub const QUEUE_MODE_NAMES: &str = "steer, followup, collect, interrupt";

impl QueueMode {
    /// Reads a mode the way OpenClaw's `normalizeQueueMode` does: case-insensitive, with its
    /// aliases (`steering`; `follow-ups`, `followups`, plus pi-gateway's `follow-up`;
    /// `coalesce`; `interrupts`, `abort`).
    pub fn parse(raw: &str) -> Option<Self> {
        match raw.trim().to_ascii_lowercase().as_str() {
            "steer" | "steering" => Some(Self::Steer),
            "followup" | "followups" | "follow-ups" | "follow-up" => Some(Self::Followup),
            "collect" | "coalesce" => Some(Self::Collect),
            "interrupt" | "interrupts" | "abort" => Some(Self::Interrupt),
            _ => None,
        }
    }

    /// The canonical name (what responses echo back).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Steer => "steer",
            Self::Followup => "followup",
            Self::Collect => "collect",
            Self::Interrupt => "interrupt",
        }
    }
}

impl fmt::Display for QueueMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A queue mode name that is not one of [`QUEUE_MODE_NAMES`] (or their aliases).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown queue mode {0:?}; expected one of {QUEUE_MODE_NAMES}")]
pub struct UnknownQueueMode(pub String);

impl FromStr for QueueMode {
    type Err = UnknownQueueMode;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::parse(s).ok_or_else(|| UnknownQueueMode(s.to_owned()))
    }
}

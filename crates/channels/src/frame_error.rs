//! Why a frame from a platform's socket could not be read at all — Discord's gateway,
//! Slack's Socket Mode, Feishu's long connection: one error type naming the kind of frame it
//! was not, and the JSON sockets' shared first step ([`json_object`]).

#[cfg(any(feature = "discord", feature = "slack"))]
use serde_json::{Map, Value};

/// A frame that is not what its socket carries.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("not a {kind}: {why}")]
pub struct FrameError {
    /// What the frame should have been (`gateway payload`, `Socket Mode frame`, …).
    pub kind: &'static str,
    pub why: String,
}

impl FrameError {
    pub fn new(kind: &'static str, why: impl Into<String>) -> Self {
        Self {
            kind,
            why: why.into(),
        }
    }
}

/// The object a JSON socket's frame must be, or why it is not one.
#[cfg(any(feature = "discord", feature = "slack"))]
pub(crate) fn json_object<'a>(
    value: &'a Value,
    kind: &'static str,
) -> Result<&'a Map<String, Value>, FrameError> {
    value
        .as_object()
        .ok_or_else(|| FrameError::new(kind, "not an object"))
}

/// A JSON socket's text frame parsed, or why it is not JSON.
#[cfg(any(feature = "discord", feature = "slack"))]
pub(crate) fn parse_json(text: &str, kind: &'static str) -> Result<Value, FrameError> {
    serde_json::from_str(text).map_err(|e| FrameError::new(kind, format!("invalid JSON ({e})")))
}

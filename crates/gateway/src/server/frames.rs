//! OpenClaw's gateway frames: `req` from clients, `res` and `event` from the server, with
//! OpenClaw's error codes. Parsing is strict about shape and size and never panics: a bad
//! frame becomes a [`FrameError`] the connection answers or closes on.

use serde::Deserialize;
use serde_json::{Value, json};

/// Protocol versions this server speaks (OpenClaw's v3 and v4 frames are the same shape).
pub const MIN_PROTOCOL: u64 = 3;
pub const MAX_PROTOCOL: u64 = 4;
/// Largest frame before `connect` succeeds (OpenClaw: 64 KiB).
pub const MAX_PREAUTH_FRAME: usize = 64 * 1024;
/// Largest frame after (OpenClaw's `maxPayload`, 25 MiB).
pub const MAX_PAYLOAD: usize = 25 * 1024 * 1024;
/// Most bytes queued for a slow client before it is dropped (`maxBufferedBytes`, 50 MiB).
pub const MAX_BUFFERED_BYTES: usize = 50 * 1024 * 1024;
/// How often `tick` events go out.
pub const TICK_INTERVAL_MS: u64 = 15_000;

/// OpenClaw's error codes.
pub mod codes {
    pub const INVALID_REQUEST: &str = "INVALID_REQUEST";
    pub const FORBIDDEN: &str = "FORBIDDEN";
    pub const UNAVAILABLE: &str = "UNAVAILABLE";
    pub const AGENT_TIMEOUT: &str = "AGENT_TIMEOUT";
}

/// A client request.
#[derive(Debug, Clone, PartialEq)]
pub struct Request {
    pub id: String,
    pub method: String,
    pub params: Value,
}

/// Why a frame could not be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FrameError {
    #[error("frame of {size} bytes is over the {limit}-byte limit")]
    TooLarge { size: usize, limit: usize },
    #[error("frame is not JSON: {0}")]
    NotJson(String),
    #[error("frame is not a request: {0}")]
    NotRequest(String),
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRequest {
    #[serde(rename = "type")]
    kind: String,
    id: Value,
    method: String,
    #[serde(default)]
    params: Value,
    /// v4 tracing; accepted and ignored.
    #[serde(default, rename = "traceparent")]
    _traceparent: Option<Value>,
}

/// Parses one text frame as a request; `limit` is the size cap in force.
pub fn parse_request(text: &str, limit: usize) -> Result<Request, FrameError> {
    if text.len() > limit {
        return Err(FrameError::TooLarge {
            size: text.len(),
            limit,
        });
    }
    let value: Value =
        serde_json::from_str(text).map_err(|e| FrameError::NotJson(e.to_string()))?;
    let raw: RawRequest =
        serde_json::from_value(value).map_err(|e| FrameError::NotRequest(e.to_string()))?;
    if raw.kind != "req" {
        return Err(FrameError::NotRequest(format!(
            "type is {:?}; clients send \"req\"",
            raw.kind
        )));
    }
    let id = match raw.id {
        Value::String(s) if !s.is_empty() && s.len() <= 256 => s,
        Value::Number(n) => n.to_string(),
        _ => {
            return Err(FrameError::NotRequest(
                "id must be a non-empty string".into(),
            ));
        }
    };
    if raw.method.is_empty() || raw.method.len() > 128 {
        return Err(FrameError::NotRequest(
            "method must be a short non-empty string".into(),
        ));
    }
    let params = if raw.params.is_null() {
        Value::Object(serde_json::Map::new())
    } else {
        raw.params
    };
    Ok(Request {
        id,
        method: raw.method,
        params,
    })
}

/// A method's failure, as the `error` of a `res` frame.
#[derive(Debug, Clone, PartialEq)]
pub struct MethodError {
    pub code: &'static str,
    pub message: String,
    pub details: Option<Value>,
}

impl MethodError {
    pub fn invalid(message: impl Into<String>) -> Self {
        Self {
            code: codes::INVALID_REQUEST,
            message: message.into(),
            details: None,
        }
    }

    pub fn unavailable(message: impl Into<String>) -> Self {
        Self {
            code: codes::UNAVAILABLE,
            message: message.into(),
            details: None,
        }
    }

    pub fn with_details(mut self, details: Value) -> Self {
        self.details = Some(details);
        self
    }

    fn to_json(&self) -> Value {
        let mut error = json!({ "code": self.code, "message": self.message });
        if let Some(details) = &self.details {
            error["details"] = details.clone();
        }
        error
    }
}

/// `{"type":"res","id",…,"ok":true,"payload"}`.
pub fn ok_frame(id: &str, payload: Value) -> String {
    json!({ "type": "res", "id": id, "ok": true, "payload": payload }).to_string()
}

/// `{"type":"res","id",…,"ok":false,"error":{code, message, details?}}`.
pub fn error_frame(id: &str, error: &MethodError) -> String {
    json!({ "type": "res", "id": id, "ok": false, "error": error.to_json() }).to_string()
}

/// `{"type":"event","event",…,"payload","seq"}`; `seq` counts per connection.
pub fn event_frame(event: &str, payload: &Value, seq: Option<u64>) -> String {
    let mut frame = json!({ "type": "event", "event": event, "payload": payload });
    if let Some(seq) = seq {
        frame["seq"] = json!(seq);
    }
    frame.to_string()
}

/// The versions of the gateway's shared state an event frame may carry (OpenClaw's optional
/// `stateVersion: {presence, health}`): a client that sees a version it already has can skip
/// the event, and one that sees a jump knows it missed an update.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StateVersion {
    pub presence: u64,
    pub health: u64,
}

impl StateVersion {
    pub fn to_json(self) -> Value {
        json!({ "presence": self.presence, "health": self.health })
    }
}

/// An event frame up to its `seq`: `{"type":"event","event":…,"payload":…` and, when given,
/// `"stateVersion":{…}` (see [`finish_event_frame`]). Serialized once for all connections.
pub fn event_frame_head(event: &str, payload: &Value, state: Option<StateVersion>) -> String {
    use std::fmt::Write as _;
    let mut head = format!(
        r#"{{"type":"event","event":{},"payload":{}"#,
        Value::from(event),
        payload
    );
    if let Some(state) = state {
        let _ = write!(
            head,
            r#","stateVersion":{{"presence":{},"health":{}}}"#,
            state.presence, state.health
        );
    }
    head
}

/// Closes a frame head with a connection's `seq`.
pub fn finish_event_frame(head: &str, seq: u64) -> String {
    use std::fmt::Write as _;
    let mut frame = String::with_capacity(head.len() + 28);
    frame.push_str(head);
    let _ = write!(frame, r#","seq":{seq}}}"#);
    frame
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn requests_parse_and_bad_frames_are_errors() {
        let r = parse_request(r#"{"type":"req","id":"1:a","method":"health"}"#, 1000).unwrap();
        assert_eq!((r.id.as_str(), r.method.as_str()), ("1:a", "health"));
        assert_eq!(r.params, json!({}));
        assert!(matches!(
            parse_request("nope", 1000),
            Err(FrameError::NotJson(_))
        ));
        assert!(matches!(
            parse_request(r#"{"type":"res","id":"1","method":"x"}"#, 1000),
            Err(FrameError::NotRequest(_))
        ));
        assert!(matches!(
            parse_request(r#"{"type":"req","id":"","method":"x"}"#, 1000),
            Err(FrameError::NotRequest(_))
        ));
        assert!(matches!(
            parse_request(r#"{"type":"req","id":"1","method":"x","extra":1}"#, 1000),
            Err(FrameError::NotRequest(_))
        ));
        assert_eq!(
            parse_request(&"x".repeat(20), 10),
            Err(FrameError::TooLarge {
                size: 20,
                limit: 10
            })
        );
    }

    #[test]
    fn frames_have_openclaws_shape() {
        assert_eq!(
            ok_frame("1", json!({"a": 1})),
            r#"{"id":"1","ok":true,"payload":{"a":1},"type":"res"}"#
        );
        let e = MethodError::invalid("bad").with_details(json!({"x": 1}));
        assert_eq!(
            error_frame("2", &e),
            r#"{"error":{"code":"INVALID_REQUEST","details":{"x":1},"message":"bad"},"id":"2","ok":false,"type":"res"}"#
        );
        assert_eq!(
            event_frame("tick", &json!({"ts": 5}), Some(3)),
            r#"{"event":"tick","payload":{"ts":5},"seq":3,"type":"event"}"#
        );
        let head = event_frame_head("chat", &json!({"text": "a\"b"}), None);
        assert_eq!(
            finish_event_frame(&head, 12),
            r#"{"type":"event","event":"chat","payload":{"text":"a\"b"},"seq":12}"#
        );
        let state = StateVersion {
            presence: 3,
            health: 7,
        };
        let head = event_frame_head("presence", &json!({"presence": []}), Some(state));
        let frame: Value = serde_json::from_str(&finish_event_frame(&head, 4)).unwrap();
        assert_eq!(
            frame,
            json!({"type": "event", "event": "presence", "payload": {"presence": []},
                   "seq": 4, "stateVersion": {"presence": 3, "health": 7}})
        );
        assert_eq!(state.to_json(), json!({"presence": 3, "health": 7}));
    }
}

//! pi's extension UI sub-protocol on the RPC channel: a worker asks with an
//! `extension_ui_request` event (`{type, id, method, ...}`), the client answers dialogs with
//! an `extension_ui_response` line on stdin (`{type, id, value?|confirmed?|cancelled?}`).
//! Also pi-gateway's automatic answers for when no person is there to click.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// The `type` of an [`ExtensionUiRequest`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum UiRequestTag {
    #[default]
    #[serde(rename = "extension_ui_request")]
    ExtensionUiRequest,
}

/// The `type` of an [`ExtensionUiResponse`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum UiResponseTag {
    #[default]
    #[serde(rename = "extension_ui_response")]
    ExtensionUiResponse,
}

/// A worker's request for user interaction. Dialog methods (`select{title, options,
/// timeout?}`, `confirm{title, message}`, `input{title, placeholder?}`, `editor{title,
/// prefill?}`) want an [`ExtensionUiResponse`]; `notify`, `setStatus`, `setWidget`,
/// `setTitle`, `set_editor_text` do not.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExtensionUiRequest {
    #[serde(rename = "type")]
    pub kind: UiRequestTag,
    pub id: String,
    pub method: String,
    /// The method's own fields (`title`, `options`, `message`, ...).
    #[serde(flatten)]
    pub fields: Map<String, Value>,
}

/// The answer to a dialog: exactly one of `value` (select, input, editor), `confirmed`
/// (confirm) or `cancelled: true`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExtensionUiResponse {
    #[serde(rename = "type")]
    pub kind: UiResponseTag,
    pub id: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub confirmed: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cancelled: Option<bool>,
}

impl ExtensionUiResponse {
    pub fn value(id: impl Into<String>, value: impl Into<String>) -> Self {
        Self::new(id.into(), Some(value.into()), None, None)
    }

    pub fn confirmed(id: impl Into<String>, confirmed: bool) -> Self {
        Self::new(id.into(), None, Some(confirmed), None)
    }

    pub fn cancelled(id: impl Into<String>) -> Self {
        Self::new(id.into(), None, None, Some(true))
    }

    fn new(
        id: String,
        value: Option<String>,
        confirmed: Option<bool>,
        cancelled: Option<bool>,
    ) -> Self {
        Self {
            kind: UiResponseTag::ExtensionUiResponse,
            id,
            value,
            confirmed,
            cancelled,
        }
    }
}

/// Methods that expect an answer.
pub const DIALOG_METHODS: &[&str] = &["select", "confirm", "input", "editor"];

impl ExtensionUiRequest {
    /// Reads an event as a UI request (`None` for any other event or a malformed one).
    pub fn from_event(event: &Value) -> Option<Self> {
        if event.get("type").and_then(Value::as_str) != Some("extension_ui_request") {
            return None;
        }
        Self::deserialize(event).ok()
    }

    /// Whether the worker waits for an answer.
    pub fn is_dialog(&self) -> bool {
        DIALOG_METHODS.contains(&self.method.as_str())
    }

    /// pi-gateway's answer when nobody can be asked: `select` takes the first option,
    /// `confirm` says yes, other dialogs are cancelled; `None` for fire-and-forget methods.
    pub fn auto_answer(&self) -> Option<ExtensionUiResponse> {
        match self.method.as_str() {
            "select" => Some(
                match self
                    .fields
                    .get("options")
                    .and_then(Value::as_array)
                    .and_then(|o| o.first())
                    .and_then(Value::as_str)
                {
                    Some(first) => ExtensionUiResponse::value(&self.id, first),
                    None => ExtensionUiResponse::cancelled(&self.id),
                },
            ),
            "confirm" => Some(ExtensionUiResponse::confirmed(&self.id, true)),
            m if DIALOG_METHODS.contains(&m) => Some(ExtensionUiResponse::cancelled(&self.id)),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;
    use serde_json::json;

    #[test]
    fn request_round_trip_and_auto_answers() {
        let event = json!({"type":"extension_ui_request","id":"u1","method":"select","title":"Pick","options":["a","b"]});
        let req = ExtensionUiRequest::from_event(&event).unwrap();
        assert_eq!(req.method, "select");
        assert!(req.is_dialog());
        assert_eq!(serde_json::to_value(&req).unwrap(), event);
        let answer = req.auto_answer().unwrap();
        assert_eq!(
            serde_json::to_string(&answer).unwrap(),
            r#"{"type":"extension_ui_response","id":"u1","value":"a"}"#
        );

        let confirm = ExtensionUiRequest::from_event(&json!({"type":"extension_ui_request","id":"c","method":"confirm","title":"t","message":"m"})).unwrap();
        assert_eq!(
            serde_json::to_string(&confirm.auto_answer().unwrap()).unwrap(),
            r#"{"type":"extension_ui_response","id":"c","confirmed":true}"#
        );
        let input = ExtensionUiRequest::from_event(
            &json!({"type":"extension_ui_request","id":"i","method":"input","title":"t"}),
        )
        .unwrap();
        assert_eq!(
            serde_json::to_string(&input.auto_answer().unwrap()).unwrap(),
            r#"{"type":"extension_ui_response","id":"i","cancelled":true}"#
        );
        let empty_select = ExtensionUiRequest::from_event(
            &json!({"type":"extension_ui_request","id":"s","method":"select","options":[]}),
        )
        .unwrap();
        assert_eq!(empty_select.auto_answer().unwrap().cancelled, Some(true));
        let notify = ExtensionUiRequest::from_event(
            &json!({"type":"extension_ui_request","id":"n","method":"notify","message":"hi"}),
        )
        .unwrap();
        assert!(!notify.is_dialog());
        assert_eq!(notify.auto_answer(), None);
    }

    #[test]
    fn malformed_requests_are_not_requests() {
        for event in [
            json!({"type":"extension_ui_request","method":"select"}),
            json!({"type":"extension_ui_request","id":5,"method":"select"}),
            json!({"type":"message_update","id":"x","method":"select"}),
            json!([]),
            json!(null),
        ] {
            assert_eq!(ExtensionUiRequest::from_event(&event), None, "{event}");
        }
    }

    #[test]
    fn response_parses_each_shape_and_rejects_other_types() {
        let r: ExtensionUiResponse =
            serde_json::from_str(r#"{"type":"extension_ui_response","id":"x","confirmed":false}"#)
                .unwrap();
        assert_eq!(r, ExtensionUiResponse::confirmed("x", false));
        assert!(
            serde_json::from_str::<ExtensionUiResponse>(r#"{"type":"other","id":"x"}"#).is_err()
        );
        assert!(
            serde_json::from_str::<ExtensionUiResponse>(r#"{"type":"extension_ui_response"}"#)
                .is_err()
        );
    }
}

//! pi's RPC messages (`pi --mode rpc`, `modes/rpc/rpc-types.ts`): the commands a client
//! writes, the responses a worker answers with, and the decoding of both sides' lines.
//!
//! Worker side: [`decode_input`] / [`decode_command`] turn a stdin line into a request or a
//! [`DecodeError`] whose [`DecodeError::response_line`] is the answer pi would give.
//! Client side: [`encode_request`] writes a command, [`decode_worker_line`] sorts a stdout
//! line into a response or an event. Every function here takes outside input and never
//! panics on it.

use pincer_ai::types::ImageContent;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::ui::ExtensionUiResponse;

/// How a `prompt` sent while the agent is streaming is queued.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum StreamingBehavior {
    #[serde(rename = "steer")]
    Steer,
    #[serde(rename = "followUp")]
    FollowUp,
}

/// How queued steering / follow-up messages are delivered: the agent's own type, which
/// serialises as pi writes it (`all`, `one-at-a-time`).
pub use pincer_agent::QueueMode;

/// One command of pi's RPC protocol (0.73.1). Unknown fields are ignored,
/// as pi ignores them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(
    tag = "type",
    rename_all = "snake_case",
    rename_all_fields = "camelCase"
)]
pub enum RpcCommand {
    Prompt {
        message: String,
        #[serde(default, skip_serializing_if = "Option::is_none", with = "images")]
        images: Option<Vec<ImageContent>>,
        #[serde(skip_serializing_if = "Option::is_none")]
        streaming_behavior: Option<StreamingBehavior>,
    },
    Steer {
        message: String,
        #[serde(default, skip_serializing_if = "Option::is_none", with = "images")]
        images: Option<Vec<ImageContent>>,
    },
    FollowUp {
        message: String,
        #[serde(default, skip_serializing_if = "Option::is_none", with = "images")]
        images: Option<Vec<ImageContent>>,
    },
    Abort,
    NewSession {
        #[serde(skip_serializing_if = "Option::is_none")]
        parent_session: Option<String>,
    },
    GetState,
    GetMessages,
    SetModel {
        provider: String,
        model_id: String,
    },
    CycleModel,
    GetAvailableModels,
    SetThinkingLevel {
        level: String,
    },
    CycleThinkingLevel,
    SetSteeringMode {
        mode: QueueMode,
    },
    SetFollowUpMode {
        mode: QueueMode,
    },
    Compact {
        #[serde(skip_serializing_if = "Option::is_none")]
        custom_instructions: Option<String>,
    },
    SetAutoCompaction {
        enabled: bool,
    },
    SetAutoRetry {
        enabled: bool,
    },
    AbortRetry,
    Bash {
        command: String,
    },
    AbortBash,
    GetSessionStats,
    ExportHtml {
        #[serde(skip_serializing_if = "Option::is_none")]
        output_path: Option<String>,
    },
    SwitchSession {
        session_path: String,
    },
    Fork {
        entry_id: String,
    },
    /// `clone`: a new session holding the current branch whole (pi's fork "at" the leaf).
    #[serde(rename = "clone")]
    CloneSession,
    GetForkMessages,
    GetLastAssistantText,
    SetSessionName {
        name: String,
    },
    GetCommands,
}

/// Defines [`COMMAND_TYPES`] and [`RpcCommand::command_type`] from one list of each
/// variant and its `type` on the wire, so the two cannot disagree.
macro_rules! command_types {
    ($($variant:ident => $name:literal,)*) => {
        /// Every command type, in declaration order (for tests and for [`is_known_command`]).
        pub const COMMAND_TYPES: &[&str] = &[$($name),*];

        impl RpcCommand {
            /// The command's `type` on the wire (also the `command` of its response).
            pub fn command_type(&self) -> &'static str {
                match self {
                    // `{ .. }` matches unit variants too.
                    $(Self::$variant { .. } => $name,)*
                }
            }
        }
    };
}

command_types! {
    Prompt => "prompt",
    Steer => "steer",
    FollowUp => "follow_up",
    Abort => "abort",
    NewSession => "new_session",
    GetState => "get_state",
    GetMessages => "get_messages",
    SetModel => "set_model",
    CycleModel => "cycle_model",
    GetAvailableModels => "get_available_models",
    SetThinkingLevel => "set_thinking_level",
    CycleThinkingLevel => "cycle_thinking_level",
    SetSteeringMode => "set_steering_mode",
    SetFollowUpMode => "set_follow_up_mode",
    Compact => "compact",
    SetAutoCompaction => "set_auto_compaction",
    SetAutoRetry => "set_auto_retry",
    AbortRetry => "abort_retry",
    Bash => "bash",
    AbortBash => "abort_bash",
    GetSessionStats => "get_session_stats",
    ExportHtml => "export_html",
    SwitchSession => "switch_session",
    Fork => "fork",
    CloneSession => "clone",
    GetForkMessages => "get_fork_messages",
    GetLastAssistantText => "get_last_assistant_text",
    SetSessionName => "set_session_name",
    GetCommands => "get_commands",
}

/// Whether `command_type` is one of [`RpcCommand`]'s types.
pub fn is_known_command(command_type: &str) -> bool {
    COMMAND_TYPES.contains(&command_type)
}

impl RpcCommand {
    /// A plain `prompt{message}`.
    pub fn prompt(message: impl Into<String>) -> Self {
        Self::Prompt {
            message: message.into(),
            images: None,
            streaming_behavior: None,
        }
    }
}

/// pi's `images` are `ImageContent` blocks *with* their `type:"image"` tag, while pincer-ai's
/// [`ImageContent`] is the untagged body of a content block: add the tag on the way out,
/// accept it (or its absence) on the way in.
mod images {
    use pincer_ai::types::ImageContent;
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    #[derive(Serialize)]
    struct Out<'a> {
        #[serde(rename = "type")]
        kind: &'static str,
        data: &'a str,
        #[serde(rename = "mimeType")]
        mime_type: &'a str,
    }

    #[derive(Deserialize)]
    struct In {
        #[serde(rename = "type", default)]
        kind: Option<String>,
        data: String,
        #[serde(rename = "mimeType")]
        mime_type: String,
    }

    pub fn serialize<S: Serializer>(
        images: &Option<Vec<ImageContent>>,
        s: S,
    ) -> Result<S::Ok, S::Error> {
        images
            .as_ref()
            .map(|list| {
                list.iter()
                    .map(|i| Out {
                        kind: "image",
                        data: &i.data,
                        mime_type: &i.mime_type,
                    })
                    .collect::<Vec<_>>()
            })
            .serialize(s)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(
        d: D,
    ) -> Result<Option<Vec<ImageContent>>, D::Error> {
        let list = Option::<Vec<In>>::deserialize(d)?;
        list.map(|list| {
            list.into_iter()
                .map(|i| match i.kind.as_deref() {
                    None | Some("image") => Ok(ImageContent {
                        data: i.data,
                        mime_type: i.mime_type,
                    }),
                    Some(other) => Err(serde::de::Error::custom(format!(
                        "images: expected type \"image\", got \"{other}\""
                    ))),
                })
                .collect()
        })
        .transpose()
    }
}

/// A command with the `id` its response must echo (any JSON value, kept verbatim).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RpcRequest {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub id: Option<Value>,
    #[serde(flatten)]
    pub command: RpcCommand,
}

/// What a worker reads on stdin: a command, or the answer to one of its UI dialogs.
#[derive(Debug, Clone, PartialEq)]
pub enum WorkerInput {
    Command(RpcRequest),
    UiResponse(ExtensionUiResponse),
}

/// A stdin line a worker cannot run. [`DecodeError::response_line`] is pi's answer to it.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum DecodeError {
    /// Not JSON (or JSON pi could not read a `type` from, like `null`).
    #[error("Failed to parse command: {message}")]
    Parse { message: String },
    /// A `type` that is not a command. `command_type` is the type as JavaScript would print
    /// it (`undefined` when missing, `5` for a number). `id` is kept for logging only: pi
    /// answers unknown commands without it.
    #[error("Unknown command: {command_type}")]
    Unknown {
        command_type: String,
        id: Option<Value>,
    },
    /// A known command whose fields do not fit (missing, wrong type).
    #[error("invalid {command}: {message}")]
    Invalid {
        id: Option<Value>,
        command: String,
        message: String,
    },
}

impl DecodeError {
    /// The response line pi writes for this input (JSON, without the trailing `\n`).
    ///
    /// One difference from pi: for a line without a usable `type` (`[]`, `{}`) pi leaves
    /// `command` out (it is `undefined`); this writes `"command":"undefined"`.
    pub fn response_line(&self) -> String {
        match self {
            Self::Parse { .. } => error_line(None, "parse", &self.to_string()),
            Self::Unknown { command_type, .. } => error_line(None, command_type, &self.to_string()),
            Self::Invalid {
                id,
                command,
                message,
            } => error_line(id.as_ref(), command, message),
        }
    }
}

/// Decodes one stdin line of a worker: a command, or an `extension_ui_response`.
pub fn decode_input(line: &str) -> Result<WorkerInput, DecodeError> {
    let value = parse(line)?;
    if value.get("type").and_then(Value::as_str) == Some("extension_ui_response") {
        let id = value.get("id").cloned();
        return serde_json::from_value(value)
            .map(WorkerInput::UiResponse)
            .map_err(|e| DecodeError::Invalid {
                id,
                command: "extension_ui_response".into(),
                message: e.to_string(),
            });
    }
    command_from_value(value).map(WorkerInput::Command)
}

/// Decodes one stdin line of a worker as a command (an `extension_ui_response` is an
/// unknown command here; workers that show dialogs use [`decode_input`]).
pub fn decode_command(line: &str) -> Result<RpcRequest, DecodeError> {
    command_from_value(parse(line)?)
}

fn parse(line: &str) -> Result<Value, DecodeError> {
    let value: Value = serde_json::from_str(line).map_err(|e| DecodeError::Parse {
        message: e.to_string(),
    })?;
    if value.is_null() {
        // JavaScript throws reading `null.type`; pi reports that as a parse failure.
        return Err(DecodeError::Parse {
            message: "Cannot read properties of null (reading 'type')".into(),
        });
    }
    Ok(value)
}

fn command_from_value(value: Value) -> Result<RpcRequest, DecodeError> {
    let id = value.get("id").cloned();
    let command_type = match value.get("type") {
        Some(Value::String(s)) if is_known_command(s) => s.clone(),
        other => {
            return Err(DecodeError::Unknown {
                command_type: js_string(other),
                id,
            });
        }
    };
    match RpcCommand::deserialize(&value) {
        Ok(command) => Ok(RpcRequest { id, command }),
        Err(e) => Err(DecodeError::Invalid {
            id,
            command: command_type,
            message: e.to_string(),
        }),
    }
}

/// `String(x)` of JavaScript, close enough for an error message about a `type` field.
fn js_string(value: Option<&Value>) -> String {
    match value {
        None => "undefined".into(),
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(_)) => String::new(),
        Some(Value::Object(_)) => "[object Object]".into(),
        Some(other) => other.to_string(),
    }
}

/// A response, field order as pi writes it.
#[derive(Serialize)]
struct ResponseOut<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    id: Option<&'a Value>,
    #[serde(rename = "type")]
    kind: &'static str,
    command: &'a str,
    success: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    data: Option<&'a Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<&'a str>,
}

/// `{"id"?, "type":"response", "command", "success":true, "data"?}`; `data: Some(Null)` is
/// written as `"data":null` (pi does, for `cycle_model` with one model). No trailing `\n`.
pub fn success_line(id: Option<&Value>, command: &str, data: Option<&Value>) -> String {
    json_line(&ResponseOut {
        id,
        kind: "response",
        command,
        success: true,
        data,
        error: None,
    })
}

/// `{"id"?, "type":"response", "command", "success":false, "error"}`. No trailing `\n`.
pub fn error_line(id: Option<&Value>, command: &str, error: &str) -> String {
    json_line(&ResponseOut {
        id,
        kind: "response",
        command,
        success: false,
        data: None,
        error: Some(error),
    })
}

/// Serialises one protocol line (no trailing `\n`). U+2028 / U+2029 are escaped as pi's
/// `serializeRpcJsonLine` does, because older readers split lines on them.
pub fn json_line<T: Serialize + ?Sized>(value: &T) -> String {
    // Serialising our own types and `Value`s cannot fail (string keys only).
    let text = serde_json::to_string(value).unwrap_or_else(|_| "null".into());
    if text.contains(['\u{2028}', '\u{2029}']) {
        text.replace('\u{2028}', "\\u2028")
            .replace('\u{2029}', "\\u2029")
    } else {
        text
    }
}

/// The line a client writes for a command with this id (no trailing `\n`).
pub fn encode_request(id: Option<&Value>, command: &RpcCommand) -> String {
    json_line(&RpcRequest {
        id: id.cloned(),
        command: command.clone(),
    })
}

/// One stdout line of a worker, as the client sees it.
#[derive(Debug, Clone, PartialEq)]
pub enum WorkerLine {
    Response {
        id: Option<Value>,
        /// Empty when the worker left it out (pi does for a line without a `type`).
        command: String,
        success: bool,
        /// `Some(Value::Null)` when the worker wrote `"data":null`.
        data: Option<Value>,
        error: Option<String>,
    },
    /// Any other JSON object with a string `type`: an agent or session event, or an
    /// `extension_ui_request`.
    Event(Value),
}

/// Why a stdout line is not part of the protocol.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WorkerLineError {
    #[error("not JSON: {message}")]
    NotJson { message: String },
    #[error("not a JSON object")]
    NotObject,
    #[error("no string \"type\"")]
    NoType,
    #[error("bad response: {message}")]
    BadResponse { message: String },
}

/// Sorts one stdout line of a worker into a response or an event.
pub fn decode_worker_line(line: &str) -> Result<WorkerLine, WorkerLineError> {
    let value: Value = serde_json::from_str(line).map_err(|e| WorkerLineError::NotJson {
        message: e.to_string(),
    })?;
    let Value::Object(mut obj) = value else {
        return Err(WorkerLineError::NotObject);
    };
    match obj.get("type") {
        Some(Value::String(t)) if t == "response" => response_from(&mut obj),
        Some(Value::String(_)) => Ok(WorkerLine::Event(Value::Object(obj))),
        _ => Err(WorkerLineError::NoType),
    }
}

fn response_from(obj: &mut Map<String, Value>) -> Result<WorkerLine, WorkerLineError> {
    let bad = |message: &str| WorkerLineError::BadResponse {
        message: message.into(),
    };
    let success = match obj.get("success") {
        Some(Value::Bool(b)) => *b,
        _ => return Err(bad("\"success\" is not a boolean")),
    };
    let command = match obj.get("command") {
        None => String::new(),
        Some(Value::String(s)) => s.clone(),
        Some(_) => return Err(bad("\"command\" is not a string")),
    };
    let error = match obj.get("error") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(s.clone()),
        // Not worth dropping the response over: keep the text of whatever it is.
        Some(other) => Some(other.to_string()),
    };
    Ok(WorkerLine::Response {
        id: obj.remove("id"),
        command,
        success,
        data: obj.remove("data"),
        error,
    })
}

#[cfg(test)]
#[path = "protocol_tests.rs"]
mod tests;

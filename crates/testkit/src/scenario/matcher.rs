//! `Match`: the conditions a rule puts on a request (all optional, all must hold).

use serde::{Deserialize, Serialize};

use super::builder::builder;
use crate::api::Api;

/// Conditions on a request. An empty `Match` matches every request.
///
/// `lastUser` / `lastUserContains` only hold when the conversation ends with a user text
/// message; `toolResult` / `toolResultId` only hold when it ends with a tool result. That is
/// what makes a tool round trip scriptable: the follow-up request still contains the user's
/// question, but now ends with the tool's result.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default, deny_unknown_fields)]
pub struct Match {
    /// The last user message's text equals this exactly.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_user: Option<String>,
    /// The last user message's text contains this.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_user_contains: Option<String>,
    /// The request ends with the result of a call to this tool. When the protocol carries only
    /// a call id, the name is found in the request's own history or among the calls this server
    /// emitted earlier.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_result: Option<String>,
    /// The request ends with the result of the tool call with this id.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_result_id: Option<String>,
    /// The request came in over this protocol.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub api: Option<Api>,
    /// The requested model equals this.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
}

impl Match {
    /// Matches every request.
    pub fn any() -> Self {
        Self::default()
    }
}

builder!(Match {
    /// The last user message is exactly this text.
    new last_user(last_user: into String);
    /// Adds the `lastUser` condition.
    set with_last_user(last_user: into String);
    /// The last user message contains this text.
    new last_user_contains(last_user_contains: into String);
    /// Adds the `lastUserContains` condition.
    set with_last_user_contains(last_user_contains: into String);
    /// The request ends with a result of this tool.
    new tool_result(tool_result: into String);
    /// Adds the `toolResult` condition.
    set with_tool_result(tool_result: into String);
    /// The request ends with the result of the call with this id.
    new tool_result_id(tool_result_id: into String);
    /// Adds the `toolResultId` condition.
    set with_tool_result_id(tool_result_id: into String);
    /// The request came over this protocol.
    new api(api: Api);
    /// Adds the `api` condition.
    set with_api(api: Api);
    /// The requested model is this one.
    new model(model: into String);
    /// Adds the `model` condition.
    set with_model(model: into String);
});

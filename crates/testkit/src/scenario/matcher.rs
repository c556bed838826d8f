//! `Match`: the conditions a rule puts on a request (all optional, all must hold).

use serde::{Deserialize, Serialize};

use crate::api::Api;

/// Conditions on a request. An empty `Match` matches every request.
///
/// `lastUser` / `lastUserContains` only hold when the conversation ends with a user text
/// message; `toolResult` / `toolResultId` only hold when it ends with a tool result. That is
/// what makes a tool round trip scriptable: the follow-up request still contains the user's
/// question, but now ends with the tool's result.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Match {
    /// The last user message's text equals this exactly.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_user: Option<String>,
    /// The last user message's text contains this.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_user_contains: Option<String>,
    /// The request ends with the result of a call to this tool. When the protocol carries only
    /// a call id, the name is found in the request's own history or among the calls this server
    /// emitted earlier.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_result: Option<String>,
    /// The request ends with the result of the tool call with this id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_result_id: Option<String>,
    /// The request came in over this protocol.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api: Option<Api>,
    /// The requested model equals this.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
}

impl Match {
    /// Matches every request.
    pub fn any() -> Self {
        Self::default()
    }

    /// The last user message is exactly `text`.
    pub fn last_user(text: impl Into<String>) -> Self {
        Self::any().with_last_user(text)
    }

    /// The last user message contains `needle`.
    pub fn last_user_contains(needle: impl Into<String>) -> Self {
        Self::any().with_last_user_contains(needle)
    }

    /// The request ends with a result of tool `name`.
    pub fn tool_result(name: impl Into<String>) -> Self {
        Self::any().with_tool_result(name)
    }

    /// The request ends with the result of call `id`.
    pub fn tool_result_id(id: impl Into<String>) -> Self {
        Self::any().with_tool_result_id(id)
    }

    /// The request came over `api`.
    pub fn api(api: Api) -> Self {
        Self::any().with_api(api)
    }

    /// The requested model is `model`.
    pub fn model(model: impl Into<String>) -> Self {
        Self::any().with_model(model)
    }

    /// Adds the `lastUser` condition.
    pub fn with_last_user(mut self, text: impl Into<String>) -> Self {
        self.last_user = Some(text.into());
        self
    }

    /// Adds the `lastUserContains` condition.
    pub fn with_last_user_contains(mut self, needle: impl Into<String>) -> Self {
        self.last_user_contains = Some(needle.into());
        self
    }

    /// Adds the `toolResult` condition.
    pub fn with_tool_result(mut self, name: impl Into<String>) -> Self {
        self.tool_result = Some(name.into());
        self
    }

    /// Adds the `toolResultId` condition.
    pub fn with_tool_result_id(mut self, id: impl Into<String>) -> Self {
        self.tool_result_id = Some(id.into());
        self
    }

    /// Adds the `api` condition.
    pub fn with_api(mut self, api: Api) -> Self {
        self.api = Some(api);
        self
    }

    /// Adds the `model` condition.
    pub fn with_model(mut self, model: impl Into<String>) -> Self {
        self.model = Some(model.into());
        self
    }
}

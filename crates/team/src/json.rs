//! Tool results as OpenClaw's session tools return them: the JSON, pretty-printed, as the
//! text the model reads, and the same value as the result's details for clients.

use pincer_agent::ToolOutput;
use serde_json::Value;

pub(crate) fn output(value: Value) -> ToolOutput {
    let text = serde_json::to_string_pretty(&value).unwrap_or_else(|_| value.to_string());
    ToolOutput::text(text).with_details(value)
}

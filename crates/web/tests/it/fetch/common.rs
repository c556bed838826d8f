//! What the web_fetch tests share: the fixture site, options that allow 127.0.0.1, one
//! call of the tool, and the result text without the content-derived marker id.

#![allow(clippy::expect_used)]

use std::sync::Arc;
use std::time::Duration;

use pincer_agent::{AgentTool, ToolContext, ToolError, ToolOutput};
use pincer_fakes::fake_site::FakeSite;
use pincer_web::fetch::{WebFetchOptions, web_fetch_tool};
use pincer_web::ssrf::NetworkPolicy;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

pub async fn site() -> FakeSite {
    FakeSite::start().await.expect("fixture site")
}

/// Options for the fixture: 127.0.0.1 allowed, no cache, a short timeout.
pub fn options() -> WebFetchOptions {
    WebFetchOptions {
        policy: NetworkPolicy {
            allow_private_network: false,
            allow_hosts: vec!["127.0.0.1".into()],
            ..NetworkPolicy::default()
        },
        timeout: Duration::from_secs(10),
        ..WebFetchOptions::default()
    }
}

pub async fn call(tool: &Arc<dyn AgentTool>, args: Value) -> Result<ToolOutput, ToolError> {
    tool.execute(args, ToolContext::new("call", CancellationToken::new()))
        .await
}

/// Fetches `url` with `options` and extra `args` (merged into `{url}`).
pub async fn fetch_with(
    options: WebFetchOptions,
    url: &str,
    args: Value,
) -> Result<ToolOutput, ToolError> {
    let tool = web_fetch_tool(options);
    let mut all = serde_json::json!({ "url": url });
    if let (Some(all), Value::Object(extra)) = (all.as_object_mut(), args) {
        all.extend(extra);
    }
    call(&tool, all).await
}

pub async fn fetch(url: &str) -> Result<ToolOutput, ToolError> {
    fetch_with(options(), url, serde_json::json!({})).await
}

/// The result text with every marker id replaced by `ID`.
pub fn text(output: &ToolOutput) -> String {
    let text = output.text_content();
    let mut out = String::new();
    let mut rest = text.as_str();
    while let Some(at) = rest.find(" id=\"") {
        out.push_str(&rest[..at]);
        out.push_str(" id=\"ID\"");
        let after = &rest[at + 5..];
        rest = after.find('"').map_or("", |end| &after[end + 1..]);
    }
    out.push_str(rest);
    out
}

/// The content between the markers (after the `Source` line and `---`).
pub fn content(output: &ToolOutput) -> String {
    let text = output.text_content();
    let start = text.find("\n---\n").map_or(0, |at| at + 5);
    let end = text
        .rfind("\n<<<END_UNTRUSTED_WEB_CONTENT")
        .unwrap_or(text.len());
    text[start..end].to_owned()
}

pub fn details(output: &ToolOutput) -> Value {
    output.details.clone().unwrap_or(Value::Null)
}

//! web_search against `pincer_fakes::fake_search::FakeSearch`: each provider's exact request
//! and result text, the filters' mapping, the per-session cache, the failures (401, 429,
//! 5xx, garbage, empty, timeout) and the unconfigured tool.

mod failures;
mod providers;
mod setup;

use std::sync::Arc;
use std::time::Duration;

use pincer_agent::{AgentTool, ToolContext, ToolError, ToolOutput};
use pincer_fakes::fake_search::FakeSearch;
use pincer_web::search::{ProviderKind, SearchOptions, web_search_tool};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

/// Options for `kind` pointed at `fake`, with the fake's key.
pub(crate) fn options(kind: ProviderKind, fake: &FakeSearch) -> SearchOptions {
    let mut options = SearchOptions::new(kind);
    options.base_url = Some(fake.base_url());
    options.api_key = match kind {
        ProviderKind::Brave => Some(fake.config().brave_key.clone()),
        ProviderKind::Tavily => Some(fake.config().tavily_key.clone()),
        ProviderKind::Perplexity => Some(fake.config().perplexity_key.clone()),
        ProviderKind::Searxng => None,
    };
    options
}

pub(crate) fn tool(options: SearchOptions) -> Arc<dyn AgentTool> {
    web_search_tool(Some(options))
}

/// Calls `tool` with `args` in `session`.
pub(crate) async fn call(
    tool: &Arc<dyn AgentTool>,
    args: Value,
    session: Option<&str>,
) -> Result<ToolOutput, ToolError> {
    let ctx = ToolContext::new("call-1", CancellationToken::new())
        .with_session_key(session.map(Arc::from));
    tool.execute(args, ctx).await
}

/// The text with the random marker id replaced by `ID`.
pub(crate) fn text_of(output: &ToolOutput) -> String {
    let text = output.text_content();
    let Some(start) = text.find("id=\"") else {
        panic!("no marker id in {text}")
    };
    let start = start + 4;
    let id = &text[start..start + 16];
    text.replace(id, "ID")
}

pub(crate) fn error_of(result: Result<ToolOutput, ToolError>) -> String {
    match result {
        Ok(output) => panic!("expected an error, got {}", output.text_content()),
        Err(err) => err.to_string(),
    }
}

pub(crate) const SECOND: Duration = Duration::from_secs(1);

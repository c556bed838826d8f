//! pincer-web: the agent on the web. `web_fetch` GETs a page safely (the [`ssrf`] policy
//! checks every address it connects to, redirects included), extracts its readable content
//! as Markdown and keeps it in a small on-disk [`cache`]; `web_search` asks one of the
//! [`search`] providers. Both tools implement `pincer_agent::AgentTool`; the binary builds
//! their options from the config.

pub mod cache;
pub mod fetch;
pub mod search;
pub mod ssrf;

//! pincer-web's integration tests: web_fetch against fixture pages on 127.0.0.1, the SSRF
//! table, web_search against fake providers.

mod fetch;
mod search;

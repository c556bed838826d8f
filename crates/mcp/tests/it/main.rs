//! pincer-mcp integration tests: the client against the real npm servers
//! (`@modelcontextprotocol/server-everything`, `server-filesystem`, installed in
//! `interop/.cache` by `.ci/run`).

mod client_everything;
mod support;

//! pincer-mcp integration tests: the client against the real npm servers
//! (`@modelcontextprotocol/server-everything`, `server-filesystem`, installed in
//! `interop/.cache` by `.ci/run`) and against a misbehaving server of our own
//! (`fake_server.py`).

mod client_everything;
mod client_fake;
mod support;

//! pincer-mcp integration tests.

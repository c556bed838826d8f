//! A fake Slack (Socket Mode WebSocket + Web API) for tests (work in progress).

//! A fake Feishu / Lark Open Platform (long-connection frames, REST, event callbacks) for tests (work in progress).

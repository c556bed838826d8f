//! Fake web search providers (TODO)

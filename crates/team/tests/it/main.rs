//! The integration tests of pincer-team, one module per tool family.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod delegate;
mod fake_port;
mod message;
mod sessions;
mod slot;
mod subagents;

//! The integration tests of pincer-team, one module per tool family.

mod message;
mod slot;

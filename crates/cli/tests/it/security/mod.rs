//! The attacks of the security review, run against a real `pincer` (gateway, `ask`, tools)
//! on loopback, so that each stays fixed. One module per finding area; every test here
//! failed before its fix.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod browser_origin;
mod exec_escape;
mod files_media;
mod http_limits;
mod permissions;
mod secrets;
mod ws_limits;

//! The `browser` tool against a real headless Chromium on fixture pages served from
//! 127.0.0.1: open, snapshot (exact outlines), act, screenshot, pdf, tabs per session,
//! a second tool instance (as another process) on the same tab, the navigation guard,
//! evaluate's switch, a page that never loads, and a browser killed between calls.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod fixture;
mod flows;

//! pincer-browser: the `browser` tool (OpenClaw's shape: one tool, many actions) driving a
//! dedicated headless Chromium over the Chrome DevTools Protocol.
//!
//! Two halves meet at [`BrowserRuntime`]:
//! - the runtime (`runtime/`): finds or starts the profile's Chromium under
//!   `$PINCER_HOME/browser/<profile>/`, records its CDP endpoint there so separate processes
//!   (the gateway, `pincer tools invoke browser`) share one browser, and ends it on `stop`,
//!   on an idle timeout and on shutdown — never an orphaned Chromium;
//! - the tool (`tool/`): a small CDP client, tabs per session, snapshots whose element refs
//!   live in the page, actions, screenshots and PDFs.

pub mod runtime;
pub mod tool;

use std::path::Path;

use futures_util::future::BoxFuture;

/// Where a running browser listens: what the tool connects to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Endpoint {
    /// The browser target's WebSocket URL (`ws://127.0.0.1:<port>/devtools/browser/<id>`).
    pub ws_url: String,
    /// `http://127.0.0.1:<port>`: `/json/version`, `/json/list`.
    pub http_base: String,
}

/// What `status` reports about the profile's browser.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RuntimeStatus {
    pub profile: String,
    pub running: bool,
    /// The Chromium process, when running.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pid: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ws_url: Option<String>,
    /// The executable that is (or would be) started; `None` when none was found.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub executable: Option<String>,
    pub headless: bool,
}

/// Why the runtime could not do what was asked. The message is said to the agent as it is,
/// so it says what to do.
#[derive(Debug, thiserror::Error)]
pub enum RuntimeError {
    #[error("no Chromium or Chrome found: install chromium or set browser.executablePath")]
    NoExecutable,
    #[error("the browser could not start: {0}")]
    Start(String),
    #[error("the browser's state under {path} could not be used: {reason}")]
    State { path: String, reason: String },
    /// The supervisor process could not be run or said something unreadable.
    #[error("the browser's supervisor failed: {0}")]
    Supervisor(String),
}

/// The profile's browser process, shared by every caller: implemented by the runtime half,
/// used by the tool half (and faked by nothing: tests use the real one).
pub trait BrowserRuntime: Send + Sync {
    /// The running browser's endpoint, starting it first when none runs (or the recorded
    /// one died).
    fn ensure_running(&self) -> BoxFuture<'_, Result<Endpoint, RuntimeError>>;
    /// The running browser's endpoint without starting one.
    fn running(&self) -> BoxFuture<'_, Result<Option<Endpoint>, RuntimeError>>;
    /// Ends the browser; `false` when none was running.
    fn stop(&self) -> BoxFuture<'_, Result<bool, RuntimeError>>;
    fn status(&self) -> BoxFuture<'_, Result<RuntimeStatus, RuntimeError>>;
    /// The browser was just used: the idle timeout starts again.
    fn touch(&self);
    /// `$PINCER_HOME/browser/<profile>/`: where the tool keeps its own records (tabs per
    /// session), beside the runtime's.
    fn state_dir(&self) -> &Path;
}

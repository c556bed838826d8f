//! The worker side of pi's RPC protocol — what `pincer rpc` is: one agent over one pi
//! session file, driven by commands on stdin, its responses and events on stdout as pi
//! writes them. What only the program around it knows (the configured models, keys,
//! tools, system prompt and skills) comes through the [`WorkerHost`] port.
//!
//! [`serve`] is the whole worker: it reads commands until stdin ends, hands each to
//! [`dispatch`](dispatch::dispatch) and stops what runs.

mod bash;
mod dispatch;
pub mod error;
mod export;
mod fork;
pub mod host;
mod output;
mod parts;
mod serve;
mod session_file;
mod state;
#[cfg(test)]
mod tests;

use std::path::PathBuf;

use pincer_ai::ThinkingLevel;

pub use error::{SessionFileError, WorkerError, wire_text};
pub use host::{ConfigRequest, HostError, SkillCommand, WorkerHost};
pub use parts::parse_thinking_level;
pub use serve::serve;

/// How the worker was started (pi's flags).
#[derive(Debug, Clone, Default)]
pub struct WorkerOptions {
    pub agent_id: String,
    pub provider: Option<String>,
    pub model: Option<String>,
    pub thinking: Option<ThinkingLevel>,
    /// Tool names to keep (pi's names; `bash` is Pincer's `exec`); `None`: the agent's.
    pub tools: Option<Vec<String>>,
    pub system_prompt: Option<String>,
    pub append_system_prompt: Vec<String>,
    pub session_dir: PathBuf,
    /// Resume the newest session of `session_dir`.
    pub continue_session: bool,
    /// Open this session file.
    pub session_file: Option<PathBuf>,
    pub cwd: PathBuf,
}

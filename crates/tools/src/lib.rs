//! pincer-tools: the built-in tools an agent can call. File tools (`read`, `write`, `edit`,
//! `ls`, `grep`, `find`) confined to the workspace, `exec` with a process registry and the
//! `process` tool, the memory tools (`memory_search`, `memory_get`), `image` (asks a vision
//! model about a picture through the [`VisionModel`] port), the lainclaw basic set, and tool
//! profiles with allow/deny lists. Tools
//! implement `pincer_agent::AgentTool`; their parameters are Rust types.

pub mod basic;
pub mod exec;
pub mod files;
pub mod image;
pub mod memory;
pub mod paths;
pub mod profile;

pub use basic::basic_tools;
pub use exec::{ExecExitNotice, ExecSecurity, ProcessRegistry, exec_tools, exec_tools_notifying};
pub use files::file_tools;
pub use image::{ImageTool, VisionModel};
pub use memory::{MemorySource, memory_tools};
pub use paths::{PathError, PathPolicy};
pub use profile::{ToolFilter, ToolProfile};

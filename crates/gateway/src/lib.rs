//! pincer-gateway: the gateway core. Routes a message to an agent and a session key,
//! builds each agent's system prompt from its workspace and skills, and runs turns whose
//! messages persist to the session store; system events wait per session for its next turn.

pub mod chunker;
pub mod dedupe;
pub mod failover;
pub mod media_inbox;
pub mod media_reply;
pub mod memory_flush;
pub mod model_select;
pub mod pairing;
pub mod prompt;
pub mod prompt_sections;
pub mod router;
pub mod server;
pub mod session_memory;
pub mod skills;
pub mod turn;
pub mod turn_rpc;
pub mod workspace;

// Cron, heartbeat and system events live in pincer-automation; the server's modules name
// them by their old paths.
pub use pincer_automation::{cron, heartbeat, system_events};

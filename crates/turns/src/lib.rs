//! pincer-turns: a turn of an agent, from a message to its stored reply, whatever carried the
//! message (a WS client, a channel, cron, the heartbeat, the CLI). [`router`] picks the agent
//! and session key; [`workspace`], [`skills`], [`prompt`] and [`prompt_sections`] build the
//! agent's system prompt; [`model_select`] and [`failover`] choose the model; [`turn`] runs
//! the agent loop embedded (or [`turn_rpc`] on a pi RPC worker) and persists every message to
//! the session store; [`memory_flush`] and [`session_memory`] keep memory; [`media_inbox`]
//! and [`media_reply`] move files in and out; [`dedupe`] drops redelivered messages;
//! [`chunker`] splits long replies into blocks.
//!
//! It knows nothing of transports: the gateway's server (`pincer-gateway`) calls it.

pub mod chunker;
pub mod command_answers;
pub mod commands;
pub mod compact;
pub mod dedupe;
pub mod failover;
pub mod media_image;
pub mod media_inbox;
pub mod media_input;
pub mod media_reply;
pub mod media_text;
pub mod media_voice;
pub mod memory_flush;
pub mod model_select;
pub mod prompt;
pub mod prompt_sections;
pub mod router;
pub mod session_memory;
pub mod skills;
pub mod turn;
pub mod turn_rpc;
mod turn_store;
pub mod workspace;

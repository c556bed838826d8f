//! pi's RPC protocol (`pi --mode rpc`): JSON lines on a worker's stdin/stdout. This module
//! owns the wire format for both sides; `pincer rpc` (crates/cli) is a worker built on it, and
//! the gateway drives workers (`pincer rpc` or a real `pi --mode rpc`) with it.
//!
//! Public API:
//! - [`line`]: [`LineDecoder`] (`new`, `with_max`, `push(&[u8]) -> Vec<Result<String,
//!   LineError>>`, `finish`), [`read_line_limited`] (async, one line from an `AsyncBufRead`),
//!   [`MAX_LINE_BYTES`], [`LineError`] (`InvalidUtf8`, `TooLong{len}`).
//! - [`protocol`], worker side: [`decode_input`] (a command or an `extension_ui_response`),
//!   [`decode_command`] -> [`RpcRequest`]`{id, command: `[`RpcCommand`]`}` or
//!   [`DecodeError`] (`Parse`, `Unknown`, `Invalid`) whose `response_line()` is pi's answer;
//!   [`success_line`] / [`error_line`] write responses, [`json_line`] writes events (all
//!   without the trailing `\n`).
//! - [`protocol`], client side: [`encode_request`], [`decode_worker_line`] ->
//!   [`WorkerLine`]`::{Response, Event}` or [`WorkerLineError`].
//! - [`ui`]: [`ExtensionUiRequest`] (`from_event`, `is_dialog`, `auto_answer`),
//!   [`ExtensionUiResponse`].
//! - [`client`]: [`RpcClient`] drives one worker process: `spawn(`[`WorkerSpec`]`)`,
//!   `request(cmd, timeout) -> data`, `send_no_wait`, `answer_ui`, `subscribe()` to events,
//!   `prompt_and_wait(message, timeout) -> `[`TurnCollected`], `stats()` ([`RpcStats`]),
//!   `is_alive`, `exit_info`, `exited().await`, `stop().await`; errors are [`RpcError`],
//!   an exit is an [`ExitInfo`]. Dropping the client kills the worker.
//! - [`worker`]: the worker itself (`pincer rpc`): [`worker::serve`]`(host, `
//!   [`worker::WorkerOptions`]`)` answers commands on stdin until it ends; the program
//!   around it implements [`worker::WorkerHost`] (`agent_config(`[`worker::ConfigRequest`]`)`,
//!   `models`, `scoped_models`, `skills`, `shutdown`). Errors are [`worker::WorkerError`]
//!   (on the wire as [`worker::wire_text`]), the host's a [`worker::HostError`];
//!   `ThinkingLevel::as_str` / [`worker::parse_thinking_level`] are pi's level names.

pub mod client;
mod collect;
pub mod error;
pub mod events;
pub mod line;
pub mod pool;
pub mod profile;
pub mod protocol;
pub mod ui;
pub mod worker;
mod worker_io;

pub use line::{LineDecoder, LineError, MAX_LINE_BYTES, read_line_limited};
pub use protocol::{
    COMMAND_TYPES, DecodeError, QueueMode, RpcCommand, RpcRequest, StreamingBehavior, WorkerInput,
    WorkerLine, WorkerLineError, decode_command, decode_input, decode_worker_line, encode_request,
    error_line, is_known_command, json_line, success_line,
};
pub use ui::{ExtensionUiRequest, ExtensionUiResponse};

pub use client::{
    DEFAULT_REQUEST_TIMEOUT, MAX_COMMAND_BYTES, OutgoingCommand, RpcClient, UiAnswerer, WorkerSpec,
};
pub use collect::TurnCollected;
pub use error::{ExitInfo, RpcError};
pub use events::agent_event;
pub use pool::{PoolError, PoolSettings, PoolStats, PooledWorker, Reuse, RpcPool, WorkerSpawner};
pub use profile::CapabilityProfile;
pub use worker_io::RpcStats;

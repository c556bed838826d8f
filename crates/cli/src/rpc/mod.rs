//! The CLI's side of pi's RPC protocol: `pincer rpc` (the worker of pincer-rpc on this
//! program's configuration), the host it runs on, and the gateway's pool of workers.

pub mod cmd;
pub mod gateway_tools;
mod host;
pub mod runner;

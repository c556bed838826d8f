//! pincer-gateway: the gateway's server — OpenClaw's WebSocket protocol and the HTTP API on
//! one port, the lanes and runs that queue and execute turns, channel ingress and delivery,
//! the cron and heartbeat runners — and DM pairing, the server's access control for chats.
//! What a turn is lives in `pincer-turns`; cron, heartbeat and system events in
//! `pincer-automation`; the channel port in `pincer-channel-port`.

pub mod pairing;
pub mod server;

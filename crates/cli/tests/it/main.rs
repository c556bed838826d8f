//! The pincer binary's integration tests, one binary (linked once, not once per file). Each
//! module was a `tests/*.rs` binary of its own (`security` was `tests/security/main.rs`);
//! run one with `cargo test -p pincer --test it <module>::`.

mod common;

mod ask;
mod ask_image_tool;
mod ask_media;
mod ask_memory;
mod ask_proxy;
mod channel_block_streaming;
mod channel_conformance;
mod channel_controls;
mod channel_discord;
mod channel_feishu;
mod channel_slack;
mod channel_status;
mod channel_telegram;
mod chat;
mod chat_compact;
mod codex_login;
mod commands;
mod cron_cli;
mod exec_approvals;
mod gateway;
mod gateway_config;
mod gateway_control_ui;
mod gateway_crash;
mod gateway_exec;
mod gateway_exec_notify;
mod gateway_prompts;
mod gateway_rpc_dialogs;
mod gateway_rpc_roles;
mod gateway_rpc_runner;
mod gateway_thinking;
mod gateway_tool_updates;
mod mcp_client;
mod mcp_oauth;
mod mcp_serve;
mod memory;
mod message_tool;
mod pairing_cli;
mod rpc_interop;
mod rpc_worker;
mod sandbox_exec;
mod security;
mod team;
mod web_tools;

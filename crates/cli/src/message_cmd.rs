//! `pincer message send`: an operator's message to a chat, through the running gateway's
//! WebSocket `send` method (the channels live in the gateway, so nothing is sent without
//! one). Not gated by `tools.message.allowTargets`, which limits agents, not the owner.

use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Result, bail};
use clap::{Args, Subcommand};
use serde_json::{Value, json};

use crate::app::App;
use crate::gateway::client::{Endpoint, GatewayClient};

/// How long the gateway may take to send (its own deadline is 120 s, retries included).
const SEND_TIMEOUT: Duration = Duration::from_secs(150);

/// `pincer message …`.
#[derive(Debug, Subcommand)]
pub enum MessageCommand {
    /// Send a message to a chat on a running channel (through the gateway).
    Send(SendArgs),
}

#[derive(Debug, Args)]
pub struct SendArgs {
    /// The channel: telegram, discord, slack, feishu (default: the only one running).
    #[arg(long)]
    pub channel: Option<String>,
    /// The chat: the platform's chat id (`user:<id>`, `channel:<id>` say its kind).
    #[arg(long, alias = "target", value_name = "CHAT")]
    pub to: String,
    /// The text, in Markdown (or give it with --message).
    #[arg(value_name = "TEXT", num_args = 0.., conflicts_with = "message")]
    pub text: Vec<String>,
    /// The text, as a flag.
    #[arg(long, short = 'm', value_name = "TEXT")]
    pub message: Option<String>,
    /// A file to attach (a path in the agent's workspace); repeatable.
    #[arg(long, value_name = "PATH")]
    pub media: Vec<String>,
    /// The bot account, when the channel has several.
    #[arg(long, value_name = "ACCOUNT")]
    pub account: Option<String>,
    /// Whose workspace --media paths are in (default: the default agent).
    #[arg(long, value_name = "AGENT")]
    pub agent: Option<String>,
    /// The message id this answers.
    #[arg(long, value_name = "MESSAGE_ID")]
    pub reply_to: Option<String>,
    /// A Telegram forum topic, or a thread on other platforms.
    #[arg(long, value_name = "THREAD")]
    pub thread_id: Option<String>,
    /// Print the gateway's answer as JSON.
    #[arg(long)]
    pub json: bool,
}

pub async fn run(app: &App, command: MessageCommand) -> Result<ExitCode> {
    match command {
        MessageCommand::Send(args) => send(app, args).await,
    }
}

async fn send(app: &App, args: SendArgs) -> Result<ExitCode> {
    let text = args.message.unwrap_or_else(|| args.text.join(" "));
    if text.trim().is_empty() && args.media.is_empty() {
        bail!(
            "nothing to send: give the text (`pincer message send --to <chat> \"hello\"`) or --media"
        );
    }
    if args.to.trim().is_empty() {
        bail!("--to is empty: give the chat id to send to");
    }
    let mut params = json!({
        "to": args.to,
        "message": text,
        "idempotencyKey": pincer_base::id::uuid_v4(),
    });
    let optional = [
        ("channel", args.channel),
        ("accountId", args.account),
        ("agentId", args.agent),
        ("replyToId", args.reply_to),
        ("threadId", args.thread_id),
    ];
    for (name, value) in optional {
        if let Some(value) = value {
            params[name] = json!(value);
        }
    }
    if !args.media.is_empty() {
        params["mediaUrls"] = json!(args.media);
    }
    let endpoint = Endpoint::resolve(app)?;
    let mut client = GatewayClient::connect(&endpoint).await?;
    let answer = client.call_with_timeout("send", params, SEND_TIMEOUT).await;
    client.close().await;
    let answer = answer?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&answer)?);
    } else {
        println!("{}", sent_line(&answer));
    }
    Ok(ExitCode::SUCCESS)
}

/// `Sent to telegram:123 (message 57).`
fn sent_line(answer: &Value) -> String {
    let text = |v: &Value| v.as_str().unwrap_or("?").to_owned();
    let chat = format!("{}:{}", text(&answer["channel"]), text(&answer["chatId"]));
    match answer["messageId"].as_str() {
        Some(id) => format!("Sent to {chat} (message {id})."),
        None => format!("Sent to {chat}."),
    }
}

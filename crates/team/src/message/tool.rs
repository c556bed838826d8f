//! The `message` tool (OpenClaw's name and main parameters: `action`, `channel`,
//! `target`/`to`, `message`/`text`, `media`, `threadId`, `replyTo`, `messageId`, `emoji`,
//! `remove`): checks the call, resolves the target (by default the chat the conversation
//! is in), asks the gate, then the [`MessagePort`]. Without a running gateway the slot is
//! empty and the tool says so.

use std::sync::Arc;

use pincer_agent::{AgentTool, ToolContext, ToolError, ToolOutput, TypedTool, typed};
use serde::Deserialize;
use serde_json::{Value, json};

use super::gate::{AllowTargets, bare_chat_id};
use super::{
    ChatTarget, DeleteRequest, EditRequest, MessageError, MessagePort, ReactRequest, SendRequest,
};
use crate::{PortFuture, PortSlot};

/// Longest text one call sends (characters): a long reply is split into several platform
/// messages, but a runaway one should not flood a chat.
pub const MAX_TEXT_CHARS: usize = 20_000;
/// Most files one `send` attaches.
pub const MAX_MEDIA: usize = 10;
/// Longest id, emoji or channel name taken from a call.
const MAX_FIELD: usize = 256;

/// What the call does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum MessageAction {
    /// Send a message (text and/or files).
    Send,
    /// React to a message with an emoji (or take the reaction back).
    React,
    /// Replace the text of a message the bot sent.
    Edit,
    /// Delete a message.
    Delete,
}

impl MessageAction {
    fn as_str(self) -> &'static str {
        match self {
            Self::Send => "send",
            Self::React => "react",
            Self::Edit => "edit",
            Self::Delete => "delete",
        }
    }
}

/// One file path or several.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, schemars::JsonSchema)]
#[serde(untagged)]
pub enum Media {
    One(String),
    Many(Vec<String>),
}

impl Media {
    fn into_paths(self) -> Vec<String> {
        let paths = match self {
            Self::One(path) => vec![path],
            Self::Many(paths) => paths,
        };
        paths
            .into_iter()
            .map(|p| p.trim().to_owned())
            .filter(|p| !p.is_empty())
            .collect()
    }
}

/// Arguments of `message`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct MessageArgs {
    /// "send" a message, "react" to one with an emoji, "edit" one you sent, or "delete" one.
    pub action: MessageAction,
    /// The channel: telegram, discord, slack or feishu. Default: the channel of the chat
    /// this conversation is in, else the only channel running.
    #[serde(default)]
    pub channel: Option<String>,
    /// The chat to write to: its id on the platform (a Telegram chat id; a Discord or
    /// Slack channel id, or user:<id> for a direct message). Default: the chat this
    /// conversation is in.
    #[serde(default, alias = "target")]
    pub to: Option<String>,
    /// The bot account, when the channel has several.
    #[serde(default)]
    pub account_id: Option<String>,
    /// For send and edit: the text, in Markdown (rendered for the platform and split at
    /// its length limit, as replies are).
    #[serde(default, alias = "message")]
    pub text: Option<String>,
    /// For send: a file to attach (a path in your workspace), or a list of them.
    #[serde(default)]
    pub media: Option<Media>,
    /// A forum topic (Telegram) or thread (Discord, Slack) inside the chat.
    #[serde(default)]
    pub thread_id: Option<String>,
    /// For send: the id of the message this answers.
    #[serde(default)]
    pub reply_to: Option<String>,
    /// For react, edit and delete: the id of the message (as send returned it).
    #[serde(default, alias = "message_id")]
    pub message_id: Option<String>,
    /// For react: the emoji, e.g. "👍".
    #[serde(default)]
    pub emoji: Option<String>,
    /// For react: true takes your reaction back instead of adding one.
    #[serde(default)]
    pub remove: Option<bool>,
}

/// `value` trimmed, unless that leaves nothing.
fn given(value: Option<&str>) -> Option<&str> {
    value.map(str::trim).filter(|s| !s.is_empty())
}

/// A short field of the call, trimmed and bounded.
fn field(value: Option<&str>, name: &str) -> Result<Option<String>, ToolError> {
    match given(value) {
        Some(v) if v.chars().count() > MAX_FIELD => Err(ToolError::failed(format!(
            "{name} is longer than {MAX_FIELD} characters"
        ))),
        other => Ok(other.map(str::to_owned)),
    }
}

/// The `message` tool of one agent.
pub struct MessageTool {
    agent_id: String,
    allow: AllowTargets,
    port: PortSlot<dyn MessagePort>,
}

impl MessageTool {
    /// The tool of `agent_id`, gated by `allow`, sending through whatever `port` is bound to.
    pub fn new(
        agent_id: impl Into<String>,
        allow: AllowTargets,
        port: PortSlot<dyn MessagePort>,
    ) -> Self {
        Self {
            agent_id: agent_id.into(),
            allow,
            port,
        }
    }
}

/// The `message` tool as an [`AgentTool`].
pub fn message_tool(
    agent_id: impl Into<String>,
    allow: AllowTargets,
    port: PortSlot<dyn MessagePort>,
) -> Arc<dyn AgentTool> {
    typed(MessageTool::new(agent_id, allow, port))
}

const DESCRIPTION: &str = "Send a message to a chat on a connected channel (Telegram, \
Discord, Slack, Feishu) on your own initiative, or react to, edit or delete a message there. \
action \"send\" needs text (Markdown) or media (workspace files); to and channel default to \
the chat this conversation is in. You may write only to chats that have talked to you, \
unless the owner allowed more (tools.message.allowTargets). Your normal reply already goes \
to the current chat: use this tool for other chats, for extra messages, or to react.";

impl TypedTool for MessageTool {
    type Args = MessageArgs;

    const NAME: &'static str = "message";
    const LABEL: &'static str = "Message";
    const DESCRIPTION: &'static str = DESCRIPTION;

    async fn run(&self, args: MessageArgs, ctx: ToolContext) -> Result<ToolOutput, ToolError> {
        let port = self
            .port
            .get()
            .ok_or_else(|| fail(MessageError::NoGateway))?;
        let action = args.action;
        let target = resolve_target(&*port, &args, ctx.session_key())?;
        let call = self.prepare(action, args, target.clone())?;
        self.check_allowed(&*port, &target, &ctx).await?;
        let work: PortFuture<'_, Result<Value, MessageError>> = match call {
            Call::Send(request) => {
                let sent = port.send(request);
                Box::pin(async move {
                    let receipt = sent.await?;
                    Ok(json!({
                        "channel": receipt.channel, "accountId": receipt.account_id,
                        "messageIds": receipt.message_ids,
                        "messageId": receipt.message_ids.last(),
                    }))
                })
            }
            Call::React(request) => unit(port.react(request)),
            Call::Edit(request) => unit(port.edit(request)),
            Call::Delete(request) => unit(port.delete(request)),
        };
        let details = ctx
            .cancel
            .run_until_cancelled(work)
            .await
            .ok_or(ToolError::Aborted)?
            .map_err(fail)?;
        let mut details = details;
        details["ok"] = json!(true);
        details["action"] = json!(action.as_str());
        details["channel"] = json!(target.channel);
        details["to"] = json!(target.to);
        let text = summary(action, &target, &details);
        Ok(ToolOutput::text(text).with_details(details))
    }
}

/// A checked call, ready for the port.
enum Call {
    Send(SendRequest),
    React(ReactRequest),
    Edit(EditRequest),
    Delete(DeleteRequest),
}

impl MessageTool {
    /// The call's request, or why it is incomplete.
    fn prepare(
        &self,
        action: MessageAction,
        args: MessageArgs,
        target: ChatTarget,
    ) -> Result<Call, ToolError> {
        let message_id = field(args.message_id.as_deref(), "messageId")?;
        let need_message_id = || {
            message_id.clone().ok_or_else(|| {
                ToolError::failed(format!(
                    "action \"{}\" needs messageId: the id of the message (send returns it)",
                    action.as_str()
                ))
            })
        };
        match action {
            MessageAction::Send => {
                let text = checked_text(args.text.as_deref())?;
                let media = args.media.map(Media::into_paths).unwrap_or_default();
                if media.len() > MAX_MEDIA {
                    return Err(ToolError::failed(format!(
                        "media names {} files; at most {MAX_MEDIA} go in one send",
                        media.len()
                    )));
                }
                if text.trim().is_empty() && media.is_empty() {
                    return Err(ToolError::failed(
                        "action \"send\" needs text (the message) or media (files to attach)",
                    ));
                }
                Ok(Call::Send(SendRequest {
                    target,
                    agent_id: self.agent_id.clone(),
                    text,
                    media,
                    reply_to: field(args.reply_to.as_deref(), "replyTo")?,
                }))
            }
            MessageAction::React => {
                let remove = args.remove.unwrap_or(false);
                let emoji = field(args.emoji.as_deref(), "emoji")?;
                let emoji = match emoji {
                    Some(emoji) => emoji,
                    None if remove => String::new(),
                    None => {
                        return Err(ToolError::failed(
                            "action \"react\" needs emoji (e.g. \"👍\"), or remove: true",
                        ));
                    }
                };
                Ok(Call::React(ReactRequest {
                    target,
                    message_id: need_message_id()?,
                    emoji,
                    remove,
                }))
            }
            MessageAction::Edit => {
                let text = checked_text(args.text.as_deref())?;
                if text.trim().is_empty() {
                    return Err(ToolError::failed(
                        "action \"edit\" needs text: the message's new text",
                    ));
                }
                Ok(Call::Edit(EditRequest {
                    target,
                    message_id: need_message_id()?,
                    text,
                }))
            }
            MessageAction::Delete => Ok(Call::Delete(DeleteRequest {
                target,
                message_id: need_message_id()?,
            })),
        }
    }

    /// Refuses a chat the gate does not let this agent write to.
    async fn check_allowed(
        &self,
        port: &dyn MessagePort,
        target: &ChatTarget,
        ctx: &ToolContext,
    ) -> Result<(), ToolError> {
        if self.allow.names(&target.channel, &target.to) {
            return Ok(());
        }
        let talked = port.has_talked(&self.agent_id, &target.channel, bare_chat_id(&target.to));
        let talked = ctx
            .cancel
            .run_until_cancelled(talked)
            .await
            .ok_or(ToolError::Aborted)?
            .map_err(fail)?;
        if talked {
            Ok(())
        } else {
            Err(fail(MessageError::NotAllowed {
                channel: target.channel.clone(),
                to: bare_chat_id(&target.to).to_owned(),
            }))
        }
    }
}

/// The text of a send or edit, bounded.
fn checked_text(text: Option<&str>) -> Result<String, ToolError> {
    let text = text.unwrap_or_default();
    if text.chars().count() > MAX_TEXT_CHARS {
        return Err(ToolError::failed(format!(
            "text is longer than {MAX_TEXT_CHARS} characters; send less at a time"
        )));
    }
    Ok(text.to_owned())
}

/// The chat the call names, with the conversation's own chat filling what it leaves out.
fn resolve_target(
    port: &dyn MessagePort,
    args: &MessageArgs,
    session_key: Option<&str>,
) -> Result<ChatTarget, ToolError> {
    let channel = field(args.channel.as_deref(), "channel")?.map(|c| c.to_ascii_lowercase());
    let to = field(args.to.as_deref(), "to")?;
    let account_id = field(args.account_id.as_deref(), "accountId")?;
    let thread_id = field(args.thread_id.as_deref(), "threadId")?;
    let current = session_key.and_then(|key| port.current_chat(key));
    let current = current.filter(|c| channel.as_deref().is_none_or(|ch| ch == c.channel));
    let Some(to) = to else {
        let Some(current) = current else {
            return Err(ToolError::failed(
                "give to: the chat id to write to (this conversation is not in a chat \
                 channel, so there is no default)",
            ));
        };
        return Ok(ChatTarget {
            account_id: account_id.or(current.account_id),
            thread_id: thread_id.or(current.thread_id),
            ..current
        });
    };
    let channel = match channel.or_else(|| current.map(|c| c.channel)) {
        Some(channel) => channel,
        None => {
            let running = port.channels();
            match running.as_slice() {
                [only] => only.clone(),
                [] => {
                    return Err(ToolError::failed(
                        "no chat channel is running on this gateway",
                    ));
                }
                _ => {
                    return Err(ToolError::failed(format!(
                        "give channel: one of {}",
                        running.join(", ")
                    )));
                }
            }
        }
    };
    Ok(ChatTarget {
        channel,
        account_id,
        to,
        thread_id,
    })
}

fn unit(
    call: PortFuture<'_, Result<(), MessageError>>,
) -> PortFuture<'_, Result<Value, MessageError>> {
    Box::pin(async move {
        call.await?;
        Ok(json!({}))
    })
}

fn fail(e: MessageError) -> ToolError {
    ToolError::failed(e.to_string())
}

/// What the model reads back.
fn summary(action: MessageAction, target: &ChatTarget, details: &Value) -> String {
    let chat = format!("{}:{}", target.channel, target.to);
    match action {
        MessageAction::Send => match details["messageId"].as_str() {
            Some(id) => format!("Sent to {chat} (messageId {id})."),
            None => format!("Sent to {chat}."),
        },
        MessageAction::React => format!("Reaction updated in {chat}."),
        MessageAction::Edit => format!("Edited the message in {chat}."),
        MessageAction::Delete => format!("Deleted the message in {chat}."),
    }
}

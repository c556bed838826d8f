//! The `message` tool's port ([`pincer_team::message::MessagePort`]) over the running
//! channels, and the operator's sends (the WebSocket `send`, `pincer message send`) through
//! the same path: the channel account's endpoint, the adapter's rendering and splitting,
//! [`ChannelIngress::send`]'s retries, files only from the agent's workspace. The gate
//! (`tools.message.allowTargets`) is the tool's; this side only answers whether a chat has
//! talked to an agent (a session of it heard from the chat since the gateway started, or
//! its index entry's `lastChannel`/`lastTo` say so).

use std::path::PathBuf;
use std::sync::{Arc, Weak};
use std::time::Duration;

use pincer_channel_port::{ChannelError, ChatKind, ChatRef, ThreadRef};
use pincer_team::PortFuture;
use pincer_team::PortSlot;
use pincer_team::message::{
    ChatTarget, DeleteRequest, EditRequest, MessageError, MessagePort, ReactRequest, SendReceipt,
    SendRequest, bare_chat_id,
};
use pincer_turns::media_reply::check_media_paths;

use super::channel_ingress::{ChannelIngress, Endpoint};
use super::runtime::on_blocking_pool;
use super::{Gateway, OnStart};

/// The longest one message action may take, retries and rate-limit waits included.
pub const MESSAGE_DEADLINE: Duration = Duration::from_secs(120);

/// The hook that binds `slot` to the starting gateway's message port (for
/// [`super::ServeOptions::on_start`]).
pub fn bind_message_port(slot: PortSlot<dyn MessagePort>) -> OnStart {
    Arc::new(move |gw: &Arc<Gateway>| {
        slot.bind(Arc::new(GatewayMessagePort::new(gw)));
    })
}

/// [`MessagePort`] over a running gateway's channels. Keeps the gateway weakly: the
/// gateway's runtime holds the tools that hold this.
pub struct GatewayMessagePort {
    gw: Weak<Gateway>,
}

impl GatewayMessagePort {
    pub fn new(gw: &Arc<Gateway>) -> Self {
        Self {
            gw: Arc::downgrade(gw),
        }
    }

    fn gateway(&self) -> Result<Arc<Gateway>, MessageError> {
        self.gw.upgrade().ok_or(MessageError::NoGateway)
    }
}

impl MessagePort for GatewayMessagePort {
    fn channels(&self) -> Vec<String> {
        let Some(ingress) = self.gw.upgrade().and_then(|gw| gw.channels.get().cloned()) else {
            return Vec::new();
        };
        let mut names: Vec<String> = ingress.accounts().into_iter().map(|(c, _)| c).collect();
        names.dedup();
        names
    }

    fn current_chat(&self, session_key: &str) -> Option<ChatTarget> {
        let gw = self.gw.upgrade()?;
        let (channel, account_id, to) = gw.channels.get()?.last_route(session_key)?;
        Some(ChatTarget {
            channel,
            account_id,
            to,
            thread_id: thread_of_key(session_key),
        })
    }

    fn has_talked(
        &self,
        agent_id: &str,
        channel: &str,
        to: &str,
    ) -> PortFuture<'_, Result<bool, MessageError>> {
        let (agent_id, channel, to) = (agent_id.to_owned(), channel.to_owned(), to.to_owned());
        Box::pin(async move {
            let gw = self.gateway()?;
            if let Some(ingress) = gw.channels.get()
                && ingress.heard_from(&agent_id, &channel, &to)
            {
                return Ok(true);
            }
            // An index entry that remembers the chat (kept across restarts).
            #[expect(clippy::disallowed_methods, reason = "inside SessionStore::run")]
            let listed = gw
                .runtime
                .sessions(&agent_id)
                .run(move |store| store.list())
                .await
                .map_err(|e| MessageError::Failed(format!("cannot read the sessions: {e}")))?;
            Ok(listed.iter().any(|(_, entry)| {
                entry.last_channel.as_deref() == Some(channel.as_str())
                    && entry.last_to.as_deref().map(bare_chat_id) == Some(to.as_str())
            }))
        })
    }

    fn send(&self, request: SendRequest) -> PortFuture<'_, Result<SendReceipt, MessageError>> {
        Box::pin(async move { send(&self.gateway()?, request).await })
    }

    fn react(&self, request: ReactRequest) -> PortFuture<'_, Result<(), MessageError>> {
        Box::pin(async move {
            let gw = self.gateway()?;
            let (_, endpoint, _) = endpoint_of(&gw, &request.target)?;
            let chat = target_chat(&request.target);
            let adapter = &endpoint.adapter;
            let react = adapter.react(&chat, &request.message_id, &request.emoji, request.remove);
            within(react, adapter.message_actions()).await?;
            Ok(())
        })
    }

    fn edit(&self, request: EditRequest) -> PortFuture<'_, Result<(), MessageError>> {
        Box::pin(async move {
            let gw = self.gateway()?;
            let (_, endpoint, _) = endpoint_of(&gw, &request.target)?;
            let chat = target_chat(&request.target);
            let adapter = &endpoint.adapter;
            let edit = adapter.edit(&chat, &request.message_id, &request.text);
            within(edit, adapter.message_actions()).await?;
            Ok(())
        })
    }

    fn delete(&self, request: DeleteRequest) -> PortFuture<'_, Result<(), MessageError>> {
        Box::pin(async move {
            let gw = self.gateway()?;
            let (_, endpoint, _) = endpoint_of(&gw, &request.target)?;
            let chat = target_chat(&request.target);
            let adapter = &endpoint.adapter;
            let delete = adapter.delete(&chat, &request.message_id);
            within(delete, adapter.message_actions()).await?;
            Ok(())
        })
    }
}

/// Sends `request` on `gw`'s channels, ungated: the port's `send` (after the tool's gate)
/// and the operator's (`send` method).
pub(super) async fn send(
    gw: &Arc<Gateway>,
    request: SendRequest,
) -> Result<SendReceipt, MessageError> {
    let (ingress, endpoint, account_id) = endpoint_of(gw, &request.target)?;
    let mut files = checked_media(gw, &request.agent_id, request.media).await?;
    // `MEDIA:` lines in the text attach files as in a reply.
    let (text, more) = ingress
        .media_paths(&request.agent_id, &request.text, None)
        .await;
    files.extend(more);
    if text.trim().is_empty() && files.is_empty() {
        return Err(MessageError::Invalid(
            "nothing to send: give text or media".into(),
        ));
    }
    let chat = target_chat(&request.target);
    let sent = ingress.send(endpoint, &chat, text, files, request.reply_to.as_deref());
    let message_ids = tokio::time::timeout(MESSAGE_DEADLINE, sent)
        .await
        .map_err(|_| timed_out())?
        .map_err(MessageError::Failed)?;
    Ok(SendReceipt {
        channel: request.target.channel,
        account_id,
        message_ids,
    })
}

/// Sends `text` as it is to `target` (no `MEDIA:` lines read: for text the gateway itself
/// writes around untrusted content, such as an exec approval's command line).
pub(super) async fn send_text(
    gw: &Arc<Gateway>,
    target: &ChatTarget,
    text: String,
) -> Result<Vec<String>, MessageError> {
    let (ingress, endpoint, _) = endpoint_of(gw, target)?;
    let chat = target_chat(target);
    let sent = ingress.send(endpoint, &chat, text, Vec::new(), None);
    tokio::time::timeout(MESSAGE_DEADLINE, sent)
        .await
        .map_err(|_| timed_out())?
        .map_err(MessageError::Failed)
}

/// The running channels, the endpoint of `target`'s channel account and the account.
fn endpoint_of<'a>(
    gw: &'a Arc<Gateway>,
    target: &ChatTarget,
) -> Result<(&'a Arc<ChannelIngress>, &'a Endpoint, Option<String>), MessageError> {
    let unknown = |running: String| MessageError::UnknownChannel {
        channel: match &target.account_id {
            Some(account) => format!("{}:{account}", target.channel),
            None => target.channel.clone(),
        },
        running,
    };
    let Some(ingress) = gw.channels.get() else {
        return Err(unknown("none".into()));
    };
    let channel = target.channel.trim().to_ascii_lowercase();
    match ingress.endpoint_for(&channel, target.account_id.as_deref()) {
        Some((endpoint, account)) => Ok((ingress, endpoint, account)),
        None => {
            let running: Vec<String> = ingress
                .accounts()
                .into_iter()
                .map(|(c, account)| match account {
                    Some(account) => format!("{c}:{account}"),
                    None => c,
                })
                .collect();
            let running = if running.is_empty() {
                "none".to_owned()
            } else {
                running.join(", ")
            };
            Err(unknown(running))
        }
    }
}

/// The files a send names, each resolved in `agent_id`'s workspace; one outside it (or
/// missing) fails the send before anything goes out.
async fn checked_media(
    gw: &Arc<Gateway>,
    agent_id: &str,
    media: Vec<String>,
) -> Result<Vec<PathBuf>, MessageError> {
    if media.is_empty() {
        return Ok(Vec::new());
    }
    let agent_id = agent_id.to_owned();
    #[expect(clippy::disallowed_methods, reason = "inside on_blocking_pool")]
    let checked = on_blocking_pool(&gw.runtime, move |runtime| {
        let workspace = runtime.workspace(&agent_id);
        check_media_paths(&media, workspace.as_deref(), None)
    })
    .await
    .map_err(|e| MessageError::Failed(format!("checking the files failed: {e}")))?;
    match checked {
        (allowed, notes) if notes.is_empty() => Ok(allowed),
        (_, notes) => Err(MessageError::Invalid(notes.join(" "))),
    }
}

/// The chat `target` names: `user:`, `channel:` and `group:` prefixes say its kind (a bare
/// id is taken for a direct chat, which every adapter also reads as a channel id when it
/// is one); a thread is a Telegram forum topic or another platform's reply thread.
pub(super) fn target_chat(target: &ChatTarget) -> ChatRef {
    let to = target.to.trim();
    let lower = to.to_ascii_lowercase();
    let explicit = [
        ("user:", ChatKind::Direct),
        ("channel:", ChatKind::Channel),
        ("group:", ChatKind::Group),
    ]
    .into_iter()
    .find(|(prefix, _)| lower.starts_with(prefix))
    .map(|(_, kind)| kind);
    let thread = target
        .thread_id
        .as_deref()
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .map(|t| {
            if target.channel.eq_ignore_ascii_case("telegram") {
                ThreadRef::Topic(t.to_owned())
            } else {
                ThreadRef::Thread(t.to_owned())
            }
        });
    // A thread lives in a group or channel, not a direct chat (Discord posts in it only then).
    let kind = explicit.unwrap_or(if thread.is_some() {
        ChatKind::Channel
    } else {
        ChatKind::Direct
    });
    ChatRef {
        kind,
        id: bare_chat_id(to).to_owned(),
        thread,
    }
}

/// The topic or thread a session key names (`…:topic:<n>`, `…:thread:<id>`).
fn thread_of_key(session_key: &str) -> Option<String> {
    [":topic:", ":thread:"].into_iter().find_map(|marker| {
        let at = session_key.rfind(marker)?;
        let id = &session_key[at + marker.len()..];
        (!id.is_empty()).then(|| id.to_owned())
    })
}

/// An adapter's action, bounded by [`MESSAGE_DEADLINE`], its error said for the agent.
async fn within(
    action: impl Future<Output = Result<(), ChannelError>>,
    supported: &[&str],
) -> Result<(), MessageError> {
    match tokio::time::timeout(MESSAGE_DEADLINE, action).await {
        Err(_) => Err(timed_out()),
        Ok(Ok(())) => Ok(()),
        Ok(Err(ChannelError::Unsupported { channel, action })) => {
            let mut list = vec!["send"];
            list.extend(supported);
            Err(MessageError::Unsupported {
                channel,
                action: action.to_owned(),
                supported: list.join(", "),
            })
        }
        Ok(Err(e)) => Err(MessageError::Failed(e.to_string())),
    }
}

fn timed_out() -> MessageError {
    MessageError::Failed(format!(
        "the platform did not answer within {} s",
        MESSAGE_DEADLINE.as_secs()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chat(channel: &str, to: &str, thread: Option<&str>) -> ChatRef {
        target_chat(&ChatTarget {
            channel: channel.into(),
            account_id: None,
            to: to.into(),
            thread_id: thread.map(str::to_owned),
        })
    }

    #[test]
    fn a_targets_prefix_says_its_kind_and_a_thread_its_place() {
        let direct = |id: &str| ChatRef {
            kind: ChatKind::Direct,
            id: id.into(),
            thread: None,
        };
        assert_eq!(chat("telegram", " 123 ", None), direct("123"));
        assert_eq!(chat("slack", "user:U1", None), direct("U1"));
        assert_eq!(
            chat("discord", "Channel:42", None),
            ChatRef {
                kind: ChatKind::Channel,
                ..direct("42")
            }
        );
        assert_eq!(
            chat("telegram", "group:-100", Some("7")),
            ChatRef {
                kind: ChatKind::Group,
                id: "-100".into(),
                thread: Some(ThreadRef::Topic("7".into())),
            }
        );
        // A thread without a kind: a channel's thread.
        assert_eq!(
            chat("discord", "42", Some(" 99 ")),
            ChatRef {
                kind: ChatKind::Channel,
                id: "42".into(),
                thread: Some(ThreadRef::Thread("99".into())),
            }
        );
        assert_eq!(chat("slack", "C1", Some("  ")), direct("C1"));
    }

    #[test]
    fn a_session_keys_thread_is_found() {
        assert_eq!(
            thread_of_key("agent:main:telegram:group:-100:topic:7").as_deref(),
            Some("7")
        );
        assert_eq!(
            thread_of_key("agent:main:discord:channel:1:thread:99").as_deref(),
            Some("99")
        );
        assert_eq!(thread_of_key("agent:main:main"), None);
        assert_eq!(thread_of_key("agent:main:x:topic:"), None);
    }
}

//! The channels' way out: a run's reply delivered to the chat it answers (typing kept up,
//! whole or in blocks, tool summary lines first when the session is verbose, nothing when
//! its send policy is `deny`), sends with retries, replies for heartbeat and cron, and the
//! files a reply's `MEDIA:` lines may name; also received files moved into the agent's
//! inbox. Split from `channel_ingress.rs`, whose `ChannelIngress` this extends.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use tokio::sync::broadcast;

use super::super::block_delivery::BlockReply;
use super::super::runs::{GatewayEvent, RunState};
use super::super::runtime::on_blocking_pool;
use super::{ChannelIngress, Endpoint, SEND_ATTEMPTS, TYPING_EVERY};
use pincer_channel_port::{ChannelError, ChatRef, Inbound, InboundMedia, Outbound};
use pincer_turns::media_inbox::receive_into;
use pincer_turns::media_reply::check_media_paths;
use pincer_turns::router::ChatKind;

impl ChannelIngress {
    /// Keeps "typing…" up until run `run_id` ends, then sends its reply; with block
    /// streaming, in blocks as it is written ([`BlockReply`]). A verbose session's chat
    /// first hears of each tool call (`tool_summaries.rs`). `events` was subscribed before
    /// the run began.
    pub(in crate::server) async fn deliver(
        &self,
        message: &Inbound,
        run_id: &str,
        agent_id: &str,
        session_key: &str,
        started: SystemTime,
        events: broadcast::Receiver<Arc<GatewayEvent>>,
    ) {
        let Some(endpoint) = self.endpoint(&message.channel, message.account_id.as_deref()) else {
            return;
        };
        // `sendPolicy: deny` (checked once, as the reply begins): the run goes on unheard.
        let Some(verbose) =
            super::super::send_policy::channel_reply(&self.gw, agent_id, session_key).await
        else {
            return;
        };
        if let Some(settings) = endpoint.block_streaming {
            let reply = BlockReply {
                ingress: self,
                endpoint,
                message,
                run_id,
                agent_id,
                started,
            };
            return reply.deliver(settings, events).await;
        }
        let mut summaries = std::pin::pin!(super::super::tool_summaries::relay(
            self,
            endpoint,
            &message.chat,
            run_id,
            verbose,
            events
        ));
        let mut summarised = verbose == super::super::tool_summaries::Verbose::Off;
        let result = loop {
            if let Err(e) = endpoint.adapter.typing(&message.chat).await {
                tracing::debug!(error = %e, "typing indicator failed");
            }
            tokio::select! {
                () = &mut summaries, if !summarised => summarised = true,
                state = self.gw.runs.wait(run_id, TYPING_EVERY) => match state {
                    Some((RunState::Done(result), _)) => break result,
                    Some((RunState::Running, _)) => {}
                    None => return,
                },
            }
        };
        // The run's last summaries (its events are in already) go out before its reply.
        if !summarised
            && tokio::time::timeout(super::super::tool_summaries::GRACE, summaries)
                .await
                .is_err()
        {
            tracing::debug!(run = run_id, "tool summaries cut short");
        }
        let text = if result.aborted {
            return;
        } else if let Some(error) = result.error.as_deref().filter(|_| result.text.is_empty()) {
            format!("⚠️ {error}")
        } else {
            result.text.clone()
        };
        let Some(text) = pincer_automation::heartbeat::sanitize_for_delivery(&text) else {
            return;
        };
        let (text, media) = self.media_paths(agent_id, &text, Some(started)).await;
        // Tracing only when asked for: by default the user sees the reply as written.
        let text = match &self.debug_source {
            Some(profile) => format!("[{}/{}:{profile}]\n{text}", result.provider, result.model),
            None => text,
        };
        let _ = self
            .send(
                endpoint,
                &message.chat,
                text,
                media,
                Some(&message.message_id),
            )
            .await;
    }

    /// Sends with retries: a rate limit waits as long as the platform asks, a connection
    /// error backs off; an API refusal is not retried. The ids of the messages sent, or why
    /// it was given up.
    pub(in crate::server) async fn send(
        &self,
        endpoint: &Endpoint,
        chat: &ChatRef,
        text: String,
        media: Vec<PathBuf>,
        reply_to: Option<&str>,
    ) -> Result<Vec<String>, String> {
        let outbound = Outbound {
            chat: chat.clone(),
            text,
            media,
            reply_to: reply_to.map(str::to_owned),
        };
        let mut delay = Duration::from_secs(1);
        for attempt in 1..=SEND_ATTEMPTS {
            match endpoint.adapter.send(&outbound).await {
                Ok(ids) => return Ok(ids),
                Err(ChannelError::RateLimited {
                    retry_after_secs, ..
                }) if attempt < SEND_ATTEMPTS => {
                    tokio::time::sleep(Duration::from_secs(retry_after_secs.min(300))).await;
                }
                Err(ChannelError::Connection { message, .. }) if attempt < SEND_ATTEMPTS => {
                    tracing::warn!(%message, attempt, "sending failed; retrying");
                    tokio::time::sleep(delay).await;
                    delay *= 2;
                }
                Err(e) => {
                    tracing::error!(error = %e, chat = %chat.id, "could not send a message");
                    return Err(e.to_string());
                }
            }
        }
        Err("sending kept failing".into())
    }

    /// Sends `text` (a reply: protocol text stripped, `MEDIA:` lines as files relative to
    /// `agent_id`'s workspace) to chat `to` of a channel account: heartbeat and cron
    /// deliveries.
    pub async fn deliver_to(
        &self,
        channel: &str,
        account: Option<&str>,
        to: &str,
        agent_id: &str,
        text: &str,
    ) -> Result<(), String> {
        let endpoint = self.endpoint(channel, account).ok_or_else(|| {
            format!(
                "channel {channel:?} is not running on this gateway (see channels in the config)"
            )
        })?;
        let Some(text) = pincer_automation::heartbeat::sanitize_for_delivery(text) else {
            return Ok(());
        };
        let (text, media) = self.media_paths(agent_id, &text, None).await;
        let chat = ChatRef {
            kind: ChatKind::Direct,
            id: to.to_owned(),
            thread: None,
        };
        self.send(endpoint, &chat, text, media, None)
            .await
            .map(|_| ())
    }

    /// `text` without its `MEDIA:` lines, and the files among them that may be sent
    /// ([`check_media_paths`]: the agent's workspace, or temp files this turn made — a reply
    /// steered by what it read must not mail out `~/.ssh` to a group). A refused file is
    /// named in the text instead. Without `started` (heartbeat, cron) only the workspace.
    pub(in crate::server) async fn media_paths(
        &self,
        agent_id: &str,
        text: &str,
        started: Option<SystemTime>,
    ) -> (String, Vec<PathBuf>) {
        let (mut text, paths) = pincer_turns::media_reply::parse_media_lines(text);
        if paths.is_empty() {
            return (text, Vec::new());
        }
        let agent_id = agent_id.to_owned();
        #[expect(clippy::disallowed_methods, reason = "inside on_blocking_pool")]
        let checked = on_blocking_pool(&self.gw.runtime, move |runtime| {
            let workspace = runtime.workspace(&agent_id);
            check_media_paths(&paths, workspace.as_deref(), started)
        })
        .await;
        let (allowed, notes) = checked.unwrap_or_else(|e| {
            tracing::error!(error = %e, "checking MEDIA paths failed");
            (
                Vec::new(),
                vec!["(not sent: the files could not be checked)".to_owned()],
            )
        });
        for note in notes {
            text.push_str(&format!("\n\n{note}"));
        }
        (text, allowed)
    }

    /// `media` moved into `agent_id`'s workspace inbox ([`receive_into`]).
    pub(in crate::server) async fn to_inbox(
        &self,
        agent_id: &str,
        media: &[InboundMedia],
    ) -> Vec<InboundMedia> {
        if media.is_empty() {
            return Vec::new();
        }
        // The runtime may create the workspace: on the blocking pool.
        let agent = agent_id.to_owned();
        match on_blocking_pool(&self.gw.runtime, move |runtime| runtime.workspace(&agent)).await {
            Ok(Some(workspace)) => receive_into(workspace, media).await,
            _ => media.to_vec(),
        }
    }
}

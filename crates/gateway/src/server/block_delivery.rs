//! Block streaming of a channel run's reply (OpenClaw's `blockStreaming`): instead of one
//! message when the run ends, the reply goes out in blocks as it is written. Three stages
//! run side by side on the delivery's task:
//!
//! 1. the reader follows the run's broadcast events (subscribed before the run was
//!    submitted, so none is missed), cuts each assistant message's text into blocks
//!    ([`text_stream`], the chunker capped by the channel's text limit) and keeps "typing…"
//!    up until the run ends;
//! 2. the coalescer merges blocks into messages ([`pincer_turns::chunker::coalesce`]);
//! 3. the sender sends each message as a reply would be sent: protocol text stripped,
//!    `MEDIA:` lines as attachments (never as text), retried; the first one replies to the
//!    user's message.
//!
//! When the run ends, what is left goes out; an aborted run sends nothing more; a run that
//! failed with no text sends its error, as a whole reply would. If the reader falls behind
//! the broadcast and loses events, it stops reading and the rest is taken from the run's
//! final text ([`text_stream::TextStream::recover`]).

mod settings;
mod text_stream;

pub use settings::{BlockBreak, BlockStreaming};

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use tokio::sync::broadcast::error::{RecvError, TryRecvError};
use tokio::sync::{broadcast, mpsc};
use tokio_util::sync::CancellationToken;

use super::channel_ingress::{ChannelIngress, Endpoint, TYPING_EVERY};
use super::runs::{GatewayEvent, RunState};
use super::turn_events::RunResult;
use pincer_channel_port::Inbound;
use pincer_turns::chunker::coalesce::{Piece, coalesce};
use text_stream::TextStream;

/// Pieces between the reader and the coalescer, and messages between the coalescer and the
/// sender. A full queue holds the stage before it back; a reader held back long enough
/// loses broadcast events, which the final text makes up for.
const PIECE_QUEUE: usize = 64;
const MESSAGE_QUEUE: usize = 8;
/// How long one wait for the run lasts before it is renewed (OpenClaw's agent timeout);
/// the run's own timeouts end it long before.
const RUN_WAIT: Duration = Duration::from_secs(48 * 3600);

/// One streamed reply: to `message`, from run `run_id` of `agent_id`, which started at
/// `started` (files made since then may be sent).
pub(super) struct BlockReply<'a> {
    pub(super) ingress: &'a ChannelIngress,
    pub(super) endpoint: &'a Endpoint,
    pub(super) message: &'a Inbound,
    pub(super) run_id: &'a str,
    pub(super) agent_id: &'a str,
    pub(super) started: SystemTime,
}

impl BlockReply<'_> {
    /// Sends the run's reply in blocks; `events` was subscribed before the run began.
    pub(super) async fn deliver(
        &self,
        settings: BlockStreaming,
        events: broadcast::Receiver<Arc<GatewayEvent>>,
    ) {
        let (pieces_tx, pieces_rx) = mpsc::channel(PIECE_QUEUE);
        let (messages_tx, messages_rx) = mpsc::channel(MESSAGE_QUEUE);
        let aborted = CancellationToken::new();
        let (result, (), sent) = tokio::join!(
            self.read(settings, events, pieces_tx, &aborted),
            coalesce(settings.coalesce, pieces_rx, messages_tx),
            self.send_all(messages_rx, &aborted),
        );
        let Some(result) = result else { return };
        if result.aborted {
            return;
        }
        if let Some(error) = result.error.as_deref().filter(|_| result.text.is_empty()) {
            self.send_one(format!("⚠️ {error}"), !sent).await;
        }
    }

    /// Follows the run until it ends, feeding its text to the coalescer; the run's result
    /// (`None`: the run is unknown).
    async fn read(
        &self,
        settings: BlockStreaming,
        mut events: broadcast::Receiver<Arc<GatewayEvent>>,
        pieces: mpsc::Sender<Piece>,
        aborted: &CancellationToken,
    ) -> Option<Arc<RunResult>> {
        let runs = &self.ingress.gw.runs;
        let mut text = TextStream::new(settings);
        let mut lost = false;
        let mut typing = tokio::time::interval(TYPING_EVERY);
        let wait = runs.wait(self.run_id, RUN_WAIT);
        tokio::pin!(wait);
        let result = loop {
            tokio::select! {
                event = events.recv(), if !lost => match event {
                    Ok(event) => forward(&pieces, text.on_event(&event, self.run_id)).await,
                    Err(RecvError::Lagged(missed)) => {
                        tracing::warn!(missed, run = %self.run_id, "block streaming fell behind the run's events; the rest comes from its final text");
                        lost = true;
                    }
                    Err(RecvError::Closed) => lost = true,
                },
                _ = typing.tick() => {
                    if let Err(e) = self.endpoint.adapter.typing(&self.message.chat).await {
                        tracing::debug!(error = %e, "typing indicator failed");
                    }
                }
                state = &mut wait => match state {
                    Some((RunState::Done(result), _)) => break result,
                    Some((RunState::Running, _)) => wait.set(runs.wait(self.run_id, RUN_WAIT)),
                    None => return None,
                },
            }
        };
        if result.aborted {
            aborted.cancel();
            return Some(result);
        }
        // The run's events were all broadcast before it was marked done: they are queued.
        while !lost {
            match events.try_recv() {
                Ok(event) => forward(&pieces, text.on_event(&event, self.run_id)).await,
                Err(TryRecvError::Lagged(_)) => lost = true,
                Err(TryRecvError::Empty | TryRecvError::Closed) => break,
            }
        }
        if lost {
            forward(&pieces, text.recover(&result.text)).await;
        }
        forward(&pieces, text.end_text()).await;
        Some(result)
    }

    /// Sends each coalesced message (none once the run was aborted); whether any was sent.
    async fn send_all(
        &self,
        mut messages: mpsc::Receiver<String>,
        aborted: &CancellationToken,
    ) -> bool {
        let mut sent = false;
        while let Some(text) = messages.recv().await {
            if !aborted.is_cancelled() {
                sent |= self.send_one(text, !sent).await;
            }
        }
        sent
    }

    /// Sends `text` as a reply is sent; `first` replies to the user's message. Whether
    /// anything was sent.
    async fn send_one(&self, text: String, first: bool) -> bool {
        let Some(text) = pincer_automation::heartbeat::sanitize_for_delivery(&text) else {
            return false;
        };
        let (text, media) = self
            .ingress
            .media_paths(self.agent_id, &text, Some(self.started))
            .await;
        if text.trim().is_empty() && media.is_empty() {
            return false;
        }
        let reply_to = first.then_some(self.message.message_id.as_str());
        self.ingress
            .send(self.endpoint, &self.message.chat, text, media, reply_to)
            .await
            .is_ok()
    }
}

async fn forward(pieces: &mpsc::Sender<Piece>, ready: Vec<Piece>) {
    for piece in ready {
        // The coalescer only stops after the reader does.
        let _ = pieces.send(piece).await;
    }
}

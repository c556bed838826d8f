//! Merging streamed blocks into the messages a channel is sent (OpenClaw's block-reply
//! coalescer): a run of short blocks becomes one message instead of a burst of small ones.
//!
//! Text gathers until it is `min_chars` long and no new block came for `idle`, or until
//! the next block would take it past `max_chars` (then what is gathered goes, and the block
//! starts the next message), or until the reply ends (everything left goes, however short).
//! A block of `max_chars` or more is sent on its own. An `idle` of zero waits for size
//! alone.
//!
//! Blocks of one text are joined losslessly — a fence the chunker closed at the end of one
//! block and reopened at the start of the next is simply left open across the join — and
//! the texts of two messages (OpenClaw's `text_end`) are joined by a blank line, OpenClaw's
//! paragraph joiner.

use std::time::Duration;

use tokio::sync::mpsc;
use tokio::time::Instant;

use super::{Block, DEFAULT_MIN_CHARS};

/// OpenClaw's `blockStreamingCoalesce.idleMs` default.
pub const DEFAULT_COALESCE_IDLE: Duration = Duration::from_millis(1000);
/// OpenClaw's coalescing `minChars` for the chat apps where many small messages are noise
/// (Signal, Slack, Discord).
pub const CHATTY_CHANNEL_COALESCE_MIN_CHARS: usize = 1500;

/// When gathered text is sent. `min_chars` is kept between 1 and `max_chars`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CoalesceConfig {
    pub min_chars: usize,
    pub max_chars: usize,
    pub idle: Duration,
}

impl Default for CoalesceConfig {
    /// OpenClaw's defaults for a channel with its 4000-char `textChunkLimit`.
    fn default() -> Self {
        Self {
            min_chars: DEFAULT_MIN_CHARS,
            max_chars: super::DEFAULT_TEXT_CHUNK_LIMIT,
            idle: DEFAULT_COALESCE_IDLE,
        }
    }
}

/// What the coalescer is fed: the blocks of a text, and where one text ends.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Piece {
    Block(Block),
    /// The text ended (OpenClaw's `text_end`): the next block starts a new paragraph.
    TextEnd,
}

/// Gathered text not sent yet.
#[derive(Debug)]
struct Pending {
    /// Everything up to the last block's source (its closing fence marker left out).
    head: String,
    /// The last block's closing fence marker.
    close: String,
    /// Chars of `head` + `close`.
    chars: usize,
}

impl Pending {
    fn of(block: &Block) -> Self {
        let head = format!("{}{}", block.reopened_fence(), block.source());
        let close = block.closed_fence().to_owned();
        let chars = head.chars().count() + close.chars().count();
        Self { head, close, chars }
    }

    fn text(self) -> String {
        self.head + &self.close
    }

    fn to_text(&self) -> String {
        format!("{}{}", self.head, self.close)
    }
}

/// The coalescer's state, without the clock (see [`coalesce`] for the timed stage).
#[derive(Debug)]
pub struct Coalescer {
    config: CoalesceConfig,
    pending: Option<Pending>,
    /// The next block starts a new text.
    text_ended: bool,
}

impl Coalescer {
    pub fn new(config: CoalesceConfig) -> Self {
        let max_chars = config.max_chars.max(1);
        Self {
            config: CoalesceConfig {
                min_chars: config.min_chars.clamp(1, max_chars),
                max_chars,
                idle: config.idle,
            },
            pending: None,
            text_ended: false,
        }
    }

    pub fn config(&self) -> CoalesceConfig {
        self.config
    }

    pub fn has_buffered(&self) -> bool {
        self.pending.is_some()
    }

    /// Takes a piece; returns the messages to send now, in order.
    pub fn push(&mut self, piece: Piece) -> Vec<String> {
        let block = match piece {
            Piece::Block(block) => block,
            Piece::TextEnd => {
                self.text_ended = self.pending.is_some() || self.text_ended;
                return Vec::new();
            }
        };
        let new_text = std::mem::take(&mut self.text_ended);
        let max = self.config.max_chars;
        let Some(pending) = self.pending.take() else {
            return self.start(&block);
        };
        let merged = if new_text {
            let head = pending.to_text();
            let head = head.trim_end();
            let mut merged = Pending::of(&block);
            merged.head = format!("{head}\n\n{}", merged.head);
            merged.chars += head.chars().count() + 2;
            merged
        } else {
            let head = format!("{}{}", pending.head, block.source());
            let close = block.closed_fence().to_owned();
            let chars = head.chars().count() + close.chars().count();
            Pending { head, close, chars }
        };
        if merged.chars > max {
            let mut out = vec![pending.text()];
            out.extend(self.start(&block));
            return out;
        }
        if merged.chars >= max {
            return vec![merged.text()];
        }
        self.pending = Some(merged);
        Vec::new()
    }

    /// `block` with nothing gathered before it.
    fn start(&mut self, block: &Block) -> Vec<String> {
        let pending = Pending::of(block);
        if pending.chars >= self.config.max_chars {
            return vec![pending.text()];
        }
        self.pending = Some(pending);
        Vec::new()
    }

    /// No block came for `idle`: the gathered text if it is long enough to send.
    pub fn idle(&mut self) -> Option<String> {
        if self
            .pending
            .as_ref()
            .is_some_and(|p| p.chars >= self.config.min_chars)
        {
            return self.pending.take().map(Pending::text);
        }
        None
    }

    /// The reply ended: whatever is gathered.
    pub fn flush(&mut self) -> Option<String> {
        self.text_ended = false;
        self.pending.take().map(Pending::text)
    }
}

/// The timed stage: coalesces `pieces` into `out` until `pieces` closes, then sends what is
/// left and returns. The idle clock restarts with each block. Returns early if `out` is
/// closed (nobody is sending any more).
pub async fn coalesce(
    config: CoalesceConfig,
    mut pieces: mpsc::Receiver<Piece>,
    out: mpsc::Sender<String>,
) {
    let mut coalescer = Coalescer::new(config);
    let idle = coalescer.config().idle;
    let mut deadline: Option<Instant> = None;
    loop {
        let ready = tokio::select! {
            piece = pieces.recv() => match piece {
                Some(piece) => {
                    let is_block = matches!(piece, Piece::Block(_));
                    let ready = coalescer.push(piece);
                    if is_block {
                        deadline = (coalescer.has_buffered() && !idle.is_zero())
                            .then(|| Instant::now() + idle);
                    }
                    ready
                }
                None => {
                    if let Some(text) = coalescer.flush() {
                        let _ = out.send(text).await;
                    }
                    return;
                }
            },
            () = sleep_until(deadline), if deadline.is_some() => {
                deadline = None;
                coalescer.idle().into_iter().collect()
            }
        };
        for text in ready {
            if out.send(text).await.is_err() {
                return;
            }
        }
    }
}

async fn sleep_until(deadline: Option<Instant>) {
    if let Some(deadline) = deadline {
        tokio::time::sleep_until(deadline).await;
    }
}

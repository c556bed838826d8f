//! The sending side of one WebSocket connection: [`Out`] queues frames from any task (byte
//! counted against `maxBufferedBytes`) and [`Writer`] sends them, batched into one flush.
//!
//! A connection ends in one of two ways. A *graceful* close ([`Out::close`]) goes out after
//! what is already queued (an error answer, the `shutdown` event). An *immediate* one
//! ([`Out::abort`], [`Out::answer_peer_close`], [`Out::end`]) makes the writer drop its
//! queue and whatever write it is blocked in, send at most one Close (or the reply to the
//! client's Close) under [`CLOSE_TIMEOUT`], and stop: a client that stops reading is
//! dropped once its queue passes the limit or no write progresses for [`SEND_TIMEOUT`], and
//! a client that closes gets its answer without waiting behind the events queued for it.
//! Either way [`Out::over`] resolves, so the connection's read and serve loops end too, and
//! nothing more is queued.

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::{Sink, SinkExt};
use serde_json::Value;
use tokio::sync::mpsc;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::protocol::CloseFrame;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_util::sync::CancellationToken;

use super::frames::event_frame;

/// Close codes (RFC 6455 section 7.4.1).
pub const GOING_AWAY: u16 = 1001;
pub const PROTOCOL_ERROR: u16 = 1002;
pub const UNSUPPORTED_DATA: u16 = 1003;
pub const INVALID_DATA: u16 = 1007;
pub const POLICY_VIOLATION: u16 = 1008;
pub const MESSAGE_TOO_BIG: u16 = 1009;
pub const TRY_AGAIN_LATER: u16 = 1013;

/// Longest a single write or flush may make no progress before the client is dropped.
pub const SEND_TIMEOUT: Duration = Duration::from_secs(30);
/// Longest the last Close may take to go out.
pub const CLOSE_TIMEOUT: Duration = Duration::from_secs(5);
/// Frames taken from the queue per wake-up.
const BATCH: usize = 256;

enum Queued {
    Text(String),
    Close(CloseFrame),
}

/// What the writer sends when it is told to stop at once.
#[derive(Debug, Clone, PartialEq)]
enum Ending {
    Close(CloseFrame),
    /// The reply to the client's Close (tungstenite has queued it; flushing sends it).
    AnswerPeer,
    Silent,
}

struct Control {
    /// Set by the first immediate stop; later ones do not change it.
    ending: Mutex<Option<Ending>>,
    /// Cancelled to make the writer drop what it is doing and end.
    urgent: CancellationToken,
    /// Cancelled once the connection is over (the writer ended or was told to).
    over: CancellationToken,
    /// A close is under way: nothing more is queued.
    closing: AtomicBool,
}

/// The queueing side, cloned into every task that answers or forwards events.
#[derive(Clone)]
pub struct Out {
    tx: mpsc::UnboundedSender<Queued>,
    queued: Arc<AtomicUsize>,
    seq: Arc<AtomicU64>,
    control: Arc<Control>,
    limit: usize,
}

/// The sending task's half.
pub struct Writer {
    rx: mpsc::UnboundedReceiver<Queued>,
    queued: Arc<AtomicUsize>,
    control: Arc<Control>,
}

/// A queue holding at most `limit` bytes of frames not yet handed to the socket.
pub fn channel(limit: usize) -> (Out, Writer) {
    let (tx, rx) = mpsc::unbounded_channel();
    let queued = Arc::new(AtomicUsize::new(0));
    let control = Arc::new(Control {
        ending: Mutex::new(None),
        urgent: CancellationToken::new(),
        over: CancellationToken::new(),
        closing: AtomicBool::new(false),
    });
    let out = Out {
        tx,
        queued: Arc::clone(&queued),
        seq: Arc::new(AtomicU64::new(0)),
        control: Arc::clone(&control),
        limit,
    };
    (
        out,
        Writer {
            rx,
            queued,
            control,
        },
    )
}

fn close_frame(code: u16, reason: &str) -> CloseFrame {
    // A control frame's payload is at most 125 bytes: 2 for the code, 123 for the reason.
    let mut end = reason.len().min(123);
    while !reason.is_char_boundary(end) {
        end -= 1;
    }
    CloseFrame {
        code: CloseCode::from(code),
        reason: reason[..end].to_owned().into(),
    }
}

impl Out {
    /// Queues a text frame; past the limit the client is dropped instead.
    pub fn text(&self, text: String) {
        if self.control.closing.load(Ordering::Relaxed) || self.control.over.is_cancelled() {
            return;
        }
        let len = text.len();
        if self.queued.fetch_add(len, Ordering::Relaxed) + len > self.limit {
            self.abort(POLICY_VIOLATION, "client too slow: send buffer full");
            return;
        }
        let _ = self.tx.send(Queued::Text(text));
    }

    /// Queues an event with the connection's next `seq`.
    pub fn event(&self, event: &str, payload: &Value) {
        let seq = self.next_seq();
        self.text(event_frame(event, payload, Some(seq)));
    }

    pub fn next_seq(&self) -> u64 {
        self.seq.fetch_add(1, Ordering::Relaxed) + 1
    }

    /// Closes after what is already queued; nothing is queued after it.
    pub fn close(&self, code: u16, reason: &str) {
        if self.control.closing.swap(true, Ordering::Relaxed) {
            return;
        }
        let _ = self.tx.send(Queued::Close(close_frame(code, reason)));
    }

    /// Drops the connection now, with one Close saying why.
    pub fn abort(&self, code: u16, reason: &str) {
        self.control
            .stop_now(Ending::Close(close_frame(code, reason)));
    }

    /// The client sent Close: answer it ahead of anything queued, and end.
    pub fn answer_peer_close(&self) {
        self.control.stop_now(Ending::AnswerPeer);
    }

    /// The connection is done: unless a close is already on its way, the writer stops now
    /// without sending anything more.
    pub fn end(&self) {
        if !self.control.closing.load(Ordering::Relaxed) {
            self.control.stop_now(Ending::Silent);
        }
    }

    /// Resolves once the connection is over (every loop of it should stop).
    pub async fn over(&self) {
        self.control.over.cancelled().await;
    }

    #[cfg(test)]
    pub fn is_over(&self) -> bool {
        self.control.over.is_cancelled()
    }
}

impl Control {
    fn stop_now(&self, ending: Ending) {
        self.closing.store(true, Ordering::Relaxed);
        {
            let mut slot = self.ending.lock().unwrap_or_else(|e| e.into_inner());
            if slot.is_none() {
                *slot = Some(ending);
            }
        }
        self.urgent.cancel();
        self.over.cancel();
    }
}

/// How a batch went.
enum Sent {
    All,
    /// A graceful close was reached; it is to be sent.
    Close(CloseFrame),
    /// The socket failed: nothing more can go out.
    Failed,
    /// A write made no progress for [`SEND_TIMEOUT`].
    Stalled,
}

impl Writer {
    /// Sends until the connection ends; marks it over when it returns.
    pub async fn run<S>(mut self, mut sink: S)
    where
        S: Sink<Message> + Unpin,
    {
        let _over = self.control.over.clone().drop_guard();
        let urgent = self.control.urgent.clone();
        let mut batch = Vec::new();
        let graceful = loop {
            let received = tokio::select! {
                biased;
                () = urgent.cancelled() => break None,
                n = self.rx.recv_many(&mut batch, BATCH) => n,
            };
            if received == 0 {
                break None;
            }
            // Let the other connections' tasks run once first: under load more frames
            // arrive meanwhile and share the flush.
            tokio::task::yield_now().await;
            while batch.len() < BATCH * 4
                && let Ok(message) = self.rx.try_recv()
            {
                batch.push(message);
            }
            let sent = tokio::select! {
                biased;
                () = urgent.cancelled() => break None,
                sent = send_batch(&mut sink, &mut batch, &self.queued) => sent,
            };
            match sent {
                Sent::All => {}
                Sent::Close(frame) => break Some(frame),
                Sent::Failed => return,
                Sent::Stalled => {
                    self.control.stop_now(Ending::Close(close_frame(
                        POLICY_VIOLATION,
                        "client too slow: nothing sent for 30 s",
                    )));
                    break None;
                }
            }
        };
        self.control.closing.store(true, Ordering::Relaxed);
        let ending = match graceful {
            Some(frame) => Some(Ending::Close(frame)),
            None => self
                .control
                .ending
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .take(),
        };
        match ending {
            Some(Ending::Close(frame)) => {
                let _ = tokio::time::timeout(CLOSE_TIMEOUT, sink.send(Message::Close(Some(frame))))
                    .await;
            }
            Some(Ending::AnswerPeer) => {
                let _ = tokio::time::timeout(CLOSE_TIMEOUT, sink.close()).await;
            }
            Some(Ending::Silent) | None => {}
        }
    }
}

/// Feeds `batch` to the sink and flushes it, each step under [`SEND_TIMEOUT`].
async fn send_batch<S>(sink: &mut S, batch: &mut Vec<Queued>, queued: &AtomicUsize) -> Sent
where
    S: Sink<Message> + Unpin,
{
    for message in batch.drain(..) {
        match message {
            Queued::Text(text) => {
                let len = text.len();
                let fed = tokio::time::timeout(SEND_TIMEOUT, sink.feed(Message::text(text))).await;
                queued.fetch_sub(len, Ordering::Relaxed);
                match fed {
                    Ok(Ok(())) => {}
                    Ok(Err(_)) => return Sent::Failed,
                    Err(_) => return Sent::Stalled,
                }
            }
            Queued::Close(frame) => {
                return match tokio::time::timeout(SEND_TIMEOUT, sink.flush()).await {
                    Ok(Ok(())) => Sent::Close(frame),
                    Ok(Err(_)) => Sent::Failed,
                    Err(_) => Sent::Stalled,
                };
            }
        }
    }
    match tokio::time::timeout(SEND_TIMEOUT, sink.flush()).await {
        Ok(Ok(())) => Sent::All,
        Ok(Err(_)) => Sent::Failed,
        Err(_) => Sent::Stalled,
    }
}

#[cfg(test)]
#[path = "writer_tests.rs"]
mod tests;

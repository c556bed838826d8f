//! The read budget of a WebSocket before `connect`: the upgraded stream is wrapped in
//! [`BudgetedIo`], which lets through at most [`PREAUTH_READ_BUDGET`] bytes in all until the
//! connection lifts the budget (once `connect` succeeded). Past it a read fails with
//! [`BudgetExhausted`], so a peer that has not authenticated can never make the gateway
//! buffer more than that, however it frames its data (one huge frame, endless continuation
//! frames, pings).
//!
//! The WebSocket layer's own limits are fixed when the stream is built and cannot be raised
//! after `connect`; counting raw bytes below it needs no framing knowledge and covers every
//! frame kind at once.

use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

use super::frames::MAX_PREAUTH_FRAME;

/// Bytes a client may send before `connect` succeeds: one maximal pre-auth frame
/// ([`MAX_PREAUTH_FRAME`]) and room for framing and a few control frames.
pub const PREAUTH_READ_BUDGET: usize = MAX_PREAUTH_FRAME + 4 * 1024;

/// Stands for "no limit any more".
const LIFTED: usize = usize::MAX;

/// The bytes a connection may still read, shared by the stream and the connection that
/// lifts it.
#[derive(Debug, Clone)]
pub struct ReadBudget(Arc<AtomicUsize>);

impl ReadBudget {
    pub fn new(bytes: usize) -> Self {
        Self(Arc::new(AtomicUsize::new(bytes.min(LIFTED - 1))))
    }

    /// From now on reads are not counted.
    pub fn lift(&self) {
        self.0.store(LIFTED, Ordering::Relaxed);
    }

    /// `None` once lifted.
    pub fn remaining(&self) -> Option<usize> {
        match self.0.load(Ordering::Relaxed) {
            LIFTED => None,
            left => Some(left),
        }
    }

    fn consume(&self, n: usize) {
        let _ = self
            .0
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |left| {
                (left != LIFTED).then(|| left.saturating_sub(n))
            });
    }
}

/// The error a read fails with once the budget is spent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("more than {PREAUTH_READ_BUDGET} bytes before connect")]
pub struct BudgetExhausted;

impl BudgetExhausted {
    /// Whether `error` is this one (as the WebSocket layer hands it back).
    pub fn is(error: &io::Error) -> bool {
        error
            .get_ref()
            .is_some_and(|inner| inner.is::<BudgetExhausted>())
    }
}

/// A stream whose reads are counted against a [`ReadBudget`]; writes pass through.
#[derive(Debug)]
pub struct BudgetedIo<S> {
    inner: S,
    budget: ReadBudget,
}

impl<S> BudgetedIo<S> {
    pub fn new(inner: S, budget: ReadBudget) -> Self {
        Self { inner, budget }
    }

    /// The budget, for the connection to lift.
    pub fn budget(&self) -> &ReadBudget {
        &self.budget
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for BudgetedIo<S> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let Some(left) = this.budget.remaining() else {
            return Pin::new(&mut this.inner).poll_read(cx, buf);
        };
        if left == 0 {
            return Poll::Ready(Err(io::Error::new(
                io::ErrorKind::InvalidData,
                BudgetExhausted,
            )));
        }
        if buf.remaining() <= left {
            let before = buf.filled().len();
            let polled = Pin::new(&mut this.inner).poll_read(cx, buf);
            if let Poll::Ready(Ok(())) = polled {
                this.budget.consume(buf.filled().len() - before);
            }
            return polled;
        }
        // The caller offers more room than the budget allows: read into a buffer of the
        // allowed size (only ever the last read before `connect`, so the copy is rare).
        let mut room = vec![0u8; left];
        let mut limited = ReadBuf::new(&mut room);
        let polled = Pin::new(&mut this.inner).poll_read(cx, &mut limited);
        if let Poll::Ready(Ok(())) = polled {
            let read = limited.filled();
            buf.put_slice(read);
            this.budget.consume(read.len());
        }
        polled
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for BudgetedIo<S> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().inner).poll_write(cx, buf)
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_shutdown(cx)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().inner).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    /// A peer that has written `sent` bytes, read through a budget of `budget`.
    async fn read_all_through(budget: usize, sent: usize) -> (Vec<u8>, io::Result<usize>) {
        let (mut peer, ours) = tokio::io::duplex(1 << 20);
        peer.write_all(&vec![7u8; sent]).await.unwrap();
        drop(peer);
        let mut io = BudgetedIo::new(ours, ReadBudget::new(budget));
        let mut got = Vec::new();
        let mut chunk = [0u8; 1000];
        loop {
            match io.read(&mut chunk).await {
                Ok(0) => return (got, Ok(0)),
                Ok(n) => got.extend_from_slice(&chunk[..n]),
                Err(e) => return (got, Err(e)),
            }
        }
    }

    #[tokio::test]
    async fn reads_stop_at_the_budget_with_a_recognisable_error() {
        let (got, end) = read_all_through(2500, 10_000).await;
        assert_eq!(got.len(), 2500);
        let error = end.unwrap_err();
        assert!(BudgetExhausted::is(&error), "{error}");
        assert_eq!(error.kind(), io::ErrorKind::InvalidData);
    }

    #[tokio::test]
    async fn data_within_the_budget_reads_to_the_end() {
        let (got, end) = read_all_through(2500, 2500).await;
        assert_eq!(got.len(), 2500);
        // The budget is spent exactly: the next read fails rather than seeing EOF, which
        // is the point (nothing more is taken in before `connect`).
        assert!(BudgetExhausted::is(&end.unwrap_err()));
        let (got, end) = read_all_through(2500, 1200).await;
        assert_eq!((got.len(), end.unwrap()), (1200, 0));
    }

    #[tokio::test]
    async fn a_lifted_budget_lets_everything_through() {
        let (mut peer, ours) = tokio::io::duplex(1 << 20);
        let budget = ReadBudget::new(100);
        let mut io = BudgetedIo::new(ours, budget.clone());
        peer.write_all(&[1u8; 60]).await.unwrap();
        let mut buf = [0u8; 60];
        io.read_exact(&mut buf).await.unwrap();
        assert_eq!(budget.remaining(), Some(40));
        budget.lift();
        assert_eq!(io.budget().remaining(), None);
        peer.write_all(&[2u8; 5000]).await.unwrap();
        drop(peer);
        let mut rest = Vec::new();
        io.read_to_end(&mut rest).await.unwrap();
        assert_eq!(rest, vec![2u8; 5000]);
        assert_eq!(budget.remaining(), None, "reads after lifting do not count");
    }

    #[tokio::test]
    async fn writes_are_not_counted() {
        let (mut peer, ours) = tokio::io::duplex(1 << 16);
        let budget = ReadBudget::new(10);
        let mut io = BudgetedIo::new(ours, budget.clone());
        io.write_all(&[3u8; 20_000]).await.unwrap();
        io.flush().await.unwrap();
        let mut got = vec![0u8; 20_000];
        peer.read_exact(&mut got).await.unwrap();
        assert_eq!(budget.remaining(), Some(10));
    }

    #[test]
    fn other_errors_are_not_the_budget() {
        assert!(!BudgetExhausted::is(&io::Error::other("x")));
        assert!(!BudgetExhausted::is(&io::ErrorKind::InvalidData.into()));
    }
}

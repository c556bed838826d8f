//! Turning rendered frames plus stream faults into a real streaming HTTP body: pacing delays,
//! keep-alive comments, broken lines, byte re-chunking, aborts and hangs.

use std::collections::VecDeque;
use std::time::Duration;

use axum::body::Body;
use bytes::Bytes;
use futures_util::stream;
use tokio_util::sync::CancellationToken;

use crate::api::Api;
use crate::scenario::Fault;
use crate::wire::{self, DATA_PREFIX, Frame};

/// Filler for the huge-line fault, sent in slices so no large buffer is allocated.
static FILLER: [u8; 64 * 1024] = [b'x'; 64 * 1024];

/// Pause before an abort so that what was sent before it reaches the socket.
const FLUSH_PAUSE: Duration = Duration::from_millis(10);

/// One thing the body does next.
#[derive(Debug, Clone)]
pub(crate) enum Step {
    Data(Bytes),
    Sleep(Duration),
    /// End the body with an error: hyper aborts the connection mid-body.
    Fail,
    /// Send nothing more until the client leaves or the server shuts down.
    Hang,
}

/// How to lay out a stream.
pub(crate) struct Layout<'a> {
    pub api: Api,
    pub fault: &'a Fault,
    pub delay: Duration,
    pub byte_chunk: Option<usize>,
}

/// Lays `frames` out as steps, applying stream faults.
pub(crate) fn steps(frames: &[Frame], layout: &Layout<'_>) -> Vec<Step> {
    let fault = layout.fault;
    let frames: Vec<&Frame> = frames
        .iter()
        .filter(|frame| !(fault.omit_done && frame.is_final))
        .collect();
    let mut out = Vec::with_capacity(frames.len() * 2);
    let mut stopped = false;
    for (sent, frame) in frames.iter().enumerate() {
        if fault.disconnect_after_chunks == Some(sent) {
            out.push(Step::Fail);
            stopped = true;
            break;
        }
        if fault.hang_after_chunks == Some(sent) {
            out.push(Step::Hang);
            stopped = true;
            break;
        }
        if sent > 0 && !layout.delay.is_zero() {
            out.push(Step::Sleep(layout.delay));
        }
        out.push(Step::Data(frame.bytes.clone()));
        if sent == 0 {
            if fault.malformed_line {
                out.push(Step::Data(wire::malformed_frame(layout.api)));
            }
            if fault.invalid_utf8 {
                out.push(Step::Data(wire::invalid_utf8_frame(layout.api)));
            }
            if let Some(size) = fault.huge_line_bytes {
                push_huge_line(&mut out, size);
                stopped = true;
                break;
            }
        }
        if let Some(every) = fault.keep_alive_every
            && every > 0
            && (sent + 1) % every == 0
        {
            out.push(Step::Data(Bytes::from_static(b": keep-alive\n\n")));
        }
    }
    if !stopped {
        if fault.disconnect_after_chunks.is_some() {
            out.push(Step::Fail);
        } else if fault.hang_after_chunks.is_some() {
            out.push(Step::Hang);
        }
    }
    match layout.byte_chunk {
        Some(size) if size > 0 => rechunk(out, size),
        _ => out,
    }
}

/// `data: xxxx…` totalling `size` bytes, with no line end.
fn push_huge_line(out: &mut Vec<Step>, size: usize) {
    let prefix = DATA_PREFIX.len().min(size);
    out.push(Step::Data(Bytes::from_static(&DATA_PREFIX[..prefix])));
    let mut left = size - prefix;
    while left > 0 {
        let take = left.min(FILLER.len());
        out.push(Step::Data(Bytes::from_static(&FILLER[..take])));
        left -= take;
    }
}

/// Splits every data step into `size`-byte pieces.
fn rechunk(steps: Vec<Step>, size: usize) -> Vec<Step> {
    let mut out = Vec::with_capacity(steps.len());
    for step in steps {
        match step {
            Step::Data(bytes) => {
                let mut start = 0;
                while start < bytes.len() {
                    let end = (start + size).min(bytes.len());
                    out.push(Step::Data(bytes.slice(start..end)));
                    start = end;
                }
            }
            other => out.push(other),
        }
    }
    out
}

fn aborted(why: &str) -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::ConnectionAborted, why.to_owned())
}

/// A streaming body that plays `steps`. Server shutdown (`cancel`) aborts it wherever it is.
pub(crate) fn body(steps: Vec<Step>, cancel: CancellationToken) -> Body {
    if steps.iter().all(|step| matches!(step, Step::Data(_))) {
        let chunks = steps.into_iter().filter_map(|step| match step {
            Step::Data(bytes) => Some(Ok::<Bytes, std::io::Error>(bytes)),
            _ => None,
        });
        return Body::from_stream(stream::iter(chunks));
    }
    let queue: VecDeque<Step> = steps.into();
    let played = stream::unfold(Some((queue, cancel)), |state| async move {
        let (mut queue, cancel) = state?;
        loop {
            match queue.pop_front()? {
                Step::Data(bytes) => return Some((Ok(bytes), Some((queue, cancel)))),
                Step::Sleep(pause) => {
                    tokio::select! {
                        () = tokio::time::sleep(pause) => {}
                        () = cancel.cancelled() => {
                            return Some((Err(aborted("mock server shutting down")), None));
                        }
                    }
                }
                Step::Fail => {
                    // Pending first, so hyper flushes the headers and the chunks already
                    // written; an error on the very first poll would drop them unsent.
                    tokio::task::yield_now().await;
                    tokio::time::sleep(FLUSH_PAUSE).await;
                    return Some((Err(aborted("mock fault: disconnect")), None));
                }
                Step::Hang => {
                    cancel.cancelled().await;
                    return Some((Err(aborted("mock server shutting down")), None));
                }
            }
        }
    });
    Body::from_stream(played)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn frames(n: usize) -> Vec<Frame> {
        (0..n)
            .map(|i| Frame {
                bytes: Bytes::from(format!("data: {i}\n\n")),
                is_final: i + 1 == n,
            })
            .collect()
    }

    fn data(steps: &[Step]) -> Vec<u8> {
        let mut out = Vec::new();
        for step in steps {
            if let Step::Data(bytes) = step {
                out.extend_from_slice(bytes);
            }
        }
        out
    }

    fn layout(fault: &Fault) -> Layout<'_> {
        Layout {
            api: Api::OpenAiCompletions,
            fault,
            delay: Duration::ZERO,
            byte_chunk: None,
        }
    }

    #[test]
    fn disconnect_after_two() {
        let fault = Fault::disconnect_after_chunks(2);
        let steps = steps(&frames(4), &layout(&fault));
        assert_eq!(data(&steps), b"data: 0\n\ndata: 1\n\n");
        assert!(matches!(steps.last(), Some(Step::Fail)));
    }

    #[test]
    fn omit_done_and_keep_alive() {
        let fault = Fault::omit_done().and(Fault::keep_alive_every(2));
        let steps = steps(&frames(3), &layout(&fault));
        assert_eq!(data(&steps), b"data: 0\n\ndata: 1\n\n: keep-alive\n\n");
    }

    #[test]
    fn huge_line_has_exact_size() {
        let fault = Fault::huge_line_bytes(100_000);
        let steps = steps(&frames(3), &layout(&fault));
        let bytes = data(&steps);
        assert_eq!(bytes.len(), "data: 0\n\n".len() + 100_000);
        assert!(!bytes.ends_with(b"\n"));
    }

    #[test]
    fn rechunk_preserves_bytes() {
        let fault = Fault::default();
        let mut l = layout(&fault);
        l.byte_chunk = Some(3);
        let steps = steps(&frames(3), &l);
        assert!(
            steps
                .iter()
                .all(|s| matches!(s, Step::Data(b) if b.len() <= 3))
        );
        assert_eq!(data(&steps), b"data: 0\n\ndata: 1\n\ndata: 2\n\n");
    }
}

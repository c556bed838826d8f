//! The writer against a fake socket that can be blocked like a full TCP buffer.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};

use futures_util::Sink;
use tokio_tungstenite::tungstenite::Message;

use super::*;

/// What the fake socket saw.
#[derive(Debug, Clone, PartialEq)]
enum Seen {
    Text(String),
    Close(u16, String),
    /// `close()` was called (the reply to a client's Close goes out this way).
    Closed,
}

#[derive(Default)]
struct State {
    seen: Vec<Seen>,
    blocked: bool,
    waker: Option<Waker>,
}

/// A sink whose every step is pending while blocked (a client that stops reading).
#[derive(Clone, Default)]
struct FakeSocket(Arc<Mutex<State>>);

impl FakeSocket {
    fn blocked() -> Self {
        let socket = Self::default();
        socket.0.lock().unwrap().blocked = true;
        socket
    }

    fn unblock(&self) {
        let mut state = self.0.lock().unwrap();
        state.blocked = false;
        if let Some(waker) = state.waker.take() {
            waker.wake();
        }
    }

    fn seen(&self) -> Vec<Seen> {
        self.0.lock().unwrap().seen.clone()
    }

    fn poll_step(&self, cx: &mut Context<'_>) -> Poll<Result<(), std::io::Error>> {
        let mut state = self.0.lock().unwrap();
        if state.blocked {
            state.waker = Some(cx.waker().clone());
            Poll::Pending
        } else {
            Poll::Ready(Ok(()))
        }
    }
}

impl Sink<Message> for FakeSocket {
    type Error = std::io::Error;

    fn poll_ready(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.poll_step(cx)
    }

    fn start_send(self: Pin<&mut Self>, item: Message) -> Result<(), Self::Error> {
        let seen = match item {
            Message::Text(t) => Seen::Text(t.to_string()),
            Message::Close(Some(frame)) => Seen::Close(frame.code.into(), frame.reason.to_string()),
            other => panic!("unexpected {other:?}"),
        };
        self.0.lock().unwrap().seen.push(seen);
        Ok(())
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.poll_step(cx)
    }

    fn poll_close(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        let ready = self.poll_step(cx);
        if ready.is_ready() {
            self.0.lock().unwrap().seen.push(Seen::Closed);
        }
        ready
    }
}

fn text(s: &str) -> Seen {
    Seen::Text(s.to_owned())
}

#[tokio::test]
async fn frames_go_out_in_order_and_nothing_follows_a_close() {
    let socket = FakeSocket::default();
    let (out, writer) = channel(1000);
    out.text("a".into());
    out.text("b".into());
    out.close(POLICY_VIOLATION, "bad handshake");
    out.text("c".into());
    out.close(GOING_AWAY, "a second close");
    writer.run(socket.clone()).await;
    assert_eq!(
        socket.seen(),
        vec![
            text("a"),
            text("b"),
            Seen::Close(POLICY_VIOLATION, "bad handshake".into())
        ]
    );
    assert!(out.is_over());
}

#[tokio::test]
async fn a_graceful_close_is_not_cut_short_by_end() {
    let socket = FakeSocket::default();
    let (out, writer) = channel(1000);
    out.text("shutdown event".into());
    out.close(GOING_AWAY, "gateway stopping");
    out.end();
    writer.run(socket.clone()).await;
    assert_eq!(
        socket.seen(),
        vec![
            text("shutdown event"),
            Seen::Close(GOING_AWAY, "gateway stopping".into())
        ]
    );
}

#[tokio::test]
async fn end_stops_the_writer_without_a_close() {
    let socket = FakeSocket::default();
    let (out, writer) = channel(1000);
    let task = tokio::spawn(writer.run(socket.clone()));
    out.text("a".into());
    tokio::task::yield_now().await;
    out.end();
    task.await.unwrap();
    out.text("late".into());
    assert!(!socket.seen().contains(&text("late")));
    assert!(
        socket
            .seen()
            .iter()
            .all(|s| !matches!(s, Seen::Close(..) | Seen::Closed))
    );
    assert!(out.is_over());
}

#[tokio::test]
async fn overflow_behind_a_blocked_socket_drops_the_client_with_one_close() {
    let socket = FakeSocket::blocked();
    let (out, writer) = channel(100);
    let task = tokio::spawn(writer.run(socket.clone()));
    out.text("x".repeat(60));
    // The writer takes the frame and blocks in the socket, like a full TCP buffer.
    for _ in 0..10 {
        tokio::task::yield_now().await;
    }
    assert!(!out.is_over());
    out.text("y".repeat(60));
    assert!(out.is_over(), "the queue passed its limit");
    // Every later event is dropped, and later stops change nothing.
    for _ in 0..1000 {
        out.text("z".repeat(60));
    }
    out.abort(GOING_AWAY, "another reason");
    out.close(GOING_AWAY, "a graceful one");
    socket.unblock();
    task.await.unwrap();
    let seen = socket.seen();
    assert_eq!(
        seen.last(),
        Some(&Seen::Close(
            POLICY_VIOLATION,
            "client too slow: send buffer full".into()
        ))
    );
    let closes = seen.iter().filter(|s| matches!(s, Seen::Close(..))).count();
    assert_eq!(closes, 1, "{seen:?}");
    assert!(!seen.contains(&text(&"y".repeat(60))));
    assert!(!seen.contains(&text(&"z".repeat(60))));
}

#[tokio::test(start_paused = true)]
async fn a_socket_that_never_drains_is_given_up_after_the_send_timeout() {
    let socket = FakeSocket::blocked();
    let (out, writer) = channel(1000);
    let started = tokio::time::Instant::now();
    let task = tokio::spawn(writer.run(socket.clone()));
    out.text("a".into());
    task.await.unwrap();
    let waited = started.elapsed();
    assert!(out.is_over());
    // SEND_TIMEOUT for the frame, then CLOSE_TIMEOUT for the Close that cannot go out.
    assert!(waited >= SEND_TIMEOUT + CLOSE_TIMEOUT, "{waited:?}");
    assert!(
        waited < SEND_TIMEOUT + CLOSE_TIMEOUT + Duration::from_secs(1),
        "{waited:?}"
    );
    assert_eq!(socket.seen(), Vec::new());
}

#[tokio::test]
async fn a_clients_close_is_answered_ahead_of_queued_events() {
    let socket = FakeSocket::default();
    let (out, writer) = channel(usize::MAX);
    for i in 0..1000 {
        out.text(format!("event {i}"));
    }
    out.answer_peer_close();
    out.text("after".into());
    writer.run(socket.clone()).await;
    assert_eq!(socket.seen(), vec![Seen::Closed]);
    assert!(out.is_over());
}

#[tokio::test]
async fn a_clients_close_interrupts_a_blocked_write() {
    let socket = FakeSocket::blocked();
    let (out, writer) = channel(usize::MAX);
    let task = tokio::spawn(writer.run(socket.clone()));
    out.text("stuck".into());
    for _ in 0..10 {
        tokio::task::yield_now().await;
    }
    out.answer_peer_close();
    // The client reads again (it waits for the answer): the socket drains.
    socket.unblock();
    task.await.unwrap();
    assert_eq!(socket.seen(), vec![Seen::Closed]);
}

#[tokio::test]
async fn the_over_signal_reaches_waiting_loops() {
    let (out, writer) = channel(1000);
    let waiting = {
        let out = out.clone();
        tokio::spawn(async move { out.over().await })
    };
    drop(writer);
    out.abort(POLICY_VIOLATION, "x");
    waiting.await.unwrap();
}

#[test]
fn close_reasons_fit_a_control_frame() {
    let frame = close_frame(POLICY_VIOLATION, &"é".repeat(100));
    assert!(frame.reason.len() <= 123);
    assert_eq!(frame.reason.len(), 122);
    assert_eq!(u16::from(frame.code), POLICY_VIOLATION);
}

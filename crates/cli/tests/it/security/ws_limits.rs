//! Findings 3 and 5: what a WebSocket client can make the gateway hold. Before `connect` a
//! peer may send 64 KiB in all (a fragmented 23 MiB message is cut off, thirty of them leave
//! the gateway small), and only 16 such connections per address; after it, a client that
//! stops reading is dropped instead of queueing without bound, and a client's Close is
//! answered at once even while events are flowing.

use std::net::{Ipv4Addr, SocketAddr};
use std::time::{Duration, Instant};

use futures_util::{SinkExt as _, StreamExt as _};
use pincer_testkit::{Match, Reply, Rule, Scenario};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::{TcpSocket, TcpStream};
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::Message as Ws;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;

use crate::common::gateway::{Foreground, WsClient, gateway_home};
use crate::common::mock;

const TOKEN: &str = "ws-limits-token";
/// The attack of the finding: one text message of 23 MiB in continuation frames.
const ATTACK_BYTES: usize = 23 * 1024 * 1024;
const FRAME_PAYLOAD: usize = 16 * 1024;

/// A TCP connection to the gateway, with small kernel buffers so that what was written is
/// close to what the server took.
async fn tcp(port: u16) -> TcpStream {
    let socket = TcpSocket::new_v4().unwrap();
    socket.set_send_buffer_size(8 * 1024).unwrap();
    socket.set_recv_buffer_size(8 * 1024).unwrap();
    socket
        .connect(SocketAddr::from((Ipv4Addr::LOCALHOST, port)))
        .await
        .unwrap()
}

/// A raw upgraded connection: the HTTP handshake by hand, nothing of the WebSocket read.
async fn raw_upgrade(port: u16) -> TcpStream {
    let mut stream = tcp(port).await;
    let request = format!(
        "GET / HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: Upgrade\r\n\
         Upgrade: websocket\r\nSec-WebSocket-Version: 13\r\n\
         Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n"
    );
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        assert_eq!(stream.read(&mut byte).await.unwrap(), 1, "{head:?}");
        head.push(byte[0]);
    }
    let head = String::from_utf8(head).unwrap();
    assert!(head.starts_with("HTTP/1.1 101"), "{head}");
    stream
}

/// A client frame (masked, with an all-zero key so the payload goes as is).
fn client_frame(opcode: u8, fin: bool, payload: &[u8]) -> Vec<u8> {
    let mut frame = vec![if fin { 0x80 } else { 0 } | opcode];
    match payload.len() {
        n if n < 126 => frame.push(0x80 | n as u8),
        n if n <= 0xffff => {
            frame.push(0x80 | 126);
            frame.extend_from_slice(&(n as u16).to_be_bytes());
        }
        n => {
            frame.push(0x80 | 127);
            frame.extend_from_slice(&(n as u64).to_be_bytes());
        }
    }
    frame.extend_from_slice(&[0, 0, 0, 0]);
    frame.extend_from_slice(payload);
    frame
}

/// How a flood ended.
#[derive(Debug)]
struct Flood {
    /// Bytes of the message the test managed to write.
    written: usize,
    /// The server's close code, if its Close frame could be read.
    close_code: Option<u16>,
    /// Whether the server ended the connection (Close, EOF, reset or a failed write).
    ended: bool,
}

/// Codes of the Close frames among the server's (unmasked) frames in `data`.
fn close_codes(data: &[u8]) -> Vec<u16> {
    let mut codes = Vec::new();
    let mut at = 0;
    while at + 2 <= data.len() {
        let opcode = data[at] & 0x0f;
        let (len, head) = match data[at + 1] & 0x7f {
            126 if at + 4 <= data.len() => {
                (u16::from_be_bytes([data[at + 2], data[at + 3]]) as usize, 4)
            }
            127 => break,
            126 => break,
            n => (n as usize, 2),
        };
        let start = at + head;
        if start + len > data.len() {
            break;
        }
        if opcode == 0x8 && len >= 2 {
            codes.push(u16::from_be_bytes([data[start], data[start + 1]]));
        }
        at = start + len;
    }
    codes
}

/// Sends one 23 MiB text message in 16 KiB continuation frames, never finishing it, until
/// the server ends the connection or everything was sent.
async fn flood(mut stream: TcpStream) -> Flood {
    let payload = vec![b'a'; FRAME_PAYLOAD];
    let mut received = Vec::new();
    let mut written = 0;
    let mut ended = false;
    let mut buf = [0u8; 4096];
    while written < ATTACK_BYTES {
        let frame = client_frame(if written == 0 { 0x1 } else { 0x0 }, false, &payload);
        match tokio::time::timeout(Duration::from_secs(20), stream.write_all(&frame)).await {
            Ok(Ok(())) => written += FRAME_PAYLOAD,
            Ok(Err(_)) => {
                ended = true;
                break;
            }
            Err(_) => panic!("the server neither read nor closed for 20 s"),
        }
        match stream.try_read(&mut buf) {
            Ok(0) => {
                ended = true;
                break;
            }
            Ok(n) => {
                received.extend_from_slice(&buf[..n]);
                if !close_codes(&received).is_empty() {
                    ended = true;
                    break;
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
            Err(_) => {
                ended = true;
                break;
            }
        }
    }
    // Whatever the server still said (the Close may be lost to a reset).
    while let Ok(Ok(n)) = tokio::time::timeout(Duration::from_secs(2), stream.read(&mut buf)).await
    {
        if n == 0 {
            ended = true;
            break;
        }
        received.extend_from_slice(&buf[..n]);
    }
    Flood {
        written,
        close_code: close_codes(&received).first().copied(),
        ended,
    }
}

/// Kibibytes of a `/proc/<pid>/status` field (`VmRSS`, `VmHWM`).
fn memory_kib(pid: u32, field: &str) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status
        .lines()
        .find_map(|line| line.strip_prefix(&format!("{field}:")))
        .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or_else(|| panic!("no {field} in {status}"))
}

fn simple_llm() -> Scenario {
    Scenario::new().rule(Rule::when(Match::last_user("ping")).reply(Reply::text("pong")))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fragmented_message_before_connect_is_cut_off_at_64_kib() {
    let llm = mock(simple_llm()).await;
    let (home, port) = gateway_home(&llm, TOKEN);
    let _gateway = Foreground::start(&home, &["gateway", "run"]);

    let result = flood(raw_upgrade(port).await).await;
    assert!(result.ended, "{result:?}");
    assert!(
        result.written < 1024 * 1024,
        "the server took {} bytes before closing",
        result.written
    );
    if let Some(code) = result.close_code {
        assert_eq!(code, 1009, "message too big");
    }
    // The gateway is fine: a real client connects and is answered.
    let mut client = WsClient::connect(port, TOKEN).await;
    assert_eq!(client.call("health", json!({})).await["ok"], true);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn thirty_pre_auth_floods_leave_the_gateway_under_64_mb() {
    let llm = mock(simple_llm()).await;
    let (home, port) = gateway_home(&llm, TOKEN);
    let gateway = Foreground::start(&home, &["gateway", "run"]);
    let pid = gateway.child.id();

    // Two waves of fifteen: under the per-address cap of pending connections, so every one
    // of them is accepted and attacks.
    let mut results = Vec::new();
    for _wave in 0..2 {
        let floods: Vec<_> = (0..15)
            .map(|_| tokio::spawn(async move { flood(raw_upgrade(port).await).await }))
            .collect();
        for flood in floods {
            results.push(flood.await.unwrap());
        }
    }
    let peak = memory_kib(pid, "VmHWM");
    assert!(
        peak < 64 * 1024,
        "the gateway peaked at {peak} KiB of resident memory"
    );
    for result in results {
        assert!(result.ended, "{result:?}");
        assert!(result.written < 1024 * 1024, "{result:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_17th_unauthenticated_connection_from_one_address_is_refused() {
    let llm = mock(simple_llm()).await;
    let (home, port) = gateway_home(&llm, TOKEN);
    let _gateway = Foreground::start(&home, &["gateway", "run"]);
    let mut member = WsClient::connect(port, TOKEN).await;

    // Sixteen connections that never send `connect` (each reads its challenge first, so
    // the gateway has counted it).
    let mut pending = Vec::new();
    for _ in 0..16 {
        let stream = tcp(port).await;
        let (mut ws, _) =
            tokio_tungstenite::client_async(format!("ws://127.0.0.1:{port}/"), stream)
                .await
                .unwrap();
        let challenge = next_message(&mut ws).await;
        assert!(
            matches!(&challenge, Some(Ws::Text(t)) if t.contains("connect.challenge")),
            "{challenge:?}"
        );
        pending.push(ws);
    }

    // The 17th gets a Close saying why, and no challenge.
    let refused = open(port).await;
    assert_eq!(
        refused.err(),
        Some((
            1013,
            "too many unauthenticated connections from this address; send connect first".to_owned()
        ))
    );

    // The client that had connected before still works.
    assert_eq!(member.call("health", json!({})).await["ok"], true);

    // One pending connection leaves: its place is free again.
    drop(pending.pop());
    let mut reopened = None;
    for _ in 0..100 {
        if let Ok(ws) = open(port).await {
            reopened = Some(ws);
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let mut reopened = reopened.expect("a freed place is given to a new connection");
    let hello = connect_frame(&mut reopened, "reopened").await;
    assert_eq!(hello["ok"], true, "{hello}");
}

type Socket = WebSocketStream<TcpStream>;

/// The next message, skipping pings; `None` at the end.
async fn next_message(ws: &mut Socket) -> Option<Ws> {
    loop {
        match tokio::time::timeout(Duration::from_secs(20), ws.next())
            .await
            .expect("a message within 20 s")
        {
            Some(Ok(Ws::Ping(_) | Ws::Pong(_))) => {}
            Some(Ok(message)) => return Some(message),
            Some(Err(_)) | None => return None,
        }
    }
}

/// Opens a WebSocket: the socket after its challenge, or the code and reason of the Close
/// it got instead.
async fn open(port: u16) -> Result<Socket, (u16, String)> {
    let stream = tcp(port).await;
    let (mut ws, _) = tokio_tungstenite::client_async(format!("ws://127.0.0.1:{port}/"), stream)
        .await
        .unwrap();
    match next_message(&mut ws).await {
        Some(Ws::Text(t)) if t.contains("connect.challenge") => Ok(ws),
        Some(Ws::Close(Some(frame))) => Err((frame.code.into(), frame.reason.to_string())),
        other => Err((0, format!("{other:?}"))),
    }
}

/// Sends `connect` as client instance `instance`; its response.
async fn connect_frame(ws: &mut Socket, instance: &str) -> Value {
    let frame = json!({"type": "req", "id": "c1", "method": "connect", "params": {
        "minProtocol": 3, "maxProtocol": 4,
        "client": {"id": "test", "version": "1", "platform": "linux", "mode": "test",
                   "instanceId": instance},
        "auth": {"token": TOKEN}, "role": "operator",
        "scopes": ["operator.read", "operator.write"]}});
    ws.send(Ws::text(frame.to_string())).await.unwrap();
    loop {
        match next_message(ws).await {
            Some(Ws::Text(t)) => {
                let value: Value = serde_json::from_str(&t).unwrap();
                if value["type"] == "res" && value["id"] == "c1" {
                    return value;
                }
            }
            other => panic!("no connect answer: {other:?}"),
        }
    }
}

/// The `instanceId`s in the presence list.
async fn present(client: &mut WsClient) -> Vec<String> {
    let answer = client.call("system-presence", json!({})).await;
    answer["payload"]
        .as_array()
        .unwrap_or_else(|| panic!("{answer}"))
        .iter()
        .filter_map(|row| row["instanceId"].as_str().map(str::to_owned))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_stops_reading_is_dropped_and_the_gateway_stays_small() {
    // 64 KiB of reply per run in 256-byte pieces, streamed at once: every `agent` event
    // carries the text so far, so each run sends every client about 8 MiB.
    let big: String = (0..10_000).map(|i| format!("w{i:06} ")).collect();
    let big = big[..64 * 1024].to_owned();
    let llm = mock(Scenario::new().rule(
        Rule::when(Match::last_user("talk a lot")).reply(Reply::text(big).with_chunk_size(256)),
    ))
    .await;
    let (home, port) = gateway_home(&llm, TOKEN);
    let gateway = Foreground::start(&home, &["gateway", "run"]);
    let pid = gateway.child.id();

    let mut slow = open(port).await.unwrap();
    let hello = connect_frame(&mut slow, "slow-reader").await;
    assert_eq!(hello["ok"], true, "{hello}");
    // From here on `slow` is never read.
    let mut watcher = WsClient::connect(port, TOKEN).await;
    assert!(
        present(&mut watcher)
            .await
            .contains(&"slow-reader".to_owned())
    );

    let mut dropped_after = None;
    for run in 0..40 {
        let id = format!("flood-{run}");
        watcher
            .start_chat(&format!("agent:main:{id}"), "talk a lot", &id)
            .await;
        watcher.chat_event(&id, "final").await;
        if !present(&mut watcher)
            .await
            .contains(&"slow-reader".to_owned())
        {
            dropped_after = Some(run);
            break;
        }
    }
    assert!(
        dropped_after.is_some(),
        "a client that never reads was still connected after 40 runs"
    );
    // The other client was served all along and still is.
    assert_eq!(watcher.call("health", json!({})).await["ok"], true);
    let rss = memory_kib(pid, "VmRSS");
    assert!(
        rss < 200 * 1024,
        "the gateway holds {rss} KiB after dropping the slow client"
    );
    // What the slow client finds when it reads at last: what had been sent, then the end.
    let mut close = None;
    while let Some(message) = next_message(&mut slow).await {
        if let Ws::Close(frame) = message {
            close = frame;
            break;
        }
    }
    if let Some(frame) = close {
        assert_eq!(frame.code, CloseCode::Policy, "{frame:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_clients_close_is_answered_while_events_are_flowing() {
    // A run streaming for about 20 s.
    let story: String = (0..200).map(|i| format!("w{i} ")).collect();
    let llm = mock(
        Scenario::new().rule(
            Rule::when(Match::last_user("a long story"))
                .reply(Reply::text(story).with_chunk_size(4).with_delay_ms(100)),
        ),
    )
    .await;
    let (home, port) = gateway_home(&llm, TOKEN);
    let _gateway = Foreground::start(&home, &["gateway", "run"]);

    let mut ws = open(port).await.unwrap();
    let hello = connect_frame(&mut ws, "closer").await;
    assert_eq!(hello["ok"], true, "{hello}");
    // `agent` answers twice; its second answer (at the run's end) is pending meanwhile.
    let request = json!({"type": "req", "id": "a1", "method": "agent", "params": {
        "message": "a long story", "sessionKey": "agent:main:main", "idempotencyKey": "story"}});
    ws.send(Ws::text(request.to_string())).await.unwrap();
    let mut deltas = 0;
    while deltas < 5 {
        match next_message(&mut ws).await {
            Some(Ws::Text(t)) if t.contains(r#""event":"agent""#) => deltas += 1,
            Some(_) => {}
            None => panic!("the connection ended early"),
        }
    }

    let closed_at = Instant::now();
    ws.send(Ws::Close(None)).await.unwrap();
    // Events already on their way may still arrive; the answer to the Close comes next,
    // long before the run (and its pending answer) ends.
    let answer = tokio::time::timeout(Duration::from_secs(15), async {
        loop {
            match ws.next().await {
                Some(Ok(Ws::Close(frame))) => return Ok(frame),
                Some(Ok(_)) => {}
                Some(Err(e)) => return Err(e.to_string()),
                None => return Err("the connection ended without a Close".to_owned()),
            }
        }
    })
    .await;
    let waited = closed_at.elapsed();
    let answer = answer.expect("the server answered the Close within 15 s");
    assert!(answer.is_ok(), "{answer:?}");
    assert!(
        waited < Duration::from_secs(5),
        "the Close was answered after {waited:?}, like the 10 s client timeout"
    );
}

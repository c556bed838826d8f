//! The gateway's added latency (`bench/gateway.py`): what the gateway adds between a
//! client and the model, measured with one clock. This process is both sides: a WebSocket
//! client and the OpenAI-compatible model endpoint the gateway is configured to call.
//!
//! - send → LLM: from writing `chat.send` to the first byte of the model request arriving;
//! - delta → event: from writing a streamed delta to the model connection to the `agent`
//!   assistant event carrying it arriving at the client.
//!
//! The endpoint is a few lines of HTTP/1.1 by hand (chunked SSE, keep-alive) because it
//! must timestamp the first byte of each request and each delta it writes, which a
//! framework would hide. Turns run one after another on one client; every 20 turns the
//! session starts over, so history length stays typical.
//!
//!     ws_latency URL TOKEN LLM_PORT TURNS
//!
//! Prints one JSON line with p50/p99 of both, in milliseconds.

mod bench_support;

use std::sync::Arc;
use std::time::{Duration, Instant};

use bench_support::{next_frame, percentile, send, send_connect};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;
use tokio_tungstenite::connect_async_with_config;
use tokio_tungstenite::tungstenite::Message;

/// What the model endpoint saw of one request.
struct Served {
    first_byte: Instant,
    deltas: Vec<(String, Instant)>,
}

const DELTAS: [&str; 3] = ["Hello", " from", " the model"];

fn chunk(data: &str) -> String {
    format!("{:x}\r\n{data}\r\n", data.len())
}

fn sse(content: Option<&str>, finish: Option<&str>) -> String {
    let delta = match content {
        Some(text) => json!({ "role": "assistant", "content": text }),
        None => json!({}),
    };
    let event = json!({
        "id": "lat", "object": "chat.completion.chunk", "created": 0, "model": "m",
        "choices": [{ "index": 0, "delta": delta, "finish_reason": finish }],
    });
    format!("data: {event}\n\n")
}

/// Reads one HTTP request (headers and a Content-Length body); `None` at EOF.
async fn read_request(stream: &mut TcpStream, buf: &mut Vec<u8>) -> Option<Instant> {
    let mut first_byte = None;
    let mut tmp = [0u8; 16384];
    loop {
        if let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&buf[..end]).to_ascii_lowercase();
            let length: usize = head
                .lines()
                .find_map(|l| l.strip_prefix("content-length:"))
                .and_then(|v| v.trim().parse().ok())
                .unwrap_or(0);
            if buf.len() >= end + 4 + length {
                buf.drain(..end + 4 + length);
                return Some(first_byte.unwrap_or_else(Instant::now));
            }
        }
        let n = stream.read(&mut tmp).await.ok()?;
        if n == 0 {
            return None;
        }
        first_byte.get_or_insert_with(Instant::now);
        buf.extend_from_slice(&tmp[..n]);
    }
}

async fn serve_connection(mut stream: TcpStream, served: mpsc::UnboundedSender<Served>) {
    let _ = stream.set_nodelay(true);
    let mut buf = Vec::new();
    while let Some(first_byte) = read_request(&mut stream, &mut buf).await {
        let head = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\ntransfer-encoding: chunked\r\n\r\n";
        if stream.write_all(head.as_bytes()).await.is_err() {
            return;
        }
        let mut deltas = Vec::new();
        for text in DELTAS {
            // Apart in time, so each delta is its own event all the way to the client.
            tokio::time::sleep(Duration::from_millis(3)).await;
            let data = chunk(&sse(Some(text), None));
            deltas.push((text.to_owned(), Instant::now()));
            if stream.write_all(data.as_bytes()).await.is_err() {
                return;
            }
        }
        let end = format!(
            "{}{}0\r\n\r\n",
            chunk(&sse(None, Some("stop"))),
            chunk("data: [DONE]\n\n")
        );
        if stream.write_all(end.as_bytes()).await.is_err() {
            return;
        }
        let _ = served.send(Served { first_byte, deltas });
    }
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

async fn run(url: &str, token: &str, llm_port: u16, turns: usize) -> Result<Value, String> {
    let listener = TcpListener::bind(("127.0.0.1", llm_port))
        .await
        .map_err(|e| format!("cannot listen on {llm_port}: {e}"))?;
    let (served_tx, mut served_rx) = mpsc::unbounded_channel();
    let served_tx = Arc::new(served_tx);
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            tokio::spawn(serve_connection(stream, (*served_tx).clone()));
        }
    });
    // No Nagle on the client either: its small `chat.send` frame must leave at once.
    let (mut ws, _) = connect_async_with_config(url, None, true)
        .await
        .map_err(|e| e.to_string())?;
    send_connect(&mut ws, token).await?;
    let (mut to_llm, mut to_event) = (Vec::new(), Vec::new());
    for i in 0..turns {
        let run_id = format!("lat-{i}-{}", std::process::id());
        let req = json!({"type": "req", "id": run_id, "method": "chat.send", "params": {
            "sessionKey": format!("agent:main:latency-{}", i / 20),
            "message": format!("turn {i}"), "idempotencyKey": run_id}});
        let sent = Instant::now();
        send(&mut ws, &req).await?;
        let mut arrived: Vec<(String, Instant)> = Vec::new();
        loop {
            let late = || format!("turn {i}: no final event within 30 s");
            let frame = next_frame(&mut ws, Duration::from_secs(30), late).await?;
            let now = Instant::now();
            let Message::Text(text) = frame else { continue };
            let v: Value = serde_json::from_str(&text).map_err(|e| e.to_string())?;
            let p = &v["payload"];
            if v["type"] == "res" && v["id"] == run_id.as_str() && v["ok"] != true {
                return Err(format!("chat.send failed: {}", v["error"]));
            }
            if v["type"] != "event" || p["runId"] != run_id.as_str() {
                continue;
            }
            if v["event"] == "agent" && p["stream"] == "assistant" {
                let delta = p["data"]["delta"].as_str().unwrap_or_default().to_owned();
                arrived.push((delta, now));
            }
            if v["event"] == "chat" && p["state"] != "delta" {
                if p["state"] != "final" {
                    return Err(format!("turn {i} ended {}: {}", p["state"], p));
                }
                break;
            }
        }
        let served = tokio::time::timeout(Duration::from_secs(5), served_rx.recv())
            .await
            .map_err(|_| "the model endpoint did not report its request".to_owned())?
            .ok_or("the model endpoint stopped")?;
        to_llm.push(ms(served.first_byte.saturating_duration_since(sent)));
        for (text, written) in &served.deltas {
            let Some((_, at)) = arrived.iter().find(|(d, _)| d == text) else {
                return Err(format!(
                    "turn {i}: delta {text:?} never arrived as an event"
                ));
            };
            to_event.push(ms(at.saturating_duration_since(*written)));
        }
    }
    to_llm.sort_by(f64::total_cmp);
    to_event.sort_by(f64::total_cmp);
    Ok(json!({
        "turns": turns,
        "sendToLlmMs": {"p50": percentile(&to_llm, 50.0), "p99": percentile(&to_llm, 99.0)},
        "deltaToEventMs": {"p50": percentile(&to_event, 50.0), "p99": percentile(&to_event, 99.0)},
    }))
}

#[tokio::main]
async fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [url, token, port, turns] = args.as_slice() else {
        eprintln!("usage: ws_latency URL TOKEN LLM_PORT TURNS");
        std::process::exit(2);
    };
    let (Ok(port), Ok(turns)) = (port.parse::<u16>(), turns.parse::<usize>()) else {
        eprintln!("LLM_PORT and TURNS are numbers");
        std::process::exit(2);
    };
    match run(url, token, port, turns).await {
        Ok(report) => println!("{report}"),
        Err(e) => {
            eprintln!("ws_latency: {e}");
            std::process::exit(1);
        }
    }
}

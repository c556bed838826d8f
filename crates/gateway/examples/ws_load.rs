//! Load for the gateway benchmark (`bench/gateway.py`): N WebSocket clients, each on its own
//! session, each running M `agent` turns one after another and waiting for the final
//! response; every K turns a client starts its session over (`sessions.reset`, as a user's
//! `/new`), so sessions keep a realistic length however long the run. Prints one JSON
//! line: turns, seconds, turns per second, latency p50/p99. All clients come from one
//! address, so at most [`HANDSHAKES_IN_FLIGHT`] of them are between the upgrade and
//! `connect` at a time: the gateway keeps only 16 such connections per address.
//!
//! The output also says how many event frames a client was sent per turn: since the gateway
//! sends a run's events only to the connections watching its session (`agent` names it),
//! about one turn's worth. With `WS_LOAD_ALL_EVENTS=1` every client first names more sessions
//! than a connection's watch list holds, so it is sent every client's run events, as every
//! client was before (the baseline of that change).
//!
//!     cargo run --release --example ws_load -p pincer-gateway -- URL TOKEN CLIENTS TURNS [K]

mod bench_support;

use std::sync::Arc;
use std::time::{Duration, Instant};

use bench_support::{Socket, next_frame, percentile, send, send_connect};
use serde_json::{Value, json};
use tokio::sync::Semaphore;
use tokio_tungstenite::connect_async;
use tokio_tungstenite::tungstenite::Message;

/// Clients connecting at once (below the gateway's per-address cap on connections that
/// have not sent `connect` yet).
const HANDSHAKES_IN_FLIGHT: usize = 8;

/// More sessions than a connection's watch list holds (the gateway's `MAX_WATCHED`, 64).
const PAST_THE_WATCH_LIST: usize = 65;

/// Waits for the response `id` (the final one of an `agent` call with `want_final`),
/// counting the event frames in between into `events`.
async fn response(
    ws: &mut Socket,
    id: &str,
    want_final: bool,
    events: &mut u64,
) -> Result<Value, String> {
    loop {
        let late = || format!("no response to {id} within 60 s");
        let frame = next_frame(ws, Duration::from_secs(60), late).await?;
        let Message::Text(text) = frame else { continue };
        // Only responses matter here.
        if text.starts_with(r#"{"type":"event""#) {
            *events += 1;
            continue;
        }
        let value: Value = serde_json::from_str(&text).map_err(|e| e.to_string())?;
        if value["type"] == "res" && value["id"] == id {
            if value["ok"] != true {
                return Err(format!("{id} failed: {}", value["error"]));
            }
            if !want_final || value["payload"]["status"] != "accepted" {
                return Ok(value);
            }
        }
    }
}

async fn client(
    url: String,
    token: String,
    n: usize,
    turns: usize,
    turns_per_session: usize,
    handshakes: Arc<Semaphore>,
    all_events: bool,
) -> Result<(Vec<f64>, u64), String> {
    let handshake = handshakes.acquire().await.map_err(|e| e.to_string())?;
    let (mut ws, _) = connect_async(&url).await.map_err(|e| e.to_string())?;
    let mut events = 0;
    send_connect(&mut ws, &token).await?;
    response(&mut ws, "c", false, &mut events).await?;
    drop(handshake);
    if all_events {
        for k in 0..PAST_THE_WATCH_LIST {
            let id = format!("{n}-watch-{k}");
            let req = json!({"type": "req", "id": id, "method": "chat.history", "params": {
                "sessionKey": format!("agent:main:unused-{k}"), "limit": 1}});
            send(&mut ws, &req).await?;
            response(&mut ws, &id, false, &mut events).await?;
        }
    }
    events = 0;
    let mut latencies = Vec::with_capacity(turns);
    for i in 0..turns {
        if i > 0 && i % turns_per_session == 0 {
            let id = format!("{n}-{i}-reset");
            let req = json!({"type": "req", "id": id, "method": "sessions.reset", "params": {
                "key": format!("agent:main:load-{n}")}});
            send(&mut ws, &req).await?;
            response(&mut ws, &id, false, &mut events).await?;
        }
        let id = format!("{n}-{i}");
        let req = json!({"type": "req", "id": id, "method": "agent", "params": {
            "message": format!("turn {i}"), "idempotencyKey": format!("load-{n}-{i}-{}", std::process::id()),
            "sessionKey": format!("agent:main:load-{n}")}});
        let start = Instant::now();
        send(&mut ws, &req).await?;
        response(&mut ws, &id, true, &mut events).await?;
        latencies.push(start.elapsed().as_secs_f64() * 1000.0);
    }
    Ok((latencies, events))
}

#[tokio::main]
async fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (url, token, clients, turns, per_session) = match args.as_slice() {
        [url, token, clients, turns] => (url, token, clients, turns, "20"),
        [url, token, clients, turns, k] => (url, token, clients, turns, k.as_str()),
        _ => {
            eprintln!("usage: ws_load URL TOKEN CLIENTS TURNS_PER_CLIENT [TURNS_PER_SESSION]");
            std::process::exit(2);
        }
    };
    let (clients, turns, per_session): (usize, usize, usize) =
        match (clients.parse(), turns.parse(), per_session.parse()) {
            (Ok(c), Ok(t), Ok(k)) if k > 0 => (c, t, k),
            _ => {
                eprintln!("CLIENTS, TURNS_PER_CLIENT and TURNS_PER_SESSION are positive numbers");
                std::process::exit(2);
            }
        };
    let all_events = std::env::var_os("WS_LOAD_ALL_EVENTS").is_some_and(|v| v == "1");
    let start = Instant::now();
    let handshakes = Arc::new(Semaphore::new(HANDSHAKES_IN_FLIGHT));
    let tasks: Vec<_> = (0..clients)
        .map(|n| {
            tokio::spawn(client(
                url.clone(),
                token.clone(),
                n,
                turns,
                per_session,
                Arc::clone(&handshakes),
                all_events,
            ))
        })
        .collect();
    let mut latencies = Vec::new();
    let mut events = 0;
    for task in tasks {
        match task.await {
            Ok(Ok((l, e))) => {
                latencies.extend(l);
                events += e;
            }
            Ok(Err(e)) => {
                eprintln!("ws_load: {e}");
                std::process::exit(1);
            }
            Err(e) => {
                eprintln!("ws_load: a client task failed: {e}");
                std::process::exit(1);
            }
        }
    }
    let seconds = start.elapsed().as_secs_f64();
    latencies.sort_by(f64::total_cmp);
    let out = json!({
        "clients": clients, "turns": latencies.len(), "turnsPerSession": per_session,
        "seconds": seconds,
        "turnsPerSecond": latencies.len() as f64 / seconds,
        "latencyMs": {"p50": percentile(&latencies, 50.0), "p99": percentile(&latencies, 99.0)},
        "eventFramesPerTurn": events as f64 / latencies.len().max(1) as f64,
        "allEvents": all_events,
    });
    println!("{out}");
}

//! The accept loop's limits against a real server on 127.0.0.1: the header-read timeout
//! (`ServeOptions::header_read_timeout`, 1 s here) closes connections that never finish a
//! request and kept-alive ones left idle, the connection cap closes connections past it at
//! once, WebSockets keep working, and shutdown still ends `serve` once connections are done.

use crate::support;

use std::time::Duration;

use pincer_testkit::Scenario;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

const TOKEN: &str = "limits-test-token";

/// Reads until the server closes; what it sent. Fails if it stays open 20 s (the test's
/// own bound, far past the 1 s timeout).
async fn until_closed(stream: &mut TcpStream) -> String {
    let mut got = Vec::new();
    let read = tokio::time::timeout(Duration::from_secs(20), async {
        let mut buf = [0u8; 1024];
        loop {
            match stream.read(&mut buf).await {
                Ok(0) => return,
                Ok(n) => got.extend_from_slice(&buf[..n]),
                Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => return,
                Err(e) => panic!("{e}"),
            }
        }
    })
    .await;
    assert!(read.is_ok(), "the server kept the connection open");
    String::from_utf8(got).unwrap()
}

#[tokio::test]
async fn requests_must_arrive_within_the_header_read_timeout() {
    let server = support::start_server_with(Scenario::new(), TOKEN, |o| {
        o.header_read_timeout = Duration::from_secs(1);
    })
    .await;
    let mut half = TcpStream::connect(server.addr).await.unwrap();
    half.write_all(b"GET /readyz HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        .await
        .unwrap();
    let mut silent = TcpStream::connect(server.addr).await.unwrap();
    let mut kept = TcpStream::connect(server.addr).await.unwrap();
    kept.write_all(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        .await
        .unwrap();
    assert_eq!(until_closed(&mut half).await, "");
    assert_eq!(until_closed(&mut silent).await, "");
    let answer = until_closed(&mut kept).await;
    assert!(answer.starts_with("HTTP/1.1 200 OK\r\n"), "{answer}");
    assert!(answer.ends_with("\r\n\r\nok"), "{answer}");
    // A WebSocket is past the header read: it stays open and works.
    let mut client = support::client::Client::connect(&server, TOKEN).await;
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let health = client.call("health", serde_json::json!({})).await;
    assert_eq!(health["ok"], true, "{health}");
}

#[tokio::test]
async fn connections_past_the_cap_are_closed() {
    let server = support::start_server_with(Scenario::new(), TOKEN, |o| {
        o.max_connections = 2;
    })
    .await;
    let mut first = TcpStream::connect(server.addr).await.unwrap();
    let mut ws = support::client::Client::connect(&server, TOKEN).await;
    let mut third = TcpStream::connect(server.addr).await.unwrap();
    let _ = third
        .write_all(b"GET /readyz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        .await;
    assert_eq!(until_closed(&mut third).await, "", "served past the cap");
    // The WebSocket holds its slot for its whole life; the plain connection frees its own.
    let health = ws.call("health", serde_json::json!({})).await;
    assert_eq!(health["ok"], true, "{health}");
    first
        .write_all(b"GET /readyz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        .await
        .unwrap();
    assert!(until_closed(&mut first).await.ends_with("ready"));
    let mut again = loop {
        let mut stream = TcpStream::connect(server.addr).await.unwrap();
        stream
            .write_all(b"GET /readyz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
            .await
            .unwrap();
        let answer = until_closed(&mut stream).await;
        if !answer.is_empty() {
            break answer;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    assert!(again.ends_with("ready"), "{again}");
    again.clear();
}

#[tokio::test]
async fn shutdown_ends_serve_with_idle_connections_open() {
    let server = support::start_server(Scenario::new(), TOKEN).await;
    let _silent = TcpStream::connect(server.addr).await.unwrap();
    let mut kept = TcpStream::connect(server.addr).await.unwrap();
    kept.write_all(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        .await
        .unwrap();
    let mut buf = [0u8; 256];
    let n = kept.read(&mut buf).await.unwrap();
    assert!(buf[..n].starts_with(b"HTTP/1.1 200 OK"));
    server.stop.cancel();
    tokio::time::timeout(Duration::from_secs(20), server.task)
        .await
        .expect("serve returned")
        .unwrap();
    assert_eq!(until_closed(&mut kept).await, "");
}

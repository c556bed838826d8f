//! Finding 4: the HTTP server's limits. Connections that never finish their headers, or sit
//! idle after a request, are closed by the header-read timeout (`gateway.http.
//! headerReadTimeoutMs`, shortened here); connections past `gateway.http.maxConnections`
//! are closed at once; the soft open-files limit is raised to the hard one, so a burst of
//! half-open connections does not leave `/readyz` without a file descriptor.

use std::io::{ErrorKind, Read, Write};
use std::net::TcpStream;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use pincer_testkit::{Match, Reply, Rule, Scenario};

use crate::common::gateway::Foreground;
use crate::common::{Home, mock};

/// A home with the mock model and `gateway.http` set to `http`.
async fn home_with(http: &str) -> (Home, pincer_testkit::MockLlm) {
    let llm = mock(Scenario::new().rule(Rule::when(Match::any()).reply(Reply::text("hi")))).await;
    let home = Home::new();
    home.use_mock(
        &llm,
        &format!("agents: {{ defaults: {{ model: \"mock/primary\" }} }},\n  gateway: {{ http: {{ {http} }} }},"),
    );
    (home, llm)
}

/// `pincer gateway --auth none --port 0` started with a soft open-files limit of
/// `soft_files` (through util-linux's `prlimit`, which execs it: same pid).
fn start_with_soft_files(home: &Home, soft_files: u32) -> Foreground {
    let base = home.command(&["gateway", "--auth", "none", "--port", "0"]);
    let mut cmd = Command::new("prlimit");
    cmd.arg(format!("--nofile={soft_files}:"))
        .arg("--")
        .arg(base.get_program())
        .args(base.get_args())
        .env_clear();
    for (key, value) in base.get_envs() {
        if let Some(value) = value {
            cmd.env(key, value);
        }
    }
    cmd.stdin(Stdio::null());
    Foreground::spawn(home, cmd)
}

/// The soft and hard "Max open files" of a process.
fn open_files_limits(pid: u32) -> (String, String) {
    let limits = std::fs::read_to_string(format!("/proc/{pid}/limits")).unwrap();
    let line = limits
        .lines()
        .find(|l| l.starts_with("Max open files"))
        .unwrap();
    let mut fields = line["Max open files".len()..].split_whitespace();
    (
        fields.next().unwrap().to_owned(),
        fields.next().unwrap().to_owned(),
    )
}

/// A connection that sent the start of a request and stopped.
fn half_open(port: u16) -> TcpStream {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
    stream
        .write_all(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        .unwrap();
    stream
}

/// Reads until the server closes the connection; what it sent. Fails if it stays open
/// for 30 s (the client's own bound, far past the timeouts under test).
fn read_until_closed(stream: &mut TcpStream) -> Vec<u8> {
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    let mut got = Vec::new();
    let mut buf = [0u8; 1024];
    loop {
        match stream.read(&mut buf) {
            Ok(0) => return got,
            Ok(n) => got.extend_from_slice(&buf[..n]),
            // Closed with our unread bytes still queued: the kernel resets instead.
            Err(e) if e.kind() == ErrorKind::ConnectionReset => return got,
            Err(e) => panic!(
                "the server kept the connection open ({e}); got {:?}",
                String::from_utf8_lossy(&got)
            ),
        }
    }
}

/// The status code of `GET /readyz`, `None` when the gateway does not answer.
fn readyz(port: u16) -> Option<u16> {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).ok()?;
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .ok()?;
    stream
        .write_all(b"GET /readyz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        .ok()?;
    let mut response = String::new();
    stream.read_to_string(&mut response).ok()?;
    response.split(' ').nth(1)?.parse().ok()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn half_open_connections_are_closed_and_readyz_keeps_answering() {
    let (home, _llm) = home_with("headerReadTimeoutMs: 1000").await;
    let gateway = start_with_soft_files(&home, 256);
    let (soft, hard) = open_files_limits(gateway.child.id());
    assert_eq!(soft, hard, "the soft open-files limit was not raised");
    let port = gateway.port;
    let mut idle: Vec<TcpStream> = (0..300).map(|_| half_open(port)).collect();
    assert_eq!(readyz(port), Some(200), "{}", gateway.stderr());
    for stream in &mut idle {
        read_until_closed(stream);
    }
    assert_eq!(readyz(port), Some(200));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_idle_kept_alive_connection_is_closed() {
    let (home, _llm) = home_with("headerReadTimeoutMs: 1000").await;
    let gateway = Foreground::start(&home, &["gateway", "--auth", "none", "--port", "0"]);
    let mut stream = TcpStream::connect(("127.0.0.1", gateway.port)).unwrap();
    stream
        .write_all(b"GET /readyz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        .unwrap();
    let got = String::from_utf8(read_until_closed(&mut stream)).unwrap();
    assert!(got.starts_with("HTTP/1.1 200 OK\r\n"), "{got}");
    assert!(
        got.ends_with("\r\n\r\nready"),
        "one response, then closed: {got}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connections_past_the_cap_are_closed_at_once() {
    let (home, _llm) = home_with("headerReadTimeoutMs: 60000, maxConnections: 4").await;
    let gateway = Foreground::start(&home, &["gateway", "--auth", "none", "--port", "0"]);
    let port = gateway.port;
    let mut open: Vec<TcpStream> = (0..4).map(|_| half_open(port)).collect();
    let mut extra = TcpStream::connect(("127.0.0.1", port)).unwrap();
    let _ = extra.write_all(b"GET /readyz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
    assert_eq!(
        read_until_closed(&mut extra),
        b"",
        "the fifth connection was served"
    );
    // A slot frees when a connection ends.
    drop(open.pop());
    let deadline = Instant::now() + Duration::from_secs(20);
    while readyz(port) != Some(200) {
        assert!(
            Instant::now() < deadline,
            "no slot freed: {}",
            gateway.stderr()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    gateway.assert_stderr_has(&["too many open connections; closing new ones"]);
}

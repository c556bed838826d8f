//! What the gateway tests share: a foreground gateway and a daemon that are killed when the
//! test ends however it ends, HTTP and WebSocket clients, and readers of the home's state.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::PathBuf;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use futures_util::{SinkExt as _, StreamExt as _};
use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;
use serde_json::{Value, json};
use tokio_tungstenite::tungstenite::Message as Ws;

use super::Home;

/// A foreground `pincer gateway …`, killed on drop if still running.
pub struct Foreground {
    pub child: Child,
    pub port: u16,
    /// What it printed before the "listening" line.
    pub preamble: Vec<String>,
    pub stderr_path: PathBuf,
}

impl Foreground {
    pub fn start(home: &Home, args: &[&str]) -> Self {
        Self::spawn(home, home.command(args))
    }

    /// Spawns `command` (a gateway, or something that execs one) and waits for it to listen.
    pub fn spawn(home: &Home, mut command: Command) -> Self {
        let stderr_path = home.dir.path().join(format!("stderr-{}", rand_suffix()));
        let child = command
            .stdout(Stdio::piped())
            .stderr(std::fs::File::create(&stderr_path).unwrap())
            .spawn()
            .unwrap();
        // Owned by the guard from here on: a failed assertion below still kills it.
        let mut gateway = Self {
            child,
            port: 0,
            preamble: Vec::new(),
            stderr_path,
        };
        let mut reader = BufReader::new(gateway.child.stdout.take().unwrap());
        loop {
            let mut line = String::new();
            if reader.read_line(&mut line).unwrap() == 0 {
                panic!(
                    "gateway exited before listening; stdout {:?}; stderr:\n{}",
                    gateway.preamble,
                    gateway.stderr()
                );
            }
            if let Some(url) = line.trim().strip_prefix("gateway listening on ") {
                gateway.port = url
                    .trim_start_matches("http://127.0.0.1:")
                    .trim_end_matches('/')
                    .parse()
                    .unwrap_or_else(|_| panic!("unexpected url {url:?}"));
                return gateway;
            }
            gateway.preamble.push(line.trim_end().to_owned());
        }
    }

    pub fn signal(&self, signal: Signal) {
        kill(Pid::from_raw(self.child.id() as i32), signal).unwrap();
    }

    /// Waits (bounded) for the process to exit.
    pub fn wait(&mut self) -> ExitStatus {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status;
            }
            assert!(Instant::now() < deadline, "the gateway did not exit");
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    pub fn stderr(&self) -> String {
        std::fs::read_to_string(&self.stderr_path).unwrap()
    }

    /// Asserts that the gateway said each of `parts` on stderr.
    pub fn assert_stderr_has(&self, parts: &[&str]) {
        super::assert_contains(&self.stderr(), parts);
    }
}

impl Drop for Foreground {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Kills the daemon named by the home's service file when the test ends, however it ends.
pub struct DaemonGuard(pub PathBuf);

impl DaemonGuard {
    pub fn new(home: &Home) -> Self {
        Self(home.path().join("service/gateway.json"))
    }
}

impl Drop for DaemonGuard {
    fn drop(&mut self) {
        if let Ok(text) = std::fs::read_to_string(&self.0)
            && let Ok(state) = serde_json::from_str::<Value>(&text)
            && let Some(pid) = state["pid"].as_i64()
            && pid > 0
        {
            let _ = kill(Pid::from_raw(pid as i32), Signal::SIGKILL);
        }
    }
}

pub fn rand_suffix() -> u128 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos()
}

/// The status line of `GET path` on 127.0.0.1:port, or `None` if nothing answers.
pub fn http_status(port: u16, path: &str) -> Option<String> {
    http_status_with(port, path, "")
}

/// [`http_status`] with extra header lines (each ending in `\r\n`).
pub fn http_status_with(port: u16, path: &str, headers: &str) -> Option<String> {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).ok()?;
    stream.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n{headers}Connection: close\r\n\r\n"
    )
    .ok()?;
    let mut response = String::new();
    stream.read_to_string(&mut response).ok()?;
    response.lines().next().map(str::to_owned)
}

/// Alive and not a zombie (an exited daemon may never be reaped by its adoptive parent).
pub fn alive(pid: u32) -> bool {
    if kill(Pid::from_raw(pid as i32), None).is_err() {
        return false;
    }
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => {
            let state = stat.rsplit_once(')').unwrap().1.trim_start();
            !state.starts_with('Z') && !state.starts_with('X')
        }
        Err(_) => false,
    }
}

pub fn status_json(home: &Home) -> Value {
    super::json_of(&home.run(&["gateway", "status"]))
}

pub fn read_token(home: &Home) -> String {
    std::fs::read_to_string(home.path().join("gateway-token"))
        .unwrap()
        .trim()
        .to_owned()
}

pub fn is_token(value: &str) -> bool {
    value.len() == 64 && value.chars().all(|c| c.is_ascii_hexdigit())
}

/// A home whose agents answer from `llm` and whose gateway listens on a free port with
/// `token`; returns the home and the port.
pub fn gateway_home(llm: &pincer_testkit::MockLlm, token: &str) -> (Home, u16) {
    gateway_home_with(llm, token, "")
}

/// [`gateway_home`] with more fields of `agents.defaults`, e.g. `heartbeat: {every: "0m"},`.
pub fn gateway_home_with(
    llm: &pincer_testkit::MockLlm,
    token: &str,
    defaults: &str,
) -> (Home, u16) {
    gateway_home_in(Home::new(), llm, token, defaults, "")
}

/// [`gateway_home_with`] in `home` (which may carry environment knobs), with `more`
/// top-level config after the gateway's, e.g. `tools: {…},` or `channels: {…},`.
pub fn gateway_home_in(
    home: Home,
    llm: &pincer_testkit::MockLlm,
    token: &str,
    defaults: &str,
    more: &str,
) -> (Home, u16) {
    let port = free_port();
    home.use_mock(
        llm,
        &format!(
            "agents: {{ defaults: {{ model: \"mock/primary\", {defaults} }} }},\n  \
             gateway: {{ port: {port}, auth: {{ token: \"{token}\" }} }},\n  \
             {more}"
        ),
    );
    (home, port)
}

/// Runs `home`'s gateway (`gateway run`, listening on `port`) and connects a client with
/// `token`.
pub async fn run_and_connect(home: &Home, port: u16, token: &str) -> (Foreground, WsClient) {
    let gateway = Foreground::start(home, &["gateway", "run"]);
    let client = WsClient::connect(port, token).await;
    (gateway, client)
}

pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

pub struct WsClient {
    ws: tokio_tungstenite::WebSocketStream<
        tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>,
    >,
    next: u64,
}

impl WsClient {
    /// Connects and completes the handshake with `token`.
    pub async fn connect(port: u16, token: &str) -> Self {
        Self::connect_with_caps(port, token, &[]).await
    }

    /// [`WsClient::connect`] declaring `caps` (e.g. `extension-ui`).
    #[allow(dead_code)]
    pub async fn connect_with_caps(port: u16, token: &str, caps: &[&str]) -> Self {
        Self::connect_as(port, token, caps, &["operator.read", "operator.write"]).await
    }

    /// [`WsClient::connect`] declaring `caps` and asking for `scopes`.
    #[allow(dead_code)]
    pub async fn connect_as(port: u16, token: &str, caps: &[&str], scopes: &[&str]) -> Self {
        let (ws, _) = tokio_tungstenite::connect_async(format!("ws://127.0.0.1:{port}/"))
            .await
            .unwrap();
        let mut client = Self { ws, next: 0 };
        let challenge = client.frame().await.unwrap();
        assert_eq!(challenge["event"], "connect.challenge", "{challenge}");
        let hello = client
            .call(
                "connect",
                json!({"minProtocol": 3, "maxProtocol": 4,
                       "client": {"id": "test", "version": "1", "platform": "linux", "mode": "test"},
                       "auth": {"token": token}, "role": "operator", "caps": caps,
                       "scopes": scopes}),
            )
            .await;
        assert_eq!(hello["ok"], true, "{hello}");
        client
    }

    /// The next text frame as JSON; `None` once the connection is closed.
    pub async fn frame(&mut self) -> Option<Value> {
        loop {
            match tokio::time::timeout(Duration::from_secs(20), self.ws.next())
                .await
                .expect("a frame within 20 s")?
            {
                Ok(Ws::Text(t)) => return Some(serde_json::from_str(&t).unwrap()),
                Ok(Ws::Close(_)) | Err(_) => return None,
                Ok(_) => {}
            }
        }
    }

    /// Sends a request without waiting for its response (which then comes as a frame
    /// among the events); returns its id.
    #[allow(dead_code)]
    pub async fn send_request(&mut self, method: &str, params: Value) -> String {
        self.next += 1;
        let id = format!("{}:t", self.next);
        let frame = json!({"type": "req", "id": id, "method": method, "params": params});
        self.ws.send(Ws::text(frame.to_string())).await.unwrap();
        id
    }

    /// Sends a request and returns its response, skipping events.
    pub async fn call(&mut self, method: &str, params: Value) -> Value {
        self.next += 1;
        let id = format!("{}:t", self.next);
        let frame = json!({"type": "req", "id": id, "method": method, "params": params});
        self.ws.send(Ws::text(frame.to_string())).await.unwrap();
        loop {
            let frame = self.frame().await.expect("a response");
            if frame["type"] == "res" && frame["id"] == id {
                return frame;
            }
        }
    }

    /// `chat.send` of `message` to session `key` as run `run_id`; asserts that the run
    /// started and returns the response.
    pub async fn start_chat(&mut self, key: &str, message: &str, run_id: &str) -> Value {
        let sent = self
            .call(
                "chat.send",
                json!({"sessionKey": key, "message": message, "idempotencyKey": run_id}),
            )
            .await;
        assert_eq!(sent["payload"]["status"], "started", "{sent}");
        sent
    }

    /// [`WsClient::start_chat`], then reads frames until the run's `chat` event in `state`;
    /// returns it.
    pub async fn chat_until(
        &mut self,
        key: &str,
        message: &str,
        run_id: &str,
        state: &str,
    ) -> Value {
        self.start_chat(key, message, run_id).await;
        self.chat_event(run_id, state).await
    }

    /// The `chat.abort` response for run `run_id` of session `key`.
    pub async fn abort_chat(&mut self, key: &str, run_id: &str) -> Value {
        self.call("chat.abort", json!({"sessionKey": key, "runId": run_id}))
            .await
    }

    /// The `agent.wait` response for run `run_id`, waiting at most `timeout_ms`.
    pub async fn wait_run(&mut self, run_id: &str, timeout_ms: u64) -> Value {
        self.call(
            "agent.wait",
            json!({"runId": run_id, "timeoutMs": timeout_ms}),
        )
        .await
    }

    /// The `chat.history` response for session `key`.
    pub async fn history(&mut self, key: &str) -> Value {
        self.call("chat.history", json!({"sessionKey": key})).await
    }

    /// Reads frames until an event named `name`; returns it.
    pub async fn event(&mut self, name: &str) -> Value {
        loop {
            let frame = self
                .frame()
                .await
                .unwrap_or_else(|| panic!("the connection closed before a {name} event"));
            if frame["event"] == name {
                return frame;
            }
        }
    }

    /// Reads frames until a `chat` event of `run_id` in `state`; returns it.
    pub async fn chat_event(&mut self, run_id: &str, state: &str) -> Value {
        loop {
            let frame = self.frame().await.expect("a chat event");
            let payload = &frame["payload"];
            if frame["event"] == "chat" && payload["runId"] == run_id {
                if payload["state"] == state {
                    return frame;
                }
                assert!(payload["state"] == "delta", "expected {state}, got {frame}");
            }
        }
    }
}

/// A reply of `words` words streamed slowly (5 bytes a chunk, 50 ms apart), so that the run
/// is still going while the test acts on it.
pub fn long_story(words: usize) -> pincer_testkit::Reply {
    let story: String = (0..words).map(|i| format!("w{i} ")).collect();
    pincer_testkit::Reply::text(story)
        .with_chunk_size(5)
        .with_delay_ms(50)
}

/// The text of a message as `chat.history` returns it.
pub fn text_of(message: &Value) -> String {
    message["content"]
        .as_array()
        .map(|parts| {
            parts
                .iter()
                .filter_map(|p| p["text"].as_str())
                .collect::<String>()
        })
        .or_else(|| message["content"].as_str().map(str::to_owned))
        .unwrap_or_default()
}

/// Every `.jsonl` transcript under the home's sessions directory, checked line by line:
/// each line complete (newline-terminated) and a JSON object. Returns the parsed entries.
pub fn transcript_entries(home: &Home) -> Vec<Value> {
    let dir = home.sessions_dir();
    let files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .collect();
    assert_eq!(files.len(), 1, "{files:?}");
    let text = std::fs::read_to_string(&files[0]).unwrap();
    assert!(text.ends_with('\n'), "a torn last line: {text:?}");
    text.lines()
        .map(|line| {
            let entry: Value = serde_json::from_str(line)
                .unwrap_or_else(|e| panic!("a corrupt line ({e}): {line:?}"));
            assert!(entry.is_object(), "{line}");
            entry
        })
        .collect()
}

//! A scripted fake RPC worker (pi's `--mode rpc` protocol) for testing RPC clients, run as
//! the `pincer-mock-rpc` binary: `pincer-mock-rpc SCRIPT.json [LOG]`.
//!
//! Every stdin line is appended to LOG (when given) before it is handled, so a test can
//! assert exactly what the client wrote. A command is answered by the first rule whose `on`
//! is its `type` (or `"*"`); without one, `{"id", "type":"response", "command",
//! "success":true}`. A line that is not a JSON object gets pi's parse error. EOF on stdin
//! exits 0, as pi does.
//!
//! Script: `{"rules": [Rule...]}`, a rule being (all but `on` optional)
//! ```json
//! {"on": "get_state", "once": false, "stderr": "text written to stderr first",
//!  "pre": ["garbage" | "huge_line"], "before": [event...], "delay_ms": 0,
//!  "respond": {"success": true, "data": {}, "error": "...", "no_id": false},
//!  "silent": false, "events": [event...],
//!  "then": "exit:<code>" | "hang" | "garbage" | "huge_line" | "close_stdout"}
//! ```
//! Order: `stderr`, `pre` actions, `before` events, wait `delay_ms` (in a thread: later
//! commands are read and answered meanwhile), the response (unless `silent`), `events`, then
//! `then`. `garbage` writes three non-protocol lines (not JSON, not UTF-8, no `type`);
//! `huge_line` writes one line of [`HUGE_LINE_BYTES`]; `hang` stops reading and answering for
//! good; `close_stdout` points stdout at /dev/null and carries on; `exit:N` exits with N.
//!
//! With [`TRACE_ENV`] naming a file, each worker also appends to it, as JSON lines, how it
//! was started (`{"pid", "argv", "env"}`: its arguments after the program and its `PI_*`
//! environment) and then every command it receives (`{"pid", "received"}`), so a test of
//! several workers sharing one script can tell them apart.

use std::fs::{File, OpenOptions};
use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::time::Duration;

use serde::Deserialize;
use serde_json::{Map, Value, json};

/// The environment variable naming the trace file (see the module doc).
pub const TRACE_ENV: &str = "PINCER_MOCK_RPC_TRACE";

/// Length of the line `huge_line` writes: over the client's 16 MiB limit.
pub const HUGE_LINE_BYTES: usize = 20 * 1024 * 1024;

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MockRpcScript {
    #[serde(default)]
    pub rules: Vec<MockRpcRule>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MockRpcRule {
    pub on: String,
    #[serde(default)]
    pub once: bool,
    pub stderr: Option<String>,
    #[serde(default)]
    pub pre: Vec<String>,
    #[serde(default)]
    pub before: Vec<Value>,
    #[serde(default)]
    pub delay_ms: u64,
    pub respond: Option<MockRpcRespond>,
    #[serde(default)]
    pub silent: bool,
    #[serde(default)]
    pub events: Vec<Value>,
    pub then: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MockRpcRespond {
    #[serde(default = "yes")]
    pub success: bool,
    pub data: Option<Value>,
    pub error: Option<String>,
    /// Answer without the command's id (as pi does for unknown commands).
    #[serde(default)]
    pub no_id: bool,
}

fn yes() -> bool {
    true
}

type Out = Arc<Mutex<std::io::Stdout>>;

/// Runs the worker on this process's stdin/stdout; returns the exit code (`exit:N` and
/// a failed stdout exit the process directly).
pub fn run(script: MockRpcScript, log: Option<&Path>) -> i32 {
    let mut log = match log.map(|p| OpenOptions::new().create(true).append(true).open(p)) {
        Some(Ok(file)) => Some(file),
        Some(Err(e)) => {
            eprintln!("pincer-mock-rpc: cannot open the log: {e}");
            return 2;
        }
        None => None,
    };
    let out: Out = Arc::new(Mutex::new(std::io::stdout()));
    let mut trace = Trace::open();
    let mut rules = script.rules;
    let stdin = std::io::stdin();
    let mut line = Vec::new();
    loop {
        line.clear();
        match stdin.lock().read_until(b'\n', &mut line) {
            Ok(0) | Err(_) => return 0,
            Ok(_) => {}
        }
        if let Some(file) = log.as_mut() {
            let _ = file.write_all(&line).and_then(|()| file.flush());
        }
        let text = String::from_utf8_lossy(&line);
        let text = text.trim_end_matches('\n').trim_end_matches('\r');
        trace.received(text);
        let command = match serde_json::from_str::<Value>(text) {
            Ok(Value::Object(obj)) => obj,
            _ => {
                write_lines(
                    &out,
                    &[
                        json!({"type":"response","command":"parse","success":false,"error":"Failed to parse command"}),
                    ],
                );
                continue;
            }
        };
        let ty = command
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        let found = rules.iter().position(|r| r.on == ty || r.on == "*");
        let rule = match found {
            Some(i) if rules[i].once => Some(rules.remove(i)),
            Some(i) => Some(rules[i].clone()),
            None => None,
        };
        let Some(rule) = rule else {
            write_lines(&out, &[response(&command, &ty, None)]);
            continue;
        };
        if let Some(text) = &rule.stderr {
            let mut err = std::io::stderr();
            let _ = err.write_all(text.as_bytes()).and_then(|()| err.flush());
        }
        for action in &rule.pre {
            act(&out, action);
        }
        write_lines(&out, &rule.before);
        let hang = rule.then.as_deref() == Some("hang");
        if rule.delay_ms > 0 && !hang {
            let out = out.clone();
            std::thread::spawn(move || {
                std::thread::sleep(Duration::from_millis(rule.delay_ms));
                answer(&out, &command, &ty, &rule);
            });
        } else {
            answer(&out, &command, &ty, &rule);
        }
    }
}

/// The trace file of [`TRACE_ENV`], if one is named.
struct Trace(Option<File>);

impl Trace {
    fn open() -> Self {
        let Some(path) = std::env::var_os(TRACE_ENV) else {
            return Self(None);
        };
        let file = OpenOptions::new().create(true).append(true).open(path);
        let mut trace = Self(file.ok());
        let env: Map<String, Value> = std::env::vars()
            .filter(|(k, _)| k.starts_with("PI_"))
            .map(|(k, v)| (k, Value::String(v)))
            .collect();
        let argv: Vec<String> = std::env::args().skip(1).collect();
        trace.write(json!({"pid": std::process::id(), "argv": argv, "env": env}));
        trace
    }

    fn received(&mut self, line: &str) {
        let received =
            serde_json::from_str::<Value>(line).unwrap_or_else(|_| Value::String(line.into()));
        self.write(json!({"pid": std::process::id(), "received": received}));
    }

    fn write(&mut self, value: Value) {
        if let Some(file) = self.0.as_mut() {
            // One write per line: workers append to the same file at once.
            let _ = file.write_all(format!("{value}\n").as_bytes());
        }
    }
}

fn answer(out: &Out, command: &Map<String, Value>, ty: &str, rule: &MockRpcRule) {
    if !rule.silent {
        write_lines(out, &[response(command, ty, rule.respond.as_ref())]);
    }
    write_lines(out, &rule.events);
    if let Some(then) = &rule.then {
        act(out, then);
    }
}

fn response(command: &Map<String, Value>, ty: &str, respond: Option<&MockRpcRespond>) -> Value {
    let mut r = Map::new();
    if let Some(id) = command
        .get("id")
        .filter(|_| !respond.is_some_and(|r| r.no_id))
    {
        r.insert("id".into(), id.clone());
    }
    r.insert("type".into(), "response".into());
    r.insert("command".into(), ty.into());
    let success = respond.is_none_or(|r| r.success);
    r.insert("success".into(), success.into());
    if let Some(respond) = respond {
        if let Some(data) = &respond.data {
            r.insert("data".into(), data.clone());
        }
        if let Some(error) = &respond.error {
            r.insert("error".into(), error.clone().into());
        }
    }
    Value::Object(r)
}

fn write_raw(out: &Out, bytes: &[u8]) {
    let mut out = out.lock().unwrap_or_else(PoisonError::into_inner);
    if out.write_all(bytes).and_then(|()| out.flush()).is_err() {
        // The client is gone; so is the point of running.
        std::process::exit(0);
    }
}

fn write_lines(out: &Out, values: &[Value]) {
    if values.is_empty() {
        return;
    }
    let mut text = String::new();
    for v in values {
        text.push_str(&v.to_string());
        text.push('\n');
    }
    write_raw(out, text.as_bytes());
}

fn act(out: &Out, action: &str) {
    match action {
        "garbage" => write_raw(
            out,
            b"this is not JSON\n\xff\xfe not UTF-8\n{\"no\":\"type\"}\n",
        ),
        "huge_line" => {
            let mut line = vec![b'x'; HUGE_LINE_BYTES];
            line.push(b'\n');
            write_raw(out, &line);
        }
        "hang" => loop {
            std::thread::park();
        },
        "close_stdout" => {
            let guard = out.lock().unwrap_or_else(PoisonError::into_inner);
            let null = OpenOptions::new().write(true).open("/dev/null");
            match null.map(|f| nix::unistd::dup2_stdout(&f)) {
                Ok(Ok(())) => {}
                _ => std::process::exit(4),
            }
            drop(guard);
        }
        other => match other.strip_prefix("exit:").map(str::parse::<i32>) {
            Some(Ok(code)) => {
                let _ = std::io::stderr().flush();
                std::process::exit(code);
            }
            _ => eprintln!("pincer-mock-rpc: unknown action {other:?}"),
        },
    }
}

/// Reads a script file.
pub fn load_script(path: &Path) -> Result<MockRpcScript, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))
}

/// Path of the `pincer-mock-rpc` binary for tests of other crates, which cannot use
/// `CARGO_BIN_EXE_*` for a dependency's binary. It sits next to the test executable's
/// `deps/` directory; when it is missing or older than its sources (a `cargo test -p` of
/// another crate does not build it), it is built once per process with the cargo that runs
/// the tests.
pub fn mock_rpc_path() -> Result<PathBuf, String> {
    static PATH: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    PATH.get_or_init(locate_or_build).clone()
}

fn locate_or_build() -> Result<PathBuf, String> {
    let exe = std::env::current_exe().map_err(|e| format!("current_exe: {e}"))?;
    let mut dir = exe.parent().ok_or("test executable has no directory")?;
    if dir.file_name().is_some_and(|n| n == "deps") {
        dir = dir.parent().ok_or("deps/ has no parent")?;
    }
    let bin = dir.join("pincer-mock-rpc");
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let sources = [
        manifest.join("src/mock_rpc.rs"),
        manifest.join("src/bin/pincer-mock-rpc.rs"),
        manifest.join("Cargo.toml"),
    ];
    let modified = |p: &Path| std::fs::metadata(p).and_then(|m| m.modified()).ok();
    let fresh = modified(&bin).is_some_and(|built| {
        sources
            .iter()
            .all(|s| modified(s).is_none_or(|changed| changed <= built))
    });
    if fresh {
        return Ok(bin);
    }
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| env!("CARGO").into());
    let mut cmd = std::process::Command::new(cargo);
    cmd.args([
        "build",
        "-q",
        "-p",
        "pincer-testkit",
        "--bin",
        "pincer-mock-rpc",
    ])
    .arg("--manifest-path")
    .arg(manifest.join("Cargo.toml"));
    // `target/<profile>/`: build into the same target directory and profile.
    let profile = dir.file_name().and_then(|n| n.to_str()).unwrap_or("debug");
    if let Some(target) = dir.parent() {
        cmd.arg("--target-dir").arg(target);
        match profile {
            "debug" => {}
            "release" => {
                cmd.arg("--release");
            }
            other => {
                cmd.args(["--profile", other]);
            }
        }
    }
    let status = cmd.status().map_err(|e| format!("running cargo: {e}"))?;
    if !status.success() || !bin.exists() {
        return Err(format!("cargo build of pincer-mock-rpc failed ({status})"));
    }
    Ok(bin)
}

/// Writes `script` to a file in `dir` and returns its path (for tests).
pub fn write_script(dir: &Path, name: &str, script: &Value) -> Result<PathBuf, String> {
    let path = dir.join(name);
    let mut file = File::create(&path).map_err(|e| e.to_string())?;
    file.write_all(script.to_string().as_bytes())
        .map_err(|e| e.to_string())?;
    Ok(path)
}

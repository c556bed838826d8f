//! `RpcClient` against the scripted fake worker `pincer-mock-rpc` (pincer-testkit): requests
//! by id among events, out-of-order answers, command errors, timeouts, garbage and huge
//! lines on stdout, a worker dying mid-request, stop / drop leaving no process behind, and
//! commands too large to send.
//!
//! The worker binary is found (or built once) by `pincer_testkit::mock_rpc_path()`.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use pincer_rpc::{MAX_COMMAND_BYTES, RpcClient, RpcCommand, RpcError, TurnCollected, WorkerSpec};
use pincer_testkit::mock_rpc::write_script;
use pincer_testkit::mock_rpc_path;
use serde_json::{Value, json};

const T: Duration = Duration::from_secs(10);

struct Worker {
    client: RpcClient,
    log: PathBuf,
    _dir: tempfile::TempDir,
}

impl Worker {
    /// The lines the worker received so far.
    fn received(&self) -> Vec<String> {
        std::fs::read_to_string(&self.log)
            .unwrap_or_default()
            .lines()
            .map(str::to_string)
            .collect()
    }
}

fn start(script: Value) -> Worker {
    let dir = tempfile::tempdir().unwrap();
    let path = write_script(dir.path(), "script.json", &script).unwrap();
    let log = dir.path().join("received.log");
    let spec = WorkerSpec::new(mock_rpc_path().unwrap())
        .arg(path.display().to_string())
        .arg(log.display().to_string());
    Worker {
        client: RpcClient::spawn(spec).unwrap(),
        log,
        _dir: dir,
    }
}

/// A worker without rules, and its pid, once it has answered a request (it is up).
async fn answering() -> (Worker, u32) {
    let w = start(json!({"rules": []}));
    let pid = w.client.pid().unwrap();
    assert_eq!(
        w.client.request(RpcCommand::GetState, T).await.unwrap(),
        Value::Null
    );
    (w, pid)
}

fn gone(pid: u32) -> bool {
    !Path::new(&format!("/proc/{pid}")).exists()
}

async fn eventually(what: &str, mut check: impl FnMut() -> bool) {
    let deadline = Instant::now() + T;
    while !check() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test]
async fn request_resolves_by_id_among_events() {
    let w = start(json!({"rules": [
        {"on": "get_state", "before": [{"type": "queue_update", "n": 1}],
         "respond": {"data": {"isStreaming": false}}, "events": [{"type": "queue_update", "n": 2}]}
    ]}));
    let mut events = w.client.subscribe();
    let data = w.client.request(RpcCommand::GetState, T).await.unwrap();
    assert_eq!(data, json!({"isStreaming": false}));
    let first = events.recv().await.unwrap();
    let second = events.recv().await.unwrap();
    assert_eq!(*first, json!({"type": "queue_update", "n": 1}));
    assert_eq!(*second, json!({"type": "queue_update", "n": 2}));
    // A response without data resolves to null.
    let data = w.client.request(RpcCommand::AbortBash, T).await.unwrap();
    assert_eq!(data, Value::Null);
    assert_eq!(
        w.received(),
        vec![
            r#"{"id":"req_1","type":"get_state"}"#,
            r#"{"id":"req_2","type":"abort_bash"}"#
        ]
    );
    let stats = w.client.stats();
    assert_eq!(
        (stats.responses, stats.events, stats.garbage_lines),
        (2, 2, 0)
    );
}

#[tokio::test]
async fn concurrent_requests_answered_out_of_order() {
    let w = start(json!({"rules": [
        {"on": "get_state", "delay_ms": 400, "respond": {"data": "slow"}},
        {"on": "get_messages", "respond": {"data": "fast"}}
    ]}));
    let started = Instant::now();
    let slow = async {
        let r = w.client.request(RpcCommand::GetState, T).await;
        (r.unwrap(), started.elapsed())
    };
    let fast = async {
        // Sent second, after the slow one is on its way.
        tokio::time::sleep(Duration::from_millis(50)).await;
        let r = w.client.request(RpcCommand::GetMessages, T).await;
        (r.unwrap(), started.elapsed())
    };
    let ((slow, slow_at), (fast, fast_at)) = tokio::join!(slow, fast);
    assert_eq!(slow, json!("slow"));
    assert_eq!(fast, json!("fast"));
    assert!(fast_at < slow_at, "fast {fast_at:?} vs slow {slow_at:?}");
    assert_eq!(w.received().len(), 2);
}

#[tokio::test]
async fn command_error_is_returned() {
    let w = start(json!({"rules": [
        {"on": "set_model", "respond": {"success": false, "error": "Model not found: x/y"}}
    ]}));
    let err = w
        .client
        .request(
            RpcCommand::SetModel {
                provider: "x".into(),
                model_id: "y".into(),
            },
            T,
        )
        .await
        .unwrap_err();
    let RpcError::Command { command, message } = err else {
        panic!("{err:?}")
    };
    assert_eq!(
        (command.as_str(), message.as_str()),
        ("set_model", "Model not found: x/y")
    );
    assert!(w.client.is_alive());
}

#[tokio::test]
async fn id_less_error_resolves_the_request_of_that_command() {
    // pi answers an unknown command without its id.
    let w = start(json!({"rules": [
        {"on": "clone", "respond": {"success": false, "error": "Unknown command: clone", "no_id": true}}
    ]}));
    let err = w
        .client
        .request(json!({"type": "clone"}), T)
        .await
        .unwrap_err();
    assert!(
        matches!(&err, RpcError::Command { command, message } if command == "clone" && message == "Unknown command: clone"),
        "{err:?}"
    );
}

#[tokio::test]
async fn timeout_fails_only_that_request() {
    let w = start(json!({"rules": [
        {"on": "compact", "once": true, "silent": true}
    ]}));
    let err = w
        .client
        .request(
            RpcCommand::Compact {
                custom_instructions: None,
            },
            Duration::from_millis(200),
        )
        .await
        .unwrap_err();
    assert!(
        matches!(&err, RpcError::Timeout { command, after } if command == "compact" && *after == Duration::from_millis(200)),
        "{err:?}"
    );
    assert!(w.client.is_alive());
    assert_eq!(
        w.client.request(RpcCommand::GetState, T).await.unwrap(),
        Value::Null
    );
    assert_eq!(w.client.stats().timeouts, 1);
}

#[tokio::test]
async fn garbage_and_huge_lines_are_skipped_and_counted() {
    let w = start(json!({"rules": [
        {"on": "get_state", "pre": ["garbage", "huge_line", "garbage"], "respond": {"data": {"ok": 1}}}
    ]}));
    let data = w.client.request(RpcCommand::GetState, T).await.unwrap();
    assert_eq!(data, json!({"ok": 1}));
    let stats = w.client.stats();
    assert_eq!(stats.garbage_lines, 6);
    assert_eq!(stats.too_long_lines, 1);
    assert_eq!(stats.responses, 1);
    assert_eq!(stats.lines, 8);
    assert!(w.client.is_alive());
    // Still in step afterwards.
    assert_eq!(
        w.client.request(RpcCommand::GetState, T).await.unwrap(),
        json!({"ok": 1})
    );
}

#[tokio::test]
async fn worker_exiting_mid_request_fails_all_pending_with_its_stderr() {
    let w = start(json!({"rules": [
        {"on": "get_messages", "silent": true},
        {"on": "bash", "stderr": "fatal: out of cheese\n", "silent": true, "then": "exit:3"}
    ]}));
    let pid = w.client.pid().unwrap();
    let waiting = w.client.request(RpcCommand::GetMessages, T);
    let dying = async {
        tokio::time::sleep(Duration::from_millis(100)).await;
        w.client
            .request(
                RpcCommand::Bash {
                    command: "ls".into(),
                },
                T,
            )
            .await
    };
    let (a, b) = tokio::join!(waiting, dying);
    for err in [a.unwrap_err(), b.unwrap_err()] {
        let RpcError::Exited {
            code,
            signal,
            stderr_tail,
        } = err
        else {
            panic!("{err:?}")
        };
        assert_eq!((code, signal), (Some(3), None));
        assert_eq!(stderr_tail, "fatal: out of cheese");
    }
    assert!(!w.client.is_alive());
    assert!(matches!(
        w.client.request(RpcCommand::GetState, T).await,
        Err(RpcError::Exited { code: Some(3), .. })
    ));
    eventually("the worker to be reaped", || gone(pid)).await;
}

#[tokio::test]
async fn worker_closing_stdout_is_treated_as_gone_and_killed() {
    let w = start(json!({"rules": [
        {"on": "get_state", "silent": true, "then": "close_stdout"}
    ]}));
    let pid = w.client.pid().unwrap();
    let err = w.client.request(RpcCommand::GetState, T).await.unwrap_err();
    assert!(
        matches!(
            err,
            RpcError::Exited {
                code: None,
                signal: Some(9),
                ..
            }
        ),
        "{err:?}"
    );
    assert!(!w.client.is_alive());
    eventually("the worker to be reaped", || gone(pid)).await;
}

#[tokio::test]
async fn stop_ends_the_process_and_leaves_no_zombie() {
    let (w, pid) = answering().await;
    let started = Instant::now();
    w.client.stop().await;
    assert!(started.elapsed() < Duration::from_secs(3));
    assert!(!w.client.is_alive());
    assert!(gone(pid), "pid {pid} still exists after stop()");
    assert!(matches!(
        w.client.request(RpcCommand::GetState, T).await,
        Err(RpcError::Exited { .. })
    ));
}

#[tokio::test]
async fn stop_kills_a_hung_worker() {
    let w = start(json!({"rules": [{"on": "get_state", "silent": true, "then": "hang"}]}));
    let pid = w.client.pid().unwrap();
    let pending = w.client.request(RpcCommand::GetState, T);
    let stop = async {
        tokio::time::sleep(Duration::from_millis(200)).await;
        w.client.stop().await
    };
    let (pending, info) = tokio::join!(pending, stop);
    assert!(
        matches!(pending, Err(RpcError::Exited { .. })),
        "{pending:?}"
    );
    assert_eq!(info.signal, Some(15));
    assert!(gone(pid));
}

#[tokio::test]
async fn dropping_the_client_kills_the_worker() {
    let (w, pid) = answering().await;
    drop(w);
    eventually("the dropped worker to be gone", || gone(pid)).await;
}

#[tokio::test]
async fn oversized_command_is_refused_before_writing() {
    let w = start(json!({"rules": []}));
    let err = w
        .client
        .request(RpcCommand::prompt("x".repeat(2 * 1024 * 1024)), T)
        .await
        .unwrap_err();
    let RpcError::TooLarge { len, max } = err else {
        panic!("{err:?}")
    };
    assert_eq!(max, MAX_COMMAND_BYTES);
    assert_eq!(
        len,
        2 * 1024 * 1024 + r#"{"id":"req_1","type":"prompt","message":""}"#.len()
    );
    // Nothing was written; the client goes on.
    assert_eq!(
        w.client.request(RpcCommand::GetState, T).await.unwrap(),
        Value::Null
    );
    assert_eq!(w.received(), vec![r#"{"id":"req_2","type":"get_state"}"#]);
    assert!(matches!(
        w.client.send_no_wait(json!({"no": "type"})),
        Err(RpcError::Invalid { .. })
    ));
}

fn turn_events(deltas: &[&str], end: bool) -> Value {
    let mut events = vec![
        json!({"type": "agent_start"}),
        json!({"type": "message_start", "message": {"role": "assistant"}}),
    ];
    for d in deltas {
        events.push(json!({"type": "message_update", "assistantMessageEvent": {"type": "text_delta", "delta": d}}));
    }
    events.push(
        json!({"type": "message_end", "message": {"role": "assistant", "stopReason": "stop"}}),
    );
    if end {
        events.push(json!({"type": "agent_end", "messages": []}));
    }
    Value::Array(events)
}

#[tokio::test]
async fn prompt_and_wait_collects_the_turn() {
    let w = start(json!({"rules": [
        {"on": "prompt", "events": turn_events(&["Hel", "lo"], true)}
    ]}));
    let turn = w.client.prompt_and_wait("hi", T).await.unwrap();
    assert_eq!(
        turn,
        TurnCollected {
            text: "Hello".into(),
            events: 6,
            stop_reason: Some("stop".into()),
            error_message: None,
        }
    );
    assert_eq!(
        w.received(),
        vec![r#"{"id":"req_1","type":"prompt","message":"hi"}"#]
    );
}

#[tokio::test]
async fn prompt_and_wait_times_out_and_aborts() {
    let w = start(json!({"rules": [
        {"on": "prompt", "events": turn_events(&["never ends"], false)}
    ]}));
    let err = w
        .client
        .prompt_and_wait("hi", Duration::from_millis(300))
        .await
        .unwrap_err();
    assert!(
        matches!(&err, RpcError::Timeout { command, .. } if command == "prompt"),
        "{err:?}"
    );
    eventually("the abort to be written", || w.received().len() == 2).await;
    assert_eq!(w.received()[1], r#"{"id":"req_2","type":"abort"}"#);
    assert!(w.client.is_alive());
}

#[tokio::test]
async fn prompt_and_wait_fails_when_the_prompt_is_refused_or_the_worker_dies() {
    let w = start(json!({"rules": [
        {"on": "prompt", "once": true, "respond": {"success": false, "error": "Agent is already streaming"}},
        {"on": "prompt", "events": [{"type": "agent_start"}], "then": "exit:1"}
    ]}));
    let err = w.client.prompt_and_wait("a", T).await.unwrap_err();
    assert!(
        matches!(&err, RpcError::Command { message, .. } if message == "Agent is already streaming"),
        "{err:?}"
    );
    let err = w.client.prompt_and_wait("b", T).await.unwrap_err();
    assert!(
        matches!(err, RpcError::Exited { code: Some(1), .. }),
        "{err:?}"
    );
}

#[tokio::test]
async fn spawn_failure_is_reported() {
    let err = RpcClient::spawn(WorkerSpec::new("/nonexistent/pincer-worker")).unwrap_err();
    assert!(
        matches!(&err, RpcError::Spawn { program, .. } if program == "/nonexistent/pincer-worker"),
        "{err:?}"
    );
}

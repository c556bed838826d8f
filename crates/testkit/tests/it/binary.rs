//! The `pincer-mock-llm` binary: prints its listening line, serves a scenario file, exits 0 on
//! SIGTERM, and fails clearly on a missing or invalid scenario file.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};

use common::{bodies, concat, jsons, stream};

const BIN: &str = env!("CARGO_BIN_EXE_pincer-mock-llm");

fn hello_json() -> String {
    format!(
        "{}/examples/scenarios/hello.json",
        env!("CARGO_MANIFEST_DIR")
    )
}

/// Starts the binary and returns it with the URL from its first stdout line.
fn spawn(args: &[&str]) -> (Child, String) {
    let mut child = Command::new(BIN)
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let url = line
        .strip_prefix("listening on ")
        .unwrap_or_else(|| panic!("unexpected first line {line:?}"))
        .trim_end()
        .to_owned();
    (child, url)
}

#[tokio::test]
async fn serves_a_scenario_file_until_sigterm() {
    let scenario = hello_json();
    let (child, url) = spawn(&["--scenario", &scenario, "--port", "0"]);
    assert!(url.starts_with("http://127.0.0.1:"));
    let values = jsons(&stream(&format!("{url}/v1/chat/completions"), &bodies::chat("hi")).await);
    assert_eq!(
        concat(&values, "/choices/0/delta/content"),
        "Hello! How can I help you today?"
    );
    let first = common::post(&format!("{url}/v1/messages"), &bodies::anthropic("flaky")).await;
    assert_eq!(first.status(), 429);
    assert_eq!(first.headers()["retry-after"], "1");
    let recorded = common::get_json(&format!("{url}/__mock/requests")).await;
    assert_eq!(recorded.as_array().unwrap().len(), 2);
    common::terminate(child);
}

#[tokio::test]
async fn echoes_without_a_scenario() {
    let (child, url) = spawn(&[]);
    let values = jsons(&stream(&format!("{url}/v1/chat/completions"), &bodies::chat("yo")).await);
    assert_eq!(concat(&values, "/choices/0/delta/content"), "mock: yo");
    common::terminate(child);
}

#[test]
fn missing_or_invalid_scenario_fails_clearly() {
    let output = Command::new(BIN)
        .args(["--scenario", "/nonexistent/scenario.json"])
        .output()
        .unwrap();
    assert!(!output.status.success());
    assert!(output.stdout.is_empty());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("/nonexistent/scenario.json"), "{stderr}");

    let path = std::env::temp_dir().join(format!("pincer-mock-bad-{}.json", std::process::id()));
    std::fs::write(&path, "{\n  \"rulez\": []\n}\n").unwrap();
    let output = Command::new(BIN)
        .arg("--scenario")
        .arg(&path)
        .output()
        .unwrap();
    std::fs::remove_file(&path).unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("unknown field `rulez`"), "{stderr}");
    assert!(stderr.contains("line 2"), "{stderr}");
    assert!(stderr.contains(&path.display().to_string()), "{stderr}");
}

//! `read` and `fs.read_file` on files that must not be read whole or at all: a 50 MB file
//! is read only as far as shown, and FIFOs and devices are refused at once (every call
//! runs under a timeout, so a tool that blocks fails the test instead of hanging it).

#![allow(clippy::unwrap_used)] // helpers outside #[test] fns unwrap too

use crate::common;

use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;
use std::time::Duration;

use common::{Outcome, Says, workspace};
use pincer_agent::{ToolError, ToolOutput};
use pincer_tools::PathPolicy;
use pincer_tools::basic::basic_tools;
use pincer_tools::files::file_tools;
use serde_json::{Value, json};

/// Far longer than any of these calls takes; only a blocked tool reaches it.
const LIMIT: Duration = Duration::from_secs(20);

async fn call(policy: &PathPolicy, name: &str, args: Value) -> Result<ToolOutput, ToolError> {
    let tools = if name.starts_with("fs.") {
        basic_tools
    } else {
        file_tools
    };
    let path = policy
        .workspace_dir()
        .join(args["path"].as_str().unwrap_or_default());
    match tokio::time::timeout(LIMIT, common::call(tools, policy, name, args)).await {
        Ok(result) => result,
        Err(_) => {
            // A tool stuck opening a FIFO holds the runtime's shutdown: a writer's open and
            // close let it finish, so the test fails instead of hanging.
            let _ = std::fs::OpenOptions::new()
                .write(true)
                .custom_flags(nix::libc::O_NONBLOCK)
                .open(&path);
            panic!("{name} did not answer within {LIMIT:?}")
        }
    }
}

/// 50 MB (51 200 000 bytes) of 100-byte lines.
fn big_file(path: &Path) {
    let line = format!("{}\n", "x".repeat(99));
    let chunk = line.repeat(10_240);
    let mut file = std::fs::File::create(path).unwrap();
    for _ in 0..50 {
        std::io::Write::write_all(&mut file, chunk.as_bytes()).unwrap();
    }
}

fn mkfifo(path: &Path) {
    let status = std::process::Command::new("mkfifo")
        .arg(path)
        .status()
        .unwrap();
    assert!(status.success());
}

#[tokio::test]
async fn a_50_mb_file_is_read_only_as_far_as_shown() {
    let (_d, ws, policy) = workspace();
    big_file(&ws.join("big.txt"));
    let out = call(&policy, "read", json!({"path": "big.txt"}))
        .await
        .unwrap();
    // A numbered line is 6 + 1 + 99 bytes and a newline: 478 of them fit in 50 KB.
    let line = format!("\t{}", "x".repeat(99));
    let expected: Vec<String> = (1..=478).map(|n| format!("{n:>6}{line}")).collect();
    assert_eq!(
        out.text_content(),
        format!(
            "{}\n\n[Showing lines 1-478; the file (51200000 bytes) goes on. Use offset=479 to \
             continue.]",
            expected.join("\n")
        )
    );
    let details = out.details.unwrap();
    assert_eq!(details["truncated"], true);
    assert_eq!(
        details["totalLines"],
        Value::Null,
        "the rest was not counted"
    );

    let head = call(
        &policy,
        "fs.read_file",
        json!({"path": "big.txt", "maxBytes": 250}),
    );
    assert_eq!(
        head.await.text(),
        format!(
            "{0}\n{0}\n{1}\n\n[truncated: showing the first 250 of 51200000 bytes]",
            "x".repeat(99),
            "x".repeat(50)
        )
    );
    // A huge maxBytes is capped at 4 MiB.
    let capped = call(
        &policy,
        "fs.read_file",
        json!({"path": "big.txt", "maxBytes": usize::MAX}),
    );
    assert!(
        capped
            .await
            .text()
            .ends_with("\n\n[truncated: showing the first 4194304 of 51200000 bytes]")
    );
}

#[tokio::test]
async fn a_fifo_is_refused_at_once() {
    let (_d, ws, policy) = workspace();
    mkfifo(&ws.join("pipe"));
    // Through a symlink in the workspace too.
    std::os::unix::fs::symlink(ws.join("pipe"), ws.join("link")).unwrap();
    for (tool, path) in [("read", "pipe"), ("fs.read_file", "pipe"), ("read", "link")] {
        assert_eq!(
            call(&policy, tool, json!({"path": path})).await.refusal(),
            "pipe is a named pipe (FIFO); only regular files can be read",
            "{tool} {path}"
        );
    }
}

#[tokio::test]
async fn devices_are_refused() {
    let (_d, ws, policy) = workspace();
    // A symlink to /dev/zero leaves the workspace: the path policy refuses it.
    std::os::unix::fs::symlink("/dev/zero", ws.join("zero")).unwrap();
    // With /dev allowed as a root, the device is still not read.
    let with_dev = policy.clone().with_root("/dev").unwrap();
    let cases = [
        (
            &policy,
            Says::StartsWith("zero is outside the allowed directories"),
        ),
        (
            &with_dev,
            Says::Exactly("/dev/zero is a character device; only regular files can be read"),
        ),
    ];
    for (policy, says) in cases {
        for tool in ["read", "fs.read_file"] {
            let message = call(policy, tool, json!({"path": "zero"})).await.refusal();
            says.check(&message, tool);
        }
    }
}

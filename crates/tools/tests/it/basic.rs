//! The lainclaw basics through `AgentTool::execute`: time.now, tools.echo, shell.pwd,
//! fs.list_dir and fs.read_file (confined like the file tools).

#![allow(clippy::unwrap_used)] // helpers outside #[test] fns unwrap too

use crate::common;

use common::{OUTSIDE, Outcome, Says, assert_answers, assert_refusals, workspace};

use pincer_agent::{ToolError, ToolOutput};
use pincer_tools::PathPolicy;
use pincer_tools::basic::{basic_tools, rfc3339_utc};
use serde_json::{Value, json};

async fn call(policy: &PathPolicy, name: &str, args: Value) -> Result<ToolOutput, ToolError> {
    common::call(basic_tools, policy, name, args).await
}

#[tokio::test]
async fn names_in_order() {
    let (_d, _ws, policy) = workspace();
    let names: Vec<String> = basic_tools(policy)
        .iter()
        .map(|t| t.name().to_owned())
        .collect();
    assert_eq!(
        names,
        [
            "time.now",
            "tools.echo",
            "shell.pwd",
            "fs.list_dir",
            "fs.read_file"
        ]
    );
}

#[tokio::test]
async fn time_now_gives_rfc3339_and_unix_ms() {
    let (_d, _ws, policy) = workspace();
    let out = call(&policy, "time.now", json!({})).await.unwrap();
    let details = out.details.clone().unwrap();
    let ms = details["unixMs"].as_i64().unwrap();
    let iso = details["iso"].as_str().unwrap();
    assert_eq!(iso, rfc3339_utc(ms));
    assert_eq!(out.text_content(), format!("{iso} (unix ms {ms})"));
    assert!(iso.len() == 24 && iso.ends_with('Z'), "{iso}");
    assert!(ms > 1_700_000_000_000);
}

#[tokio::test]
async fn echo_and_pwd() {
    let (_d, ws, policy) = workspace();
    assert_eq!(
        call(&policy, "tools.echo", json!({"text": "hi there"}))
            .await
            .text(),
        "hi there"
    );
    assert_eq!(
        call(&policy, "tools.echo", json!({})).await.refusal(),
        "invalid arguments for tools.echo: missing field `text`"
    );
    assert_eq!(
        call(&policy, "shell.pwd", json!({})).await.text(),
        std::fs::canonicalize(&ws).unwrap().display().to_string()
    );
}

#[tokio::test]
async fn list_dir_and_read_file_are_confined() {
    let (dir, ws, policy) = workspace();
    std::fs::create_dir(ws.join("sub")).unwrap();
    std::fs::write(ws.join("a.txt"), "héllo world").unwrap();
    std::fs::write(dir.path().join("secret"), "s").unwrap();
    assert_eq!(
        call(&policy, "fs.list_dir", json!({})).await.text(),
        "a.txt\nsub/"
    );
    let refusal = call(&policy, "fs.list_dir", json!({"path": ".."})).await;
    OUTSIDE.check(&refusal.refusal(), "fs.list_dir ..");

    let reads = [
        (json!({"path": "a.txt"}), "héllo world"),
        // maxBytes cuts on a character boundary (é is two bytes).
        (
            json!({"path": "a.txt", "maxBytes": 2}),
            "h\n\n[truncated: showing the first 1 of 12 bytes]",
        ),
    ];
    assert_answers(basic_tools, &policy, "fs.read_file", &reads).await;
    std::fs::write(ws.join("b.bin"), b"\0\x01").unwrap();
    let refusals = [
        (json!({"path": "../secret"}), OUTSIDE),
        (
            json!({"path": "sub"}),
            Says::Exactly("sub is a directory; use fs.list_dir"),
        ),
        (
            json!({"path": "b.bin"}),
            Says::Exactly("b.bin is a binary file; fs.read_file reads text files"),
        ),
    ];
    assert_refusals(basic_tools, &policy, "fs.read_file", &refusals).await;
    let err = call(
        &policy,
        "fs.read_file",
        json!({"path": "a.txt", "maxBytes": "x"}),
    )
    .await
    .unwrap_err();
    assert!(matches!(err, ToolError::InvalidArguments { .. }), "{err}");
}

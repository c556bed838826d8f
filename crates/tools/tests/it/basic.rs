//! The lainclaw basics through `AgentTool::execute`: time.now, tools.echo, shell.pwd,
//! fs.list_dir and fs.read_file (confined like the file tools).

#![allow(clippy::unwrap_used)] // helpers outside #[test] fns unwrap too

use crate::common;

use common::workspace;

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
    let out = call(&policy, "tools.echo", json!({"text": "hi there"}))
        .await
        .unwrap();
    assert_eq!(out.text_content(), "hi there");
    let err = call(&policy, "tools.echo", json!({})).await.unwrap_err();
    assert_eq!(
        err.to_string(),
        "invalid arguments for tools.echo: missing field `text`"
    );
    let out = call(&policy, "shell.pwd", json!({})).await.unwrap();
    assert_eq!(
        out.text_content(),
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
        call(&policy, "fs.list_dir", json!({}))
            .await
            .unwrap()
            .text_content(),
        "a.txt\nsub/"
    );
    let err = call(&policy, "fs.list_dir", json!({"path": ".."}))
        .await
        .unwrap_err();
    assert!(err.to_string().contains("outside the allowed directories"));

    let out = call(&policy, "fs.read_file", json!({"path": "a.txt"}))
        .await
        .unwrap();
    assert_eq!(out.text_content(), "héllo world");
    // maxBytes cuts on a character boundary (é is two bytes).
    let out = call(
        &policy,
        "fs.read_file",
        json!({"path": "a.txt", "maxBytes": 2}),
    )
    .await
    .unwrap();
    assert_eq!(
        out.text_content(),
        "h\n\n[truncated: showing the first 1 of 12 bytes]"
    );
    let err = call(&policy, "fs.read_file", json!({"path": "../secret"}))
        .await
        .unwrap_err();
    assert!(err.to_string().contains("outside the allowed directories"));
    let err = call(&policy, "fs.read_file", json!({"path": "sub"}))
        .await
        .unwrap_err();
    assert_eq!(err.to_string(), "sub is a directory; use fs.list_dir");
    std::fs::write(ws.join("b.bin"), b"\0\x01").unwrap();
    let err = call(&policy, "fs.read_file", json!({"path": "b.bin"}))
        .await
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "b.bin is a binary file; fs.read_file reads text files"
    );
    let err = call(
        &policy,
        "fs.read_file",
        json!({"path": "a.txt", "maxBytes": "x"}),
    )
    .await
    .unwrap_err();
    assert!(matches!(err, ToolError::InvalidArguments { .. }), "{err}");
}

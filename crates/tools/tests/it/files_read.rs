//! `read` through `AgentTool::execute` with JSON arguments: numbering, offset/limit, the
//! truncation hint, long lines, images, binary files, directories and confinement.

#![allow(clippy::unwrap_used)] // helpers outside #[test] fns unwrap too

use crate::common;

use common::{OUTSIDE, Outcome, Says, workspace};
use std::path::Path;
use std::sync::Arc;

use pincer_agent::{AgentTool, ToolContext, ToolError, ToolOutput};
use pincer_ai::ContentBlock;
use pincer_tools::PathPolicy;
use pincer_tools::files::file_tools;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

fn tool(policy: &PathPolicy, name: &str) -> Arc<dyn AgentTool> {
    common::tool_named(file_tools(policy.clone()), name)
}

async fn read(policy: &PathPolicy, args: Value) -> Result<ToolOutput, ToolError> {
    tool(policy, "read")
        .execute(args, ToolContext::new("c", CancellationToken::new()))
        .await
}

/// `read` of `path` with no other arguments.
async fn read_path(policy: &PathPolicy, path: &str) -> Result<ToolOutput, ToolError> {
    read(policy, json!({"path": path})).await
}

fn write(ws: &Path, name: &str, content: impl AsRef<[u8]>) {
    std::fs::write(ws.join(name), content).unwrap();
}

#[tokio::test]
async fn numbers_lines_and_pages_with_offset_and_limit() {
    let (_d, ws, policy) = workspace();
    write(&ws, "a.txt", "one\r\ntwo\nthree\nfour\n");
    let out = read_path(&policy, "a.txt").await.unwrap();
    assert_eq!(
        out.text_content(),
        "     1\tone\n     2\ttwo\n     3\tthree\n     4\tfour"
    );
    assert_eq!(out.details.as_ref().unwrap()["totalLines"], 4);

    let out = read(&policy, json!({"path": "a.txt", "offset": 2, "limit": 2}))
        .await
        .unwrap();
    assert_eq!(
        out.text_content(),
        "     2\ttwo\n     3\tthree\n\n[Showing lines 2-3; the file (20 bytes) goes on. Use offset=4 to continue.]"
    );
    let out = read(&policy, json!({"path": "a.txt", "offset": 4}))
        .await
        .unwrap();
    assert_eq!(out.text_content(), "     4\tfour");

    assert_eq!(
        read(&policy, json!({"path": "a.txt", "offset": 9}))
            .await
            .refusal(),
        "offset 9 is beyond the end of a.txt (4 lines)"
    );
    write(&ws, "empty.txt", "");
    assert_eq!(
        read_path(&policy, "empty.txt").await.text(),
        "[empty.txt is empty]"
    );
}

#[tokio::test]
async fn truncates_at_2000_lines_and_50kb_with_a_hint() {
    let (_d, ws, policy) = workspace();
    let many: String = (1..=2500).map(|i| format!("line {i}\n")).collect();
    write(&ws, "many.txt", many);
    let text = read_path(&policy, "many.txt").await.text();
    assert!(text.starts_with("     1\tline 1\n"));
    assert!(text.ends_with(
        "  2000\tline 2000\n\n[Showing lines 1-2000; the file (23893 bytes) goes on. Use offset=2001 to continue.]"
    ));
    let text = read(&policy, json!({"path": "many.txt", "offset": 2001}))
        .await
        .text();
    assert!(text.ends_with("  2500\tline 2500"), "{text}");

    // 100 lines of 1000 chars: 50 numbered lines of 1008 bytes fit in 50 KB.
    let wide: String = (0..100)
        .map(|_| format!("{}\n", "x".repeat(1000)))
        .collect();
    write(&ws, "wide.txt", wide);
    let text = read_path(&policy, "wide.txt").await.text();
    assert!(
        text.ends_with(
            "\n\n[Showing lines 1-50; the file (100100 bytes) goes on. Use offset=51 to continue.]"
        ),
        "{}",
        &text[text.len() - 80..]
    );
}

#[tokio::test]
async fn cuts_long_lines() {
    let (_d, ws, policy) = workspace();
    write(&ws, "long.txt", format!("{}\nshort\n", "é".repeat(2500)));
    let text = read_path(&policy, "long.txt").await.text();
    assert_eq!(
        text,
        format!("     1\t{}... [truncated]\n     2\tshort", "é".repeat(2000))
    );
}

#[tokio::test]
async fn returns_images_and_refuses_binaries_and_directories() {
    let (_d, ws, policy) = workspace();
    let png = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR";
    write(&ws, "pic.png", png);
    let out = read_path(&policy, "pic.png").await.unwrap();
    assert_eq!(
        out.text_content(),
        "Read image file pic.png [image/png, 16 bytes]"
    );
    match &out.content[1] {
        ContentBlock::Image(image) => {
            assert_eq!(image.mime_type, "image/png");
            assert_eq!(image.data, "iVBORw0KGgoAAAANSUhEUg==");
        }
        other => panic!("expected an image, got {other:?}"),
    }
    // Detected by magic, whatever the extension.
    write(&ws, "photo.bin", b"\xff\xd8\xff\xe0\0\x10JFIF");
    let out = read_path(&policy, "photo.bin").await.unwrap();
    assert!(matches!(&out.content[1], ContentBlock::Image(i) if i.mime_type == "image/jpeg"));

    write(&ws, "blob.bin", b"abc\0def");
    std::fs::create_dir(ws.join("sub")).unwrap();
    let refusals = [
        (
            "blob.bin",
            "blob.bin is a binary file (7 bytes); read only shows text files and png, jpg, gif \
             or webp images",
        ),
        ("sub", "sub is a directory; use ls to list its contents"),
        ("missing.txt", "missing.txt: no such file or directory"),
    ];
    for (path, says) in refusals {
        assert_eq!(read_path(&policy, path).await.refusal(), says, "{path}");
    }
}

#[tokio::test]
async fn refuses_paths_outside_the_workspace() {
    let (dir, ws, policy) = workspace();
    std::fs::write(dir.path().join("secret.txt"), "secret").unwrap();
    let outside = dir.path().join("secret.txt");
    std::os::unix::fs::symlink(&outside, ws.join("escape")).unwrap();
    let refusals = [
        (
            "../secret.txt",
            Says::StartsWith("../secret.txt is outside the allowed directories ("),
        ),
        (outside.to_str().unwrap(), OUTSIDE),
        (
            "escape",
            Says::StartsWith("escape is outside the allowed directories"),
        ),
    ];
    for (path, says) in refusals {
        says.check(&read_path(&policy, path).await.refusal(), path);
    }
    // `@file` mentions resolve in the workspace.
    write(&ws, "in.txt", "hi\n");
    assert_eq!(read_path(&policy, "@in.txt").await.text(), "     1\thi");
}

#[tokio::test]
async fn invalid_arguments_are_reported() {
    let (_d, _ws, policy) = workspace();
    assert_eq!(
        read(&policy, json!({"path": "a", "offset": "x"}))
            .await
            .refusal(),
        "invalid arguments for read: offset: invalid type: string \"x\", expected usize"
    );
    let err = read(&policy, json!({})).await.unwrap_err();
    assert!(matches!(err, ToolError::InvalidArguments { .. }));
    let schema = tool(&policy, "read").parameters().clone();
    assert_eq!(schema["required"], json!(["path"]));
    assert_eq!(
        schema["properties"]["offset"]["description"],
        "Line number to start reading from (1-based)."
    );
}

//! `ls`, `grep` and `find` through `AgentTool::execute`: sorting, dotfiles, `.gitignore`,
//! limits, ignoreCase, literal, context, globs and confinement.

#![allow(clippy::unwrap_used)] // helpers outside #[test] fns unwrap too

use crate::common;

use common::workspace;
use std::path::Path;

use pincer_agent::{ToolContext, ToolError, ToolOutput};
use pincer_tools::PathPolicy;
use pincer_tools::files::file_tools;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

async fn call(policy: &PathPolicy, name: &str, args: Value) -> Result<ToolOutput, ToolError> {
    common::call(file_tools, policy, name, args).await
}

async fn text(policy: &PathPolicy, name: &str, args: Value) -> String {
    call(policy, name, args).await.unwrap().text_content()
}

fn put(ws: &Path, rel: &str, content: &str) {
    let path = ws.join(rel);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, content).unwrap();
}

/// A small project: sources, a gitignored build dir, a hidden file, a binary.
fn project(ws: &Path) {
    put(ws, ".gitignore", "target/\n*.log\n");
    put(
        ws,
        "src/main.rs",
        "fn main() {\n    let Greeting = 1;\n    println!(\"hello\");\n}\n",
    );
    put(ws, "src/lib.rs", "// hello.world\npub fn greeting() {}\n");
    put(ws, "README.md", "# Hello\nsee helloXworld\n");
    put(ws, "target/out.rs", "hello from build\n");
    put(ws, "debug.log", "hello log\n");
    put(ws, ".hidden/secret.rs", "hello hidden\n");
    std::fs::write(ws.join("blob.bin"), b"hello\0binary").unwrap();
}

#[tokio::test]
async fn ls_sorts_marks_directories_and_limits() {
    let (_d, ws, policy) = workspace();
    project(&ws);
    assert_eq!(
        text(&policy, "ls", json!({})).await,
        ".gitignore\n.hidden/\nblob.bin\ndebug.log\nREADME.md\nsrc/\ntarget/"
    );
    assert_eq!(
        text(&policy, "ls", json!({"path": "src"})).await,
        "lib.rs\nmain.rs"
    );
    assert_eq!(
        text(&policy, "ls", json!({"limit": 2})).await,
        ".gitignore\n.hidden/\n\n[2 of 7 entries shown. Use limit=4 for more.]"
    );
    std::fs::create_dir(ws.join("empty")).unwrap();
    assert_eq!(
        text(&policy, "ls", json!({"path": "empty"})).await,
        "(empty directory)"
    );
    let err = call(&policy, "ls", json!({"path": "README.md"}))
        .await
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "README.md is not a directory; use read to see a file"
    );
    let err = call(&policy, "ls", json!({"path": ".."}))
        .await
        .unwrap_err();
    assert!(err.to_string().contains("outside the allowed directories"));
    let err = call(&policy, "ls", json!({"limit": -1})).await.unwrap_err();
    assert!(matches!(err, ToolError::InvalidArguments { .. }), "{err}");
}

#[tokio::test]
async fn grep_respects_gitignore_and_skips_hidden_and_binary() {
    let (_d, ws, policy) = workspace();
    project(&ws);
    assert_eq!(
        text(&policy, "grep", json!({"pattern": "hello"})).await,
        "README.md:2: see helloXworld\nsrc/lib.rs:1: // hello.world\nsrc/main.rs:3:     \
         println!(\"hello\");"
    );
    // An explicit file is searched even if ignored.
    assert_eq!(
        text(
            &policy,
            "grep",
            json!({"pattern": "hello", "path": "debug.log"})
        )
        .await,
        "debug.log:1: hello log"
    );
    assert_eq!(
        text(&policy, "grep", json!({"pattern": "nothing-here"})).await,
        "No matches found"
    );
}

#[tokio::test]
async fn grep_options() {
    let (_d, ws, policy) = workspace();
    project(&ws);
    // Regex by default: `.` matches any character.
    assert_eq!(
        text(&policy, "grep", json!({"pattern": "hello.world"})).await,
        "README.md:2: see helloXworld\nsrc/lib.rs:1: // hello.world"
    );
    assert_eq!(
        text(
            &policy,
            "grep",
            json!({"pattern": "hello.world", "literal": true})
        )
        .await,
        "src/lib.rs:1: // hello.world"
    );
    assert_eq!(
        text(&policy, "grep", json!({"pattern": "greeting"})).await,
        "src/lib.rs:2: pub fn greeting() {}"
    );
    assert_eq!(
        text(
            &policy,
            "grep",
            json!({"pattern": "greeting", "ignoreCase": true})
        )
        .await,
        "src/lib.rs:2: pub fn greeting() {}\nsrc/main.rs:2:     let Greeting = 1;"
    );
    assert_eq!(
        text(&policy, "grep", json!({"pattern": "hello", "glob": "*.md"})).await,
        "README.md:2: see helloXworld"
    );
    assert_eq!(
        text(&policy, "grep", json!({"pattern": "println", "context": 1})).await,
        "src/main.rs-2-     let Greeting = 1;\nsrc/main.rs:3:     println!(\"hello\");\n\
         src/main.rs-4- }"
    );
    assert_eq!(
        text(&policy, "grep", json!({"pattern": "hello", "limit": 2})).await,
        "README.md:2: see helloXworld\nsrc/lib.rs:1: // hello.world\n\n[2 matches limit \
         reached. Use limit=4 for more, or refine the pattern]"
    );
    let err = call(&policy, "grep", json!({"pattern": "("}))
        .await
        .unwrap_err();
    assert!(err.to_string().starts_with("invalid pattern: "), "{err}");
    let err = call(&policy, "grep", json!({"pattern": "x", "path": "../"}))
        .await
        .unwrap_err();
    assert!(err.to_string().contains("outside the allowed directories"));
}

#[tokio::test]
async fn grep_cuts_long_lines_and_separates_context_groups() {
    let (_d, ws, policy) = workspace();
    put(&ws, "long.txt", &format!("{}needle\n", "a".repeat(600)));
    assert_eq!(
        text(&policy, "grep", json!({"pattern": "needle"})).await,
        format!("long.txt:1: {}... [truncated]", "a".repeat(500))
    );
    put(&ws, "long.txt", "x1\nneedle\nx3\nx4\nx5\nx6\nneedle\n");
    assert_eq!(
        text(&policy, "grep", json!({"pattern": "needle", "context": 1})).await,
        "long.txt-1- x1\nlong.txt:2: needle\nlong.txt-3- x3\n--\nlong.txt-6- x6\nlong.txt:7: \
         needle"
    );
}

#[tokio::test]
async fn find_globs_respect_gitignore_and_limits() {
    let (_d, ws, policy) = workspace();
    project(&ws);
    put(&ws, ".git/config", "x");
    assert_eq!(
        text(&policy, "find", json!({"pattern": "*.rs"})).await,
        ".hidden/secret.rs\nsrc/lib.rs\nsrc/main.rs"
    );
    assert_eq!(
        text(&policy, "find", json!({"pattern": "src/*.rs"})).await,
        "src/lib.rs\nsrc/main.rs"
    );
    assert_eq!(
        text(&policy, "find", json!({"pattern": "**/main.rs"})).await,
        "src/main.rs"
    );
    assert_eq!(
        text(&policy, "find", json!({"pattern": "*.rs", "path": "src"})).await,
        "src/lib.rs\nsrc/main.rs"
    );
    assert_eq!(
        text(&policy, "find", json!({"pattern": "src"})).await,
        "src/"
    );
    assert_eq!(
        text(&policy, "find", json!({"pattern": "config"})).await,
        "No files found matching config"
    );
    assert_eq!(
        text(&policy, "find", json!({"pattern": "*.rs", "limit": 2})).await,
        ".hidden/secret.rs\nsrc/lib.rs\n\n[2 results limit reached. Use limit=4 for more, or \
         refine the pattern]"
    );
    let err = call(&policy, "find", json!({"pattern": "a[", "path": "."}))
        .await
        .unwrap_err();
    assert!(err.to_string().starts_with("invalid glob a[: "), "{err}");
    let err = call(&policy, "find", json!({"pattern": "*", "path": "/"}))
        .await
        .unwrap_err();
    assert!(err.to_string().contains("outside the allowed directories"));
    let err = call(&policy, "find", json!({"path": "."}))
        .await
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "invalid arguments for find: missing field `pattern`"
    );
}

#[tokio::test]
async fn search_stops_when_aborted() {
    let (_d, ws, policy) = workspace();
    project(&ws);
    let tool = file_tools(policy.clone())
        .into_iter()
        .find(|t| t.name() == "grep")
        .unwrap();
    let cancel = CancellationToken::new();
    cancel.cancel();
    let err = tool
        .execute(json!({"pattern": "hello"}), ToolContext::new("c", cancel))
        .await
        .unwrap_err();
    assert_eq!(err, ToolError::Aborted);
}

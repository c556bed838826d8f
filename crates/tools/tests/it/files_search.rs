//! `ls`, `grep` and `find` through `AgentTool::execute`: sorting, dotfiles, `.gitignore`,
//! limits, ignoreCase, literal, context, globs and confinement.

#![allow(clippy::unwrap_used)] // helpers outside #[test] fns unwrap too

use crate::common;

use common::{OUTSIDE, Says, assert_answers, assert_refusals, workspace};
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

/// A workspace holding [`project`]: the temp dir, the workspace, its policy.
fn project_workspace() -> (tempfile::TempDir, std::path::PathBuf, PathPolicy) {
    let (dir, ws, policy) = workspace();
    project(&ws);
    (dir, ws, policy)
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
    let (_d, ws, policy) = project_workspace();
    let listings = [
        (
            json!({}),
            ".gitignore\n.hidden/\nblob.bin\ndebug.log\nREADME.md\nsrc/\ntarget/",
        ),
        (json!({"path": "src"}), "lib.rs\nmain.rs"),
        (
            json!({"limit": 2}),
            ".gitignore\n.hidden/\n\n[2 of 7 entries shown. Use limit=4 for more.]",
        ),
    ];
    assert_answers(file_tools, &policy, "ls", &listings).await;
    std::fs::create_dir(ws.join("empty")).unwrap();
    assert_eq!(
        text(&policy, "ls", json!({"path": "empty"})).await,
        "(empty directory)"
    );
    let refusals = [
        (
            json!({"path": "README.md"}),
            Says::Exactly("README.md is not a directory; use read to see a file"),
        ),
        (json!({"path": ".."}), OUTSIDE),
    ];
    assert_refusals(file_tools, &policy, "ls", &refusals).await;
    let err = call(&policy, "ls", json!({"limit": -1})).await.unwrap_err();
    assert!(matches!(err, ToolError::InvalidArguments { .. }), "{err}");
}

#[tokio::test]
async fn grep_respects_gitignore_and_skips_hidden_and_binary() {
    let (_d, _ws, policy) = project_workspace();
    let cases = [
        (
            json!({"pattern": "hello"}),
            "README.md:2: see helloXworld\nsrc/lib.rs:1: // hello.world\nsrc/main.rs:3:     \
             println!(\"hello\");",
        ),
        // An explicit file is searched even if ignored.
        (
            json!({"pattern": "hello", "path": "debug.log"}),
            "debug.log:1: hello log",
        ),
        (json!({"pattern": "nothing-here"}), "No matches found"),
    ];
    assert_answers(file_tools, &policy, "grep", &cases).await;
}

#[tokio::test]
async fn grep_options() {
    let (_d, _ws, policy) = project_workspace();
    let cases = [
        // Regex by default: `.` matches any character.
        (
            json!({"pattern": "hello.world"}),
            "README.md:2: see helloXworld\nsrc/lib.rs:1: // hello.world",
        ),
        (
            json!({"pattern": "hello.world", "literal": true}),
            "src/lib.rs:1: // hello.world",
        ),
        (
            json!({"pattern": "greeting"}),
            "src/lib.rs:2: pub fn greeting() {}",
        ),
        (
            json!({"pattern": "greeting", "ignoreCase": true}),
            "src/lib.rs:2: pub fn greeting() {}\nsrc/main.rs:2:     let Greeting = 1;",
        ),
        (
            json!({"pattern": "hello", "glob": "*.md"}),
            "README.md:2: see helloXworld",
        ),
        (
            json!({"pattern": "println", "context": 1}),
            "src/main.rs-2-     let Greeting = 1;\nsrc/main.rs:3:     println!(\"hello\");\n\
             src/main.rs-4- }",
        ),
        (
            json!({"pattern": "hello", "limit": 2}),
            "README.md:2: see helloXworld\nsrc/lib.rs:1: // hello.world\n\n[2 matches limit \
             reached. Use limit=4 for more, or refine the pattern]",
        ),
    ];
    assert_answers(file_tools, &policy, "grep", &cases).await;
    let refusals = [
        (
            json!({"pattern": "("}),
            Says::StartsWith("invalid pattern: "),
        ),
        (json!({"pattern": "x", "path": "../"}), OUTSIDE),
    ];
    assert_refusals(file_tools, &policy, "grep", &refusals).await;
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
    let (_d, ws, policy) = project_workspace();
    put(&ws, ".git/config", "x");
    let cases = [
        (
            json!({"pattern": "*.rs"}),
            ".hidden/secret.rs\nsrc/lib.rs\nsrc/main.rs",
        ),
        (json!({"pattern": "src/*.rs"}), "src/lib.rs\nsrc/main.rs"),
        (json!({"pattern": "**/main.rs"}), "src/main.rs"),
        (
            json!({"pattern": "*.rs", "path": "src"}),
            "src/lib.rs\nsrc/main.rs",
        ),
        (json!({"pattern": "src"}), "src/"),
        (
            json!({"pattern": "config"}),
            "No files found matching config",
        ),
        (
            json!({"pattern": "*.rs", "limit": 2}),
            ".hidden/secret.rs\nsrc/lib.rs\n\n[2 results limit reached. Use limit=4 for more, or \
             refine the pattern]",
        ),
    ];
    assert_answers(file_tools, &policy, "find", &cases).await;
    let refusals = [
        (
            json!({"pattern": "a[", "path": "."}),
            Says::StartsWith("invalid glob a[: "),
        ),
        (json!({"pattern": "*", "path": "/"}), OUTSIDE),
        (
            json!({"path": "."}),
            Says::Exactly("invalid arguments for find: missing field `pattern`"),
        ),
    ];
    assert_refusals(file_tools, &policy, "find", &refusals).await;
}

#[tokio::test]
async fn search_stops_when_aborted() {
    let (_d, _ws, policy) = project_workspace();
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

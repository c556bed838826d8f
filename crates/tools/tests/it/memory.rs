//! The memory tools through `AgentTool::execute`: `memory_search` answers the best snippets
//! as JSON (path, line range, score, heading), keyword-only when no embedder is configured
//! and saying so; it sees an edit made since the last search; `memory_get` reads a window
//! of lines and refuses paths outside memory.

#![allow(clippy::unwrap_used)] // helpers outside #[test] fns unwrap too

use crate::common;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use common::{tool_named, workspace};
use pincer_agent::{ToolContext, ToolError, ToolOutput};
use pincer_memory::{IndexSettings, MemoryIndex, SearchOptions};
use pincer_tools::memory::{MemorySource, memory_tools};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

/// The fields of one `memory_search` result, in the order the JSON object keeps them.
const HIT_FIELDS: [&str; 6] = [
    "endLine",
    "heading",
    "path",
    "score",
    "snippet",
    "startLine",
];

fn source(dir: &Path, ws: &Path) -> MemorySource {
    let db: PathBuf = dir.join("memory").join("main.sqlite");
    let workspace = ws.to_path_buf();
    MemorySource::new(
        ws.to_path_buf(),
        Arc::new(move || {
            let (db, workspace) = (db.clone(), workspace.clone());
            Box::pin(async move {
                MemoryIndex::open(db, workspace, None, IndexSettings::default()).await
            })
        }),
        SearchOptions::default(),
    )
}

async fn call(source: &MemorySource, name: &str, args: Value) -> Result<ToolOutput, ToolError> {
    tool_named(memory_tools(source.clone()), name)
        .execute(args, ToolContext::new("c", CancellationToken::new()))
        .await
}

fn answer(out: &ToolOutput) -> Value {
    let text: Value = serde_json::from_str(&out.text_content()).unwrap();
    assert_eq!(Some(&text), out.details.as_ref(), "the text is the details");
    text
}

const MEMORY: &str = "# About the user\n\nAnn prefers green tea in the morning.\n\n## Work\n\nAnn works on the Pincer gateway in Rust.\n";

#[tokio::test]
async fn search_finds_a_fact_and_says_it_is_keyword_only() {
    let (dir, ws, _) = workspace();
    std::fs::write(ws.join("MEMORY.md"), MEMORY).unwrap();
    let source = source(dir.path(), &ws);

    let out = call(&source, "memory_search", json!({"query": "green tea"}))
        .await
        .unwrap();
    let found = answer(&out);
    assert_eq!(found["mode"], "keyword-only");
    assert!(
        found["reason"].as_str().unwrap().contains("embedding"),
        "{found}"
    );
    let results = found["results"].as_array().unwrap();
    assert!(!results.is_empty(), "{found}");
    let top = &results[0];
    assert_eq!(top["path"], "MEMORY.md");
    assert_eq!(top["startLine"], 1);
    assert!(
        top["snippet"].as_str().unwrap().contains("green tea"),
        "{top}"
    );
    assert!(top["score"].as_f64().unwrap() > 0.0);
    let keys: Vec<&String> = top.as_object().unwrap().keys().collect();
    assert_eq!(keys, HIT_FIELDS);

    // A note written since is found by the next search.
    std::fs::create_dir(ws.join("memory")).unwrap();
    std::fs::write(
        ws.join("memory/2026-11-22.md"),
        "# 2026-11-22\n\nAnn's sister Mia visits on Friday.\n",
    )
    .unwrap();
    let out = call(
        &source,
        "memory_search",
        json!({"query": "sister visits", "maxResults": 1}),
    )
    .await
    .unwrap();
    let found = answer(&out);
    let results = found["results"].as_array().unwrap();
    assert_eq!(results.len(), 1, "{found}");
    assert_eq!(results[0]["path"], "memory/2026-11-22.md");

    let empty = call(&source, "memory_search", json!({"query": "  "})).await;
    assert!(empty.is_err());
    assert_eq!(
        std::fs::read_to_string(ws.join("MEMORY.md")).unwrap(),
        MEMORY,
        "the Markdown is never written"
    );
}

#[tokio::test]
async fn get_reads_a_window_and_refuses_other_files() {
    let (dir, ws, _) = workspace();
    std::fs::write(ws.join("MEMORY.md"), MEMORY).unwrap();
    std::fs::write(ws.join("notes.md"), "not memory\n").unwrap();
    let source = source(dir.path(), &ws);

    let out = call(
        &source,
        "memory_get",
        json!({"path": "MEMORY.md", "from": 3, "lines": 1}),
    )
    .await
    .unwrap();
    assert_eq!(
        answer(&out),
        json!({"path": "MEMORY.md", "from": 3, "to": 3, "totalLines": 7, "truncated": false,
               "text": "Ann prefers green tea in the morning."})
    );
    for path in [
        "notes.md",
        "../outside.md",
        "/etc/passwd",
        "memory/../notes.md",
    ] {
        let refused = call(&source, "memory_get", json!({"path": path})).await;
        assert!(refused.is_err(), "{path} was read");
    }
}

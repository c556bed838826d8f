//! `write` and `edit` through `AgentTool::execute`: nested directories, atomic writes, and
//! a table of edit cases (exact, multi, legacy, CRLF, BOM, ambiguous, missing, fuzzy,
//! overlapping, no-op) plus the diff in the details.

#![allow(clippy::unwrap_used)] // helpers outside #[test] fns unwrap too

use crate::common;

use common::{OUTSIDE, Outcome, Says, assert_refusals, workspace};
use std::path::Path;

use pincer_agent::{ToolError, ToolOutput};
use pincer_tools::PathPolicy;
use pincer_tools::files::file_tools;
use serde_json::{Value, json};

async fn call(policy: &PathPolicy, name: &str, args: Value) -> Result<ToolOutput, ToolError> {
    common::call(file_tools, policy, name, args).await
}

fn entries(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[tokio::test]
async fn write_creates_directories_and_leaves_no_temp_file() {
    let (dir, ws, policy) = workspace();
    let write = |path: &str, content: &str| {
        call(&policy, "write", json!({"path": path, "content": content}))
    };
    assert_eq!(
        write("a/b/c.txt", "héllo\n").await.text(),
        "Wrote 7 bytes to a/b/c.txt"
    );
    assert_eq!(
        std::fs::read_to_string(ws.join("a/b/c.txt")).unwrap(),
        "héllo\n"
    );
    assert_eq!(
        write("a/b/c.txt", "x").await.text(),
        "Wrote 1 bytes to a/b/c.txt"
    );
    assert_eq!(entries(&ws.join("a/b")), vec!["c.txt"]);
    assert_eq!(std::fs::read_to_string(ws.join("a/b/c.txt")).unwrap(), "x");

    let refusals = [
        (json!({"path": "../out.txt", "content": "x"}), OUTSIDE),
        (
            json!({"path": "a", "content": "x"}),
            Says::Exactly("a is a directory; give a file path"),
        ),
        (
            json!({"path": "x.txt"}),
            Says::Exactly("invalid arguments for write: missing field `content`"),
        ),
    ];
    assert_refusals(file_tools, &policy, "write", &refusals).await;
    assert!(!dir.path().join("out.txt").exists());
}

/// One edit case: file bytes before, arguments (without `path`), then either the bytes
/// after and the output text, or the error message.
struct Case {
    name: &'static str,
    before: &'static str,
    args: Value,
    expect: Result<(&'static str, &'static str), &'static str>,
}

fn cases() -> Vec<Case> {
    vec![
        Case {
            name: "exact single edit",
            before: "fn a() {}\nfn b() {}\n",
            args: json!({"edits": [{"oldText": "fn b() {}", "newText": "fn b() { 1 }"}]}),
            expect: Ok((
                "fn a() {}\nfn b() { 1 }\n",
                "Edited f.txt: replaced 1 block of text.",
            )),
        },
        Case {
            name: "multi edit against the original",
            before: "alpha\nbeta\ngamma\n",
            args: json!({"edits": [
                {"oldText": "gamma", "newText": "GAMMA"},
                {"oldText": "alpha", "newText": "beta"},
            ]}),
            expect: Ok((
                "beta\nbeta\nGAMMA\n",
                "Edited f.txt: replaced 2 blocks of text.",
            )),
        },
        Case {
            name: "legacy form",
            before: "x = 1\n",
            args: json!({"oldText": "x = 1", "newText": "x = 2"}),
            expect: Ok(("x = 2\n", "Edited f.txt: replaced 1 block of text.")),
        },
        Case {
            name: "CRLF preserved",
            before: "one\r\ntwo\r\nthree\r\n",
            args: json!({"oldText": "one\ntwo", "newText": "uno\ndos"}),
            expect: Ok((
                "uno\r\ndos\r\nthree\r\n",
                "Edited f.txt: replaced 1 block of text.",
            )),
        },
        Case {
            name: "BOM preserved",
            before: "\u{feff}hello world\n",
            args: json!({"oldText": "hello", "newText": "goodbye"}),
            expect: Ok((
                "\u{feff}goodbye world\n",
                "Edited f.txt: replaced 1 block of text.",
            )),
        },
        Case {
            name: "ambiguous match refused",
            before: "let x = 1;\nlet x = 1;\n",
            args: json!({"oldText": "let x = 1;", "newText": "let x = 2;"}),
            expect: Err(
                "oldText is ambiguous in f.txt: 2 matches; include more surrounding context \
                 to make it unique",
            ),
        },
        Case {
            name: "no match refused with the closest line",
            before: "fn main() {\n    println!(\"hello\");\n}\n",
            args: json!({"oldText": "    println!(\"helo\");", "newText": "x"}),
            expect: Err(
                "oldText not found in f.txt. It must match the file exactly, including \
                 whitespace and indentation. The closest line is 2: `println!(\"hello\");`",
            ),
        },
        Case {
            name: "no match and nothing close",
            before: "abc\n",
            args: json!({"oldText": "zzzzzzzz", "newText": "x"}),
            expect: Err(
                "oldText not found in f.txt. It must match the file exactly, including \
                 whitespace and indentation; read the file to see its current content",
            ),
        },
        Case {
            name: "fuzzy: trailing spaces",
            before: "a = 1;   \nb = 2;\t\nc = 3;\n",
            args: json!({"oldText": "a = 1;\nb = 2;", "newText": "a = 10;\nb = 20;"}),
            expect: Ok((
                "a = 10;\nb = 20;\t\nc = 3;\n",
                "Edited f.txt: replaced 1 block of text. edits[0] matched after ignoring \
                 trailing whitespace and quote/dash differences.",
            )),
        },
        Case {
            name: "fuzzy: smart quotes and dashes",
            before: "say(\u{201C}it\u{2019}s \u{2014} ok\u{201D});\n",
            args: json!({"oldText": "say(\"it's - ok\");", "newText": "say(\"fine\");"}),
            expect: Ok((
                "say(\"fine\");\n",
                "Edited f.txt: replaced 1 block of text. edits[0] matched after ignoring \
                 trailing whitespace and quote/dash differences.",
            )),
        },
        Case {
            name: "overlapping edits refused",
            before: "one two three\n",
            args: json!({"edits": [
                {"oldText": "one two", "newText": "1 2"},
                {"oldText": "two three", "newText": "2 3"},
            ]}),
            expect: Err("edits[0] and edits[1] overlap in f.txt; merge them into one edit"),
        },
        Case {
            name: "multi edit names the failing edit",
            before: "a\nb\n",
            args: json!({"edits": [
                {"oldText": "a", "newText": "A"},
                {"oldText": "q", "newText": "Q"},
            ]}),
            expect: Err(
                "edits[1]: oldText not found in f.txt. It must match the file exactly, \
                 including whitespace and indentation; read the file to see its current \
                 content",
            ),
        },
        Case {
            name: "no-op refused",
            before: "same\n",
            args: json!({"oldText": "same", "newText": "same"}),
            expect: Err(
                "no changes made to f.txt: the replacement text is identical to the original",
            ),
        },
        Case {
            name: "empty oldText refused",
            before: "x\n",
            args: json!({"oldText": "", "newText": "y"}),
            expect: Err("oldText is empty; give the exact text to replace"),
        },
        Case {
            name: "neither form",
            before: "x\n",
            args: json!({}),
            expect: Err(
                "invalid arguments for edit: give edits: [{oldText, newText}, ...] (or \
                 oldText and newText)",
            ),
        },
        Case {
            name: "half a legacy pair",
            before: "x\n",
            args: json!({"oldText": "x"}),
            expect: Err("invalid arguments for edit: oldText and newText must be given together"),
        },
        Case {
            name: "wrong type",
            before: "x\n",
            args: json!({"edits": [{"oldText": 1, "newText": "y"}]}),
            expect: Err(
                "invalid arguments for edit: edits[0].oldText: invalid type: integer `1`, \
                 expected a string",
            ),
        },
    ]
}

#[tokio::test]
async fn edit_cases() {
    for case in cases() {
        let (_d, ws, policy) = workspace();
        std::fs::write(ws.join("f.txt"), case.before).unwrap();
        let mut args = case.args.clone();
        args["path"] = json!("f.txt");
        let result = call(&policy, "edit", args).await;
        let after = std::fs::read_to_string(ws.join("f.txt")).unwrap();
        match (case.expect, result) {
            (Ok((content, text)), Ok(out)) => {
                assert_eq!(after, content, "{}", case.name);
                assert_eq!(out.text_content(), text, "{}", case.name);
            }
            (Err(message), Err(err)) => {
                assert_eq!(err.to_string(), message, "{}", case.name);
                assert_eq!(after, case.before, "{}: file unchanged", case.name);
            }
            (expect, got) => panic!("{}: expected {expect:?}, got {got:?}", case.name),
        }
        assert_eq!(entries(&ws), vec!["f.txt"], "{}: no temp file", case.name);
    }
}

#[tokio::test]
async fn edit_details_carry_a_unified_diff() {
    let (_d, ws, policy) = workspace();
    let before: String = (1..=10).map(|i| format!("line {i}\n")).collect();
    std::fs::write(ws.join("f.txt"), &before).unwrap();
    let out = call(
        &policy,
        "edit",
        json!({"path": "f.txt", "oldText": "line 6\n", "newText": "line six\n"}),
    )
    .await
    .unwrap();
    let details = out.details.unwrap();
    assert_eq!(details["firstChangedLine"], 6);
    assert_eq!(
        details["diff"],
        "--- a/f.txt\n+++ b/f.txt\n@@ -3,7 +3,7 @@\n line 3\n line 4\n line 5\n-line 6\n\
         +line six\n line 7\n line 8\n line 9\n"
    );
    assert_eq!(details["fuzzyEdits"], json!([]));
}

#[tokio::test]
async fn edit_refuses_binary_and_outside_files() {
    let (dir, ws, policy) = workspace();
    std::fs::write(ws.join("b.bin"), b"a\0b").unwrap();
    std::fs::write(dir.path().join("out.txt"), "a").unwrap();
    let refusals = [
        (
            json!({"path": "b.bin", "oldText": "a", "newText": "b"}),
            Says::Exactly("b.bin is a binary file; edit changes text files"),
        ),
        (
            json!({"path": "../out.txt", "oldText": "a", "newText": "b"}),
            OUTSIDE,
        ),
    ];
    assert_refusals(file_tools, &policy, "edit", &refusals).await;
    assert_eq!(
        std::fs::read_to_string(dir.path().join("out.txt")).unwrap(),
        "a"
    );
}

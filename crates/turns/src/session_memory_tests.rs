//! Per-session memory's pure parts: file names, thresholds, bullets, the block, the tail.

#![allow(clippy::unwrap_used, clippy::expect_used)]
#![allow(
    clippy::disallowed_methods,
    reason = "tests set up and inspect files directly"
)]

use pincer_ai::{AssistantMessage, ContentBlock, Message, TextContent};

use super::*;

fn user(text: &str) -> Message {
    Message::user(text)
}

fn assistant(text: &str) -> Message {
    Message::Assistant(AssistantMessage {
        content: vec![ContentBlock::Text(TextContent {
            text: text.into(),
            ..Default::default()
        })],
        ..Default::default()
    })
}

/// `n` messages alternating user `u<i>` / assistant `a<i>`, numbered by position.
fn conversation(n: usize) -> Vec<Message> {
    (0..n)
        .map(|i| {
            if i % 2 == 0 {
                user(&format!("u{i}"))
            } else {
                assistant(&format!("a{i}"))
            }
        })
        .collect()
}

#[test]
fn file_names_are_sanitised_like_lainclaws() {
    assert_eq!(memory_file_stem("agent:main:main"), "agent_main_main");
    assert_eq!(
        memory_file_stem("  Agent:Main:Telegram:DM:+49 123  "),
        "agent_main_telegram_dm_49_123"
    );
    assert_eq!(memory_file_stem("a::/..//b"), "a_.._b");
    assert_eq!(memory_file_stem(":::"), "session");
    assert_eq!(memory_file_stem(""), "session");
    assert_eq!(memory_file_stem("ünïcode"), "n_code");
    let long = "x".repeat(300);
    assert_eq!(memory_file_stem(&long).len(), 120);
    // Cut first, then trimmed: a run of `_` at the cut goes.
    let edge = format!("{}:{}", "y".repeat(119), "z".repeat(10));
    assert_eq!(memory_file_stem(&edge), "y".repeat(119));
    assert_eq!(
        memory_file(Path::new("/w"), "agent:main:main"),
        Path::new("/w/memory/agent_main_main.md")
    );
}

#[test]
fn twenty_four_messages_write_nothing() {
    assert_eq!(plan_summary(&conversation(24), 0), None);
}

#[test]
fn the_twenty_fifth_summarises_all_but_the_last_twelve() {
    let plan = plan_summary(&conversation(25), 0).unwrap();
    assert_eq!(plan.compacted_to, 13);
    let expected: Vec<String> = (0..13)
        .map(|i| {
            if i % 2 == 0 {
                format!("user: u{i}")
            } else {
                format!("assistant: a{i}")
            }
        })
        .collect();
    assert_eq!(plan.lines, expected);
}

#[test]
fn only_new_messages_and_at_least_six_lines() {
    // 13 already summarised; 30 messages: 13..18 is 5 lines, not enough.
    assert_eq!(plan_summary(&conversation(30), 13), None);
    let plan = plan_summary(&conversation(31), 13).unwrap();
    assert_eq!(plan.compacted_to, 19);
    assert_eq!(plan.lines.first().unwrap(), "assistant: a13");
    assert_eq!(plan.lines.len(), 6);
    // A count past the cut (a transcript cut shorter) summarises nothing twice.
    assert_eq!(plan_summary(&conversation(31), 40), None);
}

#[test]
fn at_most_sixteen_lines_the_most_recent() {
    let plan = plan_summary(&conversation(60), 0).unwrap();
    assert_eq!(plan.compacted_to, 48);
    assert_eq!(plan.lines.len(), 16);
    assert_eq!(plan.lines.first().unwrap(), "user: u32");
    assert_eq!(plan.lines.last().unwrap(), "assistant: a47");
}

#[test]
fn tool_noise_is_skipped_and_lines_are_cut() {
    let mut messages = conversation(25);
    let tool_call = pincer_ai::ToolCall {
        id: "c1".into(),
        name: "read".into(),
        arguments: serde_json::json!({"path": "x"}),
        thought_signature: None,
    };
    messages[1] = Message::Assistant(AssistantMessage {
        content: vec![ContentBlock::ToolCall(tool_call.clone())],
        ..Default::default()
    });
    messages[2] = Message::tool_result(&tool_call, "file text", false);
    messages[3] = assistant("NO_REPLY");
    messages[4] = user(&format!("line one\n\n  line two {}", "w".repeat(200)));
    let plan = plan_summary(&messages, 0).unwrap();
    assert_eq!(plan.lines.len(), 10);
    assert_eq!(plan.lines[0], "user: u0");
    let long = &plan.lines[1];
    assert!(long.starts_with("user: line one line two www"), "{long}");
    assert!(long.ends_with("..."), "{long}");
    assert_eq!(long.chars().count(), "user: ".len() + LINE_MAX_CHARS);
}

#[test]
fn the_block_is_lainclaws() {
    let block = render_block(
        "2026-01-02T03:04:05.000Z",
        "s1",
        &["user: hi".into(), "assistant: hello".into()],
    );
    assert_eq!(
        block,
        "\n## 2026-01-02T03:04:05.000Z (s1)\n## Memory Summary\n- user: hi\n- assistant: hello\n"
    );
}

#[test]
fn the_snippet_is_the_trimmed_tail() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("m.md");
    assert_eq!(memory_snippet(&path), None);
    std::fs::write(&path, "  \n").unwrap();
    assert_eq!(memory_snippet(&path), None);
    std::fs::write(&path, "\n## block\n- user: hi\n").unwrap();
    assert_eq!(memory_snippet(&path).unwrap(), "## block\n- user: hi");
    let text = format!("{}é{}", "a".repeat(10), "b".repeat(1999));
    std::fs::write(&path, &text).unwrap();
    let snippet = memory_snippet(&path).unwrap();
    assert_eq!(snippet, format!("...é{}", "b".repeat(1999)));
    let Message::User(message) = memory_message("x") else {
        panic!("not a user message");
    };
    assert_eq!(
        message.content,
        pincer_ai::UserContent::Text("[memory]\nx".into())
    );
}

#[test]
fn the_memory_goes_before_the_history_after_a_summary() {
    let memory = memory_message("m");
    // Compared as built once: messages are stamped with the time.
    let plain = inject(conversation(2), memory.clone());
    assert_eq!(plain[0], memory);
    let summary = pincer_agent::compaction::summary_message("old things");
    let mut with_summary = vec![summary.clone()];
    with_summary.extend(conversation(2));
    let injected = inject(with_summary, memory.clone());
    assert_eq!(injected[0], summary);
    assert_eq!(injected[1], memory);
    assert_eq!(inject(Vec::new(), memory.clone()), vec![memory]);
}

#[test]
fn a_block_already_written_is_not_appended_again() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("memory").join("k.md");
    let lines = vec!["user: hi".to_owned()];
    let block = render_block("t1", "s", &lines);
    let summary = block.split_once("## Memory Summary").unwrap().1;
    append_block(&path, &block, summary).unwrap();
    // The same bullets again (a crash before the index recorded them): not twice.
    let again = render_block("t2", "s", &lines);
    append_block(&path, &again, summary).unwrap();
    assert_eq!(std::fs::read_to_string(&path).unwrap(), block);
    let other = render_block("t3", "s", &["user: more".into()]);
    let other_summary = other.split_once("## Memory Summary").unwrap().1;
    append_block(&path, &other, other_summary).unwrap();
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        format!("{block}{other}")
    );
}

/// Finding 8 of the security review: a session's memory is as private as its transcript.
#[cfg(unix)]
#[test]
fn the_memory_file_and_its_directory_are_private() {
    use std::os::unix::fs::PermissionsExt;
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("memory").join("k.md");
    let block = render_block("t1", "s", &["user: hi".to_owned()]);
    let summary = block.split_once("## Memory Summary").unwrap().1;
    append_block(&path, &block, summary).unwrap();
    assert_eq!((mode(&path), mode(path.parent().unwrap())), (0o600, 0o700));
}

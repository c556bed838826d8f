//! Unit tests of the pure parts of compaction.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use pincer_ai::{
    AssistantMessage, ContentBlock, ImageContent, Message, StopReason, ThinkingContent, ToolCall,
    ToolResultMessage, Usage, UserContent, UserMessage,
};
use serde_json::json;

use super::*;

/// The cut keeping messages from `first_kept_index`, inside the turn started at
/// `turn_start_index` if any.
fn cut_at(first_kept_index: usize, turn_start_index: Option<usize>) -> CutPoint {
    CutPoint {
        first_kept_index,
        turn_start_index,
    }
}

fn user(text: &str) -> Message {
    Message::User(UserMessage {
        content: UserContent::Text(text.into()),
        timestamp: 1,
    })
}

fn assistant(text: &str, total_tokens: u64) -> Message {
    Message::Assistant(AssistantMessage {
        content: vec![ContentBlock::text(text)],
        provider: "p".into(),
        model: "m".into(),
        usage: Usage {
            total_tokens,
            ..Usage::default()
        },
        ..AssistantMessage::default()
    })
}

fn call(id: &str, name: &str, args: serde_json::Value) -> Message {
    Message::Assistant(AssistantMessage {
        content: vec![ContentBlock::ToolCall(ToolCall {
            id: id.into(),
            name: name.into(),
            arguments: args,
            thought_signature: None,
        })],
        stop_reason: StopReason::ToolUse,
        ..AssistantMessage::default()
    })
}

fn result(id: &str, text: &str) -> Message {
    Message::ToolResult(ToolResultMessage {
        tool_call_id: id.into(),
        tool_name: "read".into(),
        content: vec![ContentBlock::text(text)],
        details: None,
        is_error: false,
        timestamp: 1,
    })
}

fn errored(message: &str) -> AssistantMessage {
    AssistantMessage {
        stop_reason: StopReason::Error,
        error_message: Some(message.into()),
        provider: "p".into(),
        model: "m".into(),
        ..AssistantMessage::default()
    }
}

#[test]
fn settings_default_and_serde() {
    let s = CompactionSettings::default();
    assert_eq!(
        (s.enabled, s.reserve_tokens, s.keep_recent_tokens),
        (true, 16384, 20000)
    );
    let parsed: CompactionSettings = serde_json::from_value(json!({"reserveTokens": 100})).unwrap();
    assert_eq!(parsed.reserve_tokens, 100);
    assert_eq!(parsed.keep_recent_tokens, 20000);
    assert_eq!(
        serde_json::to_value(s).unwrap(),
        json!({"enabled": true, "reserveTokens": 16384, "keepRecentTokens": 20000})
    );
}

#[test]
fn estimates_chars_over_four() {
    assert_eq!(estimate_tokens(&user("abcde")), 2);
    assert_eq!(estimate_tokens(&user("")), 0);
    // name (4) + `{"path":"a"}` (12) = 16 chars
    assert_eq!(estimate_tokens(&call("c", "read", json!({"path": "a"}))), 4);
    let thinking = Message::Assistant(AssistantMessage {
        content: vec![
            ContentBlock::Thinking(ThinkingContent {
                thinking: "1234".into(),
                ..ThinkingContent::default()
            }),
            ContentBlock::text("5678"),
        ],
        ..AssistantMessage::default()
    });
    assert_eq!(estimate_tokens(&thinking), 2);
    let image = Message::ToolResult(ToolResultMessage {
        tool_call_id: "c".into(),
        tool_name: "read".into(),
        content: vec![ContentBlock::Image(ImageContent {
            data: "AA==".into(),
            mime_type: "image/png".into(),
        })],
        details: None,
        is_error: false,
        timestamp: 1,
    });
    assert_eq!(estimate_tokens(&image), 1200);
}

#[test]
fn context_estimate_uses_last_usage_plus_trailing() {
    let messages = vec![
        user("aaaa"),
        assistant("x", 1000),
        user("bbbb"),
        assistant("y", 5000),
        result("c", "12345678"),
        user("1234"),
    ];
    let estimate = estimate_context(&messages);
    assert_eq!(estimate.usage_tokens, 5000);
    assert_eq!(estimate.trailing_tokens, 3);
    assert_eq!(estimate.last_usage_index, Some(3));
    assert_eq!(estimate_context_tokens(&messages), 5003);
}

#[test]
fn context_estimate_skips_errored_aborted_and_zero_usage() {
    let mut failed = errored("boom");
    failed.usage.total_tokens = 99_999;
    let mut aborted = failed.clone();
    aborted.stop_reason = StopReason::Aborted;
    let messages = vec![
        user("aaaa"),
        assistant("x", 1000),
        Message::Assistant(failed),
        Message::Assistant(aborted),
        assistant("", 0),
    ];
    assert_eq!(estimate_context_tokens(&messages), 1000);
    // No usage anywhere: chars/4 of everything.
    assert_eq!(
        estimate_context_tokens(&[user("aaaa"), assistant("bbbbbbbb", 0)]),
        3
    );
    // Components when the total is missing.
    let mut parts = AssistantMessage::default();
    parts.usage.input = 10;
    parts.usage.output = 5;
    parts.usage.cache_read = 100;
    assert_eq!(estimate_context_tokens(&[Message::Assistant(parts)]), 115);
}

#[test]
fn should_compact_threshold() {
    let s = CompactionSettings::default();
    assert!(!should_compact(200_000 - 16384, 200_000, &s));
    assert!(should_compact(200_000 - 16383, 200_000, &s));
    let off = CompactionSettings {
        enabled: false,
        ..s
    };
    assert!(!should_compact(1_000_000, 200_000, &off));
}

/// 100-token messages (400 chars).
fn big(c: char) -> String {
    std::iter::repeat_n(c, 400).collect()
}

#[test]
fn cut_keeps_at_least_keep_recent_at_a_user_message() {
    let messages = vec![
        user(&big('a')),
        assistant(&big('b'), 0),
        user(&big('c')),
        assistant(&big('d'), 0),
        user(&big('e')),
        assistant(&big('f'), 0),
    ];
    let cut = find_cut_point(&messages, 250);
    // Walking back: 100, 200, 300 at index 3 (an assistant): the cut is there, inside the
    // turn started at index 2.
    assert_eq!(cut.first_kept_index, 3);
    assert_eq!(cut.turn_start_index, Some(2));
    assert!(cut.is_split_turn());
    let kept: u64 = messages[cut.first_kept_index..]
        .iter()
        .map(estimate_tokens)
        .sum();
    assert!(kept >= 250);

    assert_eq!(find_cut_point(&messages, 400), cut_at(2, None));
}

#[test]
fn cut_keeps_everything_when_small() {
    let messages = vec![user("hi"), assistant("hello", 10)];
    let cut = find_cut_point(&messages, 20000);
    assert_eq!(cut.first_kept_index, 0);
    assert_eq!(find_cut_point(&[], 10).first_kept_index, 0);
}

#[test]
fn cut_never_separates_a_call_from_its_result() {
    // The budget is crossed on the big tool result: the cut moves forward to the next
    // user/assistant message, so the call and its result are summarised together.
    let messages = vec![
        user("go"),
        call("c1", "read", json!({"path": "a"})),
        result("c1", &big('r').repeat(10)),
        assistant("done", 0),
        user(&big('u')),
    ];
    let cut = find_cut_point(&messages, 150);
    assert_eq!(cut.first_kept_index, 3);
    for keep in [1, 50, 100, 150, 1000, 1200, 5000] {
        let cut = find_cut_point(&messages, keep);
        assert!(!matches!(
            messages[cut.first_kept_index],
            Message::ToolResult(_)
        ));
    }
    // A result at the very end that crosses the budget: cut at its call.
    let messages = vec![
        user(&big('u')),
        assistant("ok", 0),
        call("c1", "read", json!({"path": "a"})),
        result("c1", &big('r').repeat(3)),
    ];
    assert_eq!(find_cut_point(&messages, 200), cut_at(2, Some(0)));
}

#[test]
fn cut_skips_a_leading_summary() {
    let messages = vec![
        summary_message("old"),
        user(&big('a')),
        assistant(&big('b'), 0),
    ];
    assert_eq!(history_start(&messages), 1);
    let cut = find_cut_point(&messages, 10_000);
    assert_eq!(cut.first_kept_index, 1);
    assert_eq!(find_cut_point(&messages, 50), cut_at(2, Some(1)));
}

#[test]
fn serialises_like_pi() {
    let messages = vec![
        user("fix the bug"),
        Message::Assistant(AssistantMessage {
            content: vec![
                ContentBlock::Thinking(ThinkingContent {
                    thinking: "hmm".into(),
                    ..ThinkingContent::default()
                }),
                ContentBlock::text("Looking."),
                ContentBlock::ToolCall(ToolCall {
                    id: "c1".into(),
                    name: "read".into(),
                    arguments: json!({"path": "src/a.rs", "limit": 10}),
                    thought_signature: None,
                }),
                ContentBlock::ToolCall(ToolCall {
                    id: "c2".into(),
                    name: "bash".into(),
                    arguments: json!({"command": "ls"}),
                    thought_signature: None,
                }),
            ],
            ..AssistantMessage::default()
        }),
        result("c1", "fn a() {}"),
        result("c2", ""),
        user(""),
    ];
    assert_eq!(
        serialize_conversation(&messages),
        "[User]: fix the bug\n\n[Assistant thinking]: hmm\n\n[Assistant]: Looking.\n\n\
         [Assistant tool calls]: read(limit=10, path=\"src/a.rs\"); bash(command=\"ls\")\n\n\
         [Tool result]: fn a() {}"
    );
    let long = "x".repeat(2500);
    let text = serialize_conversation(&[result("c", &long)]);
    assert_eq!(
        text,
        format!(
            "[Tool result]: {}\n\n[... 500 more characters truncated]",
            "x".repeat(2000)
        )
    );
}

#[test]
fn prompts_have_pi_sections_and_previous_summary() {
    let messages = vec![user("build it")];
    let first = summary_prompt(&messages, None, None);
    assert!(first.starts_with("<conversation>\n[User]: build it\n</conversation>\n\n"));
    assert!(first.ends_with(SUMMARIZATION_PROMPT));
    for section in [
        "## Goal",
        "## Constraints & Preferences",
        "## Progress",
        "### Done",
        "### In Progress",
        "### Blocked",
        "## Key Decisions",
        "## Next Steps",
        "## Critical Context",
    ] {
        assert!(first.contains(section), "{section}");
        assert!(UPDATE_SUMMARIZATION_PROMPT.contains(section), "{section}");
    }
    assert!(!first.contains("<previous-summary>"));

    let update = summary_prompt(&messages, Some("OLD"), Some("the API"));
    assert!(update.contains(
        "</conversation>\n\n<previous-summary>\nOLD\n</previous-summary>\n\nThe messages above are NEW"
    ));
    assert!(update.ends_with(&format!(
        "{UPDATE_SUMMARIZATION_PROMPT}\n\nAdditional focus: the API"
    )));
    assert!(SUMMARIZATION_SYSTEM_PROMPT.contains("ONLY output the structured summary."));
    assert!(turn_prefix_prompt(&messages).ends_with(TURN_PREFIX_SUMMARIZATION_PROMPT));
}

#[test]
fn summary_message_round_trips() {
    let message = summary_message("S");
    let Message::User(u) = &message else {
        panic!("not a user message")
    };
    assert_eq!(
        u.text(),
        "The conversation history before this point was compacted into the following summary:\n\n<summary>\nS\n</summary>"
    );
    assert_eq!(summary_of(&message).as_deref(), Some("S"));
    assert_eq!(
        previous_summary(&[message, user("x")]).as_deref(),
        Some("S")
    );
    assert_eq!(previous_summary(&[user("x")]), None);
}

#[test]
fn file_operations_and_tags() {
    let mut files = FileOperations::default();
    for m in [
        call("1", "read", json!({"path": "b.rs"})),
        call("2", "read", json!({"path": "a.rs"})),
        call("3", "edit", json!({"path": "a.rs"})),
        call("4", "write", json!({"path": "c.rs"})),
        call("5", "bash", json!({"path": "ignored"})),
        call("6", "read", json!({})),
    ] {
        files.record(&m);
    }
    let details = files.details();
    assert_eq!(details.read_files, vec!["b.rs"]);
    assert_eq!(details.modified_files, vec!["a.rs", "c.rs"]);
    let tags = details.to_tags();
    assert_eq!(
        tags,
        "\n\n<read-files>\nb.rs\n</read-files>\n\n<modified-files>\na.rs\nc.rs\n</modified-files>"
    );
    assert_eq!(parse_file_lists(&format!("summary{tags}")), details);
    assert_eq!(CompactionDetails::default().to_tags(), "");
    assert_eq!(
        serde_json::to_value(&details).unwrap(),
        json!({"readFiles": ["b.rs"], "modifiedFiles": ["a.rs", "c.rs"]})
    );
}

#[test]
fn recognises_context_overflow() {
    for text in [
        "prompt is too long: 213462 tokens > 200000 maximum",
        "Your input exceeds the context window of this model",
        "The input token count (1196265) exceeds the maximum number of tokens allowed (1048575)",
        "This model's maximum prompt length is 131072 but the request contains 537812 tokens",
        "Please reduce the length of the messages or completion",
        "This endpoint's maximum context length is 8192 tokens. However, you requested about 9000",
        "prompt token count of 9 exceeds the limit of 8",
        "the request exceeds the available context size, try increasing it",
        "invalid params, context window exceeds limit",
        "Your request exceeded model token limit: 1 (requested: 2)",
        "Prompt contains 9 tokens ... too large for model with 8 maximum context length",
        "error code: context_length_exceeded",
        "400 status code (no body)",
        "413 (no body)",
        "anthropic/claude: HTTP 400 Bad Request: x; the conversation is too long for this model, compact it or start a new session",
    ] {
        assert!(is_context_overflow(&errored(text)), "{text}");
    }
    for text in [
        "rate limited",
        "429 (no body)",
        "maximum context length is large",
        "overloaded",
    ] {
        assert!(!is_context_overflow(&errored(text)), "{text}");
    }
    let mut ok = errored("prompt is too long");
    ok.stop_reason = StopReason::Stop;
    assert!(!is_context_overflow(&ok));
    ok.usage.input = 150;
    assert!(is_silent_overflow(&ok, 100));
    assert!(!is_silent_overflow(&ok, 0));
}

fn model(window: u64) -> pincer_ai::Model {
    let mut m = pincer_ai::providers::stub::model();
    m.provider = "p".into();
    m.id = "m".into();
    m.context_window = window;
    m
}

#[test]
fn trigger_decides_threshold_and_overflow() {
    let s = CompactionSettings::default();
    let Message::Assistant(reply) = assistant("x", 190_000) else {
        unreachable!()
    };
    let messages = vec![user("hi"), Message::Assistant(reply.clone())];
    assert_eq!(
        compaction_trigger(&reply, &messages, &model(200_000), &s),
        Some(CompactionReason::Threshold)
    );
    assert_eq!(
        compaction_trigger(&reply, &messages, &model(1_000_000), &s),
        None
    );
    let off = CompactionSettings {
        enabled: false,
        ..s
    };
    assert_eq!(
        compaction_trigger(&reply, &messages, &model(200_000), &off),
        None
    );

    let overflow = errored("prompt is too long");
    assert_eq!(
        compaction_trigger(&overflow, &messages, &model(200_000), &s),
        Some(CompactionReason::Overflow)
    );
    let mut other_model = overflow.clone();
    other_model.model = "other".into();
    assert_eq!(
        compaction_trigger(&other_model, &messages, &model(200_000), &s),
        None
    );
    let mut aborted = reply.clone();
    aborted.stop_reason = StopReason::Aborted;
    assert_eq!(
        compaction_trigger(&aborted, &messages, &model(200_000), &s),
        None
    );
    assert_eq!(
        compaction_trigger(&errored("boom"), &messages, &model(200_000), &s),
        None
    );
}

#[test]
fn compaction_end_payload_is_pis() {
    let result = CompactionResult {
        summary: "S".into(),
        first_kept_index: 3,
        first_kept_message: user("x"),
        tokens_before: 500,
        details: CompactionDetails::default(),
        messages: vec![],
    };
    let ok = CompactionEnd::new(CompactionReason::Overflow, &Ok(result));
    assert_eq!(
        serde_json::to_value(&ok).unwrap(),
        json!({"reason": "overflow", "aborted": false, "willRetry": true,
               "result": {"summary": "S", "firstKeptIndex": 3, "tokensBefore": 500,
                          "details": {"readFiles": [], "modifiedFiles": []}}})
    );
    let failed = CompactionEnd::new(
        CompactionReason::Threshold,
        &Err(CompactionError::SummaryFailed("x".into())),
    );
    assert_eq!(
        serde_json::to_value(&failed).unwrap(),
        json!({"reason": "threshold", "aborted": false, "willRetry": false,
               "errorMessage": "Auto-compaction failed: Summarization failed: x"})
    );
    let aborted = CompactionEnd::new(CompactionReason::Manual, &Err(CompactionError::Aborted));
    assert!(aborted.aborted && aborted.error_message.is_none());
}

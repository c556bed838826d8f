//! Compaction end to end: against the offline stub model (deterministic summary, so the
//! new message list is checked exactly) and against the mock LLM server over real HTTP
//! (the summary request: system prompt, max_tokens, reasoning, prompt text; failures).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use pincer_agent::StreamFn;
use pincer_agent::compaction::{
    COMPACTION_SUMMARY_PREFIX, COMPACTION_SUMMARY_SUFFIX, CompactionError, CompactionResult,
    CompactionSettings, SUMMARIZATION_SYSTEM_PROMPT, compact, summary_message, summary_of,
};
use pincer_ai::providers::stub;
use pincer_ai::{
    AssistantMessage, CancellationToken, ContentBlock, LlmClient, Message, Model, StopReason,
    ToolCall, Usage,
};
use pincer_testkit::{Fault, Match, MockLlm, Reply, Rule, Scenario};
use serde_json::{Value, json};

use crate::common::mock_anthropic;

fn stub_stream_fn() -> StreamFn {
    let client = LlmClient::new();
    Arc::new(move |m, c, o| client.stream(m, c, o))
}

fn assistant(text: &str) -> Message {
    Message::Assistant(AssistantMessage {
        content: vec![ContentBlock::text(text)],
        usage: Usage {
            total_tokens: 1000,
            ..Usage::default()
        },
        ..AssistantMessage::default()
    })
}

fn tool_call(id: &str, name: &str, path: &str) -> (Message, Message) {
    let call = ToolCall {
        id: id.into(),
        name: name.into(),
        arguments: json!({"path": path}),
        thought_signature: None,
    };
    let message = Message::Assistant(AssistantMessage {
        content: vec![ContentBlock::ToolCall(call.clone())],
        stop_reason: StopReason::ToolUse,
        ..AssistantMessage::default()
    });
    (message, Message::tool_result(&call, "ok", false))
}

/// 100 estimated tokens.
fn filler(c: char) -> String {
    std::iter::repeat_n(c, 400).collect()
}

/// Two old turns (with file tool calls) and a recent one of about 300 tokens.
fn conversation() -> Vec<Message> {
    let (read, read_result) = tool_call("c1", "read", "src/lib.rs");
    let (edit, edit_result) = tool_call("c2", "edit", "src/main.rs");
    vec![
        Message::user("fix the login bug"),
        read,
        read_result,
        edit,
        edit_result,
        assistant("Fixed."),
        Message::user("then add tests"),
        assistant("Added."),
        Message::user(format!("now this: {}", filler('a'))),
        assistant(&filler('b')),
        Message::user(filler('c')),
    ]
}

/// `compact` on the offline stub model, keeping `keep_recent_tokens`.
async fn compact_on_stub(
    messages: &[Message],
    keep_recent_tokens: u64,
    cancel: &CancellationToken,
) -> Result<CompactionResult, CompactionError> {
    let settings = settings(keep_recent_tokens);
    compact(
        &stub_stream_fn(),
        &stub::model(),
        messages,
        &settings,
        None,
        cancel,
    )
    .await
}

fn settings(keep_recent_tokens: u64) -> CompactionSettings {
    CompactionSettings {
        keep_recent_tokens,
        ..CompactionSettings::default()
    }
}

fn text_of(message: &Message) -> String {
    match message {
        Message::User(u) => u.text(),
        _ => panic!("not a user message: {message:?}"),
    }
}

#[tokio::test]
async fn compacts_with_the_stub_model() {
    let messages = conversation();
    let result = compact_on_stub(&messages, 250, &CancellationToken::new())
        .await
        .unwrap();

    let tags = "\n\n<read-files>\nsrc/lib.rs\n</read-files>\n\n<modified-files>\nsrc/main.rs\n</modified-files>";
    let expected = format!(
        "[offline stub] Summary of 2 user request(s):\n- fix the login bug\n- then add tests\n\n{}{tags}",
        stub::NOTICE
    );
    assert_eq!(result.summary, expected);
    assert_eq!(result.first_kept_index, 8);
    assert_eq!(result.first_kept_message, messages[8]);
    assert_eq!(result.details.read_files, vec!["src/lib.rs"]);
    assert_eq!(result.details.modified_files, vec!["src/main.rs"]);
    // The last usage (1000) plus the 100-token user message after it.
    assert_eq!(result.tokens_before, 1100);

    assert_eq!(result.messages.len(), 4);
    assert_eq!(
        text_of(&result.messages[0]),
        format!("{COMPACTION_SUMMARY_PREFIX}{expected}{COMPACTION_SUMMARY_SUFFIX}")
    );
    assert_eq!(result.messages[1..], messages[8..]);
    assert_eq!(
        serde_json::to_value(&result).unwrap(),
        json!({"summary": expected, "firstKeptIndex": 8, "tokensBefore": 1100,
               "details": {"readFiles": ["src/lib.rs"], "modifiedFiles": ["src/main.rs"]}})
    );

    // A second compaction updates the summary and keeps the file lists.
    let mut next = result.messages.clone();
    let (write, write_result) = tool_call("c3", "write", "src/lib.rs");
    next.extend([write, write_result, assistant(&filler('d'))]);
    next.extend([Message::user(filler('e')), Message::user(filler('f'))]);
    let second = compact_on_stub(&next, 150, &CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(second.first_kept_index, next.len() - 2);
    assert_eq!(second.details.read_files, Vec::<String>::new());
    assert_eq!(
        second.details.modified_files,
        vec!["src/lib.rs", "src/main.rs"]
    );
    assert_eq!(second.messages[1..], next[second.first_kept_index..]);
    assert_eq!(summary_of(&second.messages[0]).unwrap(), second.summary);
}

#[tokio::test]
async fn nothing_to_compact_and_cancelled() {
    let small = vec![Message::user("hi"), assistant("hello")];
    let err = compact_on_stub(&small, 20000, &CancellationToken::new())
        .await
        .unwrap_err();
    assert_eq!(err, CompactionError::NothingToCompact);
    assert_eq!(err.to_string(), "Nothing to compact (session too small)");
    // Only a previous summary and kept messages: nothing new either.
    let after = vec![summary_message("S"), Message::user("hi")];
    let err = compact_on_stub(&after, 1, &CancellationToken::new())
        .await
        .unwrap_err();
    assert_eq!(err, CompactionError::NothingToCompact);

    let cancel = CancellationToken::new();
    cancel.cancel();
    let err = compact_on_stub(&conversation(), 250, &cancel)
        .await
        .unwrap_err();
    assert_eq!(err, CompactionError::Aborted);
}

/// An Anthropic model pointed at the mock server, and a stream function with a key.
async fn mock(scenario: Scenario) -> (MockLlm, Model, StreamFn) {
    let (server, model, client) = mock_anthropic(scenario).await;
    (
        server,
        model,
        Arc::new(move |m, c, o| client.stream(m, c, o)),
    )
}

/// `compact` through `stream_fn`, keeping the last 250 tokens, never cancelled.
async fn compact_keeping_250(
    stream_fn: &StreamFn,
    model: &Model,
    messages: &[Message],
    focus: Option<&str>,
) -> Result<CompactionResult, CompactionError> {
    let cancel = CancellationToken::new();
    compact(stream_fn, model, messages, &settings(250), focus, &cancel).await
}

fn last_user_text(body: &Value) -> String {
    let messages = body["messages"].as_array().expect("messages");
    let last = messages.last().expect("a message");
    match &last["content"] {
        Value::String(s) => s.clone(),
        Value::Array(blocks) => blocks.iter().filter_map(|b| b["text"].as_str()).collect(),
        other => panic!("content {other}"),
    }
}

#[tokio::test]
async fn the_summary_request_is_pis() {
    let scenario = Scenario::new().default_reply(Reply::text("## Goal\nFix it."));
    let (server, model, stream_fn) = mock(scenario).await;
    let messages = conversation();
    let result = compact_keeping_250(&stream_fn, &model, &messages, Some("the login flow"))
        .await
        .unwrap();
    assert!(
        result
            .summary
            .starts_with("## Goal\nFix it.\n\n<read-files>")
    );

    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    let body = &requests[0].body;
    assert_eq!(body["system"][0]["text"], SUMMARIZATION_SYSTEM_PROMPT);
    assert_eq!(body["messages"].as_array().unwrap().len(), 1);
    assert!(body.get("tools").is_none());
    // haiku reasons: high reasoning, its budget added on top of 0.8 × 16384.
    assert_eq!(
        body["thinking"],
        json!({"type": "enabled", "budget_tokens": 16384})
    );
    assert_eq!(body["max_tokens"], 13107 + 16384);
    let prompt = last_user_text(body);
    assert!(prompt.starts_with(
        "<conversation>\n[User]: fix the login bug\n\n[Assistant tool calls]: read(path=\"src/lib.rs\")\n\n[Tool result]: ok"
    ));
    assert!(
        prompt.contains("\n</conversation>\n\nThe messages above are a conversation to summarize.")
    );
    assert!(prompt.ends_with("\n\nAdditional focus: the login flow"));
    assert!(
        !prompt.contains("now this:"),
        "kept messages are not summarised"
    );

    // A model that does not reason: exactly 0.8 × reserve, no thinking.
    server.clear_requests();
    let plain = Model {
        reasoning: false,
        ..model
    };
    compact_keeping_250(&stream_fn, &plain, &messages, None)
        .await
        .unwrap();
    let body = &server.requests()[0].body;
    assert_eq!(body["max_tokens"], 13107);
    assert!(body.get("thinking").is_none());
}

#[tokio::test]
async fn updates_the_previous_summary_and_splits_turns() {
    let scenario = Scenario::new()
        .rule(
            Rule::when(Match::last_user_contains("PREFIX of a turn")).reply(Reply::text("PREFIX")),
        )
        .default_reply(Reply::text("HISTORY"));
    let (server, model, stream_fn) = mock(scenario).await;
    let mut messages = vec![
        summary_message("OLD SUMMARY"),
        Message::user("old request"),
        assistant("old answer"),
        Message::user("big task"),
    ];
    messages.extend((0..4).map(|i| assistant(&filler(char::from(b'a' + i)))));
    let result = compact_keeping_250(&stream_fn, &model, &messages, None)
        .await
        .unwrap();
    // 100-token replies: the cut lands on the second of them, inside the "big task" turn.
    assert_eq!(result.first_kept_index, 5);
    assert_eq!(
        result.summary,
        "HISTORY\n\n---\n\n**Turn Context (split turn):**\n\nPREFIX"
    );
    assert_eq!(result.messages[1..], messages[5..]);

    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    let prompts: Vec<String> = requests.iter().map(|r| last_user_text(&r.body)).collect();
    let history = prompts
        .iter()
        .find(|p| p.contains("<previous-summary>"))
        .expect("history request");
    assert!(history.starts_with(
        "<conversation>\n[User]: old request\n\n[Assistant]: old answer\n</conversation>\n\n<previous-summary>\nOLD SUMMARY\n</previous-summary>\n\nThe messages above are NEW"
    ));
    let prefix = prompts
        .iter()
        .find(|p| p.contains("PREFIX of a turn"))
        .expect("prefix request");
    assert!(prefix.starts_with("<conversation>\n[User]: big task\n\n[Assistant]: aaaa"));
    let prefix_body = &requests
        .iter()
        .find(|r| last_user_text(&r.body).contains("PREFIX of a turn"))
        .unwrap()
        .body;
    assert_eq!(prefix_body["max_tokens"], 8192 + 16384);
}

#[tokio::test]
async fn a_failed_summary_call_carries_the_message() {
    let scenario = Scenario::new().rule(Rule::any().fault(Fault::status(400).body(json!({
        "type": "error",
        "error": {"type": "invalid_request_error", "message": "bad things happened"}
    }))));
    let (_server, model, stream_fn) = mock(scenario).await;
    let err = compact_keeping_250(&stream_fn, &model, &conversation(), None)
        .await
        .unwrap_err();
    let CompactionError::SummaryFailed(message) = &err else {
        panic!("{err:?}")
    };
    assert!(message.contains("bad things happened"), "{message}");
    assert!(err.to_string().starts_with("Summarization failed: "));
}

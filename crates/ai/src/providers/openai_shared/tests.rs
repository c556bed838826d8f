//! Tests of the shared OpenAI pieces.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::*;
use crate::providers::anthropic::transform::{Replay, ReplayBlock, transform};
use crate::test_support::{assistant_of, model, read_call, signed_thinking};
use crate::types::{StopReason, TextContent, ToolResultMessage};
use serde_json::json;

fn assistant(
    provider: &str,
    model_id: &str,
    content: Vec<ContentBlock>,
    stop: StopReason,
) -> Message {
    assistant_of("openai-completions", provider, model_id, content, stop)
}

fn call(id: &str) -> ContentBlock {
    read_call(id, json!({}), Some("sig"))
}

#[test]
fn transform_replays_like_pi() {
    let m = model(
        "openai-completions",
        "openai",
        "https://api.openai.com/v1",
        json!({}),
    );
    let thinking = |t: &str| signed_thinking(t, "reasoning_content");
    let messages = vec![
        Message::user("hi"),
        // Another model: thinking becomes text, ids are normalized, signatures dropped.
        assistant(
            "other",
            "x",
            vec![thinking("hmm"), thinking("  "), call("a|b")],
            StopReason::ToolUse,
        ),
        Message::ToolResult(ToolResultMessage {
            tool_call_id: "a|b".into(),
            tool_name: "read".into(),
            content: vec![ContentBlock::text("one"), ContentBlock::text("two")],
            details: None,
            is_error: false,
            timestamp: 1,
        }),
        // Failed turn: dropped. Its orphan call is not answered.
        assistant("openai", "gpt-test", vec![call("z")], StopReason::Error),
        // Same model: kept as is; its call has no result before the next user turn.
        assistant(
            "openai",
            "gpt-test",
            vec![thinking("deep"), call("c")],
            StopReason::ToolUse,
        ),
        Message::user("next"),
    ];
    let turns = transform(&messages, &m, Some(&|id: &str| id.replace('|', "_")));
    let shape: Vec<String> = turns
        .iter()
        .map(|t| match t {
            Replay::User(u) => format!("user:{}", u.text()),
            Replay::Assistant(a) => a
                .blocks
                .iter()
                .map(|b| match b {
                    ReplayBlock::Text { text, .. } => format!("text:{text}"),
                    ReplayBlock::Thinking { thinking, .. } => format!("thinking:{thinking}"),
                    ReplayBlock::ToolCall {
                        id,
                        thought_signature,
                        ..
                    } => {
                        format!("call:{id}:{}", thought_signature.is_some())
                    }
                })
                .collect::<Vec<_>>()
                .join(","),
            Replay::ToolResult(r) => format!("result:{}:{}", r.tool_call_id, r.text()),
        })
        .collect();
    assert_eq!(
        shape,
        [
            "user:hi",
            "text:hmm,call:a_b:false",
            "result:a_b:one\ntwo",
            "thinking:deep,call:c:true",
            "result:c:No result provided",
            "user:next",
        ]
    );
}

#[test]
fn text_signature_survives_only_for_the_same_model() {
    let m = model("openai-completions", "openai", "u", json!({}));
    let text = ContentBlock::Text(TextContent {
        text: "t".into(),
        text_signature: Some("msg_1".into()),
    });
    let messages = vec![
        assistant("openai", "gpt-test", vec![text.clone()], StopReason::Stop),
        assistant("openai", "other", vec![text], StopReason::Stop),
    ];
    let turns = transform(&messages, &m, Some(&|id: &str| id.to_owned()));
    let signatures: Vec<_> = turns
        .iter()
        .map(|t| match t {
            Replay::Assistant(a) => match a.blocks[0] {
                ReplayBlock::Text { signature, .. } => signature,
                _ => panic!(),
            },
            _ => panic!(),
        })
        .collect();
    assert_eq!(signatures, [Some("msg_1"), None]);
}

#[test]
fn effort_and_limits() {
    let m = model("openai-completions", "openai", "u", json!({"id":"gpt-5.2"}));
    assert_eq!(
        reasoning_effort(&m, Some(ThinkingLevel::Xhigh)),
        Some("xhigh")
    );
    let m = model("openai-completions", "openai", "u", json!({"id":"o3"}));
    assert_eq!(
        reasoning_effort(&m, Some(ThinkingLevel::Xhigh)),
        Some("high")
    );
    assert_eq!(reasoning_effort(&m, Some(ThinkingLevel::Off)), None);
    assert_eq!(reasoning_effort(&m, None), None);
    let m = model(
        "openai-completions",
        "openai",
        "u",
        json!({"maxTokens":100000}),
    );
    assert_eq!(
        max_output_tokens(&m, &StreamOptions::default()),
        Some(32_000)
    );
    let options = StreamOptions {
        max_tokens: Some(5),
        ..StreamOptions::default()
    };
    assert_eq!(max_output_tokens(&m, &options), Some(5));
    assert_eq!(temperature_json(0.7), json!(0.7));
}

#[test]
fn stream_errors_are_classified() {
    assert_eq!(
        stream_error_kind(Some(&json!(429)), "slow down"),
        ErrorKind::RateLimited { retry_after: None }
    );
    assert_eq!(
        stream_error_kind(Some(&json!("rate_limit_exceeded")), "x"),
        ErrorKind::RateLimited { retry_after: None }
    );
    assert_eq!(
        stream_error_kind(None, "Provider overloaded"),
        ErrorKind::Overloaded
    );
    assert_eq!(
        stream_error_kind(Some(&json!("context_length_exceeded")), "x"),
        ErrorKind::ContextOverflow
    );
    assert_eq!(
        stream_error_kind(Some(&json!(500)), "boom"),
        ErrorKind::Server
    );
}

#[test]
fn lenient_fields() {
    #[derive(Deserialize)]
    struct T<'a> {
        #[serde(borrow, default)]
        s: Text<'a>,
        #[serde(default, deserialize_with = "tokens")]
        n: u64,
    }
    let t: T<'_> = serde_json::from_str(r#"{"s":"plain","n":3.0}"#).unwrap();
    assert!(matches!(t.s.0, Some(Cow::Borrowed("plain"))));
    assert_eq!(t.n, 3);
    let t: T<'_> = serde_json::from_str(r#"{"s":"a\nb","n":null}"#).unwrap();
    assert_eq!(t.s.non_empty(), Some("a\nb"));
    assert_eq!(t.n, 0);
    let t: T<'_> = serde_json::from_str(r#"{"s":{"x":[1]},"n":-4}"#).unwrap();
    assert_eq!((t.s, t.n), (Text(None), 0));
    assert_eq!(missing_suffix("ab", "abc"), Some("c"));
    assert_eq!(missing_suffix("ab", "ab"), None);
    assert_eq!(missing_suffix("x", "abc"), None);
}

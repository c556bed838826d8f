//! Every wire API, over real HTTP against the mock server: text, thinking, tool calls split
//! across chunks, usage and cost, stop reasons, request shape, UTF-8 split across reads.

use crate::common;

use common::*;
use pincer_ai::{
    AssistantMessageEvent, ContentBlock, Context, Message, StopReason, StreamOptions, Tool,
};
use pincer_testkit::{Match, Reply, Rule, Scenario, StopReason as MockStop, UsageSpec};
use serde_json::json;

#[tokio::test]
async fn text_streams_as_deltas_for_every_api() {
    let text = "The quick brown fox jumps over the lazy dog.";
    let h = Harness::start(
        Scenario::new()
            .rule(Rule::when(Match::last_user("hi")).reply(Reply::text(text)))
            .chunk_size(5),
    )
    .await;
    for (api, _) in APIS {
        let events = h.run(api, "hi", StreamOptions::default()).await;
        assert_one_terminal(&events);
        let deltas: Vec<&str> = events
            .iter()
            .filter_map(|e| match e {
                AssistantMessageEvent::TextDelta { delta, .. } => Some(delta.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(deltas.concat(), text, "{api}");
        assert_eq!(
            deltas.len(),
            text.len().div_ceil(5),
            "{api}: one delta per chunk"
        );
        let k = kinds(&events);
        assert_eq!(k.first().map(String::as_str), Some("start"), "{api}");
        assert_eq!(k[1], "text_start", "{api}");
        assert_eq!(&k[k.len() - 2..], ["text_end", "done"], "{api}");
        let message = final_message(&events);
        assert_eq!(message.stop_reason, StopReason::Stop, "{api}");
        assert_eq!(message.text(), text, "{api}");
        assert_eq!(message.api, api);
        assert_eq!(message.content.len(), 1, "{api}");
    }
}

#[tokio::test]
async fn thinking_comes_before_text() {
    let h = Harness::start(
        Scenario::new()
            .default_reply(Reply::text("Answer.").with_thinking("Let me think about it."))
            .chunk_size(4),
    )
    .await;
    for (api, _) in APIS {
        let events = h.run(api, "q", StreamOptions::default()).await;
        let message = stopped_with(&events, StopReason::Stop, api);
        let [ContentBlock::Thinking(thinking), ContentBlock::Text(text)] =
            message.content.as_slice()
        else {
            panic!("{api}: {:?}", message.content)
        };
        assert_eq!(thinking.thinking, "Let me think about it.", "{api}");
        assert_eq!(text.text, "Answer.", "{api}");
        let k = kinds(&events);
        let thinking_end = k
            .iter()
            .position(|x| x == "thinking_end")
            .expect("thinking_end");
        let text_start = k
            .iter()
            .position(|x| x == "text_start")
            .expect("text_start");
        assert!(thinking_end < text_start, "{api}: {k:?}");
        if api == "anthropic-messages" {
            assert!(
                thinking
                    .thinking_signature
                    .as_deref()
                    .is_some_and(|s| !s.is_empty()),
                "anthropic keeps the signature"
            );
        }
    }
}

#[tokio::test]
async fn tool_calls_split_across_chunks_are_parsed() {
    let reply = Reply::empty()
        .with_tool_call("read", json!({"path": "src/main.rs", "offset": 10}))
        .with_tool_call(
            "grep",
            json!({"pattern": "fn main", "glob": "**/*.rs", "nested": {"a": [1, 2, "ü"]}}),
        );
    let h = Harness::start(Scenario::new().default_reply(reply).chunk_size(3)).await;
    for (api, _) in APIS {
        let events = h.run(api, "find main", StreamOptions::default()).await;
        let message = stopped_with(&events, StopReason::ToolUse, api);
        let calls: Vec<_> = message.tool_calls().collect();
        assert_eq!(calls.len(), 2, "{api}");
        assert_eq!(
            (calls[0].name.as_str(), &calls[0].arguments),
            ("read", &json!({"path": "src/main.rs", "offset": 10})),
            "{api}"
        );
        assert_eq!(calls[1].name, "grep", "{api}");
        assert_eq!(
            calls[1].arguments,
            json!({"pattern": "fn main", "glob": "**/*.rs", "nested": {"a": [1, 2, "ü"]}}),
            "{api}"
        );
        assert!(calls.iter().all(|c| !c.id.is_empty()), "{api}: ids");
        assert_ne!(calls[0].id, calls[1].id, "{api}");
        let ends = events
            .iter()
            .filter(|e| matches!(e, AssistantMessageEvent::ToolcallEnd { .. }))
            .count();
        assert_eq!(ends, 2, "{api}");
        if api != "google-generative-ai" {
            // Gemini sends calls whole; the others stream arguments in pieces.
            let deltas = events
                .iter()
                .filter(|e| matches!(e, AssistantMessageEvent::ToolcallDelta { .. }))
                .count();
            assert!(deltas > 4, "{api}: arguments arrived in {deltas} pieces");
        }
    }
}

#[tokio::test]
async fn tool_result_round_trip_matches_by_tool() {
    let h = Harness::start(
        Scenario::new()
            .rule(Rule::when(Match::tool_result("get_weather")).reply(Reply::text("It is sunny.")))
            .rule(
                Rule::when(Match::last_user("weather?"))
                    .reply(Reply::empty().with_tool_call("get_weather", json!({"city": "Paris"}))),
            ),
    )
    .await;
    let tool = Tool {
        name: "get_weather".into(),
        description: "Weather for a city".into(),
        parameters: json!({"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}),
    };
    for (api, _) in APIS {
        let mut context = Context {
            system_prompt: None,
            messages: vec![Message::user("weather?")],
            tools: vec![tool.clone()],
        };
        let events = h.run_context(api, &context, StreamOptions::default()).await;
        let first = stopped_with(&events, StopReason::ToolUse, api).clone();
        let call = first.tool_calls().next().expect("a call").clone();
        context.messages.push(Message::Assistant(first));
        context
            .messages
            .push(Message::tool_result(&call, "sunny, 24°C", false));
        let second = h.run_context(api, &context, StreamOptions::default()).await;
        assert_eq!(final_message(&second).text(), "It is sunny.", "{api}");
    }
}

#[tokio::test]
async fn usage_and_cost_are_reported() {
    let reply = Reply::text("ok").with_usage(UsageSpec {
        input: Some(1000),
        output: Some(500),
        cache_read: Some(200),
        cache_write: Some(0),
    });
    let h = Harness::start(Scenario::new().default_reply(reply)).await;
    for (api, _) in APIS {
        let events = h.run(api, "x", StreamOptions::default()).await;
        let message = final_message(&events);
        let model = h.model(api);
        let u = &message.usage;
        assert_eq!(
            (u.input, u.output, u.cache_read),
            (1000, 500, 200),
            "{api}: {u:?}"
        );
        assert_eq!(u.total_tokens, 1700, "{api}");
        let expected =
            (1000.0 * model.cost.input + 500.0 * model.cost.output + 200.0 * model.cost.cache_read)
                / 1e6;
        assert!(
            (u.cost.total - expected).abs() < 1e-12,
            "{api}: {} vs {expected}",
            u.cost.total
        );
        assert!(u.cost.total > 0.0, "{api}");
    }
}

#[tokio::test]
async fn length_stop_reason_is_mapped() {
    let h = Harness::start(
        Scenario::new().default_reply(Reply::text("trunc").with_stop_reason(MockStop::Length)),
    )
    .await;
    for (api, _) in APIS {
        let events = h.run(api, "x", StreamOptions::default()).await;
        assert_eq!(
            final_message(&events).stop_reason,
            StopReason::Length,
            "{api}"
        );
    }
}

#[tokio::test]
async fn utf8_split_across_network_reads_is_reassembled() {
    let text = "héllo wörld — 你好 🦀 ok";
    let h = Harness::start(
        Scenario::new()
            .default_reply(Reply::text(text))
            .byte_chunk(1),
    )
    .await;
    for (api, _) in APIS {
        let events = h.run(api, "x", StreamOptions::default()).await;
        assert_eq!(final_message(&events).text(), text, "{api}");
    }
}

#[tokio::test]
async fn requests_carry_auth_model_and_stream_flag() {
    let h = Harness::start(Scenario::new()).await;
    for (api, _) in APIS {
        h.run(api, "x", StreamOptions::default()).await;
    }
    let requests = h.server.requests();
    assert_eq!(requests.len(), 4);
    let header = |i: usize, name: &str| {
        requests[i]
            .headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.clone())
            .unwrap_or_default()
    };
    assert_eq!(header(0, "authorization"), "Bearer sk-deepseek-test");
    assert_eq!(requests[0].body["model"], "deepseek-chat");
    assert_eq!(requests[0].body["stream"], true);
    assert_eq!(header(1, "authorization"), "Bearer sk-openai-test");
    assert_eq!(requests[1].body["model"], "gpt-4o-mini");
    assert_eq!(header(2, "x-api-key"), "sk-ant-test");
    assert_eq!(header(2, "anthropic-version"), "2023-06-01");
    assert_eq!(requests[2].body["model"], "claude-haiku-4-5");
    assert_eq!(header(3, "x-goog-api-key"), "gemini-test");
    assert!(
        requests[3]
            .path
            .ends_with("/models/gemini-2.5-flash:streamGenerateContent"),
        "{}",
        requests[3].path
    );
    assert!(
        requests
            .iter()
            .all(|r| !r.query.as_deref().unwrap_or("").contains("key=")),
        "keys never travel in the URL"
    );
}

#[tokio::test]
async fn tool_schemas_are_sanitised_per_api() {
    let h = Harness::start(Scenario::new()).await;
    // The shape schemars derives from a Rust struct.
    let parameters = json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "properties": {
            "path": {"type": "string"},
            "limit": {"type": ["integer", "null"], "format": "uint64"},
            "mode": {"$ref": "#/$defs/Mode"}
        },
        "required": ["path"],
        "additionalProperties": false,
        "$defs": {"Mode": {"type": "string", "enum": ["fast", "slow"]}}
    });
    let tool = Tool {
        name: "read".into(),
        description: "Read a file".into(),
        parameters,
    };
    let context = Context {
        system_prompt: None,
        messages: vec![Message::user("x")],
        tools: vec![tool],
    };
    for (api, _) in APIS {
        h.run_context(api, &context, StreamOptions::default()).await;
    }
    let requests = h.server.requests();
    let schemas = [
        &requests[0].body["tools"][0]["function"]["parameters"],
        &requests[1].body["tools"][0]["parameters"],
        &requests[2].body["tools"][0]["input_schema"],
        &requests[3].body["tools"][0]["functionDeclarations"][0]["parameters"],
    ];
    for (schema, (api, _)) in schemas.iter().zip(APIS) {
        let text = schema.to_string();
        assert!(
            !text.contains("$ref") && !text.contains("$defs") && !text.contains("$schema"),
            "{api}: {text}"
        );
        assert_eq!(
            schema["properties"]["mode"]["enum"],
            json!(["fast", "slow"]),
            "{api}: {text}"
        );
    }
    // Gemini's OpenAPI subset: no type arrays, no additionalProperties, nullable instead.
    let gemini = schemas[3];
    assert_eq!(gemini["properties"]["limit"]["type"], "integer", "{gemini}");
    assert_eq!(gemini["properties"]["limit"]["nullable"], true, "{gemini}");
    assert!(gemini.get("additionalProperties").is_none(), "{gemini}");
}

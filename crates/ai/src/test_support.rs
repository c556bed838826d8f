//! Scaffolding shared by the unit tests of the providers: test models, decoding recorded
//! streams, reading their results, and checks that any way of cutting the bytes gives the
//! same result.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::fmt::Debug;

use proptest::prelude::{TestCaseError, prop_assert_eq};
use serde_json::{Value, json};

use crate::error::ErrorKind;
use crate::event::AssistantMessageEvent as E;
use crate::http::{Framing, HttpCall, StreamDecoder, decode_recorded};
use crate::model::Model;
use crate::options::StreamOptions;
use crate::providers::{RequestInput, WireApi};
use crate::types::{
    AssistantMessage, ContentBlock, Context, ImageContent, Message, StopReason, TextContent,
    ThinkingContent, ThinkingLevel, Tool, ToolCall, ToolResultMessage, Usage, UsageCost,
    UserContent, UserMessage,
};

/// A model for tests; `extra` overrides any field.
pub fn model(api: &str, provider: &str, base_url: &str, extra: Value) -> Model {
    let mut value = json!({"id":"gpt-test","name":"GPT Test","api":api,"provider":provider,
        "baseUrl":base_url,"reasoning":false,"input":["text","image"],
        "cost":{"input":2.0,"output":8.0,"cacheRead":0.5,"cacheWrite":0.0},
        "contextWindow":128000,"maxTokens":16384});
    if let (Some(target), Value::Object(extra)) = (value.as_object_mut(), extra) {
        target.extend(extra);
    }
    serde_json::from_value(value).unwrap()
}

/// These token counts, at no cost.
pub fn token_usage(
    input: u64,
    output: u64,
    cache_read: u64,
    cache_write: u64,
    total_tokens: u64,
) -> Usage {
    Usage {
        input,
        output,
        cache_read,
        cache_write,
        total_tokens,
        cost: UsageCost::default(),
    }
}

/// What [`model`] charges for these tokens (no cache writes).
pub fn charged_usage(input: u64, output: u64, cache_read: u64, total_tokens: u64) -> Usage {
    let price = |per_million: f64, tokens: u64| per_million / 1_000_000.0 * tokens as f64;
    let cost = UsageCost {
        input: price(2.0, input),
        output: price(8.0, output),
        cache_read: price(0.5, cache_read),
        cache_write: 0.0,
        total: price(2.0, input) + price(8.0, output) + price(0.5, cache_read),
    };
    Usage {
        cost,
        ..token_usage(input, output, cache_read, 0, total_tokens)
    }
}

/// An assistant turn of `model` that stopped for tool use.
pub fn assistant(model: &Model, content: Vec<ContentBlock>) -> Message {
    let (api, provider) = (&model.api, &model.provider);
    assistant_of(api, provider, &model.id, content, StopReason::ToolUse)
}

/// An assistant turn of model `id` of `provider`, over `api`, that stopped for `stop`.
pub fn assistant_of(
    api: &str,
    provider: &str,
    id: &str,
    content: Vec<ContentBlock>,
    stop: StopReason,
) -> Message {
    Message::Assistant(AssistantMessage {
        content,
        api: api.into(),
        provider: provider.into(),
        model: id.into(),
        usage: Usage::default(),
        stop_reason: stop,
        error_message: None,
        timestamp: 1,
        response_id: None,
    })
}

/// A call of the `read` tool.
pub fn read_call(id: &str, arguments: Value, thought_signature: Option<&str>) -> ContentBlock {
    ContentBlock::ToolCall(ToolCall {
        id: id.into(),
        name: "read".into(),
        arguments,
        thought_signature: thought_signature.map(str::to_owned),
    })
}

/// The result of a `read` call.
pub fn read_result(id: &str, content: Vec<ContentBlock>, is_error: bool) -> Message {
    Message::ToolResult(ToolResultMessage {
        tool_call_id: id.into(),
        tool_name: "read".into(),
        content,
        details: None,
        is_error,
        timestamp: 1,
    })
}

/// A thinking block with its signature.
pub fn signed_thinking(thinking: &str, signature: &str) -> ContentBlock {
    ContentBlock::Thinking(ThinkingContent {
        thinking: thinking.into(),
        thinking_signature: Some(signature.into()),
        redacted: None,
    })
}

/// A user message of `text` and an image.
pub fn user_with_png(text: &str) -> Message {
    Message::User(UserMessage {
        content: UserContent::Blocks(vec![ContentBlock::text(text), png()]),
        timestamp: 1,
    })
}

/// Options that ask for thinking at `level`, the rest default.
pub fn thinking_options(level: ThinkingLevel) -> StreamOptions {
    StreamOptions {
        reasoning: Some(level),
        ..StreamOptions::default()
    }
}

/// The request `wire` builds, which must be buildable.
pub fn request(
    wire: &dyn WireApi,
    model: &Model,
    context: &Context,
    options: &StreamOptions,
    api_key: &str,
) -> HttpCall {
    try_request(wire, model, context, options, Some(api_key)).unwrap()
}

/// The request `wire` builds, or why it cannot.
pub fn try_request(
    wire: &dyn WireApi,
    model: &Model,
    context: &Context,
    options: &StreamOptions,
    api_key: Option<&str>,
) -> Result<HttpCall, String> {
    wire.build_request(RequestInput {
        model,
        context,
        options,
        api_key,
    })
}

/// A tiny PNG image block.
pub fn png() -> ContentBlock {
    ContentBlock::Image(ImageContent {
        data: "iVBORw0KGgo=".into(),
        mime_type: "image/png".into(),
    })
}

/// A whole turn of `model`: the user asks to read a.txt, the assistant thinks, answers and
/// calls `read` (with these signatures and call id), and the result comes back.
pub fn read_turn(
    model: &Model,
    thinking_signature: &str,
    text_signature: Option<&str>,
    call_id: &str,
) -> Context {
    Context {
        system_prompt: Some("Be brief.".into()),
        messages: vec![
            Message::user("Read a.txt"),
            assistant(
                model,
                vec![
                    signed_thinking("Need the file.", thinking_signature),
                    ContentBlock::Text(TextContent {
                        text: "Reading it.".into(),
                        text_signature: text_signature.map(str::to_owned),
                    }),
                    read_call(call_id, json!({"path": "a.txt"}), None),
                ],
            ),
            Message::ToolResult(ToolResultMessage {
                tool_call_id: call_id.into(),
                tool_name: "read".into(),
                content: vec![ContentBlock::text("hello")],
                details: None,
                is_error: false,
                timestamp: 2,
            }),
        ],
        tools: vec![Tool {
            name: "read".into(),
            description: "Read a file".into(),
            parameters: json!({"type": "object", "properties": {"path": {"type": "string"}}}),
        }],
    }
}

/// Runs a fresh decoder of `wire` over the SSE `chunks`, as [`decode_recorded`] does; see
/// [`decode_with`].
pub fn decode(wire: &dyn WireApi, model: &Model, chunks: &[&[u8]]) -> Vec<E> {
    decode_with(model, wire.decoder(model).as_mut(), chunks)
}

/// Runs `decoder` over the SSE `chunks`, as [`decode_recorded`] does, with the final
/// message's timestamp zeroed so two runs compare.
pub fn decode_with(model: &Model, decoder: &mut dyn StreamDecoder, chunks: &[&[u8]]) -> Vec<E> {
    let mut events = decode_recorded(model, Framing::Sse, decoder, chunks);
    for event in &mut events {
        if let E::Done { message, .. } | E::Error { error: message, .. } = event {
            message.timestamp = 0;
        }
    }
    events
}

/// The `type` of each event, as pi names it.
pub fn kinds(events: &[E]) -> Vec<String> {
    events
        .iter()
        .map(|e| {
            serde_json::to_value(e).unwrap()["type"]
                .as_str()
                .unwrap()
                .to_owned()
        })
        .collect()
}

/// Asserts the `type` of each event, written as one line: `"start text_start done"`.
pub fn assert_kinds(events: &[E], expected: &str) {
    assert_eq!(kinds(events).join(" "), expected, "{events:?}");
}

/// The content index and piece of each tool-call argument delta.
pub fn toolcall_deltas(events: &[E]) -> Vec<(usize, &str)> {
    events
        .iter()
        .filter_map(|e| match e {
            E::ToolcallDelta {
                content_index,
                delta,
            } => Some((*content_index, delta.as_str())),
            _ => None,
        })
        .collect()
}

/// How many events end the stream.
pub fn terminal_count(events: &[E]) -> usize {
    events.iter().filter(|e| e.is_terminal()).count()
}

/// The final message of a finished stream, with its timestamp zeroed so two runs compare.
pub fn final_message(events: &[E]) -> (StopReason, AssistantMessage) {
    let terminal: Vec<_> = events.iter().filter(|e| e.is_terminal()).collect();
    assert_eq!(terminal.len(), 1, "exactly one terminal event: {events:?}");
    let (reason, mut message) = match terminal[0] {
        E::Done { reason, message } => (*reason, message.clone()),
        E::Error { reason, error, .. } => (*reason, error.clone()),
        _ => unreachable!(),
    };
    message.timestamp = 0;
    (reason, message)
}

/// The final message (see [`final_message`]) of a stream that finished normally for
/// `reason`.
pub fn done_message(events: &[E], reason: StopReason) -> AssistantMessage {
    let (got, message) = final_message(events);
    assert_eq!(got, reason, "{events:?}");
    message
}

/// The message of the last event, which must end the stream.
pub fn last_message(events: &[E]) -> &AssistantMessage {
    match events.last() {
        Some(E::Done { message, .. } | E::Error { error: message, .. }) => message,
        other => panic!("no terminal event: {other:?}"),
    }
}

/// The error event's kind and message.
pub fn failure(events: &[E]) -> (ErrorKind, String) {
    match events.last() {
        Some(E::Error { kind, error, .. }) => (
            kind.clone(),
            error.error_message.clone().unwrap_or_default(),
        ),
        other => panic!("expected an error event, got {other:?}"),
    }
}

/// Cuts `bytes` in two at every place and asserts that `view` of each run equals `view` of
/// the run on the whole bytes.
pub fn assert_every_two_way_split_same<T: PartialEq + Debug>(
    decode: impl Fn(&[&[u8]]) -> Vec<E>,
    bytes: &[u8],
    view: impl Fn(&[E]) -> T,
) {
    let whole = view(&decode(&[bytes]));
    for cut in 0..=bytes.len() {
        let split = view(&decode(&[&bytes[..cut], &bytes[cut..]]));
        assert_eq!(split, whole, "split at {cut}");
    }
}

/// `bytes` cut into chunks at `cuts` (in any order; each at most the length).
pub fn cut_at(bytes: &[u8], cuts: impl IntoIterator<Item = usize>) -> Vec<&[u8]> {
    let mut cuts: Vec<usize> = cuts.into_iter().collect();
    cuts.sort_unstable();
    let mut chunks = Vec::new();
    let mut at = 0;
    for cut in cuts {
        chunks.push(&bytes[at..cut]);
        at = cut;
    }
    chunks.push(&bytes[at..]);
    chunks
}

/// Cuts `bytes` at `cuts` (each taken modulo one past the length) and checks that `view` of
/// the run equals `view` of the run on the whole bytes.
pub fn check_split_anywhere<T: PartialEq + Debug>(
    decode: impl Fn(&[&[u8]]) -> Vec<E>,
    bytes: &[u8],
    cuts: &[usize],
    view: impl Fn(&[E]) -> T,
) -> Result<(), TestCaseError> {
    let chunks = cut_at(bytes, cuts.iter().map(|c| c % (bytes.len() + 1)));
    prop_assert_eq!(view(&decode(&chunks)), view(&decode(&[bytes])));
    Ok(())
}

/// Inserts `noise` into `bytes` at `at` and checks that decoding does not panic and ends
/// the stream exactly once. Returns the events for further checks.
pub fn check_noise_never_panics(
    decode: impl Fn(&[&[u8]]) -> Vec<E>,
    bytes: &[u8],
    noise: &[u8],
    at: usize,
) -> Result<Vec<E>, TestCaseError> {
    let mut bytes = bytes.to_vec();
    bytes.splice(at..at, noise.iter().copied());
    let events = decode(&[&bytes]);
    prop_assert_eq!(terminal_count(&events), 1);
    Ok(events)
}

/// The message of a reply of `model` that stopped normally, as decoders build it: `model`'s
/// cost of `usage` applied, the timestamp zeroed.
pub fn stopped_message(
    model: &Model,
    content: Vec<ContentBlock>,
    mut usage: Usage,
    response_id: &str,
) -> AssistantMessage {
    model.apply_cost(&mut usage);
    AssistantMessage {
        content,
        api: model.api.clone(),
        provider: model.provider.clone(),
        model: model.id.clone(),
        usage,
        stop_reason: StopReason::Stop,
        error_message: None,
        timestamp: 0,
        response_id: Some(response_id.into()),
    }
}

/// The events of a reply that is one text block streamed in `deltas`, then `done` with
/// `message`.
pub fn text_reply_events(deltas: &[&str], message: AssistantMessage) -> Vec<E> {
    let mut events = vec![E::Start, E::TextStart { content_index: 0 }];
    events.extend(deltas.iter().map(|delta| E::TextDelta {
        content_index: 0,
        delta: (*delta).into(),
    }));
    events.push(E::TextEnd {
        content_index: 0,
        content: deltas.concat(),
    });
    events.push(E::Done {
        reason: StopReason::Stop,
        message,
    });
    events
}

/// The id, name and arguments of each tool call of `message`.
pub fn tool_calls(message: &AssistantMessage) -> Vec<(String, String, Value)> {
    message
        .tool_calls()
        .map(|c| (c.id.clone(), c.name.clone(), c.arguments.clone()))
        .collect()
}

/// Asserts how a stream ended (`case` names it in failures): `Ok` finished with that stop
/// reason; `Err` failed with that kind, a message starting with `prefix` (returned for
/// further checks), and the text streamed before, `kept_text`, kept.
pub fn assert_ending(
    events: &[E],
    expected: Result<StopReason, ErrorKind>,
    prefix: &str,
    kept_text: &str,
    case: &str,
) -> Option<String> {
    match expected {
        Ok(stop) => {
            assert_eq!(final_message(events).0, stop, "{case}");
            None
        }
        Err(kind) => Some(assert_failure(events, kind, prefix, kept_text, case)),
    }
}

/// Asserts that a stream failed with `kind`, a message starting with `prefix` (returned
/// for further checks), and the text streamed before, `kept_text`, kept; `case` names it
/// in failures.
pub fn assert_failure(
    events: &[E],
    kind: ErrorKind,
    prefix: &str,
    kept_text: &str,
    case: &str,
) -> String {
    let (got, message) = failure(events);
    assert_eq!(got, kind, "{case}");
    assert!(message.starts_with(prefix), "{case}: {message}");
    assert_eq!(
        final_message(events).1.text(),
        kept_text,
        "{case}: text kept"
    );
    message
}

/// Asserts a reply of `model` that is one text block streamed in `deltas` and stopped
/// normally with `usage` (before its cost is applied), as `response_id`.
pub fn assert_text_reply(
    events: &[E],
    model: &Model,
    deltas: &[&str],
    usage: Usage,
    response_id: &str,
) {
    let content = vec![ContentBlock::text(deltas.concat())];
    let message = stopped_message(model, content, usage, response_id);
    assert_eq!(events, text_reply_events(deltas, message));
}

/// Asserts that `decode` (of a whole body) ends an empty body in a protocol error, and a
/// body of any event no provider sends (`null`, `[]`) or of one of `bad_events` exactly
/// once, without panicking.
pub fn assert_bad_bodies_end_once(decode: impl Fn(&str) -> Vec<E>, bad_events: &[&str]) {
    let empty = decode("");
    assert!(
        matches!(
            empty.last(),
            Some(E::Error {
                kind: ErrorKind::Protocol,
                ..
            })
        ),
        "{empty:?}"
    );
    for body in ["data: null\n\n", "data: []\n\n"].iter().chain(bad_events) {
        assert_eq!(terminal_count(&decode(body)), 1, "{body}");
    }
}

/// Asserts that `cut`, a stream that stops before its end, fails in a protocol error
/// that `says` why and keeps the text streamed, `kept_text`, also when a Chat Completions
/// `[DONE]` marker follows the cut.
pub fn assert_cut_stream_fails(
    decode: impl Fn(&str) -> Vec<E>,
    cut: &str,
    says: &str,
    kept_text: &str,
) {
    for tail in ["", "data: [DONE]\n\n"] {
        let events = decode(&format!("{cut}{tail}"));
        assert_protocol_error(&events, says);
        assert_eq!(final_message(&events).1.text(), kept_text, "{tail:?}");
    }
}

/// Asserts that the stream ended once, in a protocol error whose message contains `says`.
pub fn assert_protocol_error(events: &[E], says: &str) {
    assert_eq!(terminal_count(events), 1, "{events:?}");
    let (kind, message) = failure(events);
    assert_eq!(kind, ErrorKind::Protocol);
    assert!(message.contains(says), "{message}");
}

/// The tests every decoder has, on how the bytes are cut: `two_way` cut in two at every
/// place gives the same `two_way_view` of the events as `two_way` whole (which finishes
/// normally); `split` cut anywhere (up to twelve cuts) gives the same `view` as `split`
/// whole; and `noise` with random bytes inserted anywhere never panics and ends the stream
/// exactly once, with the last event. `decode` is a `Fn(&[&[u8]]) -> Vec<E>`; the bodies
/// are `String`s.
macro_rules! decoder_split_tests {
    (
        decode: $decode:expr,
        two_way: $two_way:expr,
        two_way_view: $two_way_view:expr,
        split: $split:expr,
        view: $view:expr,
        noise: $noise:expr $(,)?
    ) => {
        #[test]
        fn every_two_way_split_gives_the_same_message() {
            let bytes = $two_way.into_bytes();
            let whole = ($decode)(&[&bytes]);
            assert!(
                matches!(
                    whole.last(),
                    Some($crate::event::AssistantMessageEvent::Done { .. })
                ),
                "{whole:?}"
            );
            $crate::test_support::assert_every_two_way_split_same($decode, &bytes, $two_way_view);
        }

        proptest::proptest! {
            #[test]
            fn split_anywhere_gives_the_same_events(
                cuts in proptest::collection::vec(proptest::prelude::any::<usize>(), 0..12),
            ) {
                let bytes = $split.into_bytes();
                $crate::test_support::check_split_anywhere($decode, &bytes, &cuts, $view)?;
            }

            #[test]
            fn noise_never_panics_and_ends_once(
                noise in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..400),
                at in proptest::prelude::any::<proptest::sample::Index>(),
            ) {
                let bytes = $noise.into_bytes();
                let at = at.index(bytes.len() + 1);
                let events =
                    $crate::test_support::check_noise_never_panics($decode, &bytes, &noise, at)?;
                proptest::prop_assert!(
                    events.last().is_some_and($crate::event::AssistantMessageEvent::is_terminal)
                );
            }
        }
    };
}
pub(crate) use decoder_split_tests;

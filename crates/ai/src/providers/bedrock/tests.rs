#![allow(clippy::unwrap_used)]

use serde_json::json;

use super::*;
use crate::env::MapEnv;
use crate::event::AssistantMessageEvent as E;
use crate::framing::event_stream::{HeaderValue, encode_message};
use crate::http::decode_recorded;
use crate::test_support::{
    assert_kinds, done_message, failure, kinds, last_message, model as test_model,
};
use crate::types::{ContentBlock, StopReason, TextContent, ThinkingContent, ToolCall};

/// A recorded `ConverseStream` body: reasoning with a signature, text, a tool call, the
/// stop and the usage (written by testdata's generator with zlib's CRC32).
const RECORDED: &[u8] = include_bytes!("testdata/converse-stream.bin");
/// A reply cut by a `throttlingException` message.
const THROTTLED: &[u8] = include_bytes!("testdata/throttled.bin");

fn model() -> Model {
    test_model(
        apis::BEDROCK_CONVERSE_STREAM,
        "amazon-bedrock",
        "https://bedrock-runtime.us-east-1.amazonaws.com",
        json!({"id": "us.anthropic.claude-sonnet-4-5-20250929-v1:0"}),
    )
}

fn decode(chunks: &[&[u8]]) -> Vec<E> {
    let model = model();
    let mut events = decode_recorded(
        &model,
        Framing::AwsEventStream,
        decoder(&model).as_mut(),
        chunks,
    );
    for event in &mut events {
        if let E::Done { message, .. } | E::Error { error: message, .. } = event {
            message.timestamp = 0;
        }
    }
    events
}

fn event(kind: &str, payload: serde_json::Value) -> Vec<u8> {
    encode_message(
        &[
            (":message-type", HeaderValue::String("event")),
            (":event-type", HeaderValue::String(kind)),
        ],
        payload.to_string().as_bytes(),
    )
}

#[test]
fn recorded_stream_decodes_as_pi_maps_it() {
    let events = decode(&[RECORDED]);
    assert_kinds(
        &events,
        "start thinking_start thinking_delta thinking_delta thinking_end text_start text_delta text_delta text_end toolcall_start toolcall_delta toolcall_delta toolcall_end done",
    );
    let message = done_message(&events, StopReason::ToolUse);
    assert_eq!(
        message.content,
        vec![
            ContentBlock::Thinking(ThinkingContent {
                thinking: "The user wants the weather.".into(),
                thinking_signature: Some("EqkBCkYIBx".into()),
                redacted: None,
            }),
            ContentBlock::Text(TextContent {
                text: "Let me check. ☀".into(),
                text_signature: None,
            }),
            ContentBlock::ToolCall(ToolCall {
                id: "tooluse_kZJMlvQmRJ6eAyJE5GIl7Q".into(),
                name: "get_weather".into(),
                arguments: json!({"city": "Paris"}),
                thought_signature: None,
            }),
        ]
    );
    let usage = &message.usage;
    assert_eq!(
        (
            usage.input,
            usage.output,
            usage.cache_read,
            usage.cache_write,
            usage.total_tokens
        ),
        (412, 57, 1000, 0, 1469)
    );
    // The test model's prices: 2 / 8 / 0.5 per million.
    assert!((usage.cost.total - (412.0 * 2.0 + 57.0 * 8.0 + 1000.0 * 0.5) / 1e6).abs() < 1e-12);
}

#[test]
fn any_split_of_the_recording_gives_the_same_events() {
    let whole = decode(&[RECORDED]);
    for cut in (1..RECORDED.len()).step_by(7) {
        assert_eq!(
            decode(&[&RECORDED[..cut], &RECORDED[cut..]]),
            whole,
            "cut at {cut}"
        );
    }
    let bytes: Vec<&[u8]> = RECORDED.chunks(1).collect();
    assert_eq!(decode(&bytes), whole);
}

#[test]
fn exceptions_fail_the_reply_with_their_kind() {
    let events = decode(&[THROTTLED]);
    assert_kinds(&events, "start text_start text_delta error");
    let (kind, message) = failure(&events);
    assert_eq!(kind, ErrorKind::RateLimited { retry_after: None });
    assert_eq!(
        message,
        "amazon-bedrock/us.anthropic.claude-sonnet-4-5-20250929-v1:0: Throttling error: Too many tokens, please wait before trying again."
    );
    assert_eq!(last_message(&events).content.len(), 1);
    for (name, kind) in [
        ("validationException", ErrorKind::BadRequest),
        ("internalServerException", ErrorKind::Server),
        ("serviceUnavailableException", ErrorKind::Overloaded),
        ("modelStreamErrorException", ErrorKind::Server),
    ] {
        let frame = encode_message(
            &[
                (":message-type", HeaderValue::String("exception")),
                (":exception-type", HeaderValue::String(name)),
            ],
            br#"{"message":"m"}"#,
        );
        assert_eq!(failure(&decode(&[&frame])).0, kind, "{name}");
    }
    let error = encode_message(
        &[
            (":message-type", HeaderValue::String("error")),
            (":error-code", HeaderValue::String("InternalFailure")),
            (":error-message", HeaderValue::String("boom")),
        ],
        b"",
    );
    assert!(
        failure(&decode(&[&error]))
            .1
            .ends_with("Stream error InternalFailure: boom")
    );
}

#[test]
fn stop_reasons() {
    for (reason, expected) in [
        ("end_turn", Ok(StopReason::Stop)),
        ("stop_sequence", Ok(StopReason::Stop)),
        ("max_tokens", Ok(StopReason::Length)),
        ("model_context_window_exceeded", Ok(StopReason::Length)),
        ("guardrail_intervened", Err(ErrorKind::Refused)),
        ("something_new", Err(ErrorKind::Protocol)),
    ] {
        let mut body = event(
            "contentBlockDelta",
            json!({"contentBlockIndex": 0, "delta": {"text": "x"}}),
        );
        body.extend(event("messageStop", json!({"stopReason": reason})));
        let events = decode(&[&body]);
        match expected {
            Ok(stop) => assert_eq!(done_message(&events, stop).content.len(), 1, "{reason}"),
            Err(kind) => assert_eq!(failure(&events).0, kind, "{reason}"),
        }
    }
}

#[test]
fn malformed_streams_are_protocol_errors_never_panics() {
    let mut bad_crc = RECORDED.to_vec();
    bad_crc[200] ^= 0x40;
    let (kind, message) = failure(&decode(&[&bad_crc]));
    assert_eq!(kind, ErrorKind::Protocol);
    assert!(
        message.starts_with("malformed stream: event-stream "),
        "{message}"
    );
    // Cut before the end: no messageStop, so the reply is incomplete.
    let cut = &RECORDED[..RECORDED.len() - 300];
    let (kind, message) = failure(&decode(&[cut]));
    assert_eq!(kind, ErrorKind::Protocol);
    assert!(
        message.contains("the event stream ended inside a message"),
        "{message}"
    );
    // An absurd length in a well-formed prelude.
    let mut huge = 0x7fff_ffffu32.to_be_bytes().to_vec();
    huge.extend_from_slice(&0u32.to_be_bytes());
    let crc = crc32fast::hash(&huge);
    huge.extend_from_slice(&crc.to_be_bytes());
    assert!(
        failure(&decode(&[&huge]))
            .1
            .contains("message length 2147483647")
    );
    // Not JSON, not UTF-8, a user message start, an unknown message type.
    for (body, expected) in [
        (
            event("messageStart", json!("x")),
            "invalid JSON in a Bedrock event",
        ),
        (
            encode_message(
                &[
                    (":message-type", HeaderValue::String("event")),
                    (":event-type", HeaderValue::String("metadata")),
                ],
                b"\xff\xfe",
            ),
            "not UTF-8",
        ),
        (
            event("messageStart", json!({"role": "user"})),
            "starts a \"user\" message",
        ),
        (
            encode_message(&[(":message-type", HeaderValue::String("weird"))], b"{}"),
            "unknown event-stream message type",
        ),
    ] {
        let events = decode(&[&body]);
        assert_eq!(kinds(&events).last().map(String::as_str), Some("error"));
        assert!(
            failure(&events).1.contains(expected),
            "{:?}",
            failure(&events)
        );
    }
}

#[test]
fn regions_and_endpoints() {
    assert_eq!(
        aws_endpoint_region("https://bedrock-runtime.eu-west-1.amazonaws.com"),
        Some("eu-west-1")
    );
    assert_eq!(
        aws_endpoint_region("https://bedrock-runtime.cn-north-1.amazonaws.com.cn/"),
        Some("cn-north-1")
    );
    assert_eq!(aws_endpoint_region("http://127.0.0.1:4010"), None);
    assert_eq!(
        endpoint(
            "https://bedrock-runtime.us-east-1.amazonaws.com",
            "ap-south-1"
        ),
        "https://bedrock-runtime.ap-south-1.amazonaws.com"
    );
    assert_eq!(
        endpoint("http://127.0.0.1:4010/", "ap-south-1"),
        "http://127.0.0.1:4010"
    );
}

#[tokio::test]
async fn region_order() {
    let aws = "https://bedrock-runtime.eu-central-1.amazonaws.com";
    let env = |vars: &[(&str, &str)]| MapEnv::new(vars.iter().copied());
    assert_eq!(
        region(
            &env(&[("AWS_REGION", "r1"), ("AWS_DEFAULT_REGION", "r2")]),
            aws
        )
        .await,
        "r1"
    );
    assert_eq!(
        region(&env(&[("AWS_DEFAULT_REGION", "r2")]), aws).await,
        "r2"
    );
    assert_eq!(region(&env(&[]), aws).await, "eu-central-1");
    assert_eq!(region(&env(&[]), "http://127.0.0.1:1").await, "us-east-1");
}

#[derive(Debug)]
struct Fixed;

impl CredentialSource for Fixed {
    fn credentials(&self) -> BoxFuture<'_, Result<AwsCredentials, credentials::CredentialError>> {
        Box::pin(async {
            Ok(AwsCredentials::new(
                "AKIDTEST",
                "secret",
                Some("session".into()),
            ))
        })
    }
}

#[tokio::test]
async fn requests_are_signed_or_carry_the_api_key() {
    let model = model();
    let context = Context {
        system_prompt: None,
        messages: vec![crate::types::Message::user("hi")],
        tools: vec![],
    };
    let env = MapEnv::new([("AWS_REGION", "eu-west-3")]);
    let creds = Arc::new(CachedCredentials::new(Arc::new(Fixed)));
    let call = prepare(&model, &context, &StreamOptions::default(), &env, &creds)
        .await
        .unwrap();
    assert_eq!(
        call.url,
        "https://bedrock-runtime.eu-west-3.amazonaws.com/model/us.anthropic.claude-sonnet-4-5-20250929-v1%3A0/converse-stream"
    );
    let signed = call
        .signer
        .unwrap()
        .sign(&call.url, &call.headers, b"{}")
        .await
        .unwrap();
    let names: Vec<&str> = signed.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(
        names,
        ["x-amz-date", "x-amz-security-token", "authorization"]
    );
    assert!(
        signed[2].1.starts_with("AWS4-HMAC-SHA256 Credential=AKIDTEST/")
            && signed[2].1.contains("/eu-west-3/bedrock/aws4_request, SignedHeaders=host;x-amz-date;x-amz-security-token, Signature="),
        "{}",
        signed[2].1
    );
    let keyed = StreamOptions {
        api_key: Some("bedrock-api-key".into()),
        ..StreamOptions::default()
    };
    let call = prepare(&model, &context, &keyed, &env, &creds)
        .await
        .unwrap();
    assert!(call.signer.is_none());
    assert!(
        call.headers
            .contains(&("authorization".into(), "Bearer bedrock-api-key".into()))
    );
}

#[tokio::test]
async fn no_credentials_is_a_clear_auth_error() {
    let model = model();
    let env: Arc<dyn EnvSource> = Arc::new(MapEnv::new([("AWS_EC2_METADATA_DISABLED", "true")]));
    let provider = BedrockProvider::new(LazyHttpClient::new(), env);
    let context = Context {
        system_prompt: None,
        messages: vec![crate::types::Message::user("hi")],
        tools: vec![],
    };
    let error = provider
        .stream(&model, &context, StreamOptions::default())
        .complete()
        .await
        .unwrap_err();
    assert_eq!(error.kind, ErrorKind::Auth);
    assert!(
        error.message.starts_with(
            "amazon-bedrock/us.anthropic.claude-sonnet-4-5-20250929-v1:0: no AWS credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, AWS_PROFILE"
        ),
        "{}",
        error.message
    );
    assert!(error.message.contains("no AWS_ACCESS_KEY_ID; no default profile; no AWS_WEB_IDENTITY_TOKEN_FILE; no container credentials endpoint; instance metadata disabled"), "{}", error.message);
}

//! Decoding Gemini's `streamGenerateContent?alt=sse` stream: every `data:` is a whole
//! `GenerateContentResponse` whose parts are appended to the reply. Text and thought parts
//! grow the current block (a new block starts when the kind changes, as pi does); a
//! `functionCall` part is a complete tool call.
//!
//! Chunks are parsed into borrowed structs, not `serde_json::Value`, to keep the text path
//! cheap; only function-call arguments (arbitrary JSON by nature) become a `Value`.

use std::sync::atomic::{AtomicU64, Ordering};

use serde::Deserialize;
use serde_json::Value;

use crate::builder::MessageBuilder;
use crate::error::{ErrorKind, is_context_overflow};
use crate::framing::SseEvent;
use crate::http::{DecodeError, Decoded, StreamDecoder};
use crate::model::Model;
use crate::providers::borrowed_str::{Str, opt_str};
use crate::types::{StopReason, now_ms};

/// Makes generated tool call ids unique within the process (pi's `toolCallCounter`).
static TOOL_CALL_COUNTER: AtomicU64 = AtomicU64::new(0);

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Chunk<'a> {
    #[serde(borrow, default)]
    candidates: Option<First<Candidate<'a>>>,
    usage_metadata: Option<UsageMetadata>,
    #[serde(borrow, default)]
    prompt_feedback: Option<PromptFeedback<'a>>,
    #[serde(borrow, default)]
    response_id: Option<Str<'a>>,
    error: Option<Value>,
}

/// The first element of a JSON array; the rest are skipped unparsed. pi reads only the
/// first candidate, and this saves an allocation per chunk.
#[derive(Debug)]
struct First<T>(Option<T>);

impl<'de, T: Deserialize<'de>> Deserialize<'de> for First<T> {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visitor<T>(std::marker::PhantomData<T>);
        impl<'de, T: Deserialize<'de>> serde::de::Visitor<'de> for Visitor<T> {
            type Value = First<T>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("an array")
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut seq: A,
            ) -> Result<First<T>, A::Error> {
                let first = seq.next_element()?;
                while seq.next_element::<serde::de::IgnoredAny>()?.is_some() {}
                Ok(First(first))
            }
        }
        deserializer.deserialize_seq(Visitor(std::marker::PhantomData))
    }
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Candidate<'a> {
    #[serde(borrow, default)]
    content: Option<Content<'a>>,
    #[serde(borrow, default)]
    finish_reason: Option<Str<'a>>,
    #[serde(borrow, default)]
    finish_message: Option<Str<'a>>,
}

#[derive(Debug, Deserialize)]
struct Content<'a> {
    #[serde(borrow, default)]
    parts: Option<Vec<Part<'a>>>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Part<'a> {
    #[serde(borrow, default)]
    text: Option<Str<'a>>,
    thought: Option<bool>,
    #[serde(borrow, default)]
    thought_signature: Option<Str<'a>>,
    #[serde(borrow, default)]
    function_call: Option<FunctionCall<'a>>,
}

#[derive(Debug, Deserialize)]
struct FunctionCall<'a> {
    #[serde(borrow, default)]
    id: Option<Str<'a>>,
    #[serde(borrow, default)]
    name: Option<Str<'a>>,
    args: Option<Value>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct UsageMetadata {
    prompt_token_count: Option<u64>,
    candidates_token_count: Option<u64>,
    thoughts_token_count: Option<u64>,
    cached_content_token_count: Option<u64>,
    total_token_count: Option<u64>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct PromptFeedback<'a> {
    #[serde(borrow, default)]
    block_reason: Option<Str<'a>>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Text,
    Thinking,
}

/// How the reply ends, known from `finishReason` and acted on at the end of the stream
/// (the usage of the last chunk still counts).
#[derive(Debug)]
enum Finish {
    Done(StopReason),
    Fail(ErrorKind, String),
}

/// Decoder state for one response.
#[derive(Debug)]
pub(super) struct GoogleDecoder {
    /// `provider/model`, prefixed to error messages.
    label: String,
    /// The text or thinking block being grown, with its builder index.
    current: Option<(Kind, usize)>,
    finish: Option<Finish>,
}

impl GoogleDecoder {
    pub(super) fn new(model: &Model) -> Self {
        Self {
            label: model.reference(),
            current: None,
            finish: None,
        }
    }

    fn segment(
        &mut self,
        text: &str,
        kind: Kind,
        signature: Option<&str>,
        out: &mut MessageBuilder,
    ) {
        let index = match self.current {
            Some((k, i)) if k == kind => i,
            _ => {
                self.close_current(out);
                let i = match kind {
                    Kind::Text => out.text_start(),
                    Kind::Thinking => out.thinking_start(),
                };
                self.current = Some((kind, i));
                i
            }
        };
        // Some backends send the signature only on the first part of a block: keep the
        // last non-empty one instead of overwriting it with nothing.
        let signature = signature.filter(|s| !s.is_empty());
        match kind {
            Kind::Text => {
                out.text_delta(index, text);
                if let Some(sig) = signature {
                    out.set_text_signature(index, sig);
                }
            }
            Kind::Thinking => {
                out.thinking_delta(index, text);
                if let Some(sig) = signature {
                    out.set_thinking_signature(index, sig);
                }
            }
        }
    }

    fn close_current(&mut self, out: &mut MessageBuilder) {
        if let Some((_, i)) = self.current.take() {
            out.end(i);
        }
    }

    fn function_call(
        &mut self,
        call: &FunctionCall<'_>,
        signature: Option<&str>,
        out: &mut MessageBuilder,
    ) {
        self.close_current(out);
        let name = opt_str(&call.name).unwrap_or("");
        // Gemini 2.x sends no ids; parallel calls may even share one. pi generates
        // `{name}_{ms}_{counter}` then.
        let id = match opt_str(&call.id).filter(|id| !id.is_empty()) {
            Some(id) if !out.message().tool_calls().any(|c| c.id == id) => id.to_owned(),
            _ => {
                let n = TOOL_CALL_COUNTER.fetch_add(1, Ordering::Relaxed) + 1;
                format!("{name}_{}_{n}", now_ms())
            }
        };
        let index = out.toolcall_start(&id, name);
        let args = match &call.args {
            Some(args @ Value::Object(_)) => args.clone(),
            _ => Value::Object(Default::default()),
        };
        out.toolcall_set_arguments(index, args);
        if let Some(sig) = signature.filter(|s| !s.is_empty()) {
            out.set_thought_signature(index, sig);
        }
        out.end(index);
    }

    fn finish_reason(&self, reason: &str, detail: Option<&str>) -> Finish {
        let detail = detail
            .filter(|d| !d.is_empty())
            .map(|d| format!(": {d}"))
            .unwrap_or_default();
        let fail = |kind, what: &str| {
            Finish::Fail(
                kind,
                format!("{}: {what} (finishReason {reason}){detail}", self.label),
            )
        };
        match reason {
            "STOP" => Finish::Done(StopReason::Stop),
            "MAX_TOKENS" => Finish::Done(StopReason::Length),
            "SAFETY"
            | "BLOCKLIST"
            | "PROHIBITED_CONTENT"
            | "SPII"
            | "RECITATION"
            | "LANGUAGE"
            | "IMAGE_SAFETY"
            | "IMAGE_PROHIBITED_CONTENT"
            | "IMAGE_RECITATION" => fail(
                ErrorKind::Refused,
                "the response was blocked by Google's filters; rephrase the request",
            ),
            "MALFORMED_FUNCTION_CALL" | "UNEXPECTED_TOOL_CALL" | "TOO_MANY_TOOL_CALLS" => fail(
                ErrorKind::Server,
                "the model produced an invalid tool call; try again",
            ),
            _ => fail(
                ErrorKind::Server,
                "the response ended abnormally; try again",
            ),
        }
    }

    fn error(&self, error: &Value, out: &mut MessageBuilder) {
        let message = error
            .get("message")
            .and_then(Value::as_str)
            .or_else(|| error.as_str())
            .unwrap_or("(no message)");
        let status = error.get("status").and_then(Value::as_str).unwrap_or("");
        let code = error.get("code").and_then(Value::as_u64).unwrap_or(0);
        let kind = match (status, code) {
            ("RESOURCE_EXHAUSTED", _) | (_, 429) => ErrorKind::RateLimited { retry_after: None },
            ("UNAVAILABLE", _) | (_, 503) => ErrorKind::Overloaded,
            ("DEADLINE_EXCEEDED", _) | (_, 504) => ErrorKind::Timeout,
            ("UNAUTHENTICATED" | "PERMISSION_DENIED", _) | (_, 401 | 403) => ErrorKind::Auth,
            _ if is_context_overflow(&message.to_ascii_lowercase()) => ErrorKind::ContextOverflow,
            ("INVALID_ARGUMENT" | "FAILED_PRECONDITION" | "NOT_FOUND", _) | (_, 400 | 404) => {
                ErrorKind::BadRequest
            }
            _ => ErrorKind::Server,
        };
        let hint = if kind.is_retryable() {
            "; try again later"
        } else {
            ""
        };
        let status = if status.is_empty() {
            String::new()
        } else {
            format!("{status}: ")
        };
        out.fail(kind, format!("{}: {status}{message}{hint}", self.label));
    }
}

impl StreamDecoder for GoogleDecoder {
    fn on_event(&mut self, event: SseEvent<'_>, out: &mut MessageBuilder) -> Decoded {
        let chunk: Chunk<'_> = DecodeError::parse("a Gemini chunk", event.data)?;
        if let Some(error) = &chunk.error {
            self.error(error, out);
            return Ok(());
        }
        if let Some(id) = opt_str(&chunk.response_id)
            && out.message().response_id.is_none()
        {
            out.set_response_id(id);
        }
        if let Some(reason) = chunk
            .prompt_feedback
            .as_ref()
            .and_then(|f| opt_str(&f.block_reason))
        {
            let message = format!(
                "{}: Google blocked the prompt (blockReason {reason}); rephrase the request",
                self.label
            );
            out.fail(ErrorKind::Refused, message);
            return Ok(());
        }
        if let Some(candidate) = chunk.candidates.as_ref().and_then(|c| c.0.as_ref()) {
            let parts = candidate
                .content
                .as_ref()
                .and_then(|c| c.parts.as_deref())
                .unwrap_or(&[]);
            for part in parts {
                let signature = opt_str(&part.thought_signature);
                if let Some(text) = opt_str(&part.text) {
                    let kind = if part.thought == Some(true) {
                        Kind::Thinking
                    } else {
                        Kind::Text
                    };
                    self.segment(text, kind, signature, out);
                }
                if let Some(call) = &part.function_call {
                    self.function_call(call, signature, out);
                }
            }
            if let Some(reason) = opt_str(&candidate.finish_reason) {
                self.finish = Some(self.finish_reason(reason, opt_str(&candidate.finish_message)));
            }
        }
        if let Some(usage) = &chunk.usage_metadata {
            let cached = usage.cached_content_token_count.unwrap_or(0);
            let u = out.usage_mut();
            u.input = usage.prompt_token_count.unwrap_or(0).saturating_sub(cached);
            u.output =
                usage.candidates_token_count.unwrap_or(0) + usage.thoughts_token_count.unwrap_or(0);
            u.cache_read = cached;
            u.cache_write = 0;
            u.total_tokens = usage.total_token_count.unwrap_or(0);
        }
        Ok(())
    }

    fn finish(&mut self, out: &mut MessageBuilder) -> Decoded {
        match self.finish.take() {
            Some(Finish::Done(reason)) => {
                self.close_current(out);
                // pi reports toolUse whenever the reply holds calls, even on MAX_TOKENS.
                let has_calls = out.message().tool_calls().next().is_some();
                out.set_stop_reason(if has_calls {
                    StopReason::ToolUse
                } else {
                    reason
                });
                out.done();
                Ok(())
            }
            Some(Finish::Fail(kind, message)) => {
                out.fail(kind, message);
                Ok(())
            }
            None => Err(DecodeError(
                "the stream ended before the reply was complete (no finishReason)".into(),
            )),
        }
    }
}

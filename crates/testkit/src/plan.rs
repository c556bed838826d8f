//! A `Plan` is a reply made concrete for one response: text split into deltas, tool-call ids
//! assigned, usage numbers computed, pacing fixed. Encoders render plans; they decide nothing.

use std::time::Duration;

use serde_json::Value;

use crate::api::Api;
use crate::scenario::{DEFAULT_CHUNK_SIZE, Reply, StopReason};

/// Thinking signature used when the reply sets none.
pub(crate) const DEFAULT_SIGNATURE: &str = "mock-signature";

/// Per-response facts every encoder needs.
#[derive(Debug, Clone)]
pub(crate) struct RenderCtx {
    pub model: String,
    /// Unique per response; used in ids.
    pub seq: u64,
    /// Unix seconds.
    pub created: u64,
    pub include_usage: bool,
}

/// A tool call with its id decided and its arguments serialized and split.
#[derive(Debug, Clone)]
pub(crate) struct PlannedCall {
    pub id: String,
    /// The scenario gave this id (Gemini only sends ids that were asked for).
    pub id_explicit: bool,
    pub name: String,
    pub args: Value,
    pub args_json: String,
    pub arg_chunks: Vec<String>,
}

/// Token counts to report.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Tokens {
    pub input: u64,
    pub output: u64,
    pub cache_read: u64,
    pub cache_write: u64,
    /// The part of `output` spent on thinking.
    pub reasoning: u64,
}

/// A reply ready to render.
#[derive(Debug, Clone)]
pub(crate) struct Plan {
    pub ctx: RenderCtx,
    pub thinking: Option<Vec<String>>,
    pub signature: String,
    pub redacted: Option<String>,
    pub text: Option<Vec<String>>,
    pub calls: Vec<PlannedCall>,
    pub stop: StopReason,
    pub usage: Tokens,
    pub delay: Duration,
}

impl Plan {
    /// The full thinking text.
    pub fn thinking_text(&self) -> Option<String> {
        self.thinking.as_ref().map(|chunks| chunks.concat())
    }

    /// The full answer text.
    pub fn text_text(&self) -> Option<String> {
        self.text.as_ref().map(|chunks| chunks.concat())
    }
}

/// Scenario-wide pacing defaults.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Pacing {
    pub chunk_size: Option<usize>,
    pub delay_ms: Option<u64>,
}

/// Splits `text` into pieces of `size` characters (never inside a UTF-8 sequence).
pub(crate) fn split_chars(text: &str, size: usize) -> Vec<String> {
    let size = size.max(1);
    let mut pieces = Vec::with_capacity(text.len() / size + 1);
    let mut start = 0;
    for (count, (index, _)) in text.char_indices().enumerate() {
        if count > 0 && count % size == 0 {
            pieces.push(text[start..index].to_owned());
            start = index;
        }
    }
    if start < text.len() {
        pieces.push(text[start..].to_owned());
    }
    pieces
}

/// The protocol's conventional id for the `index`-th generated tool call of response `seq`.
fn generated_call_id(api: Api, seq: u64, index: usize) -> String {
    match api {
        Api::AnthropicMessages => format!("toolu_mock_{seq}_{index}"),
        Api::BedrockConverseStream => format!("tooluse_mock_{seq}_{index}"),
        _ => format!("call_mock_{seq}_{index}"),
    }
}

fn tokens_for(chars: usize) -> u64 {
    (chars as u64).div_ceil(4)
}

/// Makes `reply` concrete for one response.
pub(crate) fn build(
    reply: &Reply,
    pacing: Pacing,
    api: Api,
    ctx: RenderCtx,
    body_bytes: usize,
) -> Plan {
    let chunk = reply
        .chunk_size
        .or(pacing.chunk_size)
        .unwrap_or(DEFAULT_CHUNK_SIZE);
    let non_empty = |value: &Option<String>| value.clone().filter(|text| !text.is_empty());
    let thinking = non_empty(&reply.thinking);
    let text = non_empty(&reply.text);
    let calls: Vec<PlannedCall> = reply
        .tool_calls
        .iter()
        .enumerate()
        .map(|(index, call)| {
            let args_json = call.arguments.to_string();
            PlannedCall {
                id: call
                    .id
                    .clone()
                    .unwrap_or_else(|| generated_call_id(api, ctx.seq, index)),
                id_explicit: call.id.is_some(),
                name: call.name.clone(),
                args: call.arguments.clone(),
                arg_chunks: split_chars(&args_json, chunk),
                args_json,
            }
        })
        .collect();
    let stop = reply.stop_reason.unwrap_or(if calls.is_empty() {
        StopReason::Stop
    } else {
        StopReason::ToolUse
    });
    let thinking_chars = thinking.as_deref().map_or(0, |t| t.chars().count());
    let output_chars = thinking_chars
        + text.as_deref().map_or(0, |t| t.chars().count())
        + calls
            .iter()
            .map(|c| c.name.len() + c.args_json.chars().count())
            .sum::<usize>();
    let spec = reply.usage.unwrap_or_default();
    let output = spec
        .output
        .unwrap_or_else(|| tokens_for(output_chars).max(1));
    let usage = Tokens {
        input: spec.input.unwrap_or_else(|| tokens_for(body_bytes).max(1)),
        output,
        cache_read: spec.cache_read.unwrap_or(0),
        cache_write: spec.cache_write.unwrap_or(0),
        reasoning: tokens_for(thinking_chars).min(output),
    };
    Plan {
        ctx,
        thinking: thinking.map(|t| split_chars(&t, chunk)),
        signature: reply
            .signature
            .clone()
            .unwrap_or_else(|| DEFAULT_SIGNATURE.to_owned()),
        redacted: non_empty(&reply.redacted_thinking),
        text: text.map(|t| split_chars(&t, chunk)),
        calls,
        stop,
        usage,
        delay: Duration::from_millis(reply.delay_ms.or(pacing.delay_ms).unwrap_or(0)),
    }
}

/// The benchmark reply: `tokens` deltas of `token`, fixed usage, no pacing.
pub(crate) fn instant(tokens: usize, token: &str, ctx: RenderCtx) -> Plan {
    Plan {
        ctx,
        thinking: None,
        signature: DEFAULT_SIGNATURE.to_owned(),
        redacted: None,
        text: (tokens > 0).then(|| vec![token.to_owned(); tokens]),
        calls: Vec::new(),
        stop: StopReason::Stop,
        usage: Tokens {
            input: 8,
            output: tokens as u64,
            ..Tokens::default()
        },
        delay: Duration::ZERO,
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn split_keeps_utf8_whole() {
        assert_eq!(split_chars("héllo wörld", 4), ["héll", "o wö", "rld"]);
        assert_eq!(split_chars("", 4), Vec::<String>::new());
        assert_eq!(split_chars("ab", 0), ["a", "b"]);
        assert_eq!(split_chars("日本語", 1), ["日", "本", "語"]);
    }
}

//! Token accounting for compaction (pi's `estimateTokens`, `estimateContextTokens`,
//! `shouldCompact`): the provider's reported usage where there is one, chars/4 elsewhere.
//!
//! Characters are Unicode scalar values (pi counts UTF-16 code units; the two differ only
//! for characters outside the Basic Multilingual Plane, and this is a heuristic anyway).

use pincer_ai::{AssistantMessage, ContentBlock, Message, StopReason, Usage, UserContent};

use super::CompactionSettings;

/// An image in a tool result counts as this many characters (about 1200 tokens), as in pi.
const IMAGE_CHARS: u64 = 4800;

fn chars(text: &str) -> u64 {
    text.chars().count() as u64
}

fn tokens_for(chars: u64) -> u64 {
    chars.div_ceil(4)
}

/// Characters of the text blocks of `blocks`, each image counting `image`; other blocks
/// count nothing.
fn text_chars(blocks: &[ContentBlock], image: u64) -> u64 {
    blocks
        .iter()
        .map(|b| match b {
            ContentBlock::Text(t) => chars(&t.text),
            ContentBlock::Image(_) => image,
            _ => 0,
        })
        .sum()
}

/// Estimated tokens of one message: characters / 4, rounded up. Conservative (it
/// overestimates). User images are not counted, tool-result images count 1200 tokens.
pub fn estimate_tokens(message: &Message) -> u64 {
    let count = match message {
        Message::User(user) => match &user.content {
            UserContent::Text(text) => chars(text),
            UserContent::Blocks(blocks) => text_chars(blocks, 0),
        },
        Message::Assistant(assistant) => assistant
            .content
            .iter()
            .map(|b| match b {
                ContentBlock::Text(t) => chars(&t.text),
                ContentBlock::Thinking(t) => chars(&t.thinking),
                ContentBlock::ToolCall(call) => {
                    let args = serde_json::to_string(&call.arguments).unwrap_or_default();
                    chars(&call.name) + chars(&args)
                }
                ContentBlock::Image(_) => 0,
            })
            .sum(),
        Message::ToolResult(result) => text_chars(&result.content, IMAGE_CHARS),
    };
    tokens_for(count)
}

/// Estimated tokens of a text, chars / 4 rounded up.
pub fn estimate_text_tokens(text: &str) -> u64 {
    tokens_for(chars(text))
}

/// The context size a usage reports: `total_tokens`, or the sum of its parts when a
/// provider left the total at zero (pi's `calculateContextTokens`).
pub fn context_tokens_of(usage: &Usage) -> u64 {
    if usage.total_tokens > 0 {
        usage.total_tokens
    } else {
        usage.input + usage.output + usage.cache_read + usage.cache_write
    }
}

/// The usage of an assistant reply, if it can be trusted: not errored or aborted, and
/// not all zero (a reply built without usage data).
fn usable_usage(message: &Message) -> Option<u64> {
    match message {
        Message::Assistant(AssistantMessage {
            stop_reason, usage, ..
        }) if !matches!(stop_reason, StopReason::Error | StopReason::Aborted) => {
            Some(context_tokens_of(usage)).filter(|t| *t > 0)
        }
        _ => None,
    }
}

/// How a context estimate was made.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ContextEstimate {
    /// The estimate: `usage_tokens + trailing_tokens`.
    pub tokens: u64,
    /// The context size reported by the last usable assistant reply (0 without one).
    pub usage_tokens: u64,
    /// chars/4 of every message after that reply (of all messages without one).
    pub trailing_tokens: u64,
    /// Index of the assistant reply whose usage was used.
    pub last_usage_index: Option<usize>,
}

/// pi's rule: the last usable assistant reply's reported context size plus chars/4 for
/// every message after it; chars/4 for everything when no reply reports usage.
pub fn estimate_context(messages: &[Message]) -> ContextEstimate {
    let last = messages
        .iter()
        .enumerate()
        .rev()
        .find_map(|(i, m)| usable_usage(m).map(|tokens| (i, tokens)));
    let (usage_tokens, from, last_usage_index) = match last {
        Some((i, tokens)) => (tokens, i + 1, Some(i)),
        None => (0, 0, None),
    };
    let trailing_tokens = messages[from..].iter().map(estimate_tokens).sum();
    ContextEstimate {
        tokens: usage_tokens + trailing_tokens,
        usage_tokens,
        trailing_tokens,
        last_usage_index,
    }
}

/// The estimated context size of `messages` (see [`estimate_context`]).
pub fn estimate_context_tokens(messages: &[Message]) -> u64 {
    estimate_context(messages).tokens
}

/// Whether a context of `context_tokens` leaves less than `reserve_tokens` of the window
/// free. Always false when compaction is disabled.
pub fn should_compact(
    context_tokens: u64,
    context_window: u64,
    settings: &CompactionSettings,
) -> bool {
    settings.enabled && context_tokens > context_window.saturating_sub(settings.reserve_tokens)
}

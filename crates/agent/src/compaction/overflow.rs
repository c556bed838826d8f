//! Recognising a reply that failed because the prompt no longer fits the model's context
//! window (pi-ai's `isContextOverflow`). Messages carry only the error text, so this
//! matches the phrases providers use, plus the hint pincer-ai adds to every error it
//! classifies as `ErrorKind::ContextOverflow`.

use pincer_ai::{AssistantMessage, StopReason};

/// Fixed phrases (lowercase) of pi's overflow patterns, and pincer-ai's own hint.
const PHRASES: &[&str] = &[
    "prompt is too long",                          // Anthropic
    "input is too long for requested model",       // Amazon Bedrock
    "exceeds the context window",                  // OpenAI
    "reduce the length of the messages",           // Groq
    "exceeds the available context size",          // llama.cpp
    "greater than the context length",             // LM Studio
    "context window exceeds limit",                // MiniMax
    "exceeded model token limit",                  // Kimi For Coding
    "context length exceeded",                     // generic (also `context_length_exceeded`)
    "too many tokens",                             // generic
    "token limit exceeded",                        // generic
    "the conversation is too long for this model", // pincer-ai's ContextOverflow hint
];

/// `(before, after)`: `before`, at least one digit, then `after` (pi's `\d+` patterns).
const NUMBERED: &[(&str, &str)] = &[
    ("maximum prompt length is ", ""),                        // xAI
    ("maximum context length is ", " tokens"),                // OpenRouter
    ("exceeds the limit of ", ""),                            // GitHub Copilot
    ("too large for model with ", " maximum context length"), // Mistral
];

/// Whether an errored reply says the context overflowed.
pub fn is_context_overflow(message: &AssistantMessage) -> bool {
    if message.stop_reason != StopReason::Error {
        return false;
    }
    let Some(error) = message.error_message.as_deref() else {
        return false;
    };
    let lower = error.to_lowercase().replace('_', " ");
    PHRASES.iter().any(|p| lower.contains(p))
        || NUMBERED
            .iter()
            .any(|(before, after)| has_numbered(&lower, before, after))
        // Google: "input token count (N) exceeds the maximum ...", on one line.
        || lower.lines().any(|line| {
            line.find("input token count")
                .is_some_and(|i| line[i..].contains("exceeds the maximum"))
        })
        || is_empty_400_or_413(&lower)
}

/// A successful reply whose reported input is larger than the context window: some
/// providers (z.ai) accept an overflowing prompt silently.
pub fn is_silent_overflow(message: &AssistantMessage, context_window: u64) -> bool {
    context_window > 0
        && message.stop_reason == StopReason::Stop
        && message.usage.input + message.usage.cache_read > context_window
}

fn has_numbered(text: &str, before: &str, after: &str) -> bool {
    text.match_indices(before).any(|(i, _)| {
        let rest = &text[i + before.len()..];
        let digits = rest.len() - rest.trim_start_matches(|c: char| c.is_ascii_digit()).len();
        digits > 0 && rest[digits..].starts_with(after)
    })
}

/// Cerebras answers an overflow with `400 status code (no body)` or `413 (no body)`.
fn is_empty_400_or_413(lower: &str) -> bool {
    let Some(rest) = lower
        .strip_prefix("400")
        .or_else(|| lower.strip_prefix("413"))
    else {
        return false;
    };
    let rest = rest.trim_start();
    let rest = rest
        .strip_prefix("status code")
        .unwrap_or(rest)
        .trim_start();
    rest.starts_with("(no body)")
}

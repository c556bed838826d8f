//! The summary call and the new conversation (pi's `prepareCompaction`, `generateSummary`,
//! `generateTurnPrefixSummary` and `compact`, for a plain message list).

use futures_util::future::join;
use pincer_ai::{
    ContentBlock, Context, ErrorKind, Message, Model, StopReason, StreamOptions, ThinkingLevel,
    UserContent, UserMessage, now_ms,
};
use tokio_util::sync::CancellationToken;

use super::cut::{find_cut_point, history_start};
use super::prompt::{
    SUMMARIZATION_SYSTEM_PROMPT, previous_summary, summary_message, summary_prompt,
    turn_prefix_prompt,
};
use super::serialize::{FileOperations, parse_file_lists};
use super::tokens::estimate_context_tokens;
use super::{CompactionError, CompactionResult, CompactionSettings};
use crate::agent::StreamFn;

/// What a split turn's history summary says when nothing came before the turn.
const NO_PRIOR_HISTORY: &str = "No prior history.";

/// Compact `messages`: summarise everything before the cut with `model` through
/// `stream_fn`, and return the summary and the new conversation (the summary message,
/// then the kept messages). `custom_instructions` are appended to the prompt as
/// `Additional focus: ...`.
pub async fn compact(
    stream_fn: &StreamFn,
    model: &Model,
    messages: &[Message],
    settings: &CompactionSettings,
    custom_instructions: Option<&str>,
    cancel: &CancellationToken,
) -> Result<CompactionResult, CompactionError> {
    let options = StreamOptions {
        cancel: Some(cancel.clone()),
        ..StreamOptions::default()
    };
    compact_with_options(
        stream_fn,
        model,
        messages,
        settings,
        custom_instructions,
        options,
    )
    .await
}

/// [`compact`] with a template for the calls (API key, headers, retry policy, and the
/// cancellation token in `options.cancel`). `max_tokens` and `reasoning` are set here:
/// 80% of `reserve_tokens` (50% for a split turn's prefix), and high reasoning when the
/// model reasons.
pub async fn compact_with_options(
    stream_fn: &StreamFn,
    model: &Model,
    messages: &[Message],
    settings: &CompactionSettings,
    custom_instructions: Option<&str>,
    options: StreamOptions,
) -> Result<CompactionResult, CompactionError> {
    let start = history_start(messages);
    let cut = find_cut_point(messages, settings.keep_recent_tokens);
    let history_end = cut.turn_start_index.unwrap_or(cut.first_kept_index);
    let history = &messages[start..history_end];
    let turn_prefix = match cut.turn_start_index {
        Some(turn_start) => &messages[turn_start..cut.first_kept_index],
        None => &[],
    };
    if history.is_empty() && turn_prefix.is_empty() {
        return Err(CompactionError::NothingToCompact);
    }
    if options.cancel.as_ref().is_some_and(|c| c.is_cancelled()) {
        return Err(CompactionError::Aborted);
    }

    let previous = previous_summary(messages);
    let previous_files = previous.as_deref().map(parse_file_lists);
    let mut files = FileOperations::default();
    if let Some(details) = &previous_files {
        files.merge_details(details);
    }
    for message in history.iter().chain(turn_prefix) {
        files.record(message);
    }
    let tokens_before = estimate_context_tokens(messages);

    let history_summary = async {
        if !history.is_empty() {
            let prompt = summary_prompt(history, previous.as_deref(), custom_instructions);
            let max_tokens = settings.reserve_tokens * 4 / 5;
            return summarise(stream_fn, model, prompt, max_tokens, &options)
                .await
                .map_err(|e| e.into_error(CompactionError::SummaryFailed));
        }
        // Nothing new before the split turn: keep the earlier summary (without its file
        // tags, which are appended again below) rather than losing it.
        Ok(match (&previous, &previous_files) {
            (Some(summary), Some(details)) => summary
                .strip_suffix(details.to_tags().as_str())
                .unwrap_or(summary)
                .to_owned(),
            _ => NO_PRIOR_HISTORY.to_owned(),
        })
    };
    let mut summary = if turn_prefix.is_empty() {
        history_summary.await?
    } else {
        let prefix_summary = async {
            let max_tokens = settings.reserve_tokens / 2;
            summarise(
                stream_fn,
                model,
                turn_prefix_prompt(turn_prefix),
                max_tokens,
                &options,
            )
            .await
            .map_err(|e| e.into_error(CompactionError::TurnPrefixFailed))
        };
        let (history_summary, prefix_summary) = join(history_summary, prefix_summary).await;
        format!(
            "{}\n\n---\n\n**Turn Context (split turn):**\n\n{}",
            history_summary?, prefix_summary?
        )
    };
    let details = files.details();
    summary.push_str(&details.to_tags());

    let kept = &messages[cut.first_kept_index..];
    let mut new_messages = Vec::with_capacity(kept.len() + 1);
    new_messages.push(summary_message(&summary));
    new_messages.extend_from_slice(kept);
    Ok(CompactionResult {
        summary,
        first_kept_index: cut.first_kept_index,
        first_kept_message: messages[cut.first_kept_index].clone(),
        tokens_before,
        details,
        messages: new_messages,
    })
}

/// Why one summary call failed.
enum CallError {
    Aborted,
    Failed(String),
}

impl CallError {
    fn into_error(self, failed: fn(String) -> CompactionError) -> CompactionError {
        match self {
            Self::Aborted => CompactionError::Aborted,
            Self::Failed(message) => failed(message),
        }
    }
}

/// One summarisation call: the system prompt, one user message, no tools. Returns the
/// reply's text blocks joined by newlines.
async fn summarise(
    stream_fn: &StreamFn,
    model: &Model,
    prompt: String,
    max_tokens: u64,
    template: &StreamOptions,
) -> Result<String, CallError> {
    let context = Context {
        system_prompt: Some(SUMMARIZATION_SYSTEM_PROMPT.to_owned()),
        messages: vec![Message::User(UserMessage {
            content: UserContent::Blocks(vec![ContentBlock::text(prompt)]),
            timestamp: now_ms(),
        })],
        tools: Vec::new(),
    };
    let options = StreamOptions {
        max_tokens: Some(max_tokens),
        reasoning: model.reasoning.then_some(ThinkingLevel::High),
        ..template.clone()
    };
    let reply = match stream_fn(model, &context, options).complete().await {
        Ok(reply) => reply,
        Err(e) if e.kind == ErrorKind::Aborted => return Err(CallError::Aborted),
        Err(e) if e.message.is_empty() => return Err(CallError::Failed("Unknown error".into())),
        Err(e) => return Err(CallError::Failed(e.message)),
    };
    match reply.stop_reason {
        StopReason::Aborted => return Err(CallError::Aborted),
        StopReason::Error => {
            return Err(CallError::Failed(
                reply
                    .error_message
                    .unwrap_or_else(|| "Unknown error".into()),
            ));
        }
        _ => {}
    }
    Ok(pincer_ai::texts(&reply.content)
        .collect::<Vec<_>>()
        .join("\n"))
}

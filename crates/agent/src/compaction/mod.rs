//! Context compaction, as pi's coding agent does it: when the conversation nears the
//! model's context window (or overflows it), older messages are summarised by the model
//! into one structured summary, and the conversation continues from that summary plus the
//! most recent messages kept verbatim.
//!
//! The pieces are pure functions, testable without an agent: [`estimate_context_tokens`]
//! and [`should_compact`] decide when, [`find_cut_point`] decides where,
//! [`serialize_conversation`] and [`summary_prompt`] build the request, and [`compact`]
//! makes the call and returns the new message list. [`compaction_trigger`] is the one check
//! the agent loop runs after each reply.
//!
//! The agent holds plain messages, so the summary is a user message (pi's text, see
//! [`summary_message`]) at the start of the list. The next compaction finds it there and
//! updates it (pi's `<previous-summary>`), and recovers the file lists from its tags.

mod cut;
pub(crate) mod in_agent;
mod overflow;
mod prompt;
mod serialize;
mod summarize;
mod tokens;

use pincer_ai::{AssistantMessage, Message, Model, StopReason};
use serde::{Deserialize, Serialize};

pub use cut::{CutPoint, find_cut_point, history_start};
pub use in_agent::CompactionEnd;
pub use overflow::{is_context_overflow, is_silent_overflow};
pub use prompt::{
    COMPACTION_SUMMARY_PREFIX, COMPACTION_SUMMARY_SUFFIX, SUMMARIZATION_PROMPT,
    SUMMARIZATION_SYSTEM_PROMPT, TURN_PREFIX_SUMMARIZATION_PROMPT, UPDATE_SUMMARIZATION_PROMPT,
    is_summary_message, previous_summary, summary_message, summary_of, summary_prompt,
    turn_prefix_prompt,
};
pub use serialize::{
    CompactionDetails, FileOperations, TOOL_RESULT_MAX_CHARS, parse_file_lists,
    serialize_conversation,
};
pub use summarize::{compact, compact_with_options};
pub use tokens::{
    ContextEstimate, context_tokens_of, estimate_context, estimate_context_tokens,
    estimate_text_tokens, estimate_tokens, should_compact,
};

/// When and how much to compact (pi's `compaction` settings).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct CompactionSettings {
    /// Compact automatically (threshold and overflow). Manual compaction always works.
    pub enabled: bool,
    /// Tokens kept free for the next reply; compaction starts when less is left.
    pub reserve_tokens: u64,
    /// Recent tokens kept verbatim after compaction.
    pub keep_recent_tokens: u64,
}

impl Default for CompactionSettings {
    fn default() -> Self {
        Self {
            enabled: true,
            reserve_tokens: 16384,
            keep_recent_tokens: 20000,
        }
    }
}

/// Why a compaction ran (pi 0.73's `reason` of `compaction_start` / `compaction_end`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CompactionReason {
    /// Asked for by the user.
    Manual,
    /// The context came within `reserve_tokens` of the window.
    Threshold,
    /// The model refused the prompt as too long; the turn is retried after compacting.
    Overflow,
}

/// Why a compaction failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CompactionError {
    /// There is no message before the kept part (pi: "session too small").
    #[error("Nothing to compact (session too small)")]
    NothingToCompact,
    /// The summary call failed; carries the provider's message.
    #[error("Summarization failed: {0}")]
    SummaryFailed(String),
    /// The call summarising the prefix of a split turn failed.
    #[error("Turn prefix summarization failed: {0}")]
    TurnPrefixFailed(String),
    /// The compaction was cancelled.
    #[error("Compaction cancelled")]
    Aborted,
}

/// What a compaction produced. Serialises like pi's `CompactionResult` (with the index of
/// the first kept message in place of a session entry id); the message list is not
/// serialised.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CompactionResult {
    /// The summary, with the `<read-files>` / `<modified-files>` tags appended.
    pub summary: String,
    /// Index, in the compacted input, of the first message kept verbatim.
    pub first_kept_index: usize,
    /// That message.
    #[serde(skip)]
    pub first_kept_message: Message,
    /// Estimated context size before compacting.
    pub tokens_before: u64,
    pub details: CompactionDetails,
    /// The new conversation: the summary message, then the kept messages.
    #[serde(skip)]
    pub messages: Vec<Message>,
}

/// The check the agent runs after each assistant reply (pi's `_checkCompaction`):
///
/// - nothing when compaction is disabled, the reply was aborted, or it came from another
///   model than `model` (an overflow of a smaller model says nothing about this one);
/// - [`CompactionReason::Overflow`] when the reply is a context-overflow error (the
///   caller drops it, compacts and retries the turn once);
/// - [`CompactionReason::Threshold`] when the reply succeeded and the estimated context of
///   `messages` (which should end with the reply and its tool results) leaves less than
///   `reserve_tokens` free. This also covers a provider that silently accepted more input
///   than the window holds ([`is_silent_overflow`]); pi retries that case, Pincer keeps
///   the successful reply and compacts without a retry.
pub fn compaction_trigger(
    reply: &AssistantMessage,
    messages: &[Message],
    model: &Model,
    settings: &CompactionSettings,
) -> Option<CompactionReason> {
    if !settings.enabled || reply.stop_reason == StopReason::Aborted {
        return None;
    }
    if reply.provider != model.provider || reply.model != model.id {
        return None;
    }
    if is_context_overflow(reply) {
        return Some(CompactionReason::Overflow);
    }
    if reply.stop_reason == StopReason::Error || model.context_window == 0 {
        return None;
    }
    should_compact(
        estimate_context_tokens(messages),
        model.context_window,
        settings,
    )
    .then_some(CompactionReason::Threshold)
}

#[cfg(test)]
mod tests;

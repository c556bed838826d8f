//! The texts of compaction, copied from pi: the summariser's system prompt, the initial,
//! update and split-turn prompts, and the user message that carries a summary into the
//! conversation (pi's `compactionSummary` message as the model sees it).

use pincer_ai::{ContentBlock, Message, UserContent, UserMessage, now_ms};

use super::serialize::serialize_conversation;

/// System prompt of every summarisation call (pi's `SUMMARIZATION_SYSTEM_PROMPT`).
pub const SUMMARIZATION_SYSTEM_PROMPT: &str = "You are a context summarization assistant. Your task is to read a conversation between a user and an AI coding assistant, then produce a structured summary following the exact format specified.

Do NOT continue the conversation. Do NOT respond to any questions in the conversation. ONLY output the structured summary.";

/// Instructions for a first summary (pi's `SUMMARIZATION_PROMPT`).
pub const SUMMARIZATION_PROMPT: &str = "The messages above are a conversation to summarize. Create a structured context checkpoint summary that another LLM will use to continue the work.

Use this EXACT format:

## Goal
[What is the user trying to accomplish? Can be multiple items if the session covers different tasks.]

## Constraints & Preferences
- [Any constraints, preferences, or requirements mentioned by user]
- [Or \"(none)\" if none were mentioned]

## Progress
### Done
- [x] [Completed tasks/changes]

### In Progress
- [ ] [Current work]

### Blocked
- [Issues preventing progress, if any]

## Key Decisions
- **[Decision]**: [Brief rationale]

## Next Steps
1. [Ordered list of what should happen next]

## Critical Context
- [Any data, examples, or references needed to continue]
- [Or \"(none)\" if not applicable]

Keep each section concise. Preserve exact file paths, function names, and error messages.";

/// Instructions for updating an earlier summary (pi's `UPDATE_SUMMARIZATION_PROMPT`).
pub const UPDATE_SUMMARIZATION_PROMPT: &str = "The messages above are NEW conversation messages to incorporate into the existing summary provided in <previous-summary> tags.

Update the existing structured summary with new information. RULES:
- PRESERVE all existing information from the previous summary
- ADD new progress, decisions, and context from the new messages
- UPDATE the Progress section: move items from \"In Progress\" to \"Done\" when completed
- UPDATE \"Next Steps\" based on what was accomplished
- PRESERVE exact file paths, function names, and error messages
- If something is no longer relevant, you may remove it

Use this EXACT format:

## Goal
[Preserve existing goals, add new ones if the task expanded]

## Constraints & Preferences
- [Preserve existing, add new ones discovered]

## Progress
### Done
- [x] [Include previously done items AND newly completed items]

### In Progress
- [ ] [Current work - update based on progress]

### Blocked
- [Current blockers - remove if resolved]

## Key Decisions
- **[Decision]**: [Brief rationale] (preserve all previous, add new)

## Next Steps
1. [Update based on current state]

## Critical Context
- [Preserve important context, add new if needed]

Keep each section concise. Preserve exact file paths, function names, and error messages.";

/// Instructions for the prefix of a turn that was cut (pi's `TURN_PREFIX_SUMMARIZATION_PROMPT`).
pub const TURN_PREFIX_SUMMARIZATION_PROMPT: &str =
    "This is the PREFIX of a turn that was too large to keep. The SUFFIX (recent work) is retained.

Summarize the prefix to provide context for the retained suffix:

## Original Request
[What did the user ask for in this turn?]

## Early Progress
- [Key decisions and work done in the prefix]

## Context for Suffix
- [Information needed to understand the retained recent work]

Be concise. Focus on what's needed to understand the kept suffix.";

/// What precedes a summary in the conversation (pi's `COMPACTION_SUMMARY_PREFIX`).
pub const COMPACTION_SUMMARY_PREFIX: &str = "The conversation history before this point was compacted into the following summary:\n\n<summary>\n";

/// What follows a summary in the conversation (pi's `COMPACTION_SUMMARY_SUFFIX`).
pub const COMPACTION_SUMMARY_SUFFIX: &str = "\n</summary>";

/// The text of the user message that asks for a summary: the serialised conversation in
/// `<conversation>` tags, the previous summary in `<previous-summary>` tags when there is
/// one, then the initial or update instructions, with `Additional focus: ...` appended
/// when custom instructions are given.
pub fn summary_prompt(
    messages: &[Message],
    previous_summary: Option<&str>,
    custom_instructions: Option<&str>,
) -> String {
    let mut prompt = format!(
        "<conversation>\n{}\n</conversation>\n\n",
        serialize_conversation(messages)
    );
    if let Some(previous) = previous_summary {
        prompt.push_str(&format!(
            "<previous-summary>\n{previous}\n</previous-summary>\n\n"
        ));
    }
    prompt.push_str(if previous_summary.is_some() {
        UPDATE_SUMMARIZATION_PROMPT
    } else {
        SUMMARIZATION_PROMPT
    });
    if let Some(focus) = custom_instructions.filter(|f| !f.is_empty()) {
        prompt.push_str(&format!("\n\nAdditional focus: {focus}"));
    }
    prompt
}

/// The text of the user message that asks for a split turn's prefix summary.
pub fn turn_prefix_prompt(messages: &[Message]) -> String {
    format!(
        "<conversation>\n{}\n</conversation>\n\n{TURN_PREFIX_SUMMARIZATION_PROMPT}",
        serialize_conversation(messages)
    )
}

/// The user message that carries a summary into the conversation, as pi sends its
/// compaction summary to the model.
pub fn summary_message(summary: &str) -> Message {
    Message::User(UserMessage {
        content: UserContent::Blocks(vec![ContentBlock::text(format!(
            "{COMPACTION_SUMMARY_PREFIX}{summary}{COMPACTION_SUMMARY_SUFFIX}"
        ))]),
        timestamp: now_ms(),
    })
}

/// The summary inside a message made by [`summary_message`], if it is one.
pub fn summary_of(message: &Message) -> Option<String> {
    let Message::User(user) = message else {
        return None;
    };
    let text = user.text();
    text.strip_prefix(COMPACTION_SUMMARY_PREFIX)?
        .strip_suffix(COMPACTION_SUMMARY_SUFFIX)
        .map(str::to_owned)
}

/// Whether `message` carries a compaction summary.
pub fn is_summary_message(message: &Message) -> bool {
    summary_of(message).is_some()
}

/// The summary of the last compaction: the summary message that starts `messages`, if any.
pub fn previous_summary(messages: &[Message]) -> Option<String> {
    messages.first().and_then(summary_of)
}

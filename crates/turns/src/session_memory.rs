//! Per-session memory, as lainclaw's `--memory` does it: when a session's `memoryEnabled`
//! is on, old messages are summarised into `memory/<key>.md` in the agent's workspace (so
//! `memory_search` finds them), and the tail of that file is shown to the model before
//! each turn.
//!
//! - **What counts.** Every message on the transcript's current branch: user messages,
//!   assistant replies (tool calls and errors included) and tool results, from the first
//!   one, compactions or not. Lainclaw counts every message line of its transcript the
//!   same way; the injected `[memory]` message is never in the transcript, so never counted.
//! - **When.** After a turn, when there are more than [`TRIGGER_MESSAGES`] (24): the
//!   messages older than the last [`KEEP_RECENT_MESSAGES`] (12) that were not summarised yet
//!   (index `compactedMessageCount` onwards) are summarised. Of those, the user messages
//!   and assistant replies with text become bullets — tool results, replies that only call
//!   tools, and the silent `NO_REPLY` / `HEARTBEAT_OK` replies are noise and are skipped —
//!   the last [`MAX_LINES`] (16) of them. Fewer than [`MIN_LINES`] (6) bullets write nothing
//!   and leave the count alone, so they are summarised with the next ones.
//! - **The block.** `\n## <ISO time> (<sessionId>)\n## Memory Summary\n- <role>: <text>…`
//!   (lainclaw's, deterministic, not an LLM summary), each text on one line and cut to 120
//!   characters. The file is read, the block appended and the whole written atomically
//!   (temp file, rename), then `compactedMessageCount` is set to the cut in the index.
//! - **Injection.** Before each turn of a memory-on session, the last 2000 characters of
//!   the file become a user message `[memory]\n…` (`...` in front when cut). It goes right
//!   before the history — after the compaction summary when there is one, since the agent
//!   expects that first — and only into what the model is sent: it is not persisted and
//!   not part of the agent's own message list, so compaction never summarises it.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use pincer_agent::AgentConfig;
use pincer_ai::{ContentBlock, Message, UserContent};
use pincer_store::{EntryBody, OpenSession, SessionStore};

/// More messages than this in the transcript start a summary.
pub const TRIGGER_MESSAGES: usize = 24;
/// The most recent messages, never summarised.
pub const KEEP_RECENT_MESSAGES: usize = 12;
/// Fewer bullets than this write no block.
pub const MIN_LINES: usize = 6;
/// The most bullets in one block (the most recent ones).
pub const MAX_LINES: usize = 16;
/// The most characters of one bullet's text.
pub const LINE_MAX_CHARS: usize = 120;
/// The most characters of the file shown to the model.
pub const SNIPPET_MAX_CHARS: usize = 2000;
/// The longest file name stem (lainclaw's).
const NAME_MAX_CHARS: usize = 120;

/// What a turn does about memory (`TurnPlan::memory`): per-session memory when the
/// session's `memoryEnabled` is on, and the pre-compaction flush when `flush` is set.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TurnMemory {
    /// The agent's workspace: per-session memory goes to `memory/` in it.
    pub workspace: PathBuf,
    /// The pre-compaction memory flush, when it applies to this turn.
    pub flush: Option<crate::memory_flush::MemoryFlushSettings>,
}

/// What per-session memory did in a turn (lainclaw's `memoryEnabled`, `memoryUpdated`,
/// `memoryFile`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SessionMemoryOutcome {
    /// The session's `memoryEnabled` was on.
    pub enabled: bool,
    /// This turn appended a block.
    pub updated: bool,
    /// The session's memory file, when memory is on.
    pub file: Option<PathBuf>,
}

/// The file stem of a session key: lowercased, every run of characters outside
/// `[a-z0-9._-]` replaced by `_`, cut to 120 characters, `_` trimmed at both ends; `session`
/// when nothing is left (lainclaw's).
pub fn memory_file_stem(session_key: &str) -> String {
    let mut out = String::new();
    let mut in_run = false;
    for c in session_key.trim().to_lowercase().chars() {
        if c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, '.' | '_' | '-') {
            out.push(c);
            in_run = false;
        } else if !in_run {
            out.push('_');
            in_run = true;
        }
    }
    let cut: String = out.chars().take(NAME_MAX_CHARS).collect();
    let trimmed = cut.trim_matches('_');
    if trimmed.is_empty() {
        "session".to_owned()
    } else {
        trimmed.to_owned()
    }
}

/// `<workspace>/memory/<stem>.md`.
pub fn memory_file(workspace: &Path, session_key: &str) -> PathBuf {
    workspace
        .join("memory")
        .join(format!("{}.md", memory_file_stem(session_key)))
}

/// The tail of the memory file for the model: trimmed, and when longer than 2000
/// characters its last 2000 behind `...`. `None` when the file is missing or empty; a file
/// that cannot be read is logged and skipped (the turn goes on without it).
#[expect(
    clippy::disallowed_methods,
    reason = "runs on the blocking pool: before_turn, from turn_store::open"
)]
pub fn memory_snippet(path: &Path) -> Option<String> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return None,
        Err(e) => {
            tracing::warn!(file = %path.display(), error = %e, "cannot read the session memory");
            return None;
        }
    };
    let text = text.trim();
    if text.is_empty() {
        return None;
    }
    let count = text.chars().count();
    if count <= SNIPPET_MAX_CHARS {
        return Some(text.to_owned());
    }
    let tail: String = text.chars().skip(count - SNIPPET_MAX_CHARS).collect();
    Some(format!("...{tail}"))
}

/// The message that carries `snippet` to the model.
pub fn memory_message(snippet: &str) -> Message {
    Message::user(format!("[memory]\n{snippet}"))
}

/// `messages` with `memory` inserted before the history: after the compaction summary
/// when the list starts with one, else first.
pub fn inject(mut messages: Vec<Message>, memory: Message) -> Vec<Message> {
    let at = pincer_agent::compaction::history_start(&messages).min(messages.len());
    messages.insert(at, memory);
    messages
}

/// Makes the agent show `snippet` to the model on every call of this turn (see the module
/// doc), without adding it to the agent's messages.
pub(crate) fn inject_into(agent: &mut AgentConfig, snippet: &str) {
    let memory = memory_message(snippet);
    agent
        .hooks
        .wrap_transform_context(std::sync::Arc::new(move |messages, _cancel| {
            let memory = memory.clone();
            Box::pin(async move { inject(messages, memory) })
        }));
}

/// Before a turn: when the session's memory is on, shows the memory file's tail to the
/// model (see [`inject_into`]). Returns whether it is on.
#[expect(
    clippy::disallowed_methods,
    reason = "runs on the blocking pool: turn_store::open"
)]
pub(crate) fn before_turn(
    session: &OpenSession,
    workspace: &Path,
    agent: &mut AgentConfig,
) -> bool {
    if session.entry.memory_enabled != Some(true) {
        return false;
    }
    if let Some(snippet) = memory_snippet(&memory_file(workspace, &session.key)) {
        inject_into(agent, &snippet);
    }
    true
}

/// A block to append: the bullets and the message count it covers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SummaryPlan {
    /// `<role>: <text>` lines, oldest first.
    pub lines: Vec<String>,
    /// The new `compactedMessageCount`: every message before it is summarised.
    pub compacted_to: usize,
}

/// What to summarise of `messages` (the transcript's) when `compacted` of them already are;
/// `None` when nothing is due (see the module doc).
pub fn plan_summary(messages: &[Message], compacted: usize) -> Option<SummaryPlan> {
    if messages.len() <= TRIGGER_MESSAGES {
        return None;
    }
    let cutoff = messages.len() - KEEP_RECENT_MESSAGES;
    let from = compacted.min(cutoff);
    let lines: Vec<String> = messages[from..cutoff].iter().filter_map(bullet).collect();
    let lines = lines[lines.len().saturating_sub(MAX_LINES)..].to_vec();
    (lines.len() >= MIN_LINES).then_some(SummaryPlan {
        lines,
        compacted_to: cutoff,
    })
}

/// The bullet text of one message, or `None` for noise.
fn bullet(message: &Message) -> Option<String> {
    let (role, text) = match message {
        Message::User(user) => (
            "user",
            match &user.content {
                UserContent::Text(text) => text.clone(),
                UserContent::Blocks(blocks) => text_of(blocks),
            },
        ),
        Message::Assistant(reply) => ("assistant", text_of(&reply.content)),
        Message::ToolResult(_) => return None,
    };
    let line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if line.is_empty() || is_silent(&line) {
        return None;
    }
    Some(format!("{role}: {}", cut(&line, LINE_MAX_CHARS)))
}

fn text_of(blocks: &[ContentBlock]) -> String {
    pincer_ai::texts(blocks).collect::<Vec<_>>().join(" ")
}

/// The replies that mean "nothing to say": not worth remembering.
fn is_silent(line: &str) -> bool {
    ["NO_REPLY", "HEARTBEAT_OK"]
        .iter()
        .any(|token| line.eq_ignore_ascii_case(token))
}

/// `text` in at most `max` characters, ending in `...` when cut.
fn cut(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_owned();
    }
    let kept: String = text.chars().take(max.saturating_sub(3)).collect();
    format!("{}...", kept.trim_end())
}

/// The block lainclaw appends.
pub fn render_block(iso_time: &str, session_id: &str, lines: &[String]) -> String {
    let bullets: Vec<String> = lines.iter().map(|l| format!("- {l}")).collect();
    format!(
        "\n## {iso_time} ({session_id})\n## Memory Summary\n{}\n",
        bullets.join("\n")
    )
}

/// Why the memory file could not be written.
#[derive(Debug, thiserror::Error)]
#[error("cannot write the session memory {path}: {source}")]
pub struct MemoryWriteError {
    pub path: PathBuf,
    #[source]
    pub source: Box<dyn std::error::Error + Send + Sync>,
}

/// Read-modify-writes of memory files in this process, one at a time: two session keys
/// can sanitise to the same file, and an append must not lose the other's block.
static WRITES: Mutex<()> = Mutex::new(());

/// Appends `block` to `path`: the file is read, extended and replaced atomically, so a
/// reader (the memory index, a person) sees the old or the new file, never half a block.
/// When the file already ends with `summary` (a previous attempt wrote the block but died
/// before the index recorded it) nothing is appended again.
#[expect(
    clippy::disallowed_methods,
    reason = "runs on the blocking pool: after_turn, from turn_store::close"
)]
fn append_block(path: &Path, block: &str, summary: &str) -> Result<(), MemoryWriteError> {
    let fail = |source: Box<dyn std::error::Error + Send + Sync>| MemoryWriteError {
        path: path.to_path_buf(),
        source,
    };
    let _guard = WRITES.lock().unwrap_or_else(|e| e.into_inner());
    let mut text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => return Err(fail(Box::new(e))),
    };
    if text.trim_end().ends_with(summary.trim_end()) {
        return Ok(());
    }
    text.push_str(block);
    // 0600: the summary is the conversation, as private as its transcript.
    pincer_store::write_atomic(path, text.as_bytes(), Some(pincer_base::PRIVATE_FILE_MODE))
        .map_err(|e| fail(Box::new(e)))
}

/// The messages on the transcript's current branch, oldest first.
fn branch_messages(session: &OpenSession) -> Vec<Message> {
    let transcript = &session.transcript;
    let Some(leaf) = transcript.leaf_id() else {
        return Vec::new();
    };
    transcript
        .branch(leaf)
        .into_iter()
        .filter_map(|e| match &e.body {
            EntryBody::Message(m) => Some(m.message.clone()),
            _ => None,
        })
        .collect()
}

/// After a turn of a memory-on session: summarises what is due into the memory file and
/// records the new count. Failures are logged and returned as text for the turn's
/// `persist_errors`; the turn itself already succeeded.
#[expect(
    clippy::disallowed_methods,
    reason = "runs on the blocking pool: turn_store::close"
)]
pub(crate) fn after_turn(
    store: &SessionStore,
    session: &mut OpenSession,
    workspace: &Path,
    errors: &mut Vec<String>,
) -> SessionMemoryOutcome {
    let file = memory_file(workspace, &session.key);
    let mut outcome = SessionMemoryOutcome {
        enabled: true,
        updated: false,
        file: Some(file.clone()),
    };
    let compacted =
        usize::try_from(session.entry.compacted_message_count.unwrap_or(0)).unwrap_or(usize::MAX);
    let Some(plan) = plan_summary(&branch_messages(session), compacted) else {
        return outcome;
    };
    let block = render_block(
        &pincer_store::ids::iso_now(),
        &session.entry.session_id,
        &plan.lines,
    );
    let summary = block
        .split_once("## Memory Summary")
        .map_or(block.as_str(), |(_, rest)| rest);
    if let Err(e) = append_block(&file, &block, summary) {
        tracing::error!(error = %e, "cannot write the session memory");
        errors.push(e.to_string());
        return outcome;
    }
    // The file first, then the count: a crash in between finds the block already there
    // (see `append_block`) instead of losing it.
    let count = plan.compacted_to as u64;
    match store.update_session(session, |e| e.compacted_message_count = Some(count)) {
        Ok(()) => outcome.updated = true,
        Err(e) => {
            tracing::error!(error = %e, "cannot record the summarised message count");
            errors.push(e.to_string());
        }
    }
    outcome
}

#[cfg(test)]
#[path = "session_memory_tests.rs"]
mod tests;

//! Turning messages into text for the summariser (pi's `serializeConversation`), and the
//! file operations a summary records (pi's `FileOperations`, `computeFileLists`,
//! `formatFileOperations`).
//!
//! The conversation is sent as text, not as messages, so the model summarises it instead
//! of continuing it.

use std::collections::BTreeSet;

use pincer_ai::{ContentBlock, Message, UserContent};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Tool results longer than this many characters are cut in the serialised conversation.
pub const TOOL_RESULT_MAX_CHARS: usize = 2000;

/// Keep the first `max_chars` characters and say how many were dropped.
fn truncate_for_summary(text: &str, max_chars: usize) -> String {
    match text.char_indices().nth(max_chars) {
        None => text.to_owned(),
        Some((cut, _)) => {
            let dropped = text[cut..].chars().count();
            format!(
                "{}\n\n[... {dropped} more characters truncated]",
                &text[..cut]
            )
        }
    }
}

fn text_of(blocks: &[ContentBlock]) -> String {
    pincer_ai::texts(blocks).collect()
}

/// `name(key=<json>, ...)`, as pi renders a tool call (a non-object argument is shown
/// as its JSON).
fn render_tool_call(name: &str, arguments: &Value) -> String {
    let args = match arguments {
        Value::Object(map) => map
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join(", "),
        Value::Null => String::new(),
        other => other.to_string(),
    };
    format!("{name}({args})")
}

/// The conversation as pi's summariser reads it: `[User]: ...`, `[Assistant thinking]:
/// ...`, `[Assistant]: ...`, `[Assistant tool calls]: name(key=value, ...); ...` and
/// `[Tool result]: ...` (cut at [`TOOL_RESULT_MAX_CHARS`]), separated by blank lines.
/// Messages without text are skipped. The prompt wraps this in `<conversation>` tags.
pub fn serialize_conversation(messages: &[Message]) -> String {
    let mut parts: Vec<String> = Vec::new();
    for message in messages {
        match message {
            Message::User(user) => {
                let content = match &user.content {
                    UserContent::Text(text) => text.clone(),
                    UserContent::Blocks(blocks) => text_of(blocks),
                };
                if !content.is_empty() {
                    parts.push(format!("[User]: {content}"));
                }
            }
            Message::Assistant(assistant) => {
                let mut text = Vec::new();
                let mut thinking = Vec::new();
                let mut calls = Vec::new();
                for block in &assistant.content {
                    match block {
                        ContentBlock::Text(t) => text.push(t.text.as_str()),
                        ContentBlock::Thinking(t) => thinking.push(t.thinking.as_str()),
                        ContentBlock::ToolCall(c) => {
                            calls.push(render_tool_call(&c.name, &c.arguments))
                        }
                        ContentBlock::Image(_) => {}
                    }
                }
                if !thinking.is_empty() {
                    parts.push(format!("[Assistant thinking]: {}", thinking.join("\n")));
                }
                if !text.is_empty() {
                    parts.push(format!("[Assistant]: {}", text.join("\n")));
                }
                if !calls.is_empty() {
                    parts.push(format!("[Assistant tool calls]: {}", calls.join("; ")));
                }
            }
            Message::ToolResult(result) => {
                let content = text_of(&result.content);
                if !content.is_empty() {
                    parts.push(format!(
                        "[Tool result]: {}",
                        truncate_for_summary(&content, TOOL_RESULT_MAX_CHARS)
                    ));
                }
            }
        }
    }
    parts.join("\n\n")
}

/// Files the summarised conversation touched, by the `read`, `write` and `edit` tools.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FileOperations {
    pub read: BTreeSet<String>,
    pub written: BTreeSet<String>,
    pub edited: BTreeSet<String>,
}

impl FileOperations {
    /// Record the `path` argument of every `read` / `write` / `edit` call in `message`.
    pub fn record(&mut self, message: &Message) {
        let Message::Assistant(assistant) = message else {
            return;
        };
        for call in assistant.tool_calls() {
            let Some(path) = call.arguments.get("path").and_then(Value::as_str) else {
                continue;
            };
            if path.is_empty() {
                continue;
            }
            let set = match call.name.as_str() {
                "read" => &mut self.read,
                "write" => &mut self.written,
                "edit" => &mut self.edited,
                _ => continue,
            };
            set.insert(path.to_owned());
        }
    }

    /// Carry forward the lists an earlier summary recorded (see [`parse_file_lists`]).
    pub fn merge_details(&mut self, details: &CompactionDetails) {
        self.read.extend(details.read_files.iter().cloned());
        self.edited.extend(details.modified_files.iter().cloned());
    }

    /// Files only read (never modified), and files modified; both sorted.
    pub fn details(&self) -> CompactionDetails {
        let modified: BTreeSet<&String> = self.edited.iter().chain(&self.written).collect();
        CompactionDetails {
            read_files: self
                .read
                .iter()
                .filter(|f| !modified.contains(f))
                .cloned()
                .collect(),
            modified_files: modified.into_iter().cloned().collect(),
        }
    }
}

/// The file lists of a compaction (pi's `CompactionDetails`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CompactionDetails {
    pub read_files: Vec<String>,
    pub modified_files: Vec<String>,
}

impl CompactionDetails {
    /// The lists as the tags pi appends to a summary: `\n\n<read-files>\n...\n</read-files>`
    /// and `<modified-files>`; empty when both lists are.
    pub fn to_tags(&self) -> String {
        let mut sections = Vec::new();
        if !self.read_files.is_empty() {
            sections.push(format!(
                "<read-files>\n{}\n</read-files>",
                self.read_files.join("\n")
            ));
        }
        if !self.modified_files.is_empty() {
            sections.push(format!(
                "<modified-files>\n{}\n</modified-files>",
                self.modified_files.join("\n")
            ));
        }
        if sections.is_empty() {
            String::new()
        } else {
            format!("\n\n{}", sections.join("\n\n"))
        }
    }
}

/// The file lists a summary carries in its `<read-files>` / `<modified-files>` tags. The
/// agent keeps only messages, so this is how the lists survive from one compaction to the
/// next (pi reads them from the previous compaction entry's `details`).
pub fn parse_file_lists(summary: &str) -> CompactionDetails {
    let list = |tag: &str| -> Vec<String> {
        let open = format!("<{tag}>\n");
        let close = format!("\n</{tag}>");
        let Some(start) = summary.rfind(&open).map(|i| i + open.len()) else {
            return Vec::new();
        };
        let Some(len) = summary[start..].find(&close) else {
            return Vec::new();
        };
        summary[start..start + len]
            .lines()
            .filter(|l| !l.is_empty())
            .map(str::to_owned)
            .collect()
    };
    CompactionDetails {
        read_files: list("read-files"),
        modified_files: list("modified-files"),
    }
}

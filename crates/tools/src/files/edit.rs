//! `edit {path, edits:[{oldText, newText}]}` (and pi's legacy `{path, oldText, newText}`):
//! replace text that occurs exactly once in the file as it was before the call. Without an
//! exact match, pi's fuzzy match is tried (trailing whitespace, smart quotes, dashes and
//! special spaces ignored); it must be unique too. Edits may not overlap. CRLF files and a
//! UTF-8 BOM survive. The details carry a unified diff and the first changed line.

use pincer_agent::{ToolError, ToolOutput};
use serde::Deserialize;
use serde_json::json;
use similar::{ChangeTag, TextDiff};

use super::fuzzy::{Found, closest_line, find};
use super::write::write_atomic;
use super::{io_error, looks_binary, resolve_shown};
use crate::paths::PathPolicy;

/// One replacement.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TextEdit {
    /// Text to replace. It must occur exactly once in the original file; include enough
    /// surrounding lines to make it unique. Whitespace and indentation matter.
    pub old_text: String,
    /// Text to put in its place.
    pub new_text: String,
}

/// Arguments of `edit`: `edits`, or the single `oldText`/`newText` pair.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct EditArgs {
    /// Path of the file to edit, relative to the workspace (or absolute inside it).
    pub path: String,
    /// Replacements, each matched against the original file; they must not overlap.
    #[serde(default)]
    pub edits: Option<Vec<TextEdit>>,
    /// Single-edit form: text to replace (use `edits` for several changes).
    #[serde(default)]
    pub old_text: Option<String>,
    /// Single-edit form: replacement text.
    #[serde(default)]
    pub new_text: Option<String>,
}

impl EditArgs {
    /// All edits, the legacy pair last. Refuses a half pair and an empty list.
    pub fn into_edits(self) -> Result<(String, Vec<TextEdit>), ToolError> {
        let invalid = |message: &str| ToolError::InvalidArguments {
            tool: "edit".to_owned(),
            message: message.to_owned(),
        };
        let mut edits = self.edits.unwrap_or_default();
        match (self.old_text, self.new_text) {
            (Some(old_text), Some(new_text)) => edits.push(TextEdit { old_text, new_text }),
            (None, None) => {}
            _ => return Err(invalid("oldText and newText must be given together")),
        }
        if edits.is_empty() {
            return Err(invalid(
                "give edits: [{oldText, newText}, ...] (or oldText and newText)",
            ));
        }
        Ok((self.path, edits))
    }
}

const DESCRIPTION: &str = "Edit a file by replacing exact text. Each oldText must occur \
exactly once in the original file (include surrounding lines to make it unique); several \
non-overlapping edits may be given at once in edits. Read the file first.";

path_tool! {
    /// The `edit` tool.
    EditTool {
        args: EditArgs,
        name: "edit",
        label: "Edit",
        description: DESCRIPTION,
        blocking: edit,
    }
}

fn edit(policy: &PathPolicy, args: EditArgs) -> Result<ToolOutput, ToolError> {
    let (user_path, edits) = args.into_edits()?;
    edit_file(policy, &user_path, &edits)
}

fn edit_file(
    policy: &PathPolicy,
    user_path: &str,
    edits: &[TextEdit],
) -> Result<ToolOutput, ToolError> {
    let (path, shown) = resolve_shown(policy, user_path)?;
    if path.is_dir() {
        return Err(ToolError::failed(format!(
            "{shown} is a directory; edit changes files"
        )));
    }
    let bytes = std::fs::read(&path).map_err(|e| io_error("read", user_path, &e))?;
    if looks_binary(&bytes) {
        return Err(ToolError::failed(format!(
            "{shown} is a binary file; edit changes text files"
        )));
    }
    let raw = String::from_utf8(bytes).map_err(|_| {
        ToolError::failed(format!("{shown} is not valid UTF-8; edit cannot change it"))
    })?;
    let (bom, body) = match raw.strip_prefix('\u{feff}') {
        Some(rest) => ("\u{feff}", rest),
        None => ("", raw.as_str()),
    };
    let crlf = body.contains("\r\n");
    let original = body.replace("\r\n", "\n");
    let applied = apply_edits(&shown, &original, edits)?;
    if applied.text == original {
        return Err(ToolError::failed(format!(
            "no changes made to {shown}: the replacement text is identical to the original"
        )));
    }
    let mut output = applied.text.clone();
    if crlf {
        output = output.replace('\n', "\r\n");
    }
    output.insert_str(0, bom);
    write_atomic(&path, output.as_bytes())
        .map_err(|e| ToolError::failed(format!("cannot write {shown}: {e}")))?;

    let diff = TextDiff::from_lines(&original, &applied.text);
    let first_changed_line = diff
        .iter_all_changes()
        .find(|c| c.tag() != ChangeTag::Equal)
        .and_then(|c| c.new_index().or(c.old_index()))
        .map(|i| i + 1);
    let unified = diff
        .unified_diff()
        .context_radius(3)
        .header(&format!("a/{shown}"), &format!("b/{shown}"))
        .to_string();
    let mut text = match edits.len() {
        1 => format!("Edited {shown}: replaced 1 block of text."),
        n => format!("Edited {shown}: replaced {n} blocks of text."),
    };
    if !applied.fuzzy.is_empty() {
        let which = applied
            .fuzzy
            .iter()
            .map(|i| format!("edits[{i}]"))
            .collect::<Vec<_>>()
            .join(", ");
        text.push_str(&format!(
            " {which} matched after ignoring trailing whitespace and quote/dash differences."
        ));
    }
    Ok(ToolOutput::text(text).with_details(json!({
        "path": shown,
        "diff": unified,
        "firstChangedLine": first_changed_line,
        "edits": edits.len(),
        "fuzzyEdits": applied.fuzzy,
    })))
}

struct Applied {
    text: String,
    /// Indices of the edits that needed the fuzzy match.
    fuzzy: Vec<usize>,
}

/// Locate every edit in `original` (LF line endings), check uniqueness and overlaps, and
/// splice the replacements in.
fn apply_edits(shown: &str, original: &str, edits: &[TextEdit]) -> Result<Applied, ToolError> {
    let many = edits.len() > 1;
    let label = |i: usize| {
        if many {
            format!("edits[{i}]: ")
        } else {
            String::new()
        }
    };
    let mut spans = Vec::with_capacity(edits.len());
    let mut fuzzy = Vec::new();
    for (i, edit) in edits.iter().enumerate() {
        let old_text = edit.old_text.replace("\r\n", "\n");
        if old_text.is_empty() {
            return Err(ToolError::failed(format!(
                "{}oldText is empty; give the exact text to replace",
                label(i)
            )));
        }
        match find(original, &old_text) {
            Found::Unique { range, fuzzy: f } => {
                if f {
                    fuzzy.push(i);
                }
                spans.push((range, i, edit.new_text.replace("\r\n", "\n")));
            }
            Found::Ambiguous { count, .. } => {
                return Err(ToolError::failed(format!(
                    "{}oldText is ambiguous in {shown}: {count} matches; include more \
                     surrounding context to make it unique",
                    label(i)
                )));
            }
            Found::Absent => {
                let mut message = format!(
                    "{}oldText not found in {shown}. It must match the file exactly, \
                     including whitespace and indentation",
                    label(i)
                );
                match closest_line(original, &old_text) {
                    Some((number, line)) => message.push_str(&format!(
                        ". The closest line is {number}: `{}`",
                        line.trim()
                    )),
                    None => message.push_str("; read the file to see its current content"),
                }
                return Err(ToolError::failed(message));
            }
        }
    }
    spans.sort_by_key(|(range, _, _)| range.start);
    for pair in spans.windows(2) {
        let (first, second) = (&pair[0], &pair[1]);
        if first.0.end > second.0.start {
            let (a, b) = (first.1.min(second.1), first.1.max(second.1));
            return Err(ToolError::failed(format!(
                "edits[{a}] and edits[{b}] overlap in {shown}; merge them into one edit"
            )));
        }
    }
    let mut text = String::with_capacity(original.len());
    let mut cursor = 0;
    for (range, _, new_text) in &spans {
        text.push_str(&original[cursor..range.start]);
        text.push_str(new_text);
        cursor = range.end;
    }
    text.push_str(&original[cursor..]);
    Ok(Applied { text, fuzzy })
}

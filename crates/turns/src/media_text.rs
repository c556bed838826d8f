//! The text of a document that came with a message, for the user message the model gets: a
//! PDF's text (with the `pdf` feature) and a text-like file's (`text/*`, JSON, XML, YAML)
//! contents, each cut at a limit and framed with the file's workspace path, so the model can
//! answer about it at once and the agent can `read` the rest ([`crate::media_input`] calls
//! [`file_note`] for every file that is not an image).
//!
//! The frame is OpenClaw's: `<file name="inbox/…/x.pdf" mime="application/pdf">`, the text,
//! `</file>`, with any `<file` or `</file>` inside the text escaped so a document cannot close
//! the frame and speak as the user. A cut is said after the frame.
//!
//! Limits, all constants here: [`FILE_MAX_CHARS`] characters of one file,
//! [`MESSAGE_MAX_CHARS`] for all the files of one message, the first [`PDF_MAX_PAGES`] pages
//! of a PDF, and a PDF of at most [`PDF_MAX_BYTES`]. Reading a PDF is bounded in memory and
//! time by the budgets in [`pdf`]'s doc; a PDF that cannot be read is said so in the note,
//! never a panic.

use std::io::Read as _;
use std::path::Path;

/// How many characters of one file go into the message.
pub const FILE_MAX_CHARS: usize = 20_000;
/// How many characters of file text one message gets in all (the files after that are named
/// only, with a note).
pub const MESSAGE_MAX_CHARS: usize = 50_000;
/// How many pages of a PDF are read (OpenClaw's `pdfMaxPages` default).
pub const PDF_MAX_PAGES: usize = 20;
/// The largest PDF whose text is read (the default `mediaMaxMb`; a larger one is named only).
pub const PDF_MAX_BYTES: u64 = 20 * 1024 * 1024;

/// The text taken from a document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DocumentText {
    /// At most the `max_chars` asked for.
    pub text: String,
    /// Whether the document has more text than `text` (cut at `max_chars`).
    pub truncated: bool,
    /// For a PDF: how many pages were read, of how many.
    pub pages: Option<Pages>,
}

/// The pages of a PDF that were read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pages {
    pub read: usize,
    pub total: usize,
}

/// Why a document's text could not be taken.
#[derive(Debug, thiserror::Error)]
pub enum MediaTextError {
    #[error("cannot open it ({0})")]
    Read(#[from] std::io::Error),
    #[error("it is larger than {limit}, the limit for reading a PDF")]
    TooLarge { limit: String },
    #[error("{0}")]
    Pdf(String),
    #[error("the PDF reader failed on it")]
    Panicked,
}

/// What kind of document a MIME type is, if its text is taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Pdf,
    Text,
}

fn kind(mime: &str) -> Option<Kind> {
    let essence = mime.split(';').next().unwrap_or("").trim();
    if essence == "application/pdf" {
        return Some(Kind::Pdf);
    }
    let text_like = essence.starts_with("text/")
        || matches!(
            essence,
            "application/json"
                | "application/x-ndjson"
                | "application/xml"
                | "application/yaml"
                | "application/x-yaml"
                | "application/toml"
        );
    text_like.then_some(Kind::Text)
}

/// The text of the file at `path` of type `mime`, at most `max_chars` characters: `None` when
/// the type is not a document whose text is taken (or PDFs are not read in this build), or
/// when a file declared as text is binary (it holds NUL bytes). Blocking: it reads the file.
pub fn document_text(
    path: &Path,
    mime: &str,
    max_chars: usize,
) -> Result<Option<DocumentText>, MediaTextError> {
    match kind(mime) {
        None => Ok(None),
        Some(Kind::Text) => {
            // A character is at most 4 bytes in UTF-8, so this many bytes hold `max_chars`
            // characters whatever the text; one more byte tells whether there is more.
            let want = max_chars.saturating_mul(4).saturating_add(1);
            let mut bytes = Vec::new();
            open(path)?
                .take(u64::try_from(want).unwrap_or(u64::MAX))
                .read_to_end(&mut bytes)?;
            let more_bytes = bytes.len() == want;
            if more_bytes {
                bytes.pop();
            }
            Ok(plain_text(&bytes, more_bytes, max_chars))
        }
        Some(Kind::Pdf) => pdf_file_text(path, max_chars),
    }
}

#[expect(
    clippy::disallowed_methods,
    reason = "blocking by contract: the turn is planned on the blocking pool"
)]
fn open(path: &Path) -> std::io::Result<std::fs::File> {
    std::fs::File::open(path)
}

/// `bytes` (the head of a file; `more` when the file goes on) as at most `max_chars`
/// characters of text, or `None` when they are binary.
fn plain_text(bytes: &[u8], more: bool, max_chars: usize) -> Option<DocumentText> {
    if bytes.contains(&0) {
        return None;
    }
    let decoded = String::from_utf8_lossy(bytes);
    let (text, cut) = cut_chars(&decoded, max_chars);
    Some(DocumentText {
        text: text.to_owned(),
        truncated: cut || more,
        pages: None,
    })
}

/// The first `max` characters of `text`, and whether that cut anything.
fn cut_chars(text: &str, max: usize) -> (&str, bool) {
    match text.char_indices().nth(max) {
        Some((at, _)) => (&text[..at], true),
        None => (text, false),
    }
}

#[cfg(feature = "pdf")]
fn pdf_file_text(path: &Path, max_chars: usize) -> Result<Option<DocumentText>, MediaTextError> {
    let mut bytes = Vec::new();
    open(path)?
        .take(PDF_MAX_BYTES + 1)
        .read_to_end(&mut bytes)?;
    if bytes.len() as u64 > PDF_MAX_BYTES {
        return Err(MediaTextError::TooLarge {
            limit: crate::media_input::size_text(PDF_MAX_BYTES),
        });
    }
    pdf::text(&bytes, max_chars).map(Some)
}

/// Without the `pdf` feature a PDF is only named.
#[cfg(not(feature = "pdf"))]
fn pdf_file_text(_: &Path, _: usize) -> Result<Option<DocumentText>, MediaTextError> {
    Ok(None)
}

/// The text of the PDF `bytes`, at most `max_chars` characters of its first
/// [`PDF_MAX_PAGES`] pages. Never panics (see [`pdf`]). Exposed for the fuzz target.
#[cfg(feature = "pdf")]
pub fn pdf_text(bytes: &[u8], max_chars: usize) -> Result<DocumentText, MediaTextError> {
    pdf::text(bytes, max_chars)
}

#[cfg(feature = "pdf")]
mod pdf;

/// How much file text the message has left ([`MESSAGE_MAX_CHARS`] to start with).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TextBudget {
    left: usize,
}

impl Default for TextBudget {
    fn default() -> Self {
        Self {
            left: MESSAGE_MAX_CHARS,
        }
    }
}

/// The note that goes into the user message for the file at `full` (named `shown` in the
/// message) of type `mime`: its text in a `<file>` frame and what was cut, or why there is no
/// text; empty when the type is not a document. Takes what it adds from `budget`. Blocking.
#[expect(
    clippy::disallowed_methods,
    reason = "blocking by contract: called by media_input::user_content, on the blocking pool"
)]
pub fn file_note(full: &Path, shown: &Path, mime: &str, budget: &mut TextBudget) -> String {
    let Some(kind) = kind(mime) else {
        return String::new();
    };
    if budget.left == 0 {
        return format!(
            "(Its text was not added: this message's {MESSAGE_MAX_CHARS} characters of file text \
             are used up. Read the file.)\n"
        );
    }
    let max_chars = budget.left.min(FILE_MAX_CHARS);
    let what = match kind {
        Kind::Pdf => "the PDF",
        Kind::Text => "the file",
    };
    let doc = match document_text(full, mime, max_chars) {
        Ok(Some(doc)) => doc,
        Ok(None) => return String::new(),
        Err(why) => return format!("(Could not read {what}: {why}.)\n"),
    };
    if doc.text.trim().is_empty() {
        return match kind {
            Kind::Pdf => {
                "(The PDF has no text that could be extracted: it may be scanned pages.)\n"
            }
            Kind::Text => "(The file is empty.)\n",
        }
        .to_owned();
    }
    budget.left -= doc.text.chars().count().min(budget.left);
    let mut note = frame(&shown.display().to_string(), mime, &doc.text);
    if doc.truncated {
        note.push_str(&format!(
            "(Truncated at {max_chars} characters; read the file for the rest.)\n"
        ));
    } else if let Some(pages) = doc.pages.filter(|p| p.read < p.total) {
        note.push_str(&format!(
            "(Only the first {} of {} pages were read; read the file for the rest.)\n",
            pages.read, pages.total
        ));
    }
    note
}

/// `text` in OpenClaw's frame: `<file name="…" mime="…">`, the text, `</file>`.
fn frame(name: &str, mime: &str, text: &str) -> String {
    format!(
        "<file name=\"{}\" mime=\"{}\">\n{}\n</file>\n",
        escape_attr(name),
        escape_attr(mime),
        escape_tags(text.trim_end_matches('\n'))
    )
}

fn escape_attr(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for c in value.chars() {
        match c {
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\r' | '\n' | '\t' => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

/// `text` with every `<file` and `</file` (any case, spaces allowed after `<` and `/`) made
/// `&lt;file` / `&lt;/file`, so the text cannot open or close a frame.
fn escape_tags(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find('<') {
        out.push_str(&rest[..at]);
        let after = &rest[at + 1..];
        let tag = after.trim_start();
        let tag = tag.strip_prefix('/').map_or(tag, str::trim_start);
        let is_file = tag.get(..4).is_some_and(|t| t.eq_ignore_ascii_case("file"))
            && !tag[4..].starts_with(|c: char| c.is_ascii_alphanumeric() || c == '_');
        out.push_str(if is_file { "&lt;" } else { "<" });
        rest = after;
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
#[path = "media_text_tests.rs"]
mod tests;

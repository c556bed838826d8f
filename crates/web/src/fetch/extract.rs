//! What a response's bytes say, as text for the model: the kind of content by its type (or
//! by its first bytes when the type says nothing), the charset, and for HTML the page's main
//! content through readability (dom_smoothie) as Markdown with its links or as plain text,
//! falling back to the whole body when readability finds no article. JSON is pretty-printed,
//! text and Markdown pass through, PDFs go to the binary's extractor, other binary types are
//! refused. Pure and synchronous (CPU work: call it on the blocking pool); the fuzz target
//! `web_extract` feeds it arbitrary bytes.

use dom_smoothie::{Config, Readability, TextMode};
use serde::{Deserialize, Serialize};

use super::PdfText;
use super::charset::decode;

/// How the tool renders a page.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum ExtractMode {
    /// Markdown: headings, lists and links kept.
    #[default]
    Markdown,
    /// Plain text.
    Text,
}

impl ExtractMode {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Markdown => "markdown",
            Self::Text => "text",
        }
    }
}

/// What a response holds, as far as extraction is concerned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ContentKind {
    Html,
    Json,
    Markdown,
    Text,
    Pdf,
    /// A type the tool does not read (images, archives, audio, ...).
    Binary,
    /// No useful type (none, or `application/octet-stream`): decided by the first bytes.
    Unknown,
}

/// The media type of a Content-Type value: before any parameter, trimmed, lower case.
pub fn media_type(content_type: &str) -> String {
    content_type
        .split(';')
        .next()
        .unwrap_or_default()
        .trim()
        .to_ascii_lowercase()
}

/// The kind a media type (from [`media_type`]) declares.
pub fn kind_of(media_type: &str) -> ContentKind {
    let (top, sub) = media_type.split_once('/').unwrap_or((media_type, ""));
    match (top, sub) {
        ("", _) | ("application", "octet-stream") => ContentKind::Unknown,
        ("text", "html") | ("application", "xhtml+xml") => ContentKind::Html,
        ("text", "markdown" | "x-markdown") => ContentKind::Markdown,
        ("text", _) => ContentKind::Text,
        ("application", "json") => ContentKind::Json,
        ("application", s) if s.ends_with("+json") => ContentKind::Json,
        ("application", "pdf" | "x-pdf") => ContentKind::Pdf,
        ("application", s)
            if s.ends_with("+xml")
                || matches!(
                    s,
                    "xml"
                        | "javascript"
                        | "x-javascript"
                        | "ecmascript"
                        | "x-ndjson"
                        | "x-yaml"
                        | "yaml"
                        | "toml"
                        | "x-sh"
                        | "x-www-form-urlencoded"
                        | "rtf"
                ) =>
        {
            ContentKind::Text
        }
        _ => ContentKind::Binary,
    }
}

/// The kind of an undeclared body by its first bytes.
fn sniff(body: &[u8]) -> ContentKind {
    let head = &body[..body.len().min(1024)];
    let text = String::from_utf8_lossy(head);
    let start: String = text
        .trim_start_matches('\u{feff}')
        .trim_start()
        .chars()
        .take(15)
        .collect::<String>()
        .to_ascii_lowercase();
    if head.starts_with(b"%PDF-") {
        ContentKind::Pdf
    } else if start.starts_with("<!doctype html") || start.starts_with("<html") {
        ContentKind::Html
    } else if start.starts_with('{') || start.starts_with('[') {
        ContentKind::Json
    } else if head.contains(&0) {
        ContentKind::Binary
    } else {
        ContentKind::Text
    }
}

/// The extracted text of a response.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Extracted {
    pub text: String,
    pub title: Option<String>,
    /// How it was extracted: `readability`, `html-body`, `json`, `markdown`, `text`, `pdf`.
    pub extractor: &'static str,
}

/// Why nothing usable came out.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ExtractError {
    #[error(
        "{media_type} is a binary type web_fetch does not read (it reads HTML, text, Markdown, JSON and PDF)"
    )]
    Binary { media_type: String },
    #[error("the document is a PDF, and PDF text extraction is not available in this build")]
    PdfUnavailable,
    #[error("could not read the PDF's text: {0}")]
    Pdf(String),
    #[error("the page has no readable text")]
    Empty,
}

/// Extracts `body` (a response from `url` with header `content_type`) as `mode` says.
pub fn extract(
    body: &[u8],
    content_type: Option<&str>,
    url: &str,
    mode: ExtractMode,
    pdf_text: Option<&PdfText>,
) -> Result<Extracted, ExtractError> {
    let declared = content_type.map(media_type).unwrap_or_default();
    let kind = match kind_of(&declared) {
        ContentKind::Unknown => sniff(body),
        kind => kind,
    };
    let text = |html: bool| decode(body, content_type, html).text;
    match kind {
        ContentKind::Html => html(&text(true), url, mode),
        ContentKind::Json => {
            let raw = text(false);
            match serde_json::from_str::<serde_json::Value>(&raw) {
                Ok(value) => Ok(Extracted {
                    text: serde_json::to_string_pretty(&value).unwrap_or(raw),
                    title: None,
                    extractor: "json",
                }),
                Err(_) => plain(raw, "text"),
            }
        }
        ContentKind::Markdown => plain(text(false), "markdown"),
        ContentKind::Text | ContentKind::Unknown => plain(text(false), "text"),
        ContentKind::Pdf => {
            let pdf_text = pdf_text.ok_or(ExtractError::PdfUnavailable)?;
            let text = pdf_text(body.to_vec()).map_err(ExtractError::Pdf)?;
            plain(text, "pdf")
        }
        ContentKind::Binary => Err(ExtractError::Binary {
            media_type: declared,
        }),
    }
}

fn plain(text: String, extractor: &'static str) -> Result<Extracted, ExtractError> {
    if text.trim().is_empty() {
        return Err(ExtractError::Empty);
    }
    Ok(Extracted {
        text,
        title: None,
        extractor,
    })
}

/// Deepest element nesting handed to readability and the Markdown writer. Both recurse, so
/// a page nested a few thousand deep (a few kB of `<b>`) would overflow the stack and take
/// the process down, and their work grows with the depth; real pages stay well below this.
/// A deeper page gets its text read by [`flat_text`], which does not recurse.
pub const MAX_DEPTH: usize = 256;

/// Whether some node of `doc` is nested deeper than `max` (an explicit stack, no recursion).
pub(crate) fn too_deep(doc: &dom_query::Document, max: usize) -> bool {
    let mut stack = vec![(doc.root(), 0usize)];
    while let Some((node, depth)) = stack.pop() {
        if depth > max {
            return true;
        }
        let mut child = node.first_child();
        while let Some(c) = child {
            child = c.next_sibling();
            stack.push((c, depth + 1));
        }
    }
    false
}

/// Elements whose content is not text for the reader.
const NOT_TEXT: [&str; 7] = [
    "script", "style", "noscript", "template", "svg", "iframe", "object",
];

/// The title and the text nodes of `doc` in document order, joined by line breaks at
/// block-ish boundaries; iterative, for pages too deep for readability.
fn flat_text(doc: &dom_query::Document) -> (Option<String>, String) {
    let mut title = None;
    let mut out = String::new();
    // Children are pushed in reverse so they pop in document order.
    let mut stack = vec![doc.root()];
    while let Some(node) = stack.pop() {
        if node.is_text() {
            let text = node.text();
            let text = text.trim();
            if !text.is_empty() {
                if !out.is_empty() {
                    out.push('\n');
                }
                out.push_str(text);
            }
            continue;
        }
        let name = node.node_name().map(|n| n.to_ascii_lowercase());
        if name.as_deref() == Some("title") {
            if title.is_none() {
                title = Some(node.text().trim().to_owned()).filter(|t| !t.is_empty());
            }
            continue;
        }
        if name.as_deref().is_some_and(|n| NOT_TEXT.contains(&n)) {
            continue;
        }
        let mut children = Vec::new();
        let mut child = node.first_child();
        while let Some(c) = child {
            child = c.next_sibling();
            children.push(c);
        }
        stack.extend(children.into_iter().rev());
    }
    (title, out)
}

/// The most elements [`nesting_cut`] lets be open at once. html5ever's scope checks walk the
/// stack of open elements, so parsing n unclosed `<div>`s costs n²: 150 000 of them (750 kB)
/// would keep a core busy for minutes.
const PRESCAN_MAX_OPEN: usize = 1024;

/// Elements that never hold others (void) or that the parser closes when a sibling starts:
/// neither deepens the tree, however many there are.
const NOT_NESTING: [&str; 28] = [
    "area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "param", "source",
    "track", "wbr", "p", "li", "dt", "dd", "tr", "td", "th", "option", "optgroup", "rp", "rt",
    "tbody", "thead", "tfoot",
];

/// Elements whose content is raw text up to their end tag.
const RAW_TEXT: [&str; 6] = ["script", "style", "textarea", "title", "xmp", "noscript"];

/// Where the estimated element nesting of `page` first passes `max` open elements (`None`:
/// it never does). Not a parser: it counts start and end tags (skipping comments, raw text,
/// void and self-closing elements and those the parser closes by itself) only to bound the
/// parser's work.
fn nesting_cut(page: &str, max: usize) -> Option<usize> {
    let lower = page.to_ascii_lowercase();
    let bytes = lower.as_bytes();
    let mut depth = 0usize;
    let mut at = 0;
    while let Some(offset) = lower[at..].find('<') {
        let start = at + offset;
        let rest = &lower[start + 1..];
        if rest.starts_with("!--") {
            at = rest
                .find("-->")
                .map_or(lower.len(), |end| start + 1 + end + 3);
            continue;
        }
        let Some(close) = rest.find('>') else { break };
        at = start + 1 + close + 1;
        let (end_tag, name_from) = match bytes.get(start + 1) {
            Some(b'/') => (true, start + 2),
            Some(c) if c.is_ascii_alphabetic() => (false, start + 1),
            _ => continue,
        };
        let name: &str = lower[name_from..]
            .split(|c: char| !(c.is_ascii_alphanumeric() || c == '-'))
            .next()
            .unwrap_or_default();
        if NOT_NESTING.contains(&name) {
            continue;
        }
        if end_tag {
            depth = depth.saturating_sub(1);
            continue;
        }
        if lower[..at].ends_with("/>") {
            continue;
        }
        if RAW_TEXT.contains(&name) {
            let end = format!("</{name}");
            at = lower[at..].find(&end).map_or(lower.len(), |e| at + e);
            continue;
        }
        depth += 1;
        if depth > max {
            return Some(start);
        }
    }
    None
}

/// The main content of an HTML page, or its whole body when readability finds none.
fn html(page: &str, url: &str, mode: ExtractMode) -> Result<Extracted, ExtractError> {
    let cut = nesting_cut(page, PRESCAN_MAX_OPEN);
    let page = cut.map_or(page, |at| &page[..at]);
    let doc = dom_query::Document::from(page);
    if cut.is_some() || too_deep(&doc, MAX_DEPTH) {
        let (title, text) = flat_text(&doc);
        let text = tidy(&text);
        if text.is_empty() {
            return Err(ExtractError::Empty);
        }
        return Ok(Extracted {
            text,
            title,
            extractor: "html-text",
        });
    }
    let text_mode = match mode {
        ExtractMode::Markdown => TextMode::Markdown,
        ExtractMode::Text => TextMode::Formatted,
    };
    let config = Config {
        text_mode,
        ..Config::default()
    };
    // Readability wants an absolute URL to make the links absolute; without one it still works.
    let document_url = url::Url::parse(url)
        .ok()
        .filter(|u| !u.cannot_be_a_base())
        .map(|_| url);
    let article = Readability::with_document(doc, document_url, Some(config))
        .and_then(|mut readability| readability.parse());
    if let Ok(article) = article {
        let text = tidy(&article.text_content);
        if !text.is_empty() {
            let title = Some(article.title.trim().to_owned()).filter(|t| !t.is_empty());
            return Ok(Extracted {
                text,
                title,
                extractor: "readability",
            });
        }
    }
    whole_body(page, mode)
}

/// The body of `page` without scripts, styles and other non-text.
fn whole_body(page: &str, mode: ExtractMode) -> Result<Extracted, ExtractError> {
    let doc = dom_query::Document::from(page);
    let title = doc.select("title").text().trim().to_owned();
    doc.select("script, style, noscript, template, svg, iframe, head")
        .remove();
    let body = doc.select("body");
    let text = match mode {
        ExtractMode::Markdown => body
            .nodes()
            .iter()
            .map(|b| b.md(None).to_string())
            .collect(),
        ExtractMode::Text => body.formatted_text().to_string(),
    };
    let text = tidy(&text);
    if text.is_empty() {
        return Err(ExtractError::Empty);
    }
    Ok(Extracted {
        text,
        title: Some(title).filter(|t| !t.is_empty()),
        extractor: "html-body",
    })
}

/// Trailing spaces off every line, at most one blank line in a row, no blank ends.
fn tidy(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut blank = 0;
    for line in text.trim().lines() {
        let line = line.trim_end();
        if line.is_empty() {
            blank += 1;
            continue;
        }
        if !out.is_empty() {
            out.push_str(if blank > 0 { "\n\n" } else { "\n" });
        }
        blank = 0;
        out.push_str(line);
    }
    out
}

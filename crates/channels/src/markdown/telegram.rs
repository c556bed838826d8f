//! Telegram's HTML parse mode. The Bot API takes only `b`, `strong`, `i`, `em`, `u`, `ins`,
//! `s`, `strike`, `del`, `code`, `pre` (with an inner `<code class="language-…">`), `a href`,
//! `blockquote` and `tg-spoiler`; this emits `b`, `i`, `s`, `code`, `pre`, `a` and
//! `blockquote` only, and escapes `&`, `<`, `>` in all text (`"` too in an `href`).
//! Headings are bold lines; links go only to http, https, tg and mailto URLs (Telegram
//! rejects others), and can't contain code, so code in a link is plain text.

use pulldown_cmark::HeadingLevel;

use super::writer::Frame;
use super::{Dialect, Key, has_scheme};

pub(crate) struct Telegram;

/// The entity for `c` in Telegram HTML text.
pub(crate) fn escape(c: char) -> Option<&'static str> {
    match c {
        '&' => Some("&amp;"),
        '<' => Some("&lt;"),
        '>' => Some("&gt;"),
        _ => None,
    }
}

/// `text` escaped for an attribute value in double quotes.
fn escape_attr(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '"' => out.push_str("&quot;"),
            c => match escape(c) {
                Some(entity) => out.push_str(entity),
                None => out.push(c),
            },
        }
    }
    out
}

impl Dialect for Telegram {
    fn escaper(&self) -> fn(char) -> Option<&'static str> {
        escape
    }

    fn span(&self, key: Key) -> Frame {
        let (open, close) = match key {
            Key::Strong => ("<b>", "</b>"),
            Key::Strike => ("<s>", "</s>"),
            _ => ("<i>", "</i>"),
        };
        Frame::new(key, open, close)
    }

    fn inline_code(&self, _code: &str) -> Frame {
        Frame::new(Key::Code, "<code>", "</code>")
    }

    fn code_in_link(&self) -> bool {
        false
    }

    fn link(&self, url: &str) -> Option<Frame> {
        has_scheme(url, &["http", "https", "tg", "mailto"]).then(|| {
            let open = format!("<a href=\"{}\">", escape_attr(url));
            Frame::new(Key::Link, open, "</a>")
        })
    }

    fn heading(&self, _level: HeadingLevel) -> Frame {
        // Keyed as bold: `**x**` inside a heading adds no second `<b>`.
        Frame::new(Key::Strong, "<b>", "</b>")
    }

    fn code_block(&self, lang: &str, _prefix: &str) -> Frame {
        // `<pre>` content is verbatim: no list indentation inside.
        let frame = if lang.is_empty() {
            Frame::new(Key::CodeBlock, "<pre>", "</pre>")
        } else {
            let open = format!("<pre><code class=\"language-{}\">", escape_attr(lang));
            Frame::new(Key::CodeBlock, open, "</code></pre>")
        };
        frame.resetting_prefix()
    }

    fn quote(&self) -> Frame {
        Frame::new(Key::Quote, "<blockquote>", "</blockquote>")
    }

    fn bullet(&self) -> &'static str {
        "• "
    }
}

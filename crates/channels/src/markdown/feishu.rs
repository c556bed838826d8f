//! Feishu/Lark card Markdown (the `markdown` element, lark_md): Discord's Markdown but for
//! headings, which cards don't have: a heading is a `**bold**` line. Links as
//! `[text](url)` to http(s) URLs; quotes `> `, lists `- `, fenced code with its language.

use pulldown_cmark::HeadingLevel;

use super::discord;
use super::writer::Frame;
use super::{Dialect, Key};

pub(crate) struct Feishu;

impl Dialect for Feishu {
    fn span(&self, key: Key) -> Frame {
        discord::span(key)
    }

    fn inline_code(&self, code: &str) -> Frame {
        discord::inline_code(code)
    }

    fn link(&self, url: &str) -> Option<Frame> {
        discord::link(url)
    }

    fn heading(&self, _level: HeadingLevel) -> Frame {
        // Keyed as bold: `**x**` inside a heading adds no second `**`.
        Frame::new(Key::Strong, "**", "**")
    }

    fn code_block(&self, lang: &str, prefix: &str) -> Frame {
        discord::code_block(lang, prefix)
    }

    fn quote(&self) -> Frame {
        discord::quote()
    }

    fn bullet(&self) -> &'static str {
        "- "
    }
}

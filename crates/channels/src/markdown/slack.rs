//! Slack's mrkdwn: `*bold*`, `_italic_`, `~strike~`, `` `code` ``, ``` blocks (Slack shows
//! no language), `> ` quotes, `• ` list lines, headings as `*bold*` lines, links
//! `<url|text>` (http, https, mailto). Slack requires `&`, `<`, `>` in text as `&amp;`,
//! `&lt;`, `&gt;`, code included.

use pulldown_cmark::HeadingLevel;

use super::writer::Frame;
use super::{Dialect, Key, has_scheme, telegram};

pub(crate) struct Slack;

impl Dialect for Slack {
    fn escaper(&self) -> fn(char) -> Option<&'static str> {
        // The same three entities as Telegram's HTML text.
        telegram::escape
    }

    fn span(&self, key: Key) -> Frame {
        let marker = match key {
            Key::Strong => "*",
            Key::Strike => "~",
            _ => "_",
        };
        Frame::new(key, marker, marker)
    }

    fn inline_code(&self, _code: &str) -> Frame {
        Frame::new(Key::Code, "`", "`")
    }

    fn link(&self, url: &str) -> Option<Frame> {
        has_scheme(url, &["http", "https", "mailto"]).then(|| {
            // The URL is escaped like text, and a `|` in it would end it early.
            let mut dest = String::with_capacity(url.len());
            for c in url.chars() {
                match (c, telegram::escape(c)) {
                    ('|', _) => dest.push_str("%7C"),
                    (_, Some(entity)) => dest.push_str(entity),
                    (c, None) => dest.push(c),
                }
            }
            Frame::new(Key::Link, format!("<{dest}|"), ">")
        })
    }

    fn heading(&self, _level: HeadingLevel) -> Frame {
        // Keyed as bold: `**x**` inside a heading adds no second `*`.
        Frame::new(Key::Strong, "*", "*")
    }

    fn code_block(&self, _lang: &str, prefix: &str) -> Frame {
        Frame::new(
            Key::CodeBlock,
            format!("```\n{prefix}"),
            format!("\n{prefix}```"),
        )
    }

    fn quote(&self) -> Frame {
        Frame::new(Key::Quote, "> ", "").with_prefix("> ")
    }

    fn bullet(&self) -> &'static str {
        "• "
    }
}

//! Discord's Markdown: `**bold**`, `*italic*`, `~~strike~~`, `` `code` ``, fenced code with
//! its language, `> ` quotes, `- ` lists, `#`/`##`/`###` headings (Discord has no deeper
//! ones), `[text](url)` links (Discord masks only http and https links). Text is written
//! as it is: nothing is escaped. The Markdown helpers here serve Feishu's cards too.

use pulldown_cmark::HeadingLevel;

use super::writer::Frame;
use super::{Dialect, Key, has_scheme};

pub(crate) struct Discord;

/// `**`, `*` and `~~`.
pub(super) fn span(key: Key) -> Frame {
    let marker = match key {
        Key::Strong => "**",
        Key::Strike => "~~",
        _ => "*",
    };
    Frame::new(key, marker, marker)
}

/// Backticks around `code`: one more than its longest run of backticks, with a space
/// inside when it starts or ends with one.
pub(super) fn inline_code(code: &str) -> Frame {
    let longest = code
        .split(|c| c != '`')
        .map(str::len)
        .max()
        .unwrap_or_default();
    let ticks = "`".repeat(longest + 1);
    let pad = if code.starts_with('`') || code.ends_with('`') {
        " "
    } else {
        ""
    };
    Frame::new(Key::Code, format!("{ticks}{pad}"), format!("{pad}{ticks}"))
}

/// `[text](url)` for http(s) URLs; spaces and parentheses are percent-encoded so they
/// can't end the URL early.
pub(super) fn link(url: &str) -> Option<Frame> {
    has_scheme(url, &["http", "https"]).then(|| {
        let mut dest = String::with_capacity(url.len());
        for c in url.chars() {
            match c {
                ' ' => dest.push_str("%20"),
                '(' => dest.push_str("%28"),
                ')' => dest.push_str("%29"),
                '<' => dest.push_str("%3C"),
                '>' => dest.push_str("%3E"),
                c => dest.push(c),
            }
        }
        Frame::new(Key::Link, "[", format!("]({dest})"))
    })
}

/// A fence with `lang`; inside a quote or list item, its lines carry `prefix`.
pub(super) fn code_block(lang: &str, prefix: &str) -> Frame {
    Frame::new(
        Key::CodeBlock,
        format!("```{lang}\n{prefix}"),
        format!("\n{prefix}```"),
    )
}

pub(super) fn quote() -> Frame {
    Frame::new(Key::Quote, "> ", "").with_prefix("> ")
}

impl Dialect for Discord {
    fn span(&self, key: Key) -> Frame {
        span(key)
    }

    fn inline_code(&self, code: &str) -> Frame {
        inline_code(code)
    }

    fn link(&self, url: &str) -> Option<Frame> {
        link(url)
    }

    fn heading(&self, level: HeadingLevel) -> Frame {
        let marker = match level {
            HeadingLevel::H1 => "# ",
            HeadingLevel::H2 => "## ",
            _ => "### ",
        };
        Frame::new(Key::Heading, marker, "")
    }

    fn code_block(&self, lang: &str, prefix: &str) -> Frame {
        code_block(lang, prefix)
    }

    fn quote(&self) -> Frame {
        quote()
    }

    fn bullet(&self) -> &'static str {
        "- "
    }
}

//! Markdown for the chat platforms: an agent replies in CommonMark (plus GFM strikethrough
//! and tables), every channel sends its platform's own markup, in messages no longer than
//! the platform allows. [`render_chunks`] does both at once.
//!
//! The Markdown is parsed once (pulldown-cmark) and rendered from its events by one shared
//! walker (`render`) into a chunking `writer`; what differs per platform is only which
//! markup each construct gets (a `Dialect`: `telegram`, `discord`, `slack`, `feishu`).
//! Splitting happens in the writer, which knows every tag it has opened, so a chunk never
//! ends inside a tag or an entity, closes whatever is open at its end (`</b>`, a code
//! fence) and the next chunk reopens it (a fence with its language). Chunks end, in order
//! of preference, at a paragraph break, a line break, a space (looked for in the second
//! half of the chunk first, so chunks stay large); a word longer than a chunk is cut hard
//! (not inside a grapheme when that can be helped).
//!
//! Lengths are chars (Unicode scalar values), markup included. For a limit of 64 or more
//! every chunk fits: markup that would leave less than half a chunk for text (a link with a
//! huge URL, deep nesting) is left out (a link becomes `text (url)`). Below 64 the writer
//! does its best; it never panics and always terminates. No chunk is empty or blank.
//!
//! Choices the platforms leave open: nested block quotes render as one quote (Telegram
//! can't nest them, Discord and Slack can't show them); tables become one line per row,
//! cells joined by ` | ` (no platform here renders GFM tables); a horizontal rule is a
//! `———` line; autolinks (`<https://…>`) stay plain text, which every platform links
//! itself; raw HTML in the input is text (escaped where the platform needs it).

mod discord;
mod feishu;
mod render;
mod slack;
mod telegram;
mod writer;

use pulldown_cmark::HeadingLevel;

use writer::Frame;

/// Which platform's markup.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flavor {
    /// Telegram Bot API `parse_mode=HTML`.
    TelegramHtml,
    /// Discord's Markdown.
    DiscordMarkdown,
    /// Slack's mrkdwn.
    SlackMrkdwn,
    /// The `markdown` element of a Feishu/Lark interactive card (lark_md).
    FeishuMarkdown,
}

impl Flavor {
    /// The platform's per-message limit in chars: Telegram 4096, Discord 2000, Slack 4000
    /// (Slack's recommended text limit for `chat.postMessage`), Feishu 4000 (per card
    /// `markdown` element, the same conservative size).
    pub fn limit(self) -> usize {
        match self {
            Flavor::TelegramHtml => 4096,
            Flavor::DiscordMarkdown => 2000,
            Flavor::SlackMrkdwn | Flavor::FeishuMarkdown => 4000,
        }
    }

    fn dialect(self) -> &'static dyn Dialect {
        match self {
            Flavor::TelegramHtml => &telegram::Telegram,
            Flavor::DiscordMarkdown => &discord::Discord,
            Flavor::SlackMrkdwn => &slack::Slack,
            Flavor::FeishuMarkdown => &feishu::Feishu,
        }
    }
}

/// Renders `markdown` (CommonMark + GFM strikethrough, tables as plain text) for `flavor`,
/// split into chunks of at most `limit` chars each (chars = Unicode scalar values, markup
/// included), every chunk valid on its own. Empty or blank input gives no chunks.
pub fn render_chunks(markdown: &str, flavor: Flavor, limit: usize) -> Vec<String> {
    render::render(markdown, flavor.dialect(), limit)
}

/// Escapes text for Telegram's HTML parse mode: `&`, `<` and `>`. Attribute values (an
/// `href`) also need `"` escaped; the renderer does that itself.
pub fn escape_telegram_html(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match telegram::escape(c) {
            Some(entity) => out.push_str(entity),
            None => out.push(c),
        }
    }
    out
}

/// A Telegram HTML chunk as plain text: tags dropped, entities decoded (what is sent when
/// Telegram refuses the markup, so a reply is never lost).
pub fn telegram_html_text(html: &str) -> String {
    let mut out = String::with_capacity(html.len());
    let mut in_tag = false;
    for c in html.chars() {
        match c {
            '<' => in_tag = true,
            '>' if in_tag => in_tag = false,
            _ if !in_tag => out.push(c),
            _ => {}
        }
    }
    out.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&amp;", "&")
}

/// Formatting frames the walker may open; one of a kind at a time (`**` inside `**` is
/// redundant, and `<b>` inside `<b>` too deep a stack to be worth a chunk's room).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Key {
    Strong,
    Emphasis,
    Strike,
    Code,
    Link,
    Quote,
    Heading,
    CodeBlock,
    Item,
}

/// One platform's markup for each construct the walker renders.
pub(crate) trait Dialect {
    /// What gives the entity standing for a char in text, when the platform needs one
    /// (a fn pointer: the writer escapes each char as it writes it out).
    fn escaper(&self) -> fn(char) -> Option<&'static str> {
        |_| None
    }
    /// Bold, italic or strikethrough (`key` is one of those).
    fn span(&self, key: Key) -> Frame;
    /// Inline code holding `code`.
    fn inline_code(&self, code: &str) -> Frame;
    /// Whether inline code may sit inside a link (Telegram: a link can't contain code).
    fn code_in_link(&self) -> bool {
        true
    }
    /// A link to `url`; `None` when the platform can't link it (the walker then writes
    /// `text (url)`).
    fn link(&self, url: &str) -> Option<Frame>;
    fn heading(&self, level: HeadingLevel) -> Frame;
    /// A code block; `lang` is sanitized ([`language`]) and may be empty. `prefix` is what
    /// starts each line where the block sits (a quote's `> `), for markup that spans lines.
    fn code_block(&self, lang: &str, prefix: &str) -> Frame;
    fn quote(&self) -> Frame;
    /// An unordered list item's marker.
    fn bullet(&self) -> &'static str;
}

/// The language of a fenced code block from its info string: the first word, if it looks
/// like a language name (letters, digits, `_+#.-`, at most 20 chars); otherwise none, as
/// it ends up inside a tag or on a fence line.
pub(crate) fn language(info: &str) -> &str {
    let word = info
        .split(|c: char| c.is_whitespace() || c == ',' || c == '{')
        .next()
        .unwrap_or_default();
    let ok = word.len() <= 20
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "_+#.-".contains(c));
    if ok { word } else { "" }
}

/// Whether `url` starts with one of `schemes` (compared without case) and a colon.
pub(crate) fn has_scheme(url: &str, schemes: &[&str]) -> bool {
    url.split_once(':')
        .is_some_and(|(scheme, _)| schemes.iter().any(|s| s.eq_ignore_ascii_case(scheme)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn language_takes_a_sane_first_word() {
        let too_long = "x".repeat(21);
        for (info, expected) in [
            ("rust", "rust"),
            ("rust,ignore", "rust"),
            ("c++ title=x", "c++"),
            ("\"><script>", ""),
            (too_long.as_str(), ""),
            ("", ""),
        ] {
            assert_eq!(language(info), expected, "{info:?}");
        }
    }

    #[test]
    fn schemes_compare_without_case() {
        assert!(has_scheme("HTTPS://x", &["https"]));
        assert!(has_scheme("mailto:a@b", &["mailto"]));
        assert!(!has_scheme("javascript:alert(1)", &["http", "https"]));
        assert!(!has_scheme("/relative", &["http"]));
    }

    #[test]
    fn escapes_telegram_text() {
        assert_eq!(
            escape_telegram_html("a < b & c > \"d\""),
            "a &lt; b &amp; c &gt; \"d\""
        );
    }

    #[test]
    fn plain_text_from_telegram_html() {
        assert_eq!(
            telegram_html_text("<b>a &lt;b&gt;</b> &amp; <a href=\"x\">link</a>"),
            "a <b> & link"
        );
    }
}

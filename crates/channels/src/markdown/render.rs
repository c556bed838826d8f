//! The walk over pulldown-cmark's events shared by every flavor: block layout (blank lines
//! between blocks, list markers and indentation, code blocks, tables as lines), which
//! formatting to open and when to leave it out; the markup itself comes from the
//! [`Dialect`], the chunking from the [`Writer`].

use pulldown_cmark::{CodeBlockKind, Event, LinkType, Options, Parser, Tag, TagEnd};

use super::writer::{Frame, Writer};
use super::{Dialect, Key, language};

/// List nesting deeper than this is not indented further: a line's prefix is repeated on
/// every line and must not eat a chunk (and the writer's stack of open frames stays short).
const MAX_INDENT_LEVELS: usize = 8;

/// Renders `markdown` with `dialect` into chunks of at most `limit` chars.
pub(crate) fn render(markdown: &str, dialect: &dyn Dialect, limit: usize) -> Vec<String> {
    let mut options = Options::empty();
    options.insert(Options::ENABLE_STRIKETHROUGH);
    options.insert(Options::ENABLE_TABLES);
    let mut walker = Walker::new(dialect, limit);
    for event in Parser::new_ext(markdown, options) {
        walker.event(event);
    }
    walker.writer.finish()
}

/// The break owed before the next thing written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Sep {
    None,
    Line,
    Para,
}

/// Just after a list marker or a quote's opening: the first block inside goes right there.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Fresh {
    No,
    Item,
    Quote,
}

/// What a start event left for its end.
struct Open {
    frame: Option<usize>,
    /// A link written as text, or an image: the URL to add after it.
    url: Option<String>,
    /// Text chars written before the start (an image without alt text gets just its URL).
    chars: usize,
}

struct Walker<'d> {
    dialect: &'d dyn Dialect,
    writer: Writer,
    open: Vec<Open>,
    sep: Sep,
    fresh: Fresh,
    /// Something has been written: separators go between blocks, not before the first.
    written: bool,
    /// The next number of each open list (`None`: unordered).
    lists: Vec<Option<u64>>,
    quotes: usize,
    images: usize,
    /// Links open as links (not as text).
    links: usize,
    /// Cells so far in the current table row.
    cells: usize,
    /// A code block's language and text, written at its end (its last newline dropped).
    code: Option<(String, String)>,
    /// An HTML block's text, written as text at its end.
    html: Option<String>,
    chars: usize,
}

impl<'d> Walker<'d> {
    fn new(dialect: &'d dyn Dialect, limit: usize) -> Self {
        let writer = Writer::new(limit, dialect.escaper());
        Walker {
            dialect,
            writer,
            open: Vec::new(),
            sep: Sep::None,
            fresh: Fresh::No,
            written: false,
            lists: Vec::new(),
            quotes: 0,
            images: 0,
            links: 0,
            cells: 0,
            code: None,
            html: None,
            chars: 0,
        }
    }

    fn event(&mut self, event: Event<'_>) {
        match event {
            Event::Start(tag) => self.start(tag),
            Event::End(tag) => self.end(tag),
            Event::Text(text) | Event::Html(text) | Event::InlineHtml(text) => {
                if let Some((_, code)) = &mut self.code {
                    code.push_str(&text);
                } else if let Some(html) = &mut self.html {
                    html.push_str(&text);
                } else {
                    self.text(&text, true);
                }
            }
            Event::Code(code) => self.inline_code(&code),
            Event::InlineMath(text) | Event::DisplayMath(text) => self.text(&text, true),
            Event::FootnoteReference(label) => self.text(&format!("[^{label}]"), true),
            Event::SoftBreak | Event::HardBreak if self.images > 0 => self.text(" ", true),
            Event::SoftBreak | Event::HardBreak => {
                self.flush_sep();
                self.writer.line();
            }
            Event::Rule => {
                self.block(Sep::Para);
                self.text("———", false);
            }
            Event::TaskListMarker(done) => self.text(if done { "[x] " } else { "[ ] " }, false),
        }
    }

    fn start(&mut self, tag: Tag<'_>) {
        let mut open = Open {
            frame: None,
            url: None,
            chars: self.chars,
        };
        match tag {
            Tag::Heading { level, .. } => {
                self.block(Sep::Para);
                open.frame = self.open_frame(self.dialect.heading(level));
            }
            Tag::BlockQuote(_) => {
                self.block(Sep::Para);
                // Only the outermost quote is marked: Telegram can't nest quotes, Discord
                // and Slack can't show nested ones.
                if self.quotes == 0 {
                    open.frame = self.open_frame(self.dialect.quote());
                    if open.frame.is_some() {
                        self.fresh = Fresh::Quote;
                    }
                }
                self.quotes += 1;
            }
            Tag::CodeBlock(kind) => {
                if self.fresh == Fresh::Item {
                    // A fence must start a line, not follow a list marker.
                    self.fresh = Fresh::No;
                    self.sep = Sep::Line;
                } else {
                    self.block(Sep::Para);
                }
                let lang = match &kind {
                    CodeBlockKind::Fenced(info) => language(info),
                    CodeBlockKind::Indented => "",
                };
                self.code = Some((lang.to_owned(), String::new()));
            }
            Tag::HtmlBlock => {
                self.block(Sep::Para);
                self.html = Some(String::new());
            }
            Tag::List(start) => {
                self.block(if self.lists.is_empty() {
                    Sep::Para
                } else {
                    Sep::Line
                });
                self.lists.push(start);
            }
            Tag::Item => {
                self.block(Sep::Line);
                let marker = match self.lists.last_mut() {
                    Some(Some(n)) => {
                        let marker = format!("{n}. ");
                        *n = n.saturating_add(1);
                        marker
                    }
                    _ => self.dialect.bullet().to_owned(),
                };
                self.text(&marker, false);
                // The item's frame only indents its continuation lines (and nested lists);
                // past the deepest indentation there is nothing for it to do.
                if self.lists.len() <= MAX_INDENT_LEVELS {
                    let frame = Frame::new(Key::Item, "", "").with_prefix("  ");
                    open.frame = self.writer.open(frame);
                }
                self.fresh = Fresh::Item;
            }
            Tag::TableHead | Tag::TableRow => {
                self.block(Sep::Line);
                self.cells = 0;
            }
            Tag::TableCell => {
                if self.cells > 0 {
                    self.text(" | ", true);
                }
                self.cells += 1;
            }
            Tag::Emphasis => open.frame = self.span(Key::Emphasis),
            Tag::Strong => open.frame = self.span(Key::Strong),
            Tag::Strikethrough => open.frame = self.span(Key::Strike),
            Tag::Link {
                link_type,
                dest_url,
                ..
            } => {
                // Autolinks stay text: every platform links a bare URL itself.
                if self.images == 0 && !matches!(link_type, LinkType::Autolink | LinkType::Email) {
                    open.frame = match self.dialect.link(&dest_url) {
                        Some(frame) => self.open_frame(frame),
                        None => None,
                    };
                    if open.frame.is_some() {
                        self.links += 1;
                    } else if !dest_url.is_empty() {
                        open.url = Some(dest_url.into_string());
                    }
                }
            }
            Tag::Image { dest_url, .. } => {
                self.images += 1;
                if !dest_url.is_empty() {
                    open.url = Some(dest_url.into_string());
                }
            }
            Tag::Superscript | Tag::Subscript => {}
            // Paragraphs, tables, and what the options leave off (footnotes, definition
            // lists, metadata): blocks of text.
            _ => self.block(Sep::Para),
        }
        self.open.push(open);
    }

    fn end(&mut self, tag: TagEnd) {
        let Some(open) = self.open.pop() else {
            return;
        };
        match tag {
            TagEnd::CodeBlock => self.code_block(),
            TagEnd::HtmlBlock => {
                if let Some(html) = self.html.take() {
                    self.text(html.trim_end_matches(['\n', '\r']), true);
                }
            }
            _ => {}
        }
        if let Some(frame) = open.frame {
            self.writer.close(frame);
        }
        match tag {
            TagEnd::BlockQuote(_) => {
                self.quotes = self.quotes.saturating_sub(1);
                if self.fresh == Fresh::Quote {
                    self.fresh = Fresh::No;
                }
            }
            TagEnd::List(_) => {
                self.lists.pop();
            }
            TagEnd::Item if self.fresh == Fresh::Item => self.fresh = Fresh::No,
            TagEnd::Link => {
                if open.frame.is_some() {
                    self.links = self.links.saturating_sub(1);
                }
                if let Some(url) = open.url {
                    self.text(&format!(" ({url})"), true);
                }
            }
            TagEnd::Image => {
                self.images = self.images.saturating_sub(1);
                match open.url {
                    Some(url) if self.chars == open.chars => self.text(&url, true),
                    Some(url) => self.text(&format!(" ({url})"), true),
                    None => {}
                }
            }
            _ => {}
        }
    }

    /// A block starts: it owes `sep` after whatever came before, unless it is the first
    /// thing in a list item or quote.
    fn block(&mut self, sep: Sep) {
        if self.fresh == Fresh::No {
            self.sep = self.sep.max(sep);
        }
    }

    fn flush_sep(&mut self) {
        if self.written {
            match self.sep {
                Sep::Line => self.writer.line(),
                Sep::Para => self.writer.para(),
                Sep::None => {}
            }
        }
        self.sep = Sep::None;
    }

    fn open_frame(&mut self, frame: Frame) -> Option<usize> {
        self.flush_sep();
        self.writer.open(frame)
    }

    /// Bold, italic or strikethrough, unless already open or inside an image's alt text.
    fn span(&mut self, key: Key) -> Option<usize> {
        if self.images > 0 || self.writer.is_open(key) {
            return None;
        }
        self.open_frame(self.dialect.span(key))
    }

    /// Writes `text`; with `breaks`, its spaces are places a chunk may end.
    fn text(&mut self, text: &str, breaks: bool) {
        if text.is_empty() {
            return;
        }
        self.flush_sep();
        self.put(text, breaks.then_some(false));
    }

    /// Writes `text` char by char. With `spaces` `Some(kept)`, each space is a place a
    /// chunk may end (`kept`: the space stays at the cut, as code's do); with `None`, a
    /// plain char.
    fn put(&mut self, text: &str, spaces: Option<bool>) {
        self.written = true;
        self.fresh = Fresh::No;
        for c in text.chars() {
            self.chars += 1;
            match (c, spaces) {
                ('\n', _) => self.writer.line(),
                (' ', Some(kept)) => self.writer.space(kept),
                (c, _) => self.writer.char(c),
            }
        }
    }

    fn inline_code(&mut self, code: &str) {
        let plain = self.images > 0
            || (self.links > 0 && !self.dialect.code_in_link())
            || self.writer.is_open(Key::Code);
        let frame = if plain {
            None
        } else {
            self.open_frame(self.dialect.inline_code(code))
        };
        self.text(code, true);
        if let Some(frame) = frame {
            self.writer.close(frame);
        }
    }

    fn code_block(&mut self) {
        let Some((lang, mut code)) = self.code.take() else {
            return;
        };
        if code.ends_with('\n') {
            code.pop();
        }
        if code.is_empty() {
            return;
        }
        self.flush_sep();
        let prefix = self.writer.prefix();
        // Without room for the language's markup, the block goes without a language, and
        // without room for that, as plain lines.
        let mut frame = self.writer.open(self.dialect.code_block(&lang, &prefix));
        if frame.is_none() && !lang.is_empty() {
            frame = self.writer.open(self.dialect.code_block("", &prefix));
        }
        self.put(&code, Some(true));
        if let Some(frame) = frame {
            self.writer.close(frame);
        }
    }
}

//! The chunking writer: takes rendered output as atoms (a text char, a breakable space, a
//! line or paragraph break, a frame's open or close markup) and packs them into chunks of
//! at most `limit` chars, markup included.
//!
//! A frame is a piece of markup with an opening and a closing part (`<b>`/`</b>`, a code
//! fence, a quote's `> `). The writer keeps the frames open at the start of the current
//! chunk (reopened there) and the atoms written since, so when the next atom doesn't fit it
//! can end the chunk at the best break already written: the chunk closes the frames open at
//! that break, the next one reopens them, and the atoms after the break are written again
//! into it. Atoms are never cut, so neither is an entity or a tag.

mod split;

use std::collections::VecDeque;

use super::Key;

/// Markup around content: `open` before it (and at the start of every chunk it continues
/// into), `close` after it (and at the end of every chunk it is cut at).
#[derive(Debug, Clone)]
pub(crate) struct Frame {
    pub key: Key,
    pub open: String,
    pub close: String,
    /// Put after every line break inside the frame (a quote's `> `, a list item's indent).
    pub prefix: String,
    /// Line breaks inside drop the prefixes of the frames outside (`<pre>` content is
    /// verbatim).
    pub resets_prefix: bool,
    open_chars: usize,
    close_chars: usize,
}

impl Frame {
    pub fn new(key: Key, open: impl Into<String>, close: impl Into<String>) -> Self {
        let (open, close) = (open.into(), close.into());
        Frame {
            key,
            open_chars: open.chars().count(),
            close_chars: close.chars().count(),
            open,
            close,
            prefix: String::new(),
            resets_prefix: false,
        }
    }

    pub fn with_prefix(mut self, prefix: &str) -> Self {
        self.prefix = prefix.to_owned();
        self
    }

    pub fn resetting_prefix(mut self) -> Self {
        self.resets_prefix = true;
        self
    }

    fn markup(&self) -> usize {
        self.open_chars.saturating_add(self.close_chars)
    }
}

/// One atom of output.
#[derive(Debug)]
enum Item {
    /// A char of text (escaped on output); whitespace here is kept, never a break.
    Char(char),
    /// A space a chunk may end at; `kept` ones (in code) are not trimmed at a chunk's start.
    Space {
        kept: bool,
    },
    /// A line break with the prefix of the next line.
    Line(Box<str>),
    /// A blank line, prefixes included.
    Para(Box<str>),
    Open(usize),
    Close(usize),
}

impl Item {
    /// How much a break here is preferred, when a chunk may end here at all.
    fn break_rank(&self) -> Option<u8> {
        match self {
            Item::Para(_) => Some(3),
            Item::Line(_) => Some(2),
            Item::Space { .. } => Some(1),
            _ => None,
        }
    }

    /// Whitespace that means nothing at the start or end of a chunk.
    fn trimmable(&self) -> bool {
        matches!(
            self,
            Item::Line(_) | Item::Para(_) | Item::Space { kept: false }
        )
    }

    /// Text: ending a chunk after this makes progress.
    fn is_text(&self) -> bool {
        matches!(self, Item::Char(_) | Item::Space { .. })
    }

    fn is_solid(&self) -> bool {
        matches!(self, Item::Char(c) if !c.is_whitespace())
    }
}

pub(crate) struct Writer {
    limit: usize,
    escape: fn(char) -> Option<&'static str>,
    frames: Vec<Frame>,
    /// Frames reopened at the start of the current chunk.
    base: Vec<usize>,
    /// Frames open after the last item.
    stack: Vec<usize>,
    items: Vec<Item>,
    /// Chars of the current chunk so far: `base` reopened, then the items.
    used: usize,
    /// Chars reopening `base`.
    reopen: usize,
    /// Chars closing `stack`.
    closing: usize,
    /// Open plus close chars of `stack`.
    markup: usize,
    /// Text has been written into the current chunk: whitespace before it is dropped.
    text: bool,
    chunks: Vec<String>,
}

impl Writer {
    pub fn new(limit: usize, escape: fn(char) -> Option<&'static str>) -> Self {
        Writer {
            limit,
            escape,
            frames: Vec::new(),
            base: Vec::new(),
            stack: Vec::new(),
            items: Vec::new(),
            used: 0,
            reopen: 0,
            closing: 0,
            markup: 0,
            text: false,
            chunks: Vec::new(),
        }
    }

    pub fn char(&mut self, c: char) {
        self.push(Item::Char(c));
    }

    pub fn space(&mut self, kept: bool) {
        self.push(Item::Space { kept });
    }

    pub fn line(&mut self) {
        let text = format!("\n{}", self.prefix());
        self.push(Item::Line(text.into()));
    }

    pub fn para(&mut self) {
        let prefix = self.prefix();
        // A blank line keeps a quote's `>` (and its space: Discord needs `> ` to stay in
        // the quote) but no trailing indentation.
        let mut blank = prefix.trim_end().to_owned();
        if blank.ends_with('>') {
            blank.push(' ');
        }
        self.push(Item::Para(format!("\n{blank}\n{prefix}").into()));
    }

    /// What starts the next line here: the prefixes of the open frames.
    pub fn prefix(&self) -> String {
        let from = self
            .stack
            .iter()
            .rposition(|&f| self.frames.get(f).is_some_and(|f| f.resets_prefix))
            .unwrap_or(0);
        self.stack
            .get(from..)
            .unwrap_or_default()
            .iter()
            .filter_map(|&f| self.frames.get(f))
            .map(|f| f.prefix.as_str())
            .collect()
    }

    pub fn is_open(&self, key: Key) -> bool {
        self.stack
            .iter()
            .any(|&f| self.frames.get(f).is_some_and(|f| f.key == key))
    }

    /// Opens `frame`, unless the open frames' markup would then take more than half a
    /// chunk: every chunk repeats it, and the text needs room. Returns its id for
    /// [`Writer::close`].
    pub fn open(&mut self, frame: Frame) -> Option<usize> {
        if self.markup.saturating_add(frame.markup()) > self.limit / 2 {
            return None;
        }
        self.frames.push(frame);
        let id = self.frames.len() - 1;
        self.push(Item::Open(id));
        Some(id)
    }

    /// Closes the innermost open frame, `id`.
    pub fn close(&mut self, id: usize) {
        debug_assert_eq!(self.stack.last(), Some(&id));
        self.push(Item::Close(id));
    }

    /// The chunks, the last one included.
    pub fn finish(mut self) -> Vec<String> {
        self.emit();
        self.chunks
    }

    fn frame_chars(&self, id: usize) -> (usize, usize) {
        self.frames
            .get(id)
            .map_or((0, 0), |f| (f.open_chars, f.close_chars))
    }

    fn cost(&self, item: &Item) -> usize {
        match item {
            Item::Char(c) => (self.escape)(*c).map_or(1, str::len),
            Item::Space { .. } => 1,
            Item::Line(s) | Item::Para(s) => s.chars().count(),
            Item::Open(f) => self.frame_chars(*f).0,
            Item::Close(f) => self.frame_chars(*f).1,
        }
    }

    /// Chars closing the open frames once `item` is written.
    fn closing_after(&self, item: &Item) -> usize {
        match item {
            Item::Open(f) => self.closing.saturating_add(self.frame_chars(*f).1),
            Item::Close(f) => self.closing.saturating_sub(self.frame_chars(*f).1),
            _ => self.closing,
        }
    }

    fn push(&mut self, item: Item) {
        // Items to write, in order: the one given, and after a cut, the ones written after
        // the break again before it.
        let mut queue = VecDeque::from([item]);
        while let Some(item) = queue.pop_front() {
            if !self.text && item.trimmable() {
                continue;
            }
            if let Item::Close(f) = item
                && self.cancel(f)
            {
                continue;
            }
            let cost = self.cost(&item);
            let end = self
                .used
                .saturating_add(cost)
                .saturating_add(self.closing_after(&item));
            if end <= self.limit {
                self.append(item, cost);
                continue;
            }
            let Some(cut) = self.find_cut(&item) else {
                // Nothing written to end a chunk with (only a tiny limit gets here).
                self.append(item, cost);
                continue;
            };
            if !cut.skip_next {
                queue.push_front(item);
            }
            for item in self.cut(cut).into_iter().rev() {
                queue.push_front(item);
            }
        }
    }

    /// A close right after its open leaves nothing to mark up: both go.
    fn cancel(&mut self, f: usize) -> bool {
        let (open, close) = self.frame_chars(f);
        if matches!(self.items.last(), Some(Item::Open(g)) if *g == f) {
            self.items.pop();
        } else if self.items.is_empty() && self.base.last() == Some(&f) {
            self.base.pop();
            self.reopen = self.reopen.saturating_sub(open);
        } else {
            return false;
        }
        self.stack.pop();
        self.used = self.used.saturating_sub(open);
        self.closing = self.closing.saturating_sub(close);
        self.markup = self.markup.saturating_sub(open.saturating_add(close));
        true
    }

    fn append(&mut self, item: Item, cost: usize) {
        match item {
            Item::Open(f) => {
                let (open, close) = self.frame_chars(f);
                self.stack.push(f);
                self.closing = self.closing.saturating_add(close);
                self.markup = self.markup.saturating_add(open.saturating_add(close));
            }
            Item::Close(f) => {
                let (open, close) = self.frame_chars(f);
                self.stack.pop();
                self.closing = self.closing.saturating_sub(close);
                self.markup = self.markup.saturating_sub(open.saturating_add(close));
            }
            _ => self.text |= item.is_text(),
        }
        self.used = self.used.saturating_add(cost);
        self.items.push(item);
    }
}

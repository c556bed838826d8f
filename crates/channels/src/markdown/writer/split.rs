//! Where and how the writer ends a chunk: choosing the break (paragraph, line, space, else
//! a hard cut that keeps graphemes whole), closing the frames open there, reopening them in
//! the next chunk, and trimming each chunk's ends.

use super::{Item, Writer};

/// Where to end the chunk: before `items[at]`, dropping that item (`skip`, a break), or
/// after everything, dropping the item being pushed (`skip_next`).
pub(super) struct Cut {
    pub at: usize,
    pub skip: bool,
    pub skip_next: bool,
}

impl Writer {
    /// The best place to end the current chunk before `next`: the best-ranked break in the
    /// second half of the chunk (so chunks stay large), else the best-ranked anywhere, else
    /// a hard cut after the last item. `None` when no text has been written to end with.
    pub(super) fn find_cut(&self, next: &Item) -> Option<Cut> {
        let half = self.limit / 2;
        let mut pos = self.reopen;
        let mut text = false;
        let mut best: Option<((bool, u8, usize), Cut)> = None;
        let mut consider = |key: (bool, u8, usize), cut: Cut| {
            if best.as_ref().is_none_or(|(k, _)| key >= *k) {
                best = Some((key, cut));
            }
        };
        for (i, item) in self.items.iter().enumerate() {
            if let Some(rank) = item.break_rank()
                && text
            {
                let cut = Cut {
                    at: i,
                    skip: true,
                    skip_next: false,
                };
                consider((pos >= half, rank, i), cut);
            }
            text |= item.is_text();
            pos = pos.saturating_add(self.cost(item));
        }
        if !text {
            return None;
        }
        let len = self.items.len();
        if let Some(rank) = next.break_rank() {
            let cut = Cut {
                at: len,
                skip: false,
                skip_next: true,
            };
            consider((pos >= half, rank, len), cut);
        }
        Some(best.map_or_else(
            || Cut {
                at: self.hard_cut(next),
                skip: false,
                skip_next: false,
            },
            |(_, cut)| cut,
        ))
    }

    /// Where a word too long for a chunk is cut: after the last item, or a few chars back
    /// so as not to separate a combining mark, emoji modifier or joiner from its base.
    fn hard_cut(&self, next: &Item) -> usize {
        let len = self.items.len();
        let mut at = len;
        let mut after = match next {
            Item::Char(c) => Some(*c),
            _ => None,
        };
        while let Some(Item::Char(before)) = at.checked_sub(1).and_then(|i| self.items.get(i)) {
            if !joins(*before, after) {
                break;
            }
            if len - at >= 8 {
                return len;
            }
            at -= 1;
            after = Some(*before);
        }
        let head = self.items.get(..at).unwrap_or_default();
        if head.iter().any(Item::is_text) {
            at
        } else {
            len
        }
    }

    /// Ends the current chunk at `cut` and starts the next with the frames open there;
    /// returns the items after the cut, to be written again.
    pub(super) fn cut(&mut self, cut: Cut) -> Vec<Item> {
        let at = cut.at.min(self.items.len());
        let mut tail = self.items.split_off(at);
        if cut.skip && !tail.is_empty() {
            tail.remove(0);
        }
        let next_base = self.stack_after(&self.items);
        self.emit();
        self.items.clear();
        self.base = next_base;
        self.stack = self.base.clone();
        self.reopen = 0;
        self.closing = 0;
        self.markup = 0;
        for &f in &self.base {
            let (open, close) = self.frame_chars(f);
            self.reopen = self.reopen.saturating_add(open);
            self.closing = self.closing.saturating_add(close);
            self.markup = self.markup.saturating_add(open.saturating_add(close));
        }
        self.used = self.reopen;
        self.text = false;
        tail
    }

    /// The frames open after `items`, starting from `base`.
    fn stack_after(&self, items: &[Item]) -> Vec<usize> {
        let mut stack = self.base.clone();
        for item in items {
            match item {
                Item::Open(f) => stack.push(*f),
                Item::Close(_) => {
                    stack.pop();
                }
                _ => {}
            }
        }
        stack
    }

    /// Writes out the current chunk, without the whitespace and the opened-but-empty frames
    /// at its end; a chunk without a visible char is dropped.
    pub(super) fn emit(&mut self) {
        let mut end = self.items.len();
        while let Some(item) = end.checked_sub(1).and_then(|i| self.items.get(i)) {
            if !(item.trimmable() || matches!(item, Item::Open(_))) {
                break;
            }
            end -= 1;
        }
        let head = self.items.get(..end).unwrap_or_default();
        if !head.iter().any(Item::is_solid) {
            return;
        }
        let mut out = String::new();
        let frame = |f: &usize| self.frames.get(*f);
        for f in self.base.iter().filter_map(frame) {
            out.push_str(&f.open);
        }
        for item in head {
            match item {
                Item::Char(c) => match (self.escape)(*c) {
                    Some(entity) => out.push_str(entity),
                    None => out.push(*c),
                },
                Item::Space { .. } => out.push(' '),
                Item::Line(s) | Item::Para(s) => out.push_str(s),
                Item::Open(f) => out.push_str(frame(f).map_or("", |f| &f.open)),
                Item::Close(f) => out.push_str(frame(f).map_or("", |f| &f.close)),
            }
        }
        for f in self.stack_after(head).iter().rev().filter_map(frame) {
            out.push_str(&f.close);
        }
        self.chunks.push(out);
    }
}

/// Whether a cut between `before` and `after` would split a grapheme.
fn joins(before: char, after: Option<char>) -> bool {
    before == '\u{200d}'
        || after.is_some_and(|c| {
            matches!(c,
                '\u{300}'..='\u{36f}'
                | '\u{200c}'..='\u{200d}'
                | '\u{20d0}'..='\u{20ff}'
                | '\u{fe00}'..='\u{fe0f}'
                | '\u{1f3fb}'..='\u{1f3ff}'
                | '\u{e0020}'..='\u{e007f}')
        })
}

#[cfg(test)]
mod tests {
    use super::super::{Frame, Writer};
    use crate::markdown::Key;

    fn plain(_: char) -> Option<&'static str> {
        None
    }

    fn write(w: &mut Writer, text: &str) {
        for c in text.chars() {
            match c {
                ' ' => w.space(false),
                '\n' => w.line(),
                c => w.char(c),
            }
        }
    }

    /// `text`, written plain, in chunks of at most `limit` chars.
    fn chunks(limit: usize, text: &str) -> Vec<String> {
        let mut w = Writer::new(limit, plain);
        write(&mut w, text);
        w.finish()
    }

    #[test]
    fn splits_at_the_last_space_and_trims_it() {
        assert_eq!(chunks(10, "aaaa bbbb cccc"), ["aaaa bbbb", "cccc"]);
    }

    #[test]
    fn closes_and_reopens_frames() {
        let mut w = Writer::new(12, plain);
        let b = w.open(Frame::new(Key::Strong, "**", "**")).unwrap();
        write(&mut w, "aaa bbb ccc");
        w.close(b);
        assert_eq!(w.finish(), ["**aaa bbb**", "**ccc**"]);
    }

    #[test]
    fn an_empty_frame_leaves_nothing() {
        let mut w = Writer::new(100, plain);
        write(&mut w, "a ");
        let b = w.open(Frame::new(Key::Strong, "<b>", "</b>")).unwrap();
        w.close(b);
        assert_eq!(w.finish(), ["a"]);
    }

    #[test]
    fn refuses_markup_over_half_the_limit() {
        let mut w = Writer::new(20, plain);
        assert!(
            w.open(Frame::new(Key::Link, "[", "](http://x.example)"))
                .is_none()
        );
        assert!(w.open(Frame::new(Key::Strong, "**", "**")).is_some());
    }

    #[test]
    fn hard_cut_keeps_a_combining_mark_with_its_base() {
        assert_eq!(chunks(4, "abce\u{301}f"), ["abc", "e\u{301}f"]);
    }

    #[test]
    fn zero_limit_terminates() {
        assert_eq!(chunks(0, "ab c"), ["a", "b", "c"]);
    }

    #[test]
    fn prefers_a_paragraph_break_in_the_second_half() {
        let mut w = Writer::new(20, plain);
        write(&mut w, "aaaaaaaaaaaa");
        w.para();
        write(&mut w, "bb cc dd ee");
        assert_eq!(w.finish(), ["aaaaaaaaaaaa", "bb cc dd ee"]);
    }
}

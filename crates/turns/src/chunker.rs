//! Block streaming for channel delivery (OpenClaw's `EmbeddedBlockChunker` and
//! `chunkMarkdownText`): text deltas go in as a reply streams, whole blocks come out, each
//! ending where a reader would pause; [`coalesce`] merges them into the messages a channel
//! is sent (OpenClaw's block-reply coalescer). A finished reply sent whole is split by the
//! channel adapters' renderers instead, after rendering, where the platform's limit applies.
//!
//! Lengths are `char`s. A block ends, in order of preference, at a paragraph break, a line
//! break, a sentence end (`.!?`, or `。！？` with no space after), a space; only with none of
//! these in reach is it cut at `max_chars` — never inside a `\r\n`, and not before a
//! combining mark, emoji modifier or joiner. No block is cut inside a Markdown code fence
//! (``` or ~~~) if it can be helped: a fence longer than a block is closed at the end of
//! one block, at a line end when there is one, and reopened with its info string at the
//! start of the next. The markers count toward `max_chars`: no block is ever longer.
//!
//! Blocks are lossless: a block keeps the whitespace that ended it (`"…end.\n\n"`), so the
//! blocks' [`Block::source`]s put together are the input. Trim a block before sending it and
//! skip blank ones.
//!
//! The blocks depend only on the text, never on how it was cut into deltas: a block is
//! emitted as soon as the first paragraph break at or past `min_chars` is seen (OpenClaw's
//! chunker emits at whatever break the current delta happens to hold), otherwise once
//! `max_chars` + 2 chars are buffered, at the best break within `max_chars`.

pub mod coalesce;
mod fence;

use fence::{Fence, FenceState, Scan};

pub const DEFAULT_MIN_CHARS: usize = 800;
pub const DEFAULT_MAX_CHARS: usize = 1200;
/// OpenClaw's `textChunkLimit` default for a channel that sets none.
pub const DEFAULT_TEXT_CHUNK_LIMIT: usize = 4000;

/// Chars past `max_chars` that must be seen before a block is cut anywhere but at a paragraph
/// break: whether a cut between two backticks is inside a fence depends on the next char.
const LOOKAHEAD: usize = 2;
/// How far a hard cut backs off to keep a grapheme (combining marks, emoji ZWJ sequences)
/// whole; a longer cluster is cut anyway.
const MAX_CLUSTER_BACKOFF: usize = 8;

/// Block sizes in chars. `max_chars` below 2 counts as 2 (a `\r\n` is never split);
/// `min_chars` is kept between 1 and `max_chars`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChunkerConfig {
    pub min_chars: usize,
    pub max_chars: usize,
}

impl Default for ChunkerConfig {
    fn default() -> Self {
        Self {
            min_chars: DEFAULT_MIN_CHARS,
            max_chars: DEFAULT_MAX_CHARS,
        }
    }
}

impl ChunkerConfig {
    /// This config for a channel taking at most `text_limit` chars per message: `max_chars`
    /// never above the limit, `min_chars` never above `max_chars` (OpenClaw's
    /// `resolveBlockStreamingChunking`).
    #[must_use]
    pub fn capped(self, text_limit: usize) -> Self {
        let max_chars = self.max_chars.min(text_limit).max(1);
        Self {
            min_chars: self.min_chars.min(max_chars),
            max_chars,
        }
    }
}

/// One block: its text, and which parts of it are fence markers the chunker added.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Block {
    text: String,
    /// Bytes at the start reopening a fence the previous block closed.
    reopen_len: usize,
    /// Bytes at the end closing a fence this block had to cut.
    close_len: usize,
}

impl Block {
    fn new(reopen: String, source: &str, close: &str) -> Self {
        let reopen_len = reopen.len();
        let mut text = reopen;
        text.push_str(source);
        text.push_str(close);
        Self {
            text,
            reopen_len,
            close_len: close.len(),
        }
    }

    /// What to send.
    pub fn text(&self) -> &str {
        &self.text
    }

    pub fn into_text(self) -> String {
        self.text
    }

    /// The part of the input this block carries: its text without added fence markers.
    pub fn source(&self) -> &str {
        let end = self.text.len().saturating_sub(self.close_len);
        self.text.get(self.reopen_len..end).unwrap_or_default()
    }

    /// The fence line (and its `\n`) put first because the previous block closed the fence.
    pub fn reopened_fence(&self) -> &str {
        self.text.get(..self.reopen_len).unwrap_or_default()
    }

    /// The closing fence line put last because the fence goes on in the next block.
    pub fn closed_fence(&self) -> &str {
        let start = self.text.len().saturating_sub(self.close_len);
        self.text.get(start..).unwrap_or_default()
    }
}

/// Splits streamed text into blocks for a channel. One chunker per reply (or per text
/// block of a reply, where OpenClaw breaks on `text_end`).
#[derive(Debug, Clone)]
pub struct BlockChunker {
    splitter: Splitter,
    /// Text not yet emitted.
    buf: Vec<char>,
    /// The fence scanner's state at `buf[0]`.
    state: FenceState,
    /// The fence line the next block starts with, when the last one closed a fence.
    reopen: String,
}

impl BlockChunker {
    pub fn new(config: ChunkerConfig) -> Self {
        let max = config.max_chars.max(2);
        let splitter = Splitter {
            min: config.min_chars.clamp(1, max),
            max,
        };
        Self {
            splitter,
            buf: Vec::new(),
            state: FenceState::default(),
            reopen: String::new(),
        }
    }

    /// Adds a delta; returns the blocks it completed.
    pub fn push(&mut self, delta: &str) -> Vec<String> {
        texts(self.push_blocks(delta))
    }

    pub fn push_blocks(&mut self, delta: &str) -> Vec<Block> {
        self.buf.extend(delta.chars());
        self.drain(false)
    }

    /// Ends the text: the blocks still buffered (more than one when the rest is longer than
    /// a block).
    pub fn finish(self) -> Vec<String> {
        texts(self.finish_blocks())
    }

    pub fn finish_blocks(mut self) -> Vec<Block> {
        self.drain(true)
    }

    pub fn has_buffered(&self) -> bool {
        !self.buf.is_empty()
    }

    fn drain(&mut self, complete: bool) -> Vec<Block> {
        let mut blocks = Vec::new();
        loop {
            let reopen_chars = self.reopen.chars().count();
            match self
                .splitter
                .decide(&self.buf, &self.state, reopen_chars, complete)
            {
                Decision::Wait => return blocks,
                Decision::Rest => {
                    if !self.buf.is_empty() {
                        blocks.push(self.take(self.buf.len(), None));
                    }
                    return blocks;
                }
                Decision::Cut { at, split } => blocks.push(self.take(at, split)),
            }
        }
    }

    /// Emits `buf[..at]`: the scanner's state moves on to `at`, the chars leave the buffer.
    fn take(&mut self, at: usize, split: Option<FenceSplit>) -> Block {
        // Never an empty block: a cut at 0 would loop forever.
        let at = at.max(1).min(self.buf.len());
        let mut scratch = Vec::new();
        for (i, &ch) in self.buf.iter().take(at).enumerate() {
            self.state.feed(i as isize, ch, &mut scratch);
        }
        self.state.rebase(at);
        let source: String = self.buf.drain(..at).collect();
        let reopen = std::mem::take(&mut self.reopen);
        let close = match split {
            Some(split) => {
                self.reopen = split.reopen;
                split.close
            }
            None => String::new(),
        };
        Block::new(reopen, &source, &close)
    }
}

fn texts(blocks: Vec<Block>) -> Vec<String> {
    blocks.into_iter().map(Block::into_text).collect()
}

/// Where blocks end: at the first paragraph break past `min` as soon as it is seen, else at
/// the best break in the window.
#[derive(Debug, Clone, Copy)]
struct Splitter {
    min: usize,
    max: usize,
}

enum Decision {
    Wait,
    /// Everything buffered is the last block.
    Rest,
    Cut {
        at: usize,
        split: Option<FenceSplit>,
    },
}

/// Break kinds, least preferred first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Kind {
    Space,
    Sentence,
    Newline,
    Paragraph,
}

/// A cut outside any fence.
#[derive(Debug, Clone, Copy)]
struct SoftCut {
    at: usize,
    kind: Kind,
    /// Decided by the text before `at` and the char at `at` alone, so usable before the
    /// window is complete.
    early: bool,
}

/// A cut at a line end inside a fence, which closes and reopens it.
struct FenceCut {
    at: usize,
    split: FenceSplit,
    /// The next line may be the fence's own closing line: cutting there would leave an empty
    /// reopened fence, so any other line end is better.
    before_closer: bool,
}

#[derive(Debug, Clone)]
struct FenceSplit {
    /// Appended to this block (with a `\n` first when the cut is inside a line); empty when
    /// the block ends on the fence's opening line, too long to close there.
    close: String,
    /// Put before the next block, ending in `\n`.
    reopen: String,
}

impl Splitter {
    /// The next block of `buf` (which a block reopening a fence of `reopen` chars precedes).
    /// In order: the first paragraph break past `min`; the whole rest if the text
    /// is complete and fits; else, once the window is known, the best break in
    /// `min..=max`, a line end inside a fence, a break below `min` (short beats a cut word),
    /// and last a hard cut. Every rule but the first waits for the whole window, so no
    /// decision depends on where a delta ended.
    fn decide(&self, buf: &[char], state: &FenceState, reopen: usize, complete: bool) -> Decision {
        let len = buf.len();
        if len == 0 {
            return if complete {
                Decision::Rest
            } else {
                Decision::Wait
            };
        }
        let room = self.max.saturating_sub(reopen).max(1);
        let min = self.min.saturating_sub(reopen).clamp(1, room);
        // The view below holds `room + LOOKAHEAD + 1` chars: decide only once all of them
        // are here, or a streamed decision could see one char less than the whole text's.
        let window_known = complete || len > room + LOOKAHEAD;
        if !window_known && len <= min {
            return Decision::Wait;
        }
        // Nothing past the window and its lookahead can change a decision: scan only that.
        let view = &buf[..len.min(room + LOOKAHEAD + 1)];
        let scan = Scan::new(state, view);
        let soft: Vec<SoftCut> = soft_cuts(view, room)
            .into_iter()
            .filter(|cut| scan.is_safe(cut.at))
            .collect();
        if let Some(cut) = soft
            .iter()
            .find(|c| c.early && c.kind == Kind::Paragraph && c.at >= min)
        {
            return Decision::Cut {
                at: cut.at,
                split: None,
            };
        }
        if complete && len <= room {
            return Decision::Rest;
        }
        if !window_known {
            return Decision::Wait;
        }
        let plain = |cut: &SoftCut| Decision::Cut {
            at: cut.at,
            split: None,
        };
        let fenced = |cut: FenceCut| Decision::Cut {
            at: cut.at,
            split: Some(cut.split),
        };
        let best = |long: bool| {
            soft.iter()
                .filter(|c| !long || c.at >= min)
                .max_by_key(|c| (c.kind, c.at))
        };
        if let Some(cut) = best(true) {
            return plain(cut);
        }
        let mut fence_cuts = fence_cuts(view, &scan, room, self.max);
        let mut last_fence_cut = |long: bool, before_closer: bool| {
            let i = fence_cuts
                .iter()
                .rposition(|c| (!long || c.at >= min) && c.before_closer == before_closer)?;
            Some(fence_cuts.swap_remove(i))
        };
        if let Some(cut) = last_fence_cut(true, false) {
            return fenced(cut);
        }
        if let Some(cut) = best(false) {
            return plain(cut);
        }
        if let Some(cut) = last_fence_cut(false, false).or_else(|| last_fence_cut(false, true)) {
            return fenced(cut);
        }
        hard_cut(view, &scan, room, self.max)
    }
}

/// No break in reach: cut at the window's end, closing the fence there if it is inside one.
fn hard_cut(buf: &[char], scan: &Scan, room: usize, max: usize) -> Decision {
    let at = back_off(buf, room);
    let Some(span) = scan.span_at(at) else {
        return Decision::Cut { at, split: None };
    };
    let fence = &span.fence;
    let Some(split) = FenceSplit::of(fence, max) else {
        return Decision::Cut { at, split: None };
    };
    // The close line goes on a line of its own, after a `\n`.
    if let Some(budget) = room.checked_sub(fence.close_chars() + 1) {
        let cut = back_off(buf, budget);
        let same_fence = scan.span_at(cut).is_some_and(|s| s.fence.at == fence.at);
        if cut > 0 && same_fence && fence.has_content_before(cut) && !splits_crlf(buf, cut) {
            let close = if buf[cut - 1] == '\n' {
                split.close
            } else {
                format!("\n{}", split.close)
            };
            let split = Some(FenceSplit { close, ..split });
            return Decision::Cut { at: cut, split };
        }
    }
    // No room to close the fence here (its opening line fills the block): this block ends
    // inside it, which renders as code to its end, and the next one reopens it.
    let split = Some(FenceSplit {
        close: String::new(),
        ..split
    });
    Decision::Cut { at, split }
}

/// `at`, moved back off a `\r\n` or the inside of a grapheme where that is cheap.
fn back_off(buf: &[char], limit: usize) -> usize {
    let mut at = limit.min(buf.len());
    if at >= 2 && splits_crlf(buf, at) {
        at -= 1;
    }
    for _ in 0..MAX_CLUSTER_BACKOFF {
        match buf.get(at) {
            Some(&next) if at > 1 && joins(buf, at, next) => at -= 1,
            _ => break,
        }
    }
    at
}

fn splits_crlf(buf: &[char], at: usize) -> bool {
    at >= 1 && buf[at - 1] == '\r' && buf.get(at) == Some(&'\n')
}

/// Whether `buf[at - 1]` and `next` (= `buf[at]`) belong to one grapheme, roughly.
fn joins(buf: &[char], at: usize, next: char) -> bool {
    let prev = buf[at - 1];
    if prev.is_whitespace() || prev.is_control() {
        return false;
    }
    if is_regional(prev) && is_regional(next) {
        // Flags are pairs of regional indicators: inside a pair iff an odd count precedes.
        let before = buf[..at]
            .iter()
            .rev()
            .take_while(|c| is_regional(**c))
            .count();
        return before % 2 == 1;
    }
    prev == '\u{200d}'
        || matches!(next, '\u{200d}' | '\u{fe00}'..='\u{fe0f}' | '\u{1f3fb}'..='\u{1f3ff}'
            | '\u{0300}'..='\u{036f}' | '\u{1ab0}'..='\u{1aff}' | '\u{1dc0}'..='\u{1dff}'
            | '\u{20d0}'..='\u{20ff}' | '\u{fe20}'..='\u{fe2f}' | '\u{3099}' | '\u{309a}'
            | '\u{e0020}'..='\u{e007f}')
}

fn is_regional(ch: char) -> bool {
    matches!(ch, '\u{1f1e6}'..='\u{1f1ff}')
}

/// Whitespace a line may break at; the no-break spaces exist precisely to prevent that.
fn is_break_space(ch: char) -> bool {
    ch.is_whitespace() && !matches!(ch, '\u{a0}' | '\u{2007}' | '\u{202f}')
}

fn is_sentence_end(ch: char) -> bool {
    matches!(ch, '.' | '!' | '?' | '。' | '！' | '？')
}

/// CJK sentence ends, which are not followed by a space.
fn is_fullwidth_end(ch: char) -> bool {
    matches!(ch, '。' | '！' | '？')
}

fn is_closer(ch: char) -> bool {
    matches!(
        ch,
        '"' | '\'' | ')' | ']' | '”' | '’' | '」' | '』' | '）' | '】' | '》'
    )
}

/// Whether the text ending at `end` ends a sentence (`pred` on the last char, or on the one
/// before a closing quote or bracket).
fn ends_with(buf: &[char], end: usize, pred: fn(char) -> bool) -> bool {
    match end {
        0 => false,
        1 => pred(buf[0]),
        _ => pred(buf[end - 1]) || (is_closer(buf[end - 1]) && pred(buf[end - 2])),
    }
}

/// The cuts in `buf[..=room]` at the ends of whitespace runs (the run stays with the block
/// before) and after CJK sentence ends, plus a cut before a run that goes past `room`.
fn soft_cuts(buf: &[char], room: usize) -> Vec<SoftCut> {
    let kind = |start: usize, newlines: usize| match newlines {
        0 if ends_with(buf, start, is_sentence_end) => Kind::Sentence,
        0 => Kind::Space,
        1 => Kind::Newline,
        _ => Kind::Paragraph,
    };
    let mut cuts = Vec::new();
    let (mut run_start, mut newlines) = (0, 0);
    for (i, &ch) in buf.iter().enumerate().take(room + 1) {
        let prev_space = i > 0 && is_break_space(buf[i - 1]);
        if is_break_space(ch) {
            if !prev_space {
                (run_start, newlines) = (i, 0);
            }
            newlines += usize::from(ch == '\n');
        } else if prev_space {
            // A run at the very start would make a blank block.
            if run_start > 0 {
                let kind = kind(run_start, newlines);
                cuts.push(SoftCut {
                    at: i,
                    kind,
                    early: true,
                });
            }
        } else if ends_with(buf, i, is_fullwidth_end) && !is_sentence_end(ch) && !is_closer(ch) {
            let kind = Kind::Sentence;
            cuts.push(SoftCut {
                at: i,
                kind,
                early: true,
            });
        }
    }
    if buf.get(room).is_some_and(|&ch| is_break_space(ch)) {
        let start = buf[..room]
            .iter()
            .rposition(|&ch| !is_break_space(ch))
            .map_or(0, |i| i + 1);
        if start > 0 {
            // Classified by what the lookahead shows of the run, the same however it streamed.
            let stop = buf.len().min(room + LOOKAHEAD);
            let end = (start..stop)
                .find(|&j| !is_break_space(buf[j]))
                .unwrap_or(stop);
            let newlines = buf[start..end].iter().filter(|&&ch| ch == '\n').count();
            let kind = kind(start, newlines);
            cuts.push(SoftCut {
                at: start,
                kind,
                early: false,
            });
        }
    }
    cuts
}

/// Line ends inside fences where a block can stop, close the fence and leave room for it.
fn fence_cuts(buf: &[char], scan: &Scan, room: usize, max: usize) -> Vec<FenceCut> {
    let splits: Vec<Option<FenceSplit>> = scan
        .spans
        .iter()
        .map(|s| FenceSplit::of(&s.fence, max))
        .collect();
    let mut cuts = Vec::new();
    for at in 1..=room.min(buf.len()) {
        if buf[at - 1] != '\n' {
            continue;
        }
        let Some(k) = scan.inside.get(at).copied().flatten() else {
            continue;
        };
        let (fence, Some(split)) = (&scan.spans[k].fence, &splits[k]) else {
            continue;
        };
        if !fence.has_content_before(at) || at + fence.close_chars() > room {
            continue;
        }
        let indent = buf[at..].iter().take(3).take_while(|&&c| c == ' ').count();
        let before_closer = buf.get(at + indent) == Some(&fence.ch);
        cuts.push(FenceCut {
            at,
            split: split.clone(),
            before_closer,
        });
    }
    cuts
}

impl FenceSplit {
    /// The markers for cutting `fence`, if the next block still has room for the reopen
    /// line, a char of the fence and the close line (else the info string is dropped; with
    /// no room even then, the fence is cut without markers).
    fn of(fence: &Fence, max: usize) -> Option<Self> {
        let close = fence.close_line();
        let fits = |reopen: &str| reopen.chars().count() + fence.close_chars() + 2 <= max;
        // Until its line ends, the info string is not known in full.
        let full = format!("{close}{}\n", fence.info);
        let reopen = if fence.open_end.is_some() && fits(&full) {
            full
        } else {
            let bare = format!("{close}\n");
            fits(&bare).then_some(bare)?
        };
        Some(Self { close, reopen })
    }
}

//! Markdown → chunks: the unit the index stores, embeds and returns. Chunks are runs of
//! whole lines of about `max_tokens` tokens with up to `overlap_tokens` of overlap, each
//! carrying the heading path in effect at its first line (`# Projects > ## Pincer`) and
//! its 1-based line range. Lines longer than a whole chunk are cut into pieces at UTF-8
//! character boundaries (so a chunk never holds a broken character).
//!
//! Token counts are an estimate, cheap and model-independent on purpose: a CJK character
//! (Han, kana, Hangul, CJK punctuation and full-width forms) counts as one token, every
//! other character as a quarter token, rounded up per line (English BPE tokenizers give
//! ~4 characters per token; CJK characters are ~1 token each). A line break adds nothing.

use sha2::{Digest, Sha256};

/// How files are cut into chunks. Part of the index's identity: when it changes, every
/// file is chunked again (see [`ChunkSettings::fingerprint`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChunkSettings {
    /// The target size of a chunk, in estimated tokens (OpenClaw: 400).
    pub max_tokens: usize,
    /// How much of the end of a chunk is repeated at the start of the next (OpenClaw: 80).
    pub overlap_tokens: usize,
}

impl Default for ChunkSettings {
    fn default() -> Self {
        Self {
            max_tokens: 400,
            overlap_tokens: 80,
        }
    }
}

impl ChunkSettings {
    /// A string identifying the chunking algorithm and its parameters; stored in the index
    /// so that a change forces a rebuild. Bump the version when the algorithm changes.
    pub fn fingerprint(&self) -> String {
        format!(
            "md-lines-v1/max{}/overlap{}",
            self.max_tokens.max(1),
            self.overlap_tokens
        )
    }
}

/// One chunk of a Markdown file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Chunk {
    /// First line, 1-based.
    pub start_line: usize,
    /// Last line, 1-based, inclusive.
    pub end_line: usize,
    /// The heading path at the first line (`# A > ## B`), empty before any heading.
    pub heading: String,
    /// The chunk's text (its lines joined with `\n`).
    pub text: String,
}

impl Chunk {
    /// The text given to the embedder: the heading path (context the chunk itself may not
    /// repeat) followed by the text.
    pub fn embed_input(&self) -> String {
        embed_input(&self.heading, &self.text)
    }

    /// Hash of [`Chunk::embed_input`], hex: equal inputs share one embedding.
    pub fn hash(&self) -> String {
        sha256_hex(self.embed_input().as_bytes())
    }
}

/// See [`Chunk::embed_input`]; also used for chunks read back from the index.
pub fn embed_input(heading: &str, text: &str) -> String {
    if heading.is_empty() {
        text.to_owned()
    } else {
        format!("{heading}\n{text}")
    }
}

/// Lowercase hex SHA-256.
pub fn sha256_hex(bytes: &[u8]) -> String {
    let digest = Sha256::digest(bytes);
    let mut out = String::with_capacity(64);
    for byte in digest.iter() {
        out.push(char::from(HEX[usize::from(byte >> 4)]));
        out.push(char::from(HEX[usize::from(byte & 0x0f)]));
    }
    out
}

const HEX: &[u8; 16] = b"0123456789abcdef";

/// Whether a character counts as one whole token (see the module doc).
pub fn is_cjk(c: char) -> bool {
    matches!(c as u32,
        0x1100..=0x11FF      // Hangul Jamo
        | 0x2E80..=0x2FDF    // CJK radicals
        | 0x3000..=0x303F    // CJK symbols and punctuation
        | 0x3040..=0x30FF    // Hiragana, Katakana
        | 0x3100..=0x31FF    // Bopomofo, Hangul compatibility, Katakana ext
        | 0x3400..=0x4DBF    // CJK ext A
        | 0x4E00..=0x9FFF    // CJK unified
        | 0xAC00..=0xD7AF    // Hangul syllables
        | 0xF900..=0xFAFF    // CJK compatibility
        | 0xFF00..=0xFFEF    // full-width forms
        | 0x20000..=0x3FFFF) // CJK ext B..
}

/// Estimated tokens of a piece of text (see the module doc).
pub fn estimate_tokens(text: &str) -> usize {
    let (cjk, other) = text.chars().fold((0usize, 0usize), |(cjk, other), c| {
        if is_cjk(c) {
            (cjk + 1, other)
        } else {
            (cjk, other + 1)
        }
    });
    cjk + other.div_ceil(4)
}

/// A piece of one line: whole lines, or parts of a line too long for one chunk.
struct Unit<'a> {
    line: usize,
    text: &'a str,
    tokens: usize,
    /// The heading path in effect at this unit.
    heading: usize,
    /// This unit is a heading line (a good place to start a chunk).
    is_heading: bool,
    blank: bool,
}

/// Cuts Markdown into chunks. A chunk's heading is the path at its first line that is
/// not itself a heading (so a chunk starting `# A`, `## B`, text has `# A > ## B`). Never returns a chunk without non-blank text; every
/// non-blank line is in at least one chunk; a text with no non-blank line gives none.
pub fn chunk_markdown(text: &str, settings: &ChunkSettings) -> Vec<Chunk> {
    let max = settings.max_tokens.max(1);
    // The overlap must leave room for progress; cap it below the chunk size.
    let overlap = settings.overlap_tokens.min(max / 2);
    let (units, headings) = units(text, max);
    let mut chunks = Vec::new();
    let mut start = 0;
    while start < units.len() {
        // Grow the chunk while it fits; always take at least one unit.
        let mut end = start;
        let mut tokens = units[start].tokens;
        let mut cut_at_heading = false;
        while end + 1 < units.len() {
            let next = &units[end + 1];
            // Start a new chunk at a heading once this one is reasonably full, so an edit
            // in one section does not move the boundaries of every later section.
            if next.is_heading && tokens * 2 >= max {
                cut_at_heading = true;
                break;
            }
            if tokens + next.tokens > max {
                break;
            }
            tokens += next.tokens;
            end += 1;
        }
        if let Some(chunk) = make_chunk(&units[start..=end], &headings) {
            chunks.push(chunk);
        }
        if end + 1 >= units.len() {
            break;
        }
        if cut_at_heading {
            start = end + 1;
            continue;
        }
        // Overlap: walk back from the end while the tail fits in `overlap` tokens.
        let mut next_start = end + 1;
        let mut tail = 0;
        while next_start > start + 1 && tail + units[next_start - 1].tokens <= overlap {
            tail += units[next_start - 1].tokens;
            next_start -= 1;
        }
        // The next chunk must reach past this one: drop overlap the next unit has no room
        // beside (otherwise it would repeat this chunk's tail and nothing else).
        while next_start <= end && tail + units[end + 1].tokens > max {
            tail -= units[next_start].tokens;
            next_start += 1;
        }
        start = next_start;
    }
    chunks
}

/// Builds a chunk from units, trimming blank units at both ends; `None` if all are blank.
fn make_chunk(units: &[Unit<'_>], headings: &[String]) -> Option<Chunk> {
    let first = units.iter().position(|u| !u.blank)?;
    let last = units.iter().rposition(|u| !u.blank)?;
    let units = units.get(first..=last)?;
    let head = units.first()?;
    // The heading path of the first content line: a chunk starting `# A`, `## B`, text
    // is about `# A > ## B`.
    let context = units
        .iter()
        .find(|u| !u.is_heading && !u.blank)
        .unwrap_or(head);
    let mut text = String::new();
    let mut prev_line = None;
    for unit in units {
        // Pieces of one long line are joined without a line break.
        if prev_line.is_some() && prev_line != Some(unit.line) {
            text.push('\n');
        }
        text.push_str(unit.text);
        prev_line = Some(unit.line);
    }
    Some(Chunk {
        start_line: head.line,
        end_line: units.last().map_or(head.line, |u| u.line),
        heading: headings.get(context.heading).cloned().unwrap_or_default(),
        text,
    })
}

/// Splits text into units and computes the heading path of each line. Returns the units
/// and the distinct heading paths they index into.
fn units(text: &str, max: usize) -> (Vec<Unit<'_>>, Vec<String>) {
    let mut units = Vec::new();
    let mut headings = vec![String::new()];
    let mut stack: Vec<(usize, String)> = Vec::new();
    let mut fence: Option<(char, usize)> = None;
    for (index, line) in text.lines().enumerate() {
        let line_no = index + 1;
        let mut is_heading = false;
        match fence {
            Some((ch, len)) => {
                if fence_marker(line).is_some_and(|(c, l)| c == ch && l >= len) {
                    fence = None;
                }
            }
            None => {
                if let Some(marker) = fence_marker(line) {
                    fence = Some(marker);
                } else if let Some((level, title)) = heading(line) {
                    stack.retain(|(l, _)| *l < level);
                    stack.push((level, format!("{} {title}", "#".repeat(level))));
                    let path = stack.iter().map(|(_, h)| h.as_str()).collect::<Vec<_>>();
                    headings.push(path.join(" > "));
                    is_heading = true;
                }
            }
        }
        let heading = headings.len() - 1;
        let blank = line.trim().is_empty();
        let tokens = estimate_tokens(line);
        if tokens <= max {
            units.push(Unit {
                line: line_no,
                text: line,
                tokens,
                heading,
                is_heading,
                blank,
            });
            continue;
        }
        for (i, piece) in split_long(line, max).into_iter().enumerate() {
            let tokens = estimate_tokens(piece);
            let is_heading = is_heading && i == 0;
            let blank = piece.trim().is_empty();
            units.push(Unit {
                line: line_no,
                text: piece,
                tokens,
                heading,
                is_heading,
                blank,
            });
        }
    }
    (units, headings)
}

/// Cuts a line into pieces of at most `max` estimated tokens, at character boundaries.
fn split_long(line: &str, max: usize) -> Vec<&str> {
    let mut pieces = Vec::new();
    let (mut start, mut cjk, mut other) = (0usize, 0usize, 0usize);
    for (at, c) in line.char_indices() {
        let (c_cjk, c_other) = if is_cjk(c) {
            (cjk + 1, other)
        } else {
            (cjk, other + 1)
        };
        if c_cjk + c_other.div_ceil(4) > max && at > start {
            pieces.push(&line[start..at]);
            start = at;
            (cjk, other) = if is_cjk(c) { (1, 0) } else { (0, 1) };
        } else {
            (cjk, other) = (c_cjk, c_other);
        }
    }
    if start < line.len() {
        pieces.push(&line[start..]);
    }
    pieces
}

/// A fenced-code marker (```` ``` ```` or `~~~`, at least 3, up to 3 spaces of indent).
fn fence_marker(line: &str) -> Option<(char, usize)> {
    let trimmed = line.trim_start_matches(' ');
    if line.len() - trimmed.len() > 3 {
        return None;
    }
    let ch = trimmed.chars().next().filter(|c| *c == '`' || *c == '~')?;
    let len = trimmed.chars().take_while(|c| *c == ch).count();
    (len >= 3).then_some((ch, len))
}

/// An ATX heading: level and title.
fn heading(line: &str) -> Option<(usize, String)> {
    let trimmed = line.trim_start_matches(' ');
    if line.len() - trimmed.len() > 3 {
        return None;
    }
    let level = trimmed.chars().take_while(|c| *c == '#').count();
    if !(1..=6).contains(&level) {
        return None;
    }
    let rest = &trimmed[level..];
    if !(rest.is_empty() || rest.starts_with([' ', '\t'])) {
        return None;
    }
    let title = rest.trim().trim_end_matches('#').trim_end();
    Some((level, title.to_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headings_make_a_path_and_code_fences_hide_hashes() {
        let text = "# Projects\nintro\n## Pincer\nrust\n```\n# not a heading\n```\n### Memory ##\nfts index\n# Other\nx";
        let chunks = chunk_markdown(
            text,
            &ChunkSettings {
                max_tokens: 4,
                overlap_tokens: 0,
            },
        );
        let at = |line: usize| {
            chunks
                .iter()
                .find(|c| c.start_line <= line && line <= c.end_line)
                .map(|c| c.heading.clone())
        };
        assert_eq!(at(2).as_deref(), Some("# Projects"));
        assert_eq!(at(4).as_deref(), Some("# Projects > ## Pincer"));
        assert_eq!(
            at(9).as_deref(),
            Some("# Projects > ## Pincer > ### Memory")
        );
        assert_eq!(at(11).as_deref(), Some("# Other"));
    }

    #[test]
    fn token_estimate_counts_cjk_whole() {
        assert_eq!(estimate_tokens("记忆系统"), 4);
        assert_eq!(estimate_tokens("abcdefgh"), 2);
        assert_eq!(estimate_tokens("abc记忆"), 3);
        assert_eq!(estimate_tokens(""), 0);
    }

    #[test]
    fn small_file_is_one_chunk_and_blank_file_none() {
        let chunks = chunk_markdown("\n# T\n\nhello\n\n", &ChunkSettings::default());
        assert_eq!(chunks.len(), 1);
        assert_eq!((chunks[0].start_line, chunks[0].end_line), (2, 4));
        assert_eq!(chunks[0].text, "# T\n\nhello");
        assert!(chunk_markdown(" \n\n\t\n", &ChunkSettings::default()).is_empty());
    }

    #[test]
    fn a_huge_line_is_cut_at_char_boundaries() {
        let line = "记".repeat(1000);
        let chunks = chunk_markdown(&line, &ChunkSettings::default());
        assert!(chunks.len() >= 3);
        assert!(chunks.iter().all(|c| c.start_line == 1 && c.end_line == 1));
        assert!(chunks.iter().all(|c| estimate_tokens(&c.text) <= 400));
    }
}

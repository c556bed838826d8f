//! Process output as the model sees it: raw bytes are decoded as UTF-8 (a multi-byte
//! character split across reads is carried over; invalid bytes become U+FFFD), ANSI escape
//! sequences and control characters other than `\n` and `\t` are stripped, and the
//! session keeps a capped buffer (the newest output wins; how much was dropped is counted
//! so poll cursors and log pages stay honest).

/// Most bytes of output a session keeps (the oldest are dropped beyond it).
pub const MAX_OUTPUT_BYTES: usize = 1024 * 1024;
/// Characters of output in a tail (streamed updates, `running` results, list views).
pub const TAIL_CHARS: usize = 2000;
/// Characters of output in an exit notice.
pub const NOTIFY_TAIL_CHARS: usize = 400;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
enum Escape {
    #[default]
    None,
    /// Saw ESC.
    Start,
    /// Inside `ESC [ ... final`.
    Csi,
    /// Inside `ESC ] ... BEL` or `ESC ] ... ESC \`.
    Osc,
    /// Saw ESC inside an OSC (maybe the `ESC \` terminator).
    OscEsc,
}

/// Turns a byte stream into clean text, chunk by chunk.
#[derive(Debug, Default)]
pub struct Sanitizer {
    carry: Vec<u8>,
    escape: Escape,
}

impl Sanitizer {
    /// Clean text for `bytes`; an incomplete UTF-8 sequence at the end waits for the next
    /// chunk.
    pub fn push(&mut self, bytes: &[u8]) -> String {
        let mut data = std::mem::take(&mut self.carry);
        data.extend_from_slice(bytes);
        let mut text = String::with_capacity(data.len());
        let mut rest: &[u8] = &data;
        loop {
            match std::str::from_utf8(rest) {
                Ok(valid) => {
                    self.clean_into(valid, &mut text);
                    break;
                }
                Err(e) => {
                    let (valid, after) = rest.split_at(e.valid_up_to());
                    self.clean_into(&String::from_utf8_lossy(valid), &mut text);
                    match e.error_len() {
                        Some(bad) => {
                            text.push(char::REPLACEMENT_CHARACTER);
                            rest = &after[bad..];
                        }
                        None => {
                            self.carry = after.to_vec();
                            break;
                        }
                    }
                }
            }
        }
        text
    }

    /// Whatever is still carried (an incomplete sequence at end of stream).
    pub fn finish(&mut self) -> String {
        if self.carry.is_empty() {
            String::new()
        } else {
            self.carry.clear();
            char::REPLACEMENT_CHARACTER.to_string()
        }
    }

    fn clean_into(&mut self, input: &str, out: &mut String) {
        for c in input.chars() {
            match self.escape {
                Escape::None => {
                    if c == '\u{1b}' {
                        self.escape = Escape::Start;
                    } else if c == '\n' || c == '\t' || !(c.is_control() || is_format(c)) {
                        out.push(c);
                    }
                }
                Escape::Start => {
                    self.escape = match c {
                        '[' => Escape::Csi,
                        ']' => Escape::Osc,
                        _ => Escape::None,
                    };
                }
                Escape::Csi => {
                    if ('\u{40}'..='\u{7e}').contains(&c) {
                        self.escape = Escape::None;
                    } else if !('\u{20}'..='\u{3f}').contains(&c) {
                        // Not a CSI after all: drop the escape, keep the text.
                        self.escape = Escape::None;
                        if c == '\n' || c == '\t' || !c.is_control() {
                            out.push(c);
                        }
                    }
                }
                Escape::Osc => match c {
                    '\u{7}' | '\n' => self.escape = Escape::None,
                    '\u{1b}' => self.escape = Escape::OscEsc,
                    _ => {}
                },
                Escape::OscEsc => {
                    self.escape = if c == '\\' { Escape::None } else { Escape::Osc };
                }
            }
        }
    }
}

/// Invisible formatting characters (bidi overrides, zero-width joiners, BOM) that could
/// hide text from a reader.
fn is_format(c: char) -> bool {
    matches!(c, '\u{200b}'..='\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{feff}')
}

/// The output a session kept: at most `cap` bytes, oldest dropped first.
#[derive(Debug)]
pub struct OutputBuffer {
    text: String,
    dropped: usize,
    cap: usize,
}

impl OutputBuffer {
    pub fn new(cap: usize) -> Self {
        Self {
            text: String::new(),
            dropped: 0,
            cap: cap.max(TAIL_CHARS * 4),
        }
    }

    pub fn push(&mut self, chunk: &str) {
        self.text.push_str(chunk);
        if self.text.len() > self.cap {
            let cut = ceil_boundary(&self.text, self.text.len() - self.cap);
            self.text.drain(..cut);
            self.dropped += cut;
        }
    }

    /// The kept output.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// Bytes dropped from the front so far.
    pub fn dropped(&self) -> usize {
        self.dropped
    }

    /// Absolute position (bytes ever written) of the end of the output.
    pub fn end(&self) -> usize {
        self.dropped + self.text.len()
    }

    /// Output after absolute position `from`, and how many bytes after `from` were lost.
    pub fn since(&self, from: usize) -> (&str, usize) {
        if from < self.dropped {
            (&self.text, self.dropped - from)
        } else {
            let start = ceil_boundary(&self.text, (from - self.dropped).min(self.text.len()));
            (&self.text[start..], 0)
        }
    }

    /// The last `max_chars` characters.
    pub fn tail(&self, max_chars: usize) -> &str {
        tail_chars(&self.text, max_chars)
    }
}

/// The last `max_chars` characters of `text`.
pub fn tail_chars(text: &str, max_chars: usize) -> &str {
    match text.char_indices().rev().nth(max_chars.saturating_sub(1)) {
        Some((at, _)) if max_chars > 0 => &text[at..],
        _ if max_chars == 0 => "",
        _ => text,
    }
}

/// The smallest char boundary at or after `at`.
fn ceil_boundary(text: &str, mut at: usize) -> usize {
    while at < text.len() && !text.is_char_boundary(at) {
        at += 1;
    }
    at.min(text.len())
}

/// The last lines of `text` within `max_lines` and `max_bytes` (for results the model
/// reads). Returns the kept text and, when something was cut, `(shown, total)` lines.
pub fn tail_lines(
    text: &str,
    max_lines: usize,
    max_bytes: usize,
) -> (String, Option<(usize, usize)>) {
    let body = text.strip_suffix('\n').unwrap_or(text);
    let lines: Vec<&str> = body.split('\n').collect();
    let total = lines.len();
    let mut bytes = 0;
    let mut keep = 0;
    for line in lines.iter().rev() {
        let cost = line.len() + 1;
        if keep >= max_lines || (keep > 0 && bytes + cost > max_bytes) {
            break;
        }
        bytes += cost;
        keep += 1;
    }
    if keep == total {
        return (body.to_owned(), None);
    }
    let kept = lines[total - keep..].join("\n");
    // A single huge line: keep its end.
    let kept = if kept.len() > max_bytes {
        let start = ceil_boundary(&kept, kept.len() - max_bytes);
        kept[start..].to_owned()
    } else {
        kept
    };
    (kept, Some((keep, total)))
}

/// Whitespace runs collapsed to one space, trimmed (exit notices are one line).
pub fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sanitises_bytes() {
        let mut s = Sanitizer::default();
        assert_eq!(
            s.push(b"a\x00b\x07c\r\n\td\x1b[31mred\x1b[0m"),
            "abc\n\tdred"
        );
        // "é" split across reads.
        assert_eq!(s.push(&[b'x', 0xc3]), "x");
        assert_eq!(s.push(&[0xa9, b'y']), "éy");
        assert_eq!(s.push(&[0xff, b'z']), "\u{fffd}z");
        assert_eq!(s.push(b"\x1b]0;title\x07ok"), "ok");
        assert_eq!(s.push(&[0xe2, 0x82]), "");
        assert_eq!(s.finish(), "\u{fffd}");
    }

    #[test]
    fn buffer_drops_oldest_and_tracks_positions() {
        let mut b = OutputBuffer::new(0);
        let cap = TAIL_CHARS * 4;
        b.push(&"a".repeat(cap));
        let mid = b.end();
        b.push("bcd");
        assert_eq!(b.dropped(), 3);
        assert_eq!(b.since(mid), ("bcd", 0));
        assert_eq!(b.since(0).1, 3);
        assert_eq!(b.tail(2), "cd");
        assert_eq!(tail_chars("héllo", 4), "éllo");
        assert_eq!(tail_chars("hi", 5), "hi");
    }

    #[test]
    fn tail_lines_keeps_the_end() {
        assert_eq!(
            tail_lines("a\nb\nc\n", 5, 100),
            ("a\nb\nc".to_owned(), None)
        );
        assert_eq!(
            tail_lines("a\nb\nc", 2, 100),
            ("b\nc".to_owned(), Some((2, 3)))
        );
        assert_eq!(one_line(" a\n b\t c "), "a b c");
    }
}

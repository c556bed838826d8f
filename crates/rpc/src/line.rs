//! Line framing of pi's RPC protocol (JSON lines on stdin/stdout), shared by the worker side
//! (`pincer rpc` reading commands) and the client side (the gateway reading a worker's stdout).
//!
//! Framing follows pi's `attachLfLineReader` (`modes/rpc/jsonl.ts`): split on `\n` only, strip
//! one trailing `\r`; a last line without a newline counts at EOF unless it is empty. Unlike
//! Node's readline, U+2028 / U+2029 do not split a line (pi stopped using readline for that
//! reason, and escapes both when it writes). Two things pi does not do, because the other side
//! is not trusted: a line longer than a limit is dropped and reported once, at its end (memory
//! stays bounded, the lines after it survive, and the reported length is the whole line's
//! whatever chunks it came in), and invalid UTF-8 is an error rather than silently replaced.

use tokio::io::{AsyncBufRead, AsyncBufReadExt};

/// Default longest line, in bytes (without the `\n`, after stripping `\r`). Generous: a
/// `get_messages` answer carries whole transcripts, base64 images included.
pub const MAX_LINE_BYTES: usize = 16 * 1024 * 1024;

/// Why one line could not be returned. The decoder carries on with the next line.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LineError {
    #[error("line is not valid UTF-8")]
    InvalidUtf8,
    /// `len` is the whole line's length in bytes (without its `\n` and a `\r` before it);
    /// only the first bytes up to the limit were ever held in memory.
    #[error("line too long: {len} bytes")]
    TooLong { len: usize },
}

/// Incremental splitter: feed it whatever chunks a pipe gives, get whole lines back.
#[derive(Debug)]
pub struct LineDecoder {
    buf: Vec<u8>,
    max: usize,
    /// Inside an over-long line: its bytes are counted and dropped up to its newline.
    skip: Option<Skip>,
}

/// The part of an over-long line seen so far.
#[derive(Debug, Clone, Copy)]
struct Skip {
    len: usize,
    /// Whether the last byte counted was `\r` (not part of the line if `\n` follows).
    ends_in_cr: bool,
}

impl Skip {
    fn add(&mut self, chunk: &[u8]) {
        self.len = self.len.saturating_add(chunk.len());
        if let Some(&last) = chunk.last() {
            self.ends_in_cr = last == b'\r';
        }
    }

    fn error(self) -> LineError {
        LineError::TooLong {
            len: self.len - usize::from(self.ends_in_cr),
        }
    }
}

impl Default for LineDecoder {
    fn default() -> Self {
        Self::new()
    }
}

impl LineDecoder {
    /// A decoder with the [`MAX_LINE_BYTES`] limit.
    pub fn new() -> Self {
        Self::with_max(MAX_LINE_BYTES)
    }

    /// A decoder whose lines may hold at most `max` bytes.
    pub fn with_max(max: usize) -> Self {
        Self {
            buf: Vec::new(),
            max,
            skip: None,
        }
    }

    /// Bytes of an unfinished line held right now (never more than the limit plus one).
    pub fn buffered(&self) -> usize {
        self.buf.len()
    }

    /// Feeds a chunk; returns every line it completed, in order.
    pub fn push(&mut self, bytes: &[u8]) -> Vec<Result<String, LineError>> {
        let mut out = Vec::new();
        let mut rest = bytes;
        while !rest.is_empty() {
            let newline = rest.iter().position(|&b| b == b'\n');
            let (chunk, tail) = match newline {
                Some(i) => (&rest[..i], &rest[i + 1..]),
                None => (rest, &[][..]),
            };
            rest = tail;
            if let Some(skip) = &mut self.skip {
                skip.add(chunk);
                if newline.is_some() {
                    out.push(Err(skip.error()));
                    self.skip = None;
                }
                continue;
            }
            match newline {
                Some(_) => {
                    if self.buf.is_empty() {
                        out.push(self.finish_line(chunk));
                    } else {
                        let mut line = std::mem::take(&mut self.buf);
                        line.extend_from_slice(chunk);
                        out.push(self.finish_line(&line));
                    }
                }
                None => {
                    // A pending line may hold one byte over the limit: it can still end in
                    // the `\r` of a `\r\n` split across chunks. Past that it cannot fit.
                    if self.buf.len() + chunk.len() > self.max.saturating_add(1) {
                        let mut skip = Skip {
                            len: self.buf.len(),
                            ends_in_cr: false,
                        };
                        skip.add(chunk);
                        self.buf = Vec::new();
                        self.skip = Some(skip);
                    } else {
                        self.buf.extend_from_slice(chunk);
                    }
                }
            }
        }
        out
    }

    /// End of the stream: the last line if it had no newline (an empty one does not count,
    /// as in pi), or the error of an over-long one.
    pub fn finish(self) -> Option<Result<String, LineError>> {
        if let Some(skip) = self.skip {
            return Some(Err(skip.error()));
        }
        if self.buf.is_empty() {
            return None;
        }
        let line = strip_cr(&self.buf);
        if line.is_empty() {
            return None;
        }
        Some(to_line(line, self.max))
    }

    fn finish_line(&self, raw: &[u8]) -> Result<String, LineError> {
        to_line(strip_cr(raw), self.max)
    }
}

fn strip_cr(raw: &[u8]) -> &[u8] {
    raw.strip_suffix(b"\r").unwrap_or(raw)
}

fn to_line(line: &[u8], max: usize) -> Result<String, LineError> {
    if line.len() > max {
        return Err(LineError::TooLong { len: line.len() });
    }
    String::from_utf8(line.to_vec()).map_err(|_| LineError::InvalidUtf8)
}

/// Reads one line from `reader` with exactly the rules and results of [`LineDecoder`]:
/// `Ok(None)` at EOF, `Ok(Some(Err(TooLong)))` for a line over `max` bytes, whose bytes are
/// read and dropped up to its newline (the next call starts on the next line).
///
/// Not cancel-safe: dropping the future mid-line loses that line's bytes. Callers that
/// `select!` on reading should use [`LineDecoder`] over plain reads instead.
pub async fn read_line_limited(
    reader: &mut (impl AsyncBufRead + Unpin),
    max: usize,
) -> std::io::Result<Option<Result<String, LineError>>> {
    let mut line: Vec<u8> = Vec::new();
    let mut skip: Option<Skip> = None;
    loop {
        let available = reader.fill_buf().await?;
        if available.is_empty() {
            // EOF: a last line without its newline.
            if let Some(skip) = skip {
                return Ok(Some(Err(skip.error())));
            }
            let body = strip_cr(&line);
            if body.is_empty() {
                return Ok(None);
            }
            return Ok(Some(to_line(body, max)));
        }
        let (chunk, used, done) = match available.iter().position(|&b| b == b'\n') {
            Some(i) => (&available[..i], i + 1, true),
            None => (available, available.len(), false),
        };
        match &mut skip {
            Some(skip) => skip.add(chunk),
            // Same one-byte allowance as the decoder, for a `\r` before the newline.
            None if line.len() + chunk.len() > max.saturating_add(1) => {
                let mut s = Skip {
                    len: line.len(),
                    ends_in_cr: false,
                };
                s.add(chunk);
                skip = Some(s);
                line = Vec::new();
            }
            None => line.extend_from_slice(chunk),
        }
        reader.consume(used);
        if done {
            if let Some(skip) = skip {
                return Ok(Some(Err(skip.error())));
            }
            return Ok(Some(to_line(strip_cr(&line), max)));
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;
    use proptest::prelude::*;

    fn ok(s: &str) -> Result<String, LineError> {
        Ok(s.to_string())
    }

    #[test]
    fn splits_on_lf_only_and_strips_one_cr() {
        let mut d = LineDecoder::new();
        let lines = d.push("a\r\nb\n\nc\r\r\nd\re\u{2028}f\n".as_bytes());
        assert_eq!(
            lines,
            vec![ok("a"), ok("b"), ok(""), ok("c\r"), ok("d\re\u{2028}f")]
        );
        assert_eq!(d.finish(), None);
    }

    #[test]
    fn lines_across_chunks_and_last_line_at_eof() {
        let mut d = LineDecoder::new();
        assert!(d.push(b"{\"ty").is_empty());
        assert_eq!(d.push(b"pe\":1}\r"), vec![]);
        assert_eq!(d.push(b"\nta"), vec![ok("{\"type\":1}")]);
        assert_eq!(d.push(b"il\r"), vec![]);
        assert_eq!(d.finish(), Some(ok("tail")));
    }

    #[test]
    fn empty_or_bare_cr_last_line_is_dropped() {
        let mut d = LineDecoder::new();
        d.push(b"x\n\r");
        assert_eq!(d.finish(), None);
        assert_eq!(LineDecoder::new().finish(), None);
    }

    #[test]
    fn invalid_utf8_fails_only_that_line() {
        let mut d = LineDecoder::new();
        let lines = d.push(b"ok\n\xff\xfe\nalso ok\n");
        assert_eq!(
            lines,
            vec![ok("ok"), Err(LineError::InvalidUtf8), ok("also ok")]
        );
        let mut d = LineDecoder::new();
        // A multi-byte character split across chunks is fine.
        assert!(d.push("é".as_bytes()[..1].as_ref()).is_empty());
        assert_eq!(
            d.push(&["é".as_bytes()[1..].as_ref(), b"\n"].concat()),
            vec![ok("é")]
        );
        let mut d = LineDecoder::new();
        d.push(b"\xc3");
        assert_eq!(d.finish(), Some(Err(LineError::InvalidUtf8)));
    }

    #[test]
    fn over_long_line_is_reported_once_at_its_end_and_skipped() {
        let mut d = LineDecoder::with_max(4);
        assert_eq!(
            d.push(b"1234\r\n12345\nab"),
            vec![ok("1234"), Err(LineError::TooLong { len: 5 })]
        );
        assert!(d.push(b"cdef").is_empty());
        assert_eq!(d.buffered(), 0);
        assert!(d.push(b"ghijklmnop").is_empty());
        assert!(d.push(b"qr\r").is_empty());
        assert_eq!(
            d.push(b"\nnext\n"),
            vec![Err(LineError::TooLong { len: 18 }), ok("next")]
        );
        // Cut by EOF while skipping.
        d.push(b"0123456789");
        assert_eq!(d.finish(), Some(Err(LineError::TooLong { len: 10 })));
    }

    #[test]
    fn limit_allows_a_cr_split_from_its_newline() {
        let mut d = LineDecoder::with_max(3);
        assert!(d.push(b"abc\r").is_empty());
        assert_eq!(d.push(b"\n"), vec![ok("abc")]);
        assert!(d.push(b"abcd").is_empty());
        assert_eq!(d.push(b"\n"), vec![Err(LineError::TooLong { len: 4 })]);
        let mut d = LineDecoder::with_max(3);
        d.push(b"abcd");
        // At EOF the pending line is longer than the limit even though it never grew past
        // the one-byte allowance.
        assert_eq!(d.finish(), Some(Err(LineError::TooLong { len: 4 })));
    }

    #[test]
    fn zero_limit_accepts_only_empty_lines() {
        let mut d = LineDecoder::with_max(0);
        assert_eq!(
            d.push(b"\n\r\nx\n"),
            vec![ok(""), ok(""), Err(LineError::TooLong { len: 1 })]
        );
    }

    async fn read_all(input: &[u8], max: usize, buf_cap: usize) -> Vec<Result<String, LineError>> {
        let mut reader = tokio::io::BufReader::with_capacity(buf_cap, input);
        let mut out = Vec::new();
        while let Some(line) = read_line_limited(&mut reader, max).await.unwrap() {
            out.push(line);
        }
        out
    }

    #[tokio::test]
    async fn read_line_limited_matches_the_rules() {
        let input = b"a\r\n\n\xff\n0123456789\nlast\r";
        let lines = read_all(input, 4, 3).await;
        assert_eq!(
            lines,
            vec![
                ok("a"),
                ok(""),
                Err(LineError::InvalidUtf8),
                Err(LineError::TooLong { len: 10 }),
                ok("last")
            ]
        );
        assert_eq!(read_all(b"", 4, 3).await, vec![]);
        assert_eq!(read_all(b"x\n\r", 4, 3).await, vec![ok("x")]);
        assert_eq!(read_all(b"abcd\r\n", 4, 2).await, vec![ok("abcd")]);
        assert_eq!(
            read_all(b"abcdefg", 4, 2).await,
            vec![Err(LineError::TooLong { len: 7 })]
        );
    }

    fn decode_all(input: &[u8], cuts: &[usize], max: usize) -> Vec<Result<String, LineError>> {
        let mut d = LineDecoder::with_max(max);
        let mut out = Vec::new();
        let mut start = 0;
        for &cut in cuts {
            let cut = cut.clamp(start, input.len());
            out.extend(d.push(&input[start..cut]));
            start = cut;
        }
        out.extend(d.push(&input[start..]));
        out.extend(d.finish());
        out
    }

    proptest! {
        /// However the stream is cut into chunks, the lines are the same, valid lines come
        /// back exactly, and the buffer never exceeds the limit plus one.
        #[test]
        fn chunking_does_not_matter(
            parts in proptest::collection::vec(
                prop_oneof![
                    Just(b"\n".to_vec()),
                    Just(b"\r\n".to_vec()),
                    Just(b"\r".to_vec()),
                    Just(vec![0xff]),
                    proptest::collection::vec(b'a'..=b'e', 0..12),
                ],
                0..20,
            ),
            mut cuts in proptest::collection::vec(0usize..200, 0..8),
            max in 0usize..10,
        ) {
            let input = parts.concat();
            cuts.sort_unstable();
            let whole = decode_all(&input, &[], max);
            prop_assert_eq!(decode_all(&input, &cuts, max), whole.clone());
            let bytewise: Vec<usize> = (0..input.len()).collect();
            prop_assert_eq!(decode_all(&input, &bytewise, max), whole.clone());
            for line in whole.iter().flatten() {
                prop_assert!(line.len() <= max);
                prop_assert!(!line.contains('\n'));
            }
            let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
            let read = rt.block_on(read_all(&input, max, 3));
            prop_assert_eq!(read, whole.clone());
            // A too-long line's length is the length it would have had.
            // Each `\n`-separated segment gives one line, except an empty last one.
            let segments = input.split(|&b| b == b'\n').map(|l| l.strip_suffix(b"\r").unwrap_or(l).len());
            for (line, want) in whole.iter().zip(segments) {
                if let Err(LineError::TooLong { len }) = line { prop_assert_eq!(*len, want); }
            }
        }
    }
}

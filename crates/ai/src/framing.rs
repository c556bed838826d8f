//! Byte-level framing of streamed HTTP bodies: a line splitter that copes with CR, LF and
//! CRLF split across chunks and with UTF-8 characters split across chunks, plus the SSE
//! event framer and the NDJSON framer built on it; AWS's binary event stream is in
//! [`event_stream`].
//!
//! Hand-written (not a crate) because this is the hottest loop of the LLM layer and the
//! job is small: it reuses its buffers and hands out borrowed events, with size caps so a
//! hostile server cannot make it allocate without bound.

pub mod event_stream;

/// Default cap on one line or one event's data: 16 MiB.
pub const DEFAULT_MAX_EVENT_BYTES: usize = 16 * 1024 * 1024;

/// Why a body could not be framed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FrameError {
    #[error("a line of the stream is longer than {limit} bytes")]
    LineTooLong { limit: usize },
    #[error("an event of the stream is larger than {limit} bytes")]
    EventTooLarge { limit: usize },
    #[error("the stream is not valid UTF-8 (at byte {offset} of a line)")]
    InvalidUtf8 { offset: usize },
}

/// Splits bytes into lines. A line ends at LF, CR or CRLF, even when the CR and the LF
/// arrive in different chunks.
#[derive(Debug)]
pub struct LineSplitter {
    buf: Vec<u8>,
    skip_lf: bool,
    max_line: usize,
}

impl LineSplitter {
    pub fn new(max_line: usize) -> Self {
        Self {
            buf: Vec::new(),
            skip_lf: false,
            max_line,
        }
    }

    /// Feed a chunk; `on_line` gets each complete line (without its terminator).
    pub fn feed<E: From<FrameError>>(
        &mut self,
        mut chunk: &[u8],
        on_line: &mut dyn FnMut(&str) -> Result<(), E>,
    ) -> Result<(), E> {
        // A CR ended the previous chunk: an LF starting this one belongs to it. Decided on
        // the first byte that arrives, whatever it is, so an LF-only chunk cannot leave the
        // flag set and swallow a later blank line (an event boundary).
        if self.skip_lf && !chunk.is_empty() {
            self.skip_lf = false;
            if chunk[0] == b'\n' {
                chunk = &chunk[1..];
            }
        }
        while let Some(end) = chunk.iter().position(|&b| b == b'\n' || b == b'\r') {
            let (line, rest) = chunk.split_at(end);
            let terminator = rest[0];
            chunk = &rest[1..];
            if terminator == b'\r' {
                match chunk.first() {
                    Some(b'\n') => chunk = &chunk[1..],
                    Some(_) => {}
                    None => self.skip_lf = true,
                }
            }
            if self.buf.is_empty() {
                on_line(as_utf8(line)?)?;
            } else {
                self.extend(line)?;
                let buf = std::mem::take(&mut self.buf);
                let result = on_line(as_utf8(&buf)?);
                self.buf = buf;
                self.buf.clear();
                result?;
            }
        }
        Ok(self.extend(chunk)?)
    }

    /// The unterminated last line, if any (call at end of stream).
    pub fn finish<E: From<FrameError>>(
        &mut self,
        on_line: &mut dyn FnMut(&str) -> Result<(), E>,
    ) -> Result<(), E> {
        if self.buf.is_empty() {
            return Ok(());
        }
        let buf = std::mem::take(&mut self.buf);
        on_line(as_utf8(&buf)?)
    }

    fn extend(&mut self, bytes: &[u8]) -> Result<(), FrameError> {
        if self.buf.len() + bytes.len() > self.max_line {
            self.buf.clear();
            return Err(FrameError::LineTooLong {
                limit: self.max_line,
            });
        }
        self.buf.extend_from_slice(bytes);
        Ok(())
    }
}

fn as_utf8(bytes: &[u8]) -> Result<&str, FrameError> {
    std::str::from_utf8(bytes).map_err(|e| FrameError::InvalidUtf8 {
        offset: e.valid_up_to(),
    })
}

/// One server-sent event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SseEvent<'a> {
    /// The `event:` field, or `"message"` when absent.
    pub event: &'a str,
    /// The `data:` lines joined with `\n`.
    pub data: &'a str,
}

/// Frames a body into server-sent events (WHATWG rules: `data:` lines accumulate, a blank
/// line dispatches, `:` lines are comments, one leading space after the colon is dropped).
#[derive(Debug)]
pub struct SseFramer {
    lines: LineSplitter,
    state: SseState,
}

#[derive(Debug, Default)]
struct SseState {
    event: String,
    data: String,
    has_data: bool,
    max_event: usize,
    /// Comment lines seen (keep-alives); exposed for diagnostics.
    comments: u64,
}

impl Default for SseFramer {
    fn default() -> Self {
        Self::new(DEFAULT_MAX_EVENT_BYTES)
    }
}

impl SseFramer {
    pub fn new(max_event_bytes: usize) -> Self {
        Self {
            lines: LineSplitter::new(max_event_bytes),
            state: SseState {
                max_event: max_event_bytes,
                ..SseState::default()
            },
        }
    }

    /// Number of comment (keep-alive) lines seen so far.
    pub fn comments_seen(&self) -> u64 {
        self.state.comments
    }

    /// Feed a chunk; `on_event` gets each complete event.
    pub fn feed<E: From<FrameError>>(
        &mut self,
        chunk: &[u8],
        on_event: &mut dyn FnMut(SseEvent<'_>) -> Result<(), E>,
    ) -> Result<(), E> {
        let state = &mut self.state;
        self.lines
            .feed(chunk, &mut |line| state.line(line, on_event))
    }

    /// End of body: a trailing line and an event whose blank line never came are still
    /// delivered (servers that close right after their last `data:` line lose nothing).
    pub fn finish<E: From<FrameError>>(
        &mut self,
        on_event: &mut dyn FnMut(SseEvent<'_>) -> Result<(), E>,
    ) -> Result<(), E> {
        let state = &mut self.state;
        self.lines.finish(&mut |line| state.line(line, on_event))?;
        state.dispatch(on_event)
    }
}

impl SseState {
    fn line<E: From<FrameError>>(
        &mut self,
        line: &str,
        on_event: &mut dyn FnMut(SseEvent<'_>) -> Result<(), E>,
    ) -> Result<(), E> {
        if line.is_empty() {
            return self.dispatch(on_event);
        }
        if line.starts_with(':') {
            self.comments += 1;
            return Ok(());
        }
        let (field, value) = match line.split_once(':') {
            Some((field, value)) => (field, value.strip_prefix(' ').unwrap_or(value)),
            None => (line, ""),
        };
        match field {
            "data" => {
                if self.data.len() + value.len() + 1 > self.max_event {
                    self.data.clear();
                    self.has_data = false;
                    return Err(FrameError::EventTooLarge {
                        limit: self.max_event,
                    }
                    .into());
                }
                if self.has_data {
                    self.data.push('\n');
                }
                self.data.push_str(value);
                self.has_data = true;
            }
            "event" => {
                self.event.clear();
                self.event.push_str(value);
            }
            // `id` and `retry` only matter for EventSource reconnection, which a one-shot
            // POST stream never does.
            _ => {}
        }
        Ok(())
    }

    fn dispatch<E>(
        &mut self,
        on_event: &mut dyn FnMut(SseEvent<'_>) -> Result<(), E>,
    ) -> Result<(), E> {
        if !self.has_data {
            self.event.clear();
            return Ok(());
        }
        let event = if self.event.is_empty() {
            "message"
        } else {
            self.event.as_str()
        };
        let result = on_event(SseEvent {
            event,
            data: &self.data,
        });
        self.event.clear();
        self.data.clear();
        self.has_data = false;
        result
    }
}

/// Frames a body into newline-delimited JSON documents (blank lines skipped).
#[derive(Debug)]
pub struct NdjsonFramer {
    lines: LineSplitter,
}

impl Default for NdjsonFramer {
    fn default() -> Self {
        Self {
            lines: LineSplitter::new(DEFAULT_MAX_EVENT_BYTES),
        }
    }
}

impl NdjsonFramer {
    pub fn new(max_line_bytes: usize) -> Self {
        Self {
            lines: LineSplitter::new(max_line_bytes),
        }
    }

    pub fn feed<E: From<FrameError>>(
        &mut self,
        chunk: &[u8],
        on_doc: &mut dyn FnMut(&str) -> Result<(), E>,
    ) -> Result<(), E> {
        self.lines.feed(chunk, &mut |line| {
            if line.trim().is_empty() {
                Ok(())
            } else {
                on_doc(line)
            }
        })
    }

    pub fn finish<E: From<FrameError>>(
        &mut self,
        on_doc: &mut dyn FnMut(&str) -> Result<(), E>,
    ) -> Result<(), E> {
        self.lines.finish(&mut |line| {
            if line.trim().is_empty() {
                Ok(())
            } else {
                on_doc(line)
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sse(chunks: &[&[u8]]) -> Result<Vec<(String, String)>, FrameError> {
        let mut framer = SseFramer::default();
        let mut out = Vec::new();
        let mut push = |e: SseEvent<'_>| {
            out.push((e.event.to_owned(), e.data.to_owned()));
            Ok::<(), FrameError>(())
        };
        for chunk in chunks {
            framer.feed(chunk, &mut push)?;
        }
        framer.finish(&mut push)?;
        Ok(out)
    }

    /// An event of the default type, `message`, with this data.
    fn message(data: &str) -> (String, String) {
        ("message".to_owned(), data.to_owned())
    }

    #[test]
    fn sse_fields_comments_and_multiline_data() {
        let out = sse(&[b": keep-alive\r\nevent: ping\r\ndata: {}\r\n\r\ndata:a\ndata: b\n\nid: 3\nretry: 10\ndata\n\n"])
            .unwrap();
        assert_eq!(
            out,
            [
                ("ping".to_owned(), "{}".to_owned()),
                message("a\nb"),
                message(""),
            ]
        );
    }

    #[test]
    fn crlf_split_across_chunks_is_one_terminator() {
        let out = sse(&[b"data: x\r", b"\n\r", b"\ndata: y\r\n\r\n"]).unwrap();
        assert_eq!(out, [message("x"), message("y")]);
    }

    #[test]
    fn lf_alone_in_a_chunk_after_cr_does_not_swallow_the_next_blank_line() {
        // Found by the sse_framer fuzz target.
        let out = sse(&[b"data: x\r", b"\n", b"\ndata: y\n\n"]).unwrap();
        assert_eq!(out, [message("x"), message("y")]);
        let out = sse(&[b"data: x\r", b"", b"\n", b"\r\n", b"data: y\n\n"]).unwrap();
        assert_eq!(out.len(), 2);
    }

    #[test]
    fn bare_cr_terminates_lines() {
        let out = sse(&[b"data: x\r\rdata: y\r\r"]).unwrap();
        assert_eq!(out.len(), 2);
    }

    #[test]
    fn utf8_split_across_chunks_is_reassembled() {
        let text = "data: héllo €\n\n".as_bytes();
        for cut in 0..text.len() {
            let out = sse(&[&text[..cut], &text[cut..]]).unwrap();
            assert_eq!(out, [message("héllo €")], "cut at {cut}");
        }
    }

    #[test]
    fn invalid_utf8_is_an_error_not_a_panic() {
        assert_eq!(
            sse(&[b"data: \xff\xfe\n\n"]),
            Err(FrameError::InvalidUtf8 { offset: 6 })
        );
    }

    #[test]
    fn unterminated_last_event_is_delivered() {
        let out = sse(&[b"data: [DONE]"]).unwrap();
        assert_eq!(out, [message("[DONE]")]);
    }

    #[test]
    fn oversized_lines_and_events_are_errors() {
        let mut framer = SseFramer::new(16);
        let mut ignore = |_: SseEvent<'_>| Ok::<(), FrameError>(());
        assert_eq!(
            framer.feed(&[b'x'; 40], &mut ignore),
            Err(FrameError::LineTooLong { limit: 16 })
        );
        let mut framer = SseFramer::new(16);
        assert_eq!(
            framer.feed(b"data: 0123456789\ndata: 0123456789\n", &mut ignore),
            Err(FrameError::EventTooLarge { limit: 16 })
        );
    }

    #[test]
    fn ndjson_skips_blank_lines() {
        let mut framer = NdjsonFramer::default();
        let mut docs = Vec::new();
        let mut push = |d: &str| {
            docs.push(d.to_owned());
            Ok::<(), FrameError>(())
        };
        framer.feed(b"{\"a\":1}\n\n{\"b\"", &mut push).unwrap();
        framer.feed(b":2}\r\n{\"c\":3}", &mut push).unwrap();
        framer.finish(&mut push).unwrap();
        assert_eq!(docs, ["{\"a\":1}", "{\"b\":2}", "{\"c\":3}"]);
    }

    const TRICKY: &[u8] = b": hi\r\nevent: a\rdata: x\r\n\r\ndata: \xc3\xa9\xe2\x82\xac\n\r\ndata:1\ndata: 2\r\rdata: z\r\n\ndata: [DONE]";

    #[test]
    fn every_three_way_split_gives_the_same_events() {
        let whole = sse(&[TRICKY]);
        assert_eq!(whole.as_ref().map(Vec::len), Ok(5));
        for i in 0..=TRICKY.len() {
            for j in i..=TRICKY.len() {
                let split = sse(&[&TRICKY[..i], &TRICKY[i..j], &TRICKY[j..]]);
                assert_eq!(split, whole, "cuts at {i} and {j}");
            }
        }
    }

    proptest::proptest! {
        #[test]
        fn chunking_never_changes_the_events(cuts in proptest::collection::vec(0usize..200, 0..6)) {
            let body = TRICKY;
            let chunks = crate::test_support::cut_at(body, cuts.into_iter().map(|c| c.min(body.len())));
            proptest::prop_assert_eq!(sse(&chunks), sse(&[body]));
        }
    }
}

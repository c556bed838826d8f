//! The fence scanner of the chunker: OpenClaw's `parseFenceSpans` (`src/markdown/fences.ts`)
//! as a state machine that resumes mid-text, so a block can start inside a fence or a line,
//! and which cut positions fall inside a fence.

/// An open code fence.
#[derive(Debug, Clone)]
pub(super) struct Fence {
    pub(super) ch: char,
    len: usize,
    indent: usize,
    /// The rest of the opening line (its trailing `\r` dropped).
    pub(super) info: String,
    /// Where the marker starts in the buffer (negative: in text already emitted).
    pub(super) at: isize,
    /// Where the opening line's `\n` is, once seen.
    pub(super) open_end: Option<isize>,
}

impl Fence {
    pub(super) fn close_line(&self) -> String {
        let marker: String = std::iter::repeat_n(self.ch, self.len).collect();
        format!("{}{marker}", " ".repeat(self.indent))
    }

    pub(super) fn close_chars(&self) -> usize {
        self.indent + self.len
    }

    /// Whether a cut at `at` leaves a line of the fence's content before it.
    pub(super) fn has_content_before(&self, at: usize) -> bool {
        self.open_end.is_some_and(|end| at as isize >= end + 2)
    }
}

/// Where the scanner is in the current line.
#[derive(Debug, Clone, Copy)]
enum Line {
    /// At the start, after `spaces` of indent (CommonMark allows 3).
    Start {
        spaces: usize,
    },
    /// In a run of backticks or tildes that began at `at`.
    Run {
        ch: char,
        len: usize,
        indent: usize,
        at: isize,
    },
    /// The rest of a line that opened a fence.
    Info,
    /// The rest of a line that closes the fence if nothing but spaces follow.
    Closer,
    Other,
}

/// OpenClaw's `parseFenceSpans` as a state machine, so it can resume mid-text.
#[derive(Debug, Clone)]
pub(super) struct FenceState {
    open: Option<Fence>,
    line: Line,
}

impl Default for FenceState {
    fn default() -> Self {
        Self {
            open: None,
            line: Line::Start { spaces: 0 },
        }
    }
}

/// A fence and where it ends: cuts at `c` with `fence.at < c < end` are inside it.
#[derive(Debug)]
pub(super) struct Span {
    pub(super) fence: Fence,
    end: usize,
}

impl FenceState {
    pub(super) fn feed(&mut self, at: isize, ch: char, spans: &mut Vec<Span>) {
        if let Line::Run {
            ch: marker,
            len,
            indent,
            at: run_at,
        } = self.line
        {
            if ch == marker {
                self.line = Line::Run {
                    ch,
                    len: len + 1,
                    indent,
                    at: run_at,
                };
                return;
            }
            self.settle_run(marker, len, indent, run_at);
        }
        match self.line {
            Line::Start { spaces } => {
                self.line = match ch {
                    ' ' if spaces < 3 => Line::Start { spaces: spaces + 1 },
                    '`' | '~' => Line::Run {
                        ch,
                        len: 1,
                        indent: spaces,
                        at,
                    },
                    '\n' => Line::Start { spaces: 0 },
                    _ => Line::Other,
                };
            }
            Line::Info => {
                if let Some(fence) = &mut self.open {
                    if ch == '\n' {
                        fence.open_end = Some(at);
                        if fence.info.ends_with('\r') {
                            fence.info.pop();
                        }
                    } else {
                        fence.info.push(ch);
                    }
                }
                if ch == '\n' {
                    self.line = Line::Start { spaces: 0 };
                }
            }
            Line::Closer => match ch {
                '\n' => {
                    self.close(at.max(0) as usize, spans);
                    self.line = Line::Start { spaces: 0 };
                }
                ' ' | '\t' | '\r' => {}
                _ => self.line = Line::Other,
            },
            Line::Other | Line::Run { .. } => {
                if ch == '\n' {
                    self.line = Line::Start { spaces: 0 };
                }
            }
        }
    }

    fn settle_run(&mut self, ch: char, len: usize, indent: usize, at: isize) {
        let closes = self.open.as_ref().map(|f| f.ch == ch && len >= f.len);
        self.line = match closes {
            None if len >= 3 => {
                let info = String::new();
                let open_end = None;
                self.open = Some(Fence {
                    ch,
                    len,
                    indent,
                    info,
                    at,
                    open_end,
                });
                Line::Info
            }
            Some(true) => Line::Closer,
            _ => Line::Other,
        };
    }

    fn close(&mut self, end: usize, spans: &mut Vec<Span>) {
        if let Some(fence) = self.open.take() {
            spans.push(Span { fence, end });
        }
    }

    /// Ends the scan at `len` as if the text ended there (OpenClaw parses partial buffers
    /// the same way); only the last two positions can differ from the final answer.
    fn finish(mut self, len: usize, spans: &mut Vec<Span>) {
        if let Line::Run {
            ch,
            len: n,
            indent,
            at,
        } = self.line
        {
            self.settle_run(ch, n, indent, at);
        }
        if let Some(fence) = self.open.take() {
            spans.push(Span { fence, end: len });
        }
    }

    /// Makes positions relative to a buffer that starts `by` chars later.
    pub(super) fn rebase(&mut self, by: usize) {
        let by = by as isize;
        if let Some(fence) = &mut self.open {
            fence.at -= by;
            fence.open_end = fence.open_end.map(|end| end - by);
        }
        if let Line::Run { at, .. } = &mut self.line {
            *at -= by;
        }
    }
}

/// Fence spans of a buffer, and for each cut position the span it is inside of.
pub(super) struct Scan {
    pub(super) spans: Vec<Span>,
    pub(super) inside: Vec<Option<usize>>,
}

impl Scan {
    pub(super) fn new(state: &FenceState, buf: &[char]) -> Self {
        let mut state = state.clone();
        let mut spans = Vec::new();
        for (i, &ch) in buf.iter().enumerate() {
            state.feed(i as isize, ch, &mut spans);
        }
        state.finish(buf.len(), &mut spans);
        let mut inside = vec![None; buf.len() + 1];
        for (k, span) in spans.iter().enumerate() {
            let from = usize::try_from(span.fence.at + 1).unwrap_or(0);
            for slot in inside.iter_mut().take(span.end).skip(from) {
                *slot = Some(k);
            }
        }
        Self { spans, inside }
    }

    pub(super) fn is_safe(&self, at: usize) -> bool {
        self.span_at(at).is_none()
    }

    pub(super) fn span_at(&self, at: usize) -> Option<&Span> {
        let k = self.inside.get(at).copied().flatten()?;
        self.spans.get(k)
    }
}

//! Arbitrary text (a memory file) through the memory chunker: never panics, and every
//! chunk has a sane 1-based line range inside the text, a non-empty text made of the
//! file's content, and chunks come in order.
//!
//! Input: byte 0 picks the chunk size (8..=263 tokens) and byte 1 the overlap; the rest
//! is the file (lossily decoded, as the indexer does).
#![no_main]

use libfuzzer_sys::fuzz_target;
use pincer_memory::{ChunkSettings, chunk_markdown, estimate_tokens};

fuzz_target!(|data: &[u8]| {
    let [size, overlap, body @ ..] = data else {
        return;
    };
    let text = String::from_utf8_lossy(body);
    let settings = ChunkSettings {
        max_tokens: 8 + usize::from(*size),
        overlap_tokens: usize::from(*overlap),
    };
    let _ = estimate_tokens(&text);
    let lines = text.lines().count().max(1);
    let chunks = chunk_markdown(&text, &settings);
    let mut last_start = 0;
    for chunk in &chunks {
        assert!(chunk.start_line >= 1, "{chunk:?}");
        assert!(chunk.start_line <= chunk.end_line, "{chunk:?}");
        assert!(chunk.end_line <= lines, "{chunk:?} of {lines} lines");
        assert!(chunk.start_line >= last_start, "chunks out of order");
        assert!(!chunk.text.trim().is_empty(), "{chunk:?}");
        last_start = chunk.start_line;
    }
});

//! Property tests of the chunker: every non-blank line is covered, chunks are never
//! empty, sizes and overlaps stay bounded, text comes from the source lines.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use pincer_memory::{Chunk, ChunkSettings, chunk_markdown, estimate_tokens};
use proptest::prelude::*;

fn line() -> impl Strategy<Value = String> {
    prop_oneof![
        Just(String::new()),
        Just("   ".to_owned()),
        "#{1,3} [a-z ]{1,20}",
        "[a-zA-Z ,.]{1,120}",
        "[\u{4e00}-\u{4e80}，。]{1,60}",
        "```",
    ]
}

fn long_line() -> impl Strategy<Value = String> {
    prop_oneof![line(), "[a-z]{500,3000}", "[\u{4e00}-\u{4e80}]{300,900}"]
}

fn settings() -> impl Strategy<Value = ChunkSettings> {
    (8usize..200, 0usize..60).prop_map(|(max_tokens, overlap_tokens)| ChunkSettings {
        max_tokens,
        overlap_tokens,
    })
}

/// The first non-blank line of `source` (1-based) that no chunk covers.
fn uncovered(source: &[&str], chunks: &[Chunk]) -> Option<usize> {
    let covered = |line: usize| {
        chunks
            .iter()
            .any(|c| c.start_line <= line && line <= c.end_line)
    };
    (1..=source.len()).find(|&line| !source[line - 1].trim().is_empty() && !covered(line))
}

/// `lines` joined into one text and chunked with `settings`, checked for what every
/// chunking keeps: each non-blank line is covered and no chunk is blank. The text and its
/// chunks.
fn chunk_checked(
    lines: &[String],
    settings: &ChunkSettings,
) -> Result<(String, Vec<Chunk>), TestCaseError> {
    let text = lines.join("\n");
    let source: Vec<&str> = text.lines().collect();
    let chunks = chunk_markdown(&text, settings);
    prop_assert_eq!(uncovered(&source, &chunks), None, "a line no chunk covers");
    for c in &chunks {
        prop_assert!(!c.text.trim().is_empty());
    }
    Ok((text, chunks))
}

proptest! {
    #[test]
    fn chunks_cover_bounded_and_overlap(lines in prop::collection::vec(line(), 0..80), s in settings()) {
        let (text, chunks) = chunk_checked(&lines, &s)?;
        let source: Vec<&str> = text.lines().collect();
        for c in &chunks {
            prop_assert!(c.start_line <= c.end_line && c.end_line <= source.len());
            let lines = &source[c.start_line - 1..c.end_line];
            if lines.iter().all(|l| estimate_tokens(l) <= s.max_tokens.max(1)) {
                prop_assert_eq!(&c.text, &lines.join("\n"));
            } else {
                prop_assert!(lines.join("\n").contains(&c.text));
            }
            let tokens: usize = c.text.lines().map(estimate_tokens).sum();
            prop_assert!(tokens <= s.max_tokens.max(1) || c.start_line == c.end_line, "{} tokens", tokens);
        }
        for pair in chunks.windows(2) {
            // Pieces of one long line share a start line (and may even be equal text).
            prop_assert!(pair[1].start_line >= pair[0].start_line);
            let shared_lines = source.get(pair[1].start_line - 1..pair[0].end_line).unwrap_or(&[]);
            if shared_lines.iter().all(|l| estimate_tokens(l) <= s.max_tokens.max(1)) {
                let shared: usize = shared_lines.iter().map(|l| estimate_tokens(l)).sum();
                prop_assert!(shared <= s.overlap_tokens, "overlap {} > {}", shared, s.overlap_tokens);
            }
        }
    }

    #[test]
    fn long_lines_are_cut_into_bounded_pieces(lines in prop::collection::vec(long_line(), 1..20), s in settings()) {
        let (text, chunks) = chunk_checked(&lines, &s)?;
        let source: Vec<&str> = text.lines().collect();
        for c in &chunks {
            let tokens: usize = c.text.lines().map(estimate_tokens).sum();
            prop_assert!(tokens <= s.max_tokens.max(1), "{} tokens > {}", tokens, s.max_tokens);
            // The text is a piece of the source lines, cut at character boundaries.
            prop_assert!(source[c.start_line - 1..c.end_line].join("\n").contains(&c.text));
        }
    }
}

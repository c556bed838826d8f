//! Arbitrary text through the block chunker, in arbitrary deltas and block sizes, and its
//! blocks through the coalescer: never panics; the blocks without their fence markers put
//! back together are the input; a fence closed at the end of a block is reopened at the
//! start of the next; no block is longer than its limit, markers included; no `\r\n` is
//! split; the blocks do not depend on how the text was cut into deltas; and the coalescer
//! with room for everything gives the input back whole.
//!
//! Input: byte 0 picks min_chars, byte 1 max_chars, byte 2 the delta size; the rest is the
//! text (lossy UTF-8).
#![no_main]

use libfuzzer_sys::fuzz_target;
use pincer_turns::chunker::coalesce::{CoalesceConfig, Coalescer, Piece};
use pincer_turns::chunker::{Block, BlockChunker, ChunkerConfig};

fn check(blocks: &[Block], text: &str, max: usize) {
    let source: String = blocks.iter().map(Block::source).collect();
    assert_eq!(source, text, "blocks lose or add text");
    assert!(blocks.first().is_none_or(|b| b.reopened_fence().is_empty()));
    for (i, block) in blocks.iter().enumerate() {
        assert!(!block.source().is_empty(), "empty block {i}");
        assert!(
            block.text().chars().count() <= max,
            "block {i} over {max} chars"
        );
        let rebuilt = [block.reopened_fence(), block.source(), block.closed_fence()].concat();
        assert_eq!(rebuilt, block.text());
        if let Some(next) = blocks.get(i + 1) {
            if !block.closed_fence().is_empty() {
                assert!(
                    !next.reopened_fence().is_empty(),
                    "fence closed at {i}, not reopened"
                );
            }
            assert!(!(block.source().ends_with('\r') && next.source().starts_with('\n')));
        } else {
            assert!(
                block.closed_fence().is_empty(),
                "the last block closed a fence"
            );
        }
    }
}

fn run(cfg: ChunkerConfig, deltas: &[&str]) -> Vec<Block> {
    let mut chunker = BlockChunker::new(cfg);
    let mut blocks = Vec::new();
    for delta in deltas {
        blocks.extend(chunker.push_blocks(delta));
    }
    blocks.extend(chunker.finish_blocks());
    blocks
}

fuzz_target!(|data: &[u8]| {
    let [min, max, step, rest @ ..] = data else {
        return;
    };
    let text = String::from_utf8_lossy(rest);
    let max_chars = usize::from(*max % 96);
    let cfg = ChunkerConfig {
        min_chars: usize::from(*min) % (max_chars + 1),
        max_chars,
    };
    let limit = max_chars.max(2);

    let whole = run(cfg, &[&text]);
    check(&whole, &text, limit);

    let step = usize::from(*step % 16) + 1;
    let chars: Vec<char> = text.chars().collect();
    let deltas: Vec<String> = chars.chunks(step).map(|c| c.iter().collect()).collect();
    let deltas: Vec<&str> = deltas.iter().map(String::as_str).collect();
    assert_eq!(
        run(cfg, &deltas),
        whole,
        "blocks depend on the deltas (step {step})"
    );

    let mut coalescer = Coalescer::new(CoalesceConfig {
        min_chars: 1,
        max_chars: usize::MAX,
        idle: std::time::Duration::ZERO,
    });
    for block in whole {
        assert!(coalescer.push(Piece::Block(block)).is_empty());
    }
    assert_eq!(coalescer.flush().unwrap_or_default(), text);
});

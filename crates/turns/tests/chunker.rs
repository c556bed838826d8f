//! The block-streaming chunker and `chunk_text` through their public API: break preferences,
//! code fences closed and reopened, CJK, emoji, CRLF, and that blocks never depend on how
//! the text was cut into deltas.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use pincer_turns::chunker::{
    Block, BlockChunker, ChunkerConfig, DEFAULT_MAX_CHARS, DEFAULT_MIN_CHARS, chunk_text,
    chunk_text_blocks,
};
use proptest::prelude::*;

fn config(min_chars: usize, max_chars: usize) -> ChunkerConfig {
    ChunkerConfig {
        min_chars,
        max_chars,
    }
}

/// All blocks of `text` pushed as one delta.
fn blocks(text: &str, cfg: ChunkerConfig) -> Vec<String> {
    let mut chunker = BlockChunker::new(cfg);
    let mut out = chunker.push(text);
    out.extend(chunker.finish());
    out
}

/// All blocks of `text` pushed in the given deltas, as `Block`s.
fn blocks_in_deltas<'a>(
    deltas: impl IntoIterator<Item = &'a str>,
    cfg: ChunkerConfig,
) -> Vec<Block> {
    let mut chunker = BlockChunker::new(cfg);
    let mut out = Vec::new();
    for delta in deltas {
        out.extend(chunker.push_blocks(delta));
    }
    out.extend(chunker.finish_blocks());
    out
}

fn char_deltas(text: &str) -> Vec<String> {
    text.chars().map(String::from).collect()
}

/// Every invariant a block list must hold for `text` and a limit of `max` chars.
fn check_blocks(blocks: &[Block], text: &str, max: usize) {
    let source: String = blocks.iter().map(Block::source).collect();
    assert_eq!(source, text, "blocks lose or add text: {blocks:#?}");
    for (i, block) in blocks.iter().enumerate() {
        assert!(!block.source().is_empty(), "empty block {i}: {blocks:#?}");
        assert!(
            block.text().chars().count() <= max,
            "block {i} over {max} chars: {block:?}"
        );
        let text = format!(
            "{}{}{}",
            block.reopened_fence(),
            block.source(),
            block.closed_fence()
        );
        assert_eq!(text, block.text());
        // A closed fence is reopened next; a reopened one may also follow a block that ended
        // on a fence's opening line, too long to close.
        let closes = !block.closed_fence().is_empty();
        let next_reopens = blocks
            .get(i + 1)
            .is_some_and(|next| !next.reopened_fence().is_empty());
        assert!(
            !closes || next_reopens,
            "unbalanced fence markers at {i}: {blocks:#?}"
        );
        if let Some(next) = blocks.get(i + 1) {
            assert!(
                !(block.source().ends_with('\r') && next.source().starts_with('\n')),
                "a CRLF split between blocks {i} and {}",
                i + 1
            );
        }
    }
    assert!(blocks.first().is_none_or(|b| b.reopened_fence().is_empty()));
}

#[test]
fn paragraph_break_ends_a_block_as_soon_as_it_is_past_min() {
    let text = "First para here.\n\nSecond one is here. And more text follows on.";
    assert_eq!(
        blocks(text, config(10, 30)),
        [
            "First para here.\n\n",
            "Second one is here. ",
            "And more text follows on."
        ]
    );
}

#[test]
fn newline_beats_a_later_sentence_end() {
    let text = "Line one.\nTwo is ok. Three is here and on";
    assert_eq!(
        blocks(text, config(10, 30)),
        ["Line one.\n", "Two is ok. ", "Three is here and on"]
    );
}

#[test]
fn sentence_end_beats_a_later_space() {
    // Spaces later in the window lose to the sentence end.
    let text = "Second one is here. And more text follows on.";
    assert_eq!(
        blocks(text, config(10, 30)),
        ["Second one is here. ", "And more text follows on."]
    );
}

#[test]
fn last_space_in_the_window_when_nothing_better() {
    assert_eq!(
        blocks("alpha beta gamma delta", config(5, 12)),
        ["alpha beta ", "gamma delta"]
    );
}

#[test]
fn hard_cut_at_max_without_any_break() {
    assert_eq!(
        blocks("abcdefghijkl", config(3, 5)),
        ["abcde", "fghij", "kl"]
    );
}

#[test]
fn breaks_before_min_only_when_nothing_is_in_range() {
    // The only break is at 3, below min 6: better than cutting a word.
    assert_eq!(
        blocks("ab abcdefghij", config(6, 8)),
        ["ab ", "abcdefgh", "ij"]
    );
}

#[test]
fn short_text_is_one_block_and_nothing_is_emitted_before_finish() {
    let mut chunker = BlockChunker::new(ChunkerConfig::default());
    assert!(chunker.push("Hello there.\n\nHow are you?").is_empty());
    assert!(chunker.has_buffered());
    assert_eq!(chunker.finish(), ["Hello there.\n\nHow are you?"]);
    assert!(
        BlockChunker::new(ChunkerConfig::default())
            .finish()
            .is_empty()
    );
}

#[test]
fn default_config_is_openclaws() {
    let cfg = ChunkerConfig::default();
    assert_eq!((cfg.min_chars, cfg.max_chars), (800, 1200));
    assert_eq!((DEFAULT_MIN_CHARS, DEFAULT_MAX_CHARS), (800, 1200));
    assert_eq!(cfg.capped(1000), config(800, 1000));
    assert_eq!(cfg.capped(500), config(500, 500));
    assert_eq!(cfg.capped(4000), cfg);
}

#[test]
fn long_reply_with_default_config_breaks_at_the_first_paragraph_past_800() {
    let para = |c: char, n: usize| format!("{}.", c.to_string().repeat(n));
    // Paragraphs of 501 chars + "\n\n": the first break past 800 is after the second.
    let text = [
        para('a', 500),
        para('b', 500),
        para('c', 500),
        para('d', 500),
    ]
    .join("\n\n");
    let out = blocks(&text, ChunkerConfig::default());
    assert_eq!(
        out,
        [
            format!("{}\n\n{}\n\n", para('a', 500), para('b', 500)),
            format!("{}\n\n{}", para('c', 500), para('d', 500)),
        ]
    );
}

#[test]
fn code_fence_longer_than_max_is_closed_and_reopened_at_line_ends() {
    let text = "Intro:\n```rust\nlet a = 1;\nlet b = 2;\nlet c = 3;\nlet d = 4;\n```\nDone.";
    let out = blocks_in_deltas([text], config(10, 30));
    let texts: Vec<&str> = out.iter().map(Block::text).collect();
    assert_eq!(
        texts,
        [
            "Intro:\n```rust\nlet a = 1;\n```",
            "```rust\nlet b = 2;\n```",
            "```rust\nlet c = 3;\n```",
            "```rust\nlet d = 4;\n```\nDone.",
        ]
    );
    assert_eq!(out[0].closed_fence(), "```");
    assert_eq!(out[1].reopened_fence(), "```rust\n");
    assert_eq!(out[3].closed_fence(), "");
    check_blocks(&out, text, 30);
}

#[test]
fn a_single_code_line_longer_than_max_is_cut_inside_the_line() {
    let text = format!("```\n{}\n```", "x".repeat(40));
    let out = blocks_in_deltas([text.as_str()], config(5, 20));
    let texts: Vec<&str> = out.iter().map(Block::text).collect();
    let x12 = "x".repeat(12);
    assert_eq!(
        texts,
        [
            format!("```\n{x12}\n```"),
            format!("```\n{x12}\n```"),
            format!("```\n{x12}\n```"),
            "```\nxxxx\n```".to_owned(),
        ]
    );
    check_blocks(&out, &text, 20);
}

#[test]
fn paragraph_break_inside_a_fence_is_not_a_break() {
    let text = "```\na\n\nb\n```\n\nafter the fence text";
    assert_eq!(
        blocks(text, config(5, 40)),
        ["```\na\n\nb\n```\n\n", "after the fence text"]
    );
}

#[test]
fn tilde_and_indented_fences_reopen_with_their_own_marker() {
    let text = "  ~~~~ py\n  a = 1\n  b = 2\n  c = 3\n  ~~~~\nok";
    let out = blocks_in_deltas([text], config(5, 27));
    let texts: Vec<&str> = out.iter().map(Block::text).collect();
    assert_eq!(
        texts,
        [
            "  ~~~~ py\n  a = 1\n  ~~~~",
            "  ~~~~ py\n  b = 2\n  ~~~~",
            "  ~~~~ py\n  c = 3\n  ~~~~\nok",
        ]
    );
    check_blocks(&out, text, 27);
}

#[test]
fn an_opening_line_longer_than_a_block_is_cut_and_reopened_bare() {
    let text = format!("```{}\n{}```", "i".repeat(20), "aaaa\n".repeat(6));
    let out = blocks_in_deltas([text.as_str()], config(5, 20));
    let texts: Vec<&str> = out.iter().map(Block::text).collect();
    assert_eq!(
        texts,
        [
            format!("```{}", "i".repeat(17)).as_str(),
            "```\niii\naaaa\n```",
            "```\naaaa\naaaa\n```",
            "```\naaaa\naaaa\n```",
            "```\naaaa\n```",
        ]
    );
    assert_eq!(out[0].closed_fence(), "");
    assert_eq!(out[1].reopened_fence(), "```\n");
    check_blocks(&out, &text, 20);
}

#[test]
fn a_fence_opening_at_the_window_edge_is_seen_before_cutting() {
    // The second block has no break and would be cut just after the first backtick of
    // "```": only the third backtick, two chars past the window, shows that the cut is inside
    // a fence, so the next block must reopen it. Streamed char by char, the chunker waits
    // for it.
    let text = format!("ab{}```{}", "\n".repeat(8), "x".repeat(10));
    let second = format!("{}`", "\n".repeat(8));
    let expected = ["ab", second.as_str(), "```\n``xxx", "```\nxxxxx", "```\nxx"];
    assert_eq!(blocks(&text, config(1, 9)), expected);
    let by_char = blocks_in_deltas(char_deltas(&text).iter().map(String::as_str), config(1, 9));
    let by_char: Vec<&str> = by_char.iter().map(Block::text).collect();
    assert_eq!(by_char, expected);
}

#[test]
fn cjk_breaks_after_fullwidth_sentence_ends() {
    let text = "你好世界。今天天气很好。我们去公园吧！好的。";
    assert_eq!(
        blocks(text, config(5, 10)),
        ["你好世界。", "今天天气很好。", "我们去公园吧！好的。"]
    );
    // No punctuation at all: cut by chars, never inside a UTF-8 sequence.
    assert_eq!(
        blocks("一二三四五六七八九十壹贰", config(2, 5)),
        ["一二三四五", "六七八九十", "壹贰"]
    );
}

#[test]
fn emoji_sequences_are_not_cut() {
    assert_eq!(
        blocks("ab👨\u{200d}👩\u{200d}👧cd", config(1, 5)),
        ["ab", "👨\u{200d}👩\u{200d}👧", "cd"]
    );
    assert_eq!(blocks("🇺🇸🇬🇧🇫🇷", config(1, 3)), ["🇺🇸", "🇬🇧", "🇫🇷"]);
    assert_eq!(blocks("abce\u{301}fg", config(1, 4)), ["abc", "e\u{301}fg"]);
}

#[test]
fn crlf_is_never_split() {
    assert_eq!(
        blocks("Para one.\r\n\r\nPara two is longer.", config(5, 20)),
        ["Para one.\r\n\r\n", "Para two is longer."]
    );
    assert_eq!(chunk_text("\r\n\r\n\r\n", 3), ["\r\n", "\r\n", "\r\n"]);
    // A run of whitespace past the window: cut before it, not inside its CRLF.
    assert_eq!(blocks("abc\r\ndef", config(1, 4)), ["abc", "\r\nde", "f"]);
}

#[test]
fn one_char_deltas_give_the_same_blocks_as_one_delta() {
    let mut text = String::new();
    for i in 0..12 {
        text.push_str(&format!("Paragraph {i} says something. "));
        text.push_str(&"word ".repeat(i * 37 % 150));
        text.push_str("end.\n\n");
        if i % 4 == 1 {
            text.push_str("```rust\n");
            for j in 0..(i * 9) {
                text.push_str(&format!("let v{j} = {j}; // 你好 👨\u{200d}👩\u{200d}👧\n"));
            }
            text.push_str("```\n");
        }
        if i % 3 == 0 {
            text.push_str(&"长文本没有空格".repeat(40));
            text.push_str("。\r\n");
        }
    }
    for cfg in [ChunkerConfig::default(), config(40, 90), config(1, 7)] {
        let whole = blocks_in_deltas([text.as_str()], cfg);
        let by_char = blocks_in_deltas(char_deltas(&text).iter().map(String::as_str), cfg);
        assert_eq!(whole, by_char, "config {cfg:?}");
        check_blocks(&whole, &text, cfg.max_chars.max(2));
        assert!(whole.len() > 1);
    }
}

#[test]
fn chunk_text_prefers_the_last_paragraph_break() {
    let text = "aaa bbb.\n\nccc ddd.\n\neee fff ggg hhh";
    assert_eq!(
        chunk_text(text, 30),
        ["aaa bbb.\n\nccc ddd.\n\n", "eee fff ggg hhh"]
    );
    // The streaming chunker sends each paragraph as soon as it is past min.
    assert_eq!(
        blocks(text, config(5, 30)),
        ["aaa bbb.\n\n", "ccc ddd.\n\n", "eee fff ggg hhh"]
    );
}

#[test]
fn chunk_text_for_channel_limits() {
    assert!(chunk_text("", 4096).is_empty());
    assert_eq!(chunk_text("short", 2000), ["short"]);
    let line = format!("{}\n", "word ".repeat(99).trim_end()); // 495 chars
    let text = line.repeat(10);
    let chunks = chunk_text(&text, 2000);
    assert_eq!(chunks, [line.repeat(4), line.repeat(4), line.repeat(2)]);
    let telegram = chunk_text(&"あ".repeat(5000), 4096);
    assert_eq!(telegram, ["あ".repeat(4096), "あ".repeat(904)]);
    check_blocks(&chunk_text_blocks(&text, 2000), &text, 2000);
}

#[test]
fn chunk_text_closes_and_reopens_a_long_fence() {
    let code: String = (0..8).map(|i| format!("line {i}\n")).collect();
    let text = format!("Here:\n```sh\n{code}```");
    let out = chunk_text_blocks(&text, 40);
    let texts: Vec<&str> = out.iter().map(Block::text).collect();
    assert_eq!(
        texts,
        [
            "Here:\n```sh\nline 0\nline 1\nline 2\n```",
            "```sh\nline 3\nline 4\nline 5\nline 6\n```",
            "```sh\nline 7\n```",
        ]
    );
    check_blocks(&out, &text, 40);
}

fn token() -> impl Strategy<Value = &'static str> {
    prop::sample::select(vec![
        "word",
        "longerword",
        " ",
        "  ",
        "\t",
        "\n",
        "\n\n",
        "\r\n",
        "\r",
        ". ",
        "! ",
        "? ",
        "```",
        "```rust\n",
        "```\n",
        "~~~\n",
        "   ```",
        "````",
        "`",
        "~",
        "你好",
        "。",
        "！",
        "」",
        "👨\u{200d}👩\u{200d}👧",
        "e\u{301}",
        "🇺🇸",
        "\u{a0}",
        "(",
        ")",
        "x",
    ])
}

fn text() -> impl Strategy<Value = String> {
    prop::collection::vec(token(), 0..120).prop_map(|tokens| tokens.concat())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn blocks_are_lossless_bounded_and_independent_of_deltas(
        text in text(),
        min in 1usize..40,
        extra in 0usize..60,
        cuts in prop::collection::vec(0usize..400, 0..12),
    ) {
        let cfg = config(min, min + extra);
        let max = cfg.max_chars.max(2);
        let whole = blocks_in_deltas([text.as_str()], cfg);
        check_blocks(&whole, &text, max);

        let chars: Vec<char> = text.chars().collect();
        let mut points: Vec<usize> = cuts.iter().map(|c| c % (chars.len() + 1)).collect();
        points.sort_unstable();
        let mut deltas = Vec::new();
        let mut from = 0;
        for p in points.into_iter().chain([chars.len()]) {
            deltas.push(chars[from..p].iter().collect::<String>());
            from = p;
        }
        let split = blocks_in_deltas(deltas.iter().map(String::as_str), cfg);
        prop_assert_eq!(&whole, &split);
        let by_char = blocks_in_deltas(char_deltas(&text).iter().map(String::as_str), cfg);
        prop_assert_eq!(&whole, &by_char);
    }

    #[test]
    fn chunk_text_is_lossless_and_within_the_limit(text in text(), limit in 0usize..80) {
        let out = chunk_text_blocks(&text, limit);
        check_blocks(&out, &text, limit.max(2));
        if text.chars().count() <= limit.max(2) {
            prop_assert!(out.len() <= 1);
        }
    }
}

/// Found by the fuzzer: a fence opener line whose newline was the one char past the window
/// made a streamed decision differ from the whole text's (the stream decided a char early).
#[test]
fn a_fence_opener_ending_just_past_the_window_cuts_the_same_streamed() {
    let bytes: &[u8] = b"Intro\xff\xff\xff\xb7\xb7\xb7\r\nle ta =\xff\xff\xff\xff\xff\xff\xff\xff....et &b` \n\n\n\n\n\n\n```x#xx\xff\0\0\0\xf0\x9f\xae\0\0\0\0\0\0\0\0\0\x87\xb8\xf0\x9f\n\n\0";
    let text = String::from_utf8_lossy(bytes).into_owned();
    let cfg = config(10, 30);
    let whole = blocks_in_deltas([text.as_str()], cfg);
    let chars: Vec<char> = text.chars().collect();
    for step in 1..=16 {
        let deltas: Vec<String> = chars.chunks(step).map(|c| c.iter().collect()).collect();
        assert_eq!(
            blocks_in_deltas(deltas.iter().map(String::as_str), cfg),
            whole,
            "step {step}"
        );
    }
}

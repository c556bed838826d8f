//! The block-streaming chunker through its public API: break preferences, code fences
//! closed and reopened, CJK, emoji, CRLF, and that blocks never depend on how the text was
//! cut into deltas; and the coalescer that merges blocks into messages, on paused time.

use pincer_turns::chunker::{
    Block, BlockChunker, ChunkerConfig, DEFAULT_MAX_CHARS, DEFAULT_MIN_CHARS,
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

/// The blocks of `text` pushed as one delta, once they hold every invariant for `max`.
fn checked_blocks(text: &str, min: usize, max: usize) -> Vec<Block> {
    let out = blocks_in_deltas([text], config(min, max));
    check_blocks(&out, text, max);
    out
}

/// What each block sends, fence markers included.
fn texts(blocks: &[Block]) -> Vec<&str> {
    blocks.iter().map(Block::text).collect()
}

/// Each block's fence markers: the fence it reopens, the fence it closes.
fn markers(blocks: &[Block]) -> Vec<(&str, &str)> {
    blocks
        .iter()
        .map(|b| (b.reopened_fence(), b.closed_fence()))
        .collect()
}

/// Where text pushed as one delta breaks: `(text, (min, max), blocks)`.
#[test]
fn one_delta_breaks_where_openclaws_chunker_breaks() {
    let cases: &[(&str, (usize, usize), &[&str])] = &[
        // A paragraph break ends a block as soon as it is past min.
        (
            "First para here.\n\nSecond one is here. And more text follows on.",
            (10, 30),
            &[
                "First para here.\n\n",
                "Second one is here. ",
                "And more text follows on.",
            ],
        ),
        // A newline beats a later sentence end.
        (
            "Line one.\nTwo is ok. Three is here and on",
            (10, 30),
            &["Line one.\n", "Two is ok. ", "Three is here and on"],
        ),
        // A sentence end beats spaces later in the window.
        (
            "Second one is here. And more text follows on.",
            (10, 30),
            &["Second one is here. ", "And more text follows on."],
        ),
        // The last space in the window when nothing is better.
        (
            "alpha beta gamma delta",
            (5, 12),
            &["alpha beta ", "gamma delta"],
        ),
        // A hard cut at max without any break.
        ("abcdefghijkl", (3, 5), &["abcde", "fghij", "kl"]),
        // The only break is at 3, below min 6: better than cutting a word.
        ("ab abcdefghij", (6, 8), &["ab ", "abcdefgh", "ij"]),
        // A paragraph break inside a fence is not a break.
        (
            "```\na\n\nb\n```\n\nafter the fence text",
            (5, 40),
            &["```\na\n\nb\n```\n\n", "after the fence text"],
        ),
        // CJK breaks after fullwidth sentence ends.
        (
            "你好世界。今天天气很好。我们去公园吧！好的。",
            (5, 10),
            &["你好世界。", "今天天气很好。", "我们去公园吧！好的。"],
        ),
        // No punctuation at all: cut by chars, never inside a UTF-8 sequence.
        (
            "一二三四五六七八九十壹贰",
            (2, 5),
            &["一二三四五", "六七八九十", "壹贰"],
        ),
        // Emoji sequences are not cut.
        (
            "ab👨\u{200d}👩\u{200d}👧cd",
            (1, 5),
            &["ab", "👨\u{200d}👩\u{200d}👧", "cd"],
        ),
        ("🇺🇸🇬🇧🇫🇷", (1, 3), &["🇺🇸", "🇬🇧", "🇫🇷"]),
        ("abce\u{301}fg", (1, 4), &["abc", "e\u{301}fg"]),
        // CRLF is never split.
        (
            "Para one.\r\n\r\nPara two is longer.",
            (5, 20),
            &["Para one.\r\n\r\n", "Para two is longer."],
        ),
        ("\r\n\r\n\r\n", (1, 3), &["\r\n", "\r\n", "\r\n"]),
        // A run of whitespace past the window: cut before it, not inside its CRLF.
        ("abc\r\ndef", (1, 4), &["abc", "\r\nde", "f"]),
    ];
    for (text, (min, max), want) in cases {
        assert_eq!(
            blocks(text, config(*min, *max)),
            *want,
            "{text:?} in {min}..={max}"
        );
    }
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
    let out = checked_blocks(text, 10, 30);
    assert_eq!(
        texts(&out),
        [
            "Intro:\n```rust\nlet a = 1;\n```",
            "```rust\nlet b = 2;\n```",
            "```rust\nlet c = 3;\n```",
            "```rust\nlet d = 4;\n```\nDone.",
        ]
    );
    assert_eq!(
        markers(&out),
        [
            ("", "```"),
            ("```rust\n", "```"),
            ("```rust\n", "```"),
            ("```rust\n", ""),
        ]
    );
}

#[test]
fn a_single_code_line_longer_than_max_is_cut_inside_the_line() {
    let text = format!("```\n{}\n```", "x".repeat(40));
    let x12 = "x".repeat(12);
    assert_eq!(
        texts(&checked_blocks(&text, 5, 20)),
        [
            format!("```\n{x12}\n```"),
            format!("```\n{x12}\n```"),
            format!("```\n{x12}\n```"),
            "```\nxxxx\n```".to_owned(),
        ]
    );
}

#[test]
fn tilde_and_indented_fences_reopen_with_their_own_marker() {
    let text = "  ~~~~ py\n  a = 1\n  b = 2\n  c = 3\n  ~~~~\nok";
    assert_eq!(
        texts(&checked_blocks(text, 5, 27)),
        [
            "  ~~~~ py\n  a = 1\n  ~~~~",
            "  ~~~~ py\n  b = 2\n  ~~~~",
            "  ~~~~ py\n  c = 3\n  ~~~~\nok",
        ]
    );
}

#[test]
fn an_opening_line_longer_than_a_block_is_cut_and_reopened_bare() {
    let text = format!("```{}\n{}```", "i".repeat(20), "aaaa\n".repeat(6));
    let out = checked_blocks(&text, 5, 20);
    assert_eq!(
        texts(&out),
        [
            format!("```{}", "i".repeat(17)).as_str(),
            "```\niii\naaaa\n```",
            "```\naaaa\naaaa\n```",
            "```\naaaa\naaaa\n```",
            "```\naaaa\n```",
        ]
    );
    assert_eq!(
        markers(&out),
        [
            ("", ""),
            ("```\n", "```"),
            ("```\n", "```"),
            ("```\n", "```"),
            ("```\n", ""),
        ]
    );
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
    assert_eq!(texts(&by_char), expected);
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

mod coalescing {
    use std::time::Duration;

    use pincer_turns::chunker::coalesce::{CoalesceConfig, Coalescer, Piece, coalesce};
    use tokio::sync::mpsc;
    use tokio::time::Instant;

    use super::*;
    use Step::{At, Done, EndReply, Quiet, Send, Sent, Wait};

    /// `text` as one block, as the chunker makes it.
    fn one_block(text: &str) -> Block {
        let mut chunker = BlockChunker::new(config(100_000, 100_000));
        let mut out = chunker.push_blocks(text);
        out.extend(chunker.finish_blocks());
        assert_eq!(out.len(), 1);
        out.remove(0)
    }

    fn piece(text: &str) -> Piece {
        Piece::Block(one_block(text))
    }

    fn coalesce_config(min_chars: usize, max_chars: usize, idle_ms: u64) -> CoalesceConfig {
        CoalesceConfig {
            min_chars,
            max_chars,
            idle: Duration::from_millis(idle_ms),
        }
    }

    /// One step of a timed stage's script, on paused time.
    enum Step {
        /// Sends this text as one block.
        Send(&'static str),
        /// Lets this many ms pass.
        Wait(u64),
        /// Nothing has been sent yet.
        Quiet,
        /// Ends the reply: the pieces' sender is dropped.
        EndReply,
        /// The next message is this text.
        Sent(&'static str),
        /// This many ms have passed since the stage started.
        At(u64),
        /// The stage is done: no more messages.
        Done,
    }

    /// Runs the timed stage on its own task through `steps`; `name` says which script failed.
    async fn run_stage(name: &str, config: CoalesceConfig, steps: &[Step]) {
        let (tx, pieces) = mpsc::channel(16);
        let (out, mut rx) = mpsc::channel(16);
        tokio::spawn(coalesce(config, pieces, out));
        let start = Instant::now();
        let mut tx = Some(tx);
        for step in steps {
            match step {
                Step::Send(text) => {
                    let sender = tx.as_ref().expect("the reply has not ended");
                    sender.send(piece(text)).await.unwrap();
                }
                Step::Wait(ms) => tokio::time::sleep(Duration::from_millis(*ms)).await,
                Step::Quiet => assert_eq!(
                    rx.try_recv(),
                    Err(mpsc::error::TryRecvError::Empty),
                    "{name}"
                ),
                Step::EndReply => tx = None,
                Step::Sent(text) => {
                    assert_eq!(rx.recv().await.as_deref(), Some(*text), "{name}");
                }
                Step::At(ms) => {
                    assert_eq!(start.elapsed(), Duration::from_millis(*ms), "{name}");
                }
                Step::Done => assert_eq!(rx.recv().await, None, "{name}"),
            }
        }
    }

    #[test]
    fn openclaws_defaults() {
        let cfg = CoalesceConfig::default();
        assert_eq!(
            (cfg.min_chars, cfg.max_chars, cfg.idle),
            (800, 4000, Duration::from_millis(1000))
        );
    }

    #[test]
    fn gathered_text_goes_when_the_next_block_would_not_fit() {
        let mut c = Coalescer::new(coalesce_config(1, 30, 0));
        assert!(c.push(piece("Twenty chars of it. ")).is_empty());
        assert_eq!(c.push(piece("Fifteen chars.")), ["Twenty chars of it. "]);
        assert_eq!(c.flush().as_deref(), Some("Fifteen chars."));
        assert_eq!(c.flush(), None);
    }

    #[test]
    fn a_block_as_long_as_max_goes_alone_and_at_once() {
        let mut c = Coalescer::new(coalesce_config(1, 30, 0));
        assert!(c.push(piece("Short. ")).is_empty());
        let long = "x".repeat(30);
        assert_eq!(c.push(piece(&long)), ["Short. ".to_owned(), long.clone()]);
        assert!(!c.has_buffered());
        assert_eq!(c.push(piece(&long)), [long]);
    }

    #[test]
    fn gathered_text_reaching_max_goes_at_once() {
        let mut c = Coalescer::new(coalesce_config(1, 20, 0));
        assert!(c.push(piece("0123456789")).is_empty());
        assert_eq!(c.push(piece("abcdefghij")), ["0123456789abcdefghij"]);
        assert!(!c.has_buffered());
    }

    #[test]
    fn texts_are_joined_by_a_blank_line_and_blocks_of_one_text_losslessly() {
        let mut c = Coalescer::new(coalesce_config(1, 1000, 0));
        assert!(c.push(piece("First para.\n\n")).is_empty());
        assert!(c.push(piece("Second, same text.  ")).is_empty());
        assert!(c.push(Piece::TextEnd).is_empty());
        assert!(c.push(piece("Next message.")).is_empty());
        assert_eq!(
            c.flush().as_deref(),
            Some("First para.\n\nSecond, same text.\n\nNext message.")
        );
    }

    #[test]
    fn a_fence_the_chunker_cut_is_whole_again_once_merged() {
        let text = "Intro:\n```rust\nlet a = 1;\nlet b = 2;\nlet c = 3;\n```\nDone.";
        let blocks = blocks_in_deltas([text], config(10, 30));
        assert_eq!(blocks.len(), 3, "{blocks:#?}");
        let mut c = Coalescer::new(coalesce_config(1, 1000, 0));
        for block in blocks.clone() {
            assert!(c.push(Piece::Block(block)).is_empty());
        }
        assert_eq!(c.flush().as_deref(), Some(text));

        // With room for two blocks, each message still has its fence closed and reopened.
        let mut c = Coalescer::new(coalesce_config(1, 45, 0));
        let mut sent = Vec::new();
        for block in blocks {
            sent.extend(c.push(Piece::Block(block)));
        }
        sent.extend(c.flush());
        assert_eq!(
            sent,
            [
                "Intro:\n```rust\nlet a = 1;\nlet b = 2;\n```",
                "```rust\nlet c = 3;\n```\nDone.",
            ]
        );
    }

    /// Each script on a stage of its own: `(what it shows, config, steps)`.
    #[tokio::test(start_paused = true)]
    async fn timing_follows_size_idle_and_the_end_of_the_reply() {
        let scripts: [(&str, CoalesceConfig, &[Step]); 4] = [
            (
                "text past min goes after idle",
                coalesce_config(10, 1000, 1000),
                &[
                    Send("Long enough to send."),
                    Sent("Long enough to send."),
                    At(1000),
                ],
            ),
            (
                "each block restarts the idle clock",
                coalesce_config(10, 1000, 1000),
                &[
                    Send("Long enough to send. "),
                    Wait(600),
                    Send("And more."),
                    Sent("Long enough to send. And more."),
                    At(1600),
                ],
            ),
            (
                "text below min waits for the end of the reply",
                coalesce_config(50, 1000, 1000),
                &[
                    Send("Short."),
                    Wait(10_000),
                    Quiet,
                    EndReply,
                    Sent("Short."),
                    At(10_000),
                    Done,
                ],
            ),
            (
                "idle zero waits for size alone",
                coalesce_config(1, 20, 0),
                &[
                    Send("0123456789"),
                    Wait(60_000),
                    Quiet,
                    Send("abcdefghijk"),
                    Sent("0123456789"),
                    At(60_000),
                    EndReply,
                    Sent("abcdefghijk"),
                    Done,
                ],
            ),
        ];
        for (name, config, steps) in scripts {
            run_stage(name, config, steps).await;
        }
    }
}

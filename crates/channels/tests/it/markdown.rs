//! The Markdown renderers end to end: exact output per flavor for each construct, escaping,
//! splitting (at spaces, in code blocks, across bold, hard cuts, CJK), and a property test
//! of the invariants every chunk keeps.

use pincer_channels::markdown::{Flavor, escape_telegram_html, render_chunks, telegram_html_text};
use proptest::prelude::*;

const ALL: [Flavor; 4] = [
    Flavor::TelegramHtml,
    Flavor::DiscordMarkdown,
    Flavor::SlackMrkdwn,
    Flavor::FeishuMarkdown,
];

/// The whole rendering, in one chunk.
fn one(markdown: &str, flavor: Flavor) -> String {
    let chunks = render_chunks(markdown, flavor, usize::MAX);
    assert_eq!(chunks.len(), 1, "{chunks:?}");
    chunks.into_iter().next().unwrap()
}

fn tg(markdown: &str) -> String {
    one(markdown, Flavor::TelegramHtml)
}

fn discord(markdown: &str) -> String {
    one(markdown, Flavor::DiscordMarkdown)
}

fn slack(markdown: &str) -> String {
    one(markdown, Flavor::SlackMrkdwn)
}

fn feishu(markdown: &str) -> String {
    one(markdown, Flavor::FeishuMarkdown)
}

/// One flavor's whole rendering: [`tg`], [`discord`], [`slack`] or [`feishu`].
type Render = fn(&str) -> String;

fn chars(s: &str) -> usize {
    s.chars().count()
}

/// Checks that Telegram HTML uses only the tags this emits, balanced, with `<` only
/// starting a tag and `&` only starting an entity.
fn check_telegram_html(html: &str) {
    let mut stack: Vec<String> = Vec::new();
    let mut rest = html;
    while let Some(i) = rest.find(['<', '&']) {
        let tail = &rest[i..];
        if let Some(after) = tail.strip_prefix('&') {
            assert!(
                ["&amp;", "&lt;", "&gt;", "&quot;"]
                    .iter()
                    .any(|e| tail.starts_with(e)),
                "bare & in {html:?}"
            );
            rest = after;
            continue;
        }
        let end = tail.find('>').expect("unterminated tag");
        let tag = &tail[1..end];
        assert!(!tag.contains('<'), "< inside a tag in {html:?}");
        if let Some(name) = tag.strip_prefix('/') {
            assert_eq!(stack.pop().as_deref(), Some(name), "unbalanced in {html:?}");
        } else {
            let name = tag.split(' ').next().unwrap();
            assert!(
                ["b", "i", "s", "code", "pre", "a", "blockquote"].contains(&name),
                "tag {name} in {html:?}"
            );
            if name == "a" {
                assert!(tag.starts_with("a href=\"") && tag.ends_with('"'));
                assert_eq!(tag.matches('"').count(), 2);
            }
            stack.push(name.to_owned());
        }
        rest = &tail[end + 1..];
    }
    assert!(stack.is_empty(), "unclosed {stack:?} in {html:?}");
}

/// Asserts the whole rendering of `markdown` in each flavor: Telegram, Discord, Slack,
/// Feishu.
#[track_caller]
fn each(markdown: &str, expected: [&str; 4]) {
    for (flavor, expected) in ALL.into_iter().zip(expected) {
        assert_eq!(
            one(markdown, flavor),
            expected,
            "{flavor:?} of {markdown:?}"
        );
    }
}

// ---- each construct, per flavor ----

/// Each construct's whole rendering in Telegram, Discord, Slack and Feishu.
#[test]
fn each_construct_in_each_flavor() {
    let cases: [(&str, [&str; 4]); 11] = [
        // Inline formatting.
        (
            "**b** *i* ~~s~~ `c` [t](https://x.io/?a=1&b=\"2\")",
            [
                "<b>b</b> <i>i</i> <s>s</s> <code>c</code> \
                 <a href=\"https://x.io/?a=1&amp;b=&quot;2&quot;\">t</a>",
                "**b** *i* ~~s~~ `c` [t](https://x.io/?a=1&b=\"2\")",
                "*b* _i_ ~s~ `c` <https://x.io/?a=1&amp;b=\"2\"|t>",
                "**b** *i* ~~s~~ `c` [t](https://x.io/?a=1&b=\"2\")",
            ],
        ),
        // Code blocks.
        (
            "text\n\n```rust\nfn main() {\n    let x = a < b && c;\n}\n```\n\nafter",
            [
                "text\n\n<pre><code class=\"language-rust\">fn main() {\n    \
                 let x = a &lt; b &amp;&amp; c;\n}</code></pre>\n\nafter",
                "text\n\n```rust\nfn main() {\n    let x = a < b && c;\n}\n```\n\nafter",
                "text\n\n```\nfn main() {\n    let x = a &lt; b &amp;&amp; c;\n}\n```\n\nafter",
                "text\n\n```rust\nfn main() {\n    let x = a < b && c;\n}\n```\n\nafter",
            ],
        ),
        // Nested spans keep one of a kind: a heading is already bold.
        (
            "# Title **bold**",
            [
                "<b>Title bold</b>",
                "# Title **bold**",
                "*Title bold*",
                "**Title bold**",
            ],
        ),
        // Links a platform cannot open become text.
        (
            "[t](ftp://x.io/f) [m](mailto:a@b.c)",
            [
                "t (ftp://x.io/f) <a href=\"mailto:a@b.c\">m</a>",
                "t (ftp://x.io/f) m (mailto:a@b.c)",
                "t (ftp://x.io/f) <mailto:a@b.c|m>",
                "t (ftp://x.io/f) m (mailto:a@b.c)",
            ],
        ),
        // Headings.
        (
            "# One\n\n## Two\n\n#### Four\n\ntext",
            [
                "<b>One</b>\n\n<b>Two</b>\n\n<b>Four</b>\n\ntext",
                "# One\n\n## Two\n\n### Four\n\ntext",
                "*One*\n\n*Two*\n\n*Four*\n\ntext",
                "**One**\n\n**Two**\n\n**Four**\n\ntext",
            ],
        ),
        // Nested lists.
        (
            "intro\n\n- a\n- b **bold**\n  - c\n    - d\n- e\n\nafter",
            [
                "intro\n\n• a\n• b <b>bold</b>\n  • c\n    • d\n• e\n\nafter",
                "intro\n\n- a\n- b **bold**\n  - c\n    - d\n- e\n\nafter",
                "intro\n\n• a\n• b *bold*\n  • c\n    • d\n• e\n\nafter",
                "intro\n\n- a\n- b **bold**\n  - c\n    - d\n- e\n\nafter",
            ],
        ),
        // Ordered lists count from their start.
        (
            "7. a\n8. b\n   - x",
            [
                "7. a\n8. b\n  • x",
                "7. a\n8. b\n  - x",
                "7. a\n8. b\n  • x",
                "7. a\n8. b\n  - x",
            ],
        ),
        // Quotes.
        (
            "> quoted **b**\n> more\n>\n> second\n\nafter",
            [
                "<blockquote>quoted <b>b</b>\nmore\n\nsecond</blockquote>\n\nafter",
                "> quoted **b**\n> more\n> \n> second\n\nafter",
                "> quoted *b*\n> more\n> \n> second\n\nafter",
                "> quoted **b**\n> more\n> \n> second\n\nafter",
            ],
        ),
        // The same in every flavor: ordered lists renumbered, images as alt text and URL,
        // rules.
        ("1. a\n1. b\n1. c", ["1. a\n2. b\n3. c"; 4]),
        (
            "![a *cat*](https://x.io/c.png)",
            ["a cat (https://x.io/c.png)"; 4],
        ),
        ("a\n\n---\n\nb", ["a\n\n———\n\nb"; 4]),
    ];
    for (markdown, expected) in cases {
        each(markdown, expected);
    }
}

/// Constructs whose rendering matters in one flavor: each case is the flavor's renderer, the
/// Markdown, and its whole rendering.
#[test]
fn each_construct_in_one_flavor() {
    // The short cases first, then those rustfmt spreads over lines.
    let cases: [(Render, &str, &str); 20] = [
        // Nested spans keep one of a kind.
        (tg, "**a *b* c**", "<b>a <i>b</i> c</b>"),
        (slack, "*a **b** c*", "_a *b* c_"),
        // Inline code with backticks gets a longer fence.
        (discord, "``a`b``", "``a`b``"),
        (discord, "`` `x` ``", "`` `x` ``"),
        // Links a platform cannot open become text.
        (tg, "[js](javascript:alert(1))", "js (javascript:alert(1))"),
        (tg, "see <https://x.io>", "see https://x.io"),
        // An image without alt text is its URL.
        (tg, "![](https://x.io/c.png)", "https://x.io/c.png"),
        // Loose list items keep their paragraphs.
        (tg, "- one\n\n  more\n- two", "• one\n\n  more\n• two"),
        // Nested quotes are one quote.
        (tg, "> a\n>\n> > b", "<blockquote>a\n\nb</blockquote>"),
        (discord, "> a\n>\n> > b", "> a\n> \n> b"),
        // Code blocks without a language, indented, or opened with junk.
        (tg, "```\nx\n```", "<pre>x</pre>"),
        (tg, "    indented\n    code", "<pre>indented\ncode</pre>"),
        (tg, "```\"><script>\nx\n```", "<pre>x</pre>"),
        // A code block in a list item starts its own line.
        (discord, "- ```sh\n  ls\n  ```", "- \n  ```sh\n  ls\n  ```"),
        (
            tg,
            "- ```sh\n  ls\n  ```",
            "• \n  <pre><code class=\"language-sh\">ls</code></pre>",
        ),
        // A code block in a quote.
        (
            discord,
            "> ```py\n> a\n> b\n> ```",
            "> ```py\n> a\n> b\n> ```",
        ),
        // Links Telegram can open (code in them is plain text), and a URL with spaces.
        (
            tg,
            "[chat](tg://resolve?domain=x)",
            "<a href=\"tg://resolve?domain=x\">chat</a>",
        ),
        (
            tg,
            "[`code` here](https://x.io)",
            "<a href=\"https://x.io\">code here</a>",
        ),
        (
            discord,
            "[a](<https://x.io/a (b)>)",
            "[a](https://x.io/a%20%28b%29)",
        ),
        // A hard break is a plain line break.
        (
            tg,
            "line one\nline two  \nthree",
            "line one\nline two\nthree",
        ),
    ];
    for (render, markdown, expected) in cases {
        assert_eq!(render(markdown), expected, "{markdown:?}");
    }
}

#[test]
fn tables_are_lines_of_cells() {
    let table = "| a | b |\n|---|---|\n| 1 | **2** |\n| 3 | 4 |";
    assert_eq!(tg(table), "a | b\n1 | <b>2</b>\n3 | 4");
    assert_eq!(discord(table), "a | b\n1 | **2**\n3 | 4");
}

// ---- escaping ----

#[test]
fn escaping() {
    let text = "a < b & c > d";
    assert_eq!(tg(text), "a &lt; b &amp; c &gt; d");
    assert_eq!(slack(text), "a &lt; b &amp; c &gt; d");
    assert_eq!(discord(text), text);
    assert_eq!(feishu(text), text);
    assert_eq!(escape_telegram_html(text), "a &lt; b &amp; c &gt; d");
}

#[test]
fn raw_html_is_escaped_text_in_telegram() {
    assert_eq!(
        tg("hi <script>alert(1)</script> <b>x</b>"),
        "hi &lt;script&gt;alert(1)&lt;/script&gt; &lt;b&gt;x&lt;/b&gt;"
    );
    assert_eq!(
        tg("<script>\nalert(1)\n</script>\n\nafter"),
        "&lt;script&gt;\nalert(1)\n&lt;/script&gt;\n\nafter"
    );
    assert_eq!(slack("<div>x</div>"), "&lt;div&gt;x&lt;/div&gt;");
}

// ---- splitting ----

#[test]
fn empty_and_blank_input_give_no_chunks() {
    for flavor in ALL {
        assert!(render_chunks("", flavor, 100).is_empty());
        assert!(render_chunks(" \n\t\n  \n", flavor, 100).is_empty());
        assert!(render_chunks("**  **", flavor, 100).len() <= 1);
    }
}

#[test]
fn limits() {
    assert_eq!(Flavor::TelegramHtml.limit(), 4096);
    assert_eq!(Flavor::DiscordMarkdown.limit(), 2000);
    assert_eq!(Flavor::SlackMrkdwn.limit(), 4000);
    assert_eq!(Flavor::FeishuMarkdown.limit(), 4000);
}

#[test]
fn long_paragraph_splits_at_spaces() {
    let words: Vec<String> = (0..200).map(|i| format!("word{i}")).collect();
    let text = words.join(" ");
    for flavor in ALL {
        let chunks = render_chunks(&text, flavor, 100);
        assert!(chunks.len() > 10);
        for chunk in &chunks {
            assert!(chars(chunk) <= 100, "{chunk:?}");
            assert!(!chunk.starts_with(' ') && !chunk.ends_with(' '));
        }
        // Every split is at a space: the words come back whole.
        let rejoined = chunks.join(" ");
        assert_eq!(rejoined, text);
    }
}

#[test]
fn prefers_paragraph_breaks() {
    let para = "x".repeat(30);
    let text = format!("{para} {para}\n\n{para} {para}\n\n{para}");
    let chunks = render_chunks(&text, Flavor::DiscordMarkdown, 70);
    assert_eq!(
        chunks,
        [format!("{para} {para}"), format!("{para} {para}"), para]
    );
}

#[test]
fn long_code_block_reopens_with_its_language() {
    let lines: Vec<String> = (0..60).map(|i| format!("let v{i} = {i} < 1;")).collect();
    let markdown = format!("```rust\n{}\n```", lines.join("\n"));

    let chunks = render_chunks(&markdown, Flavor::TelegramHtml, 300);
    assert!(chunks.len() > 3);
    for chunk in &chunks {
        assert!(chars(chunk) <= 300);
        assert!(chunk.starts_with("<pre><code class=\"language-rust\">let v"));
        assert!(chunk.ends_with(";</code></pre>"));
        check_telegram_html(chunk);
    }
    let body: Vec<String> = chunks.iter().map(|c| telegram_html_text(c)).collect();
    assert_eq!(body.join("\n"), lines.join("\n"));

    let chunks = render_chunks(&markdown, Flavor::DiscordMarkdown, 300);
    assert!(chunks.len() > 3);
    let mut body = Vec::new();
    for chunk in &chunks {
        assert!(chars(chunk) <= 300);
        let inner = chunk
            .strip_prefix("```rust\n")
            .and_then(|c| c.strip_suffix("\n```"))
            .unwrap_or_else(|| panic!("not a whole fence: {chunk:?}"));
        body.push(inner);
    }
    assert_eq!(body.join("\n"), lines.join("\n"));
}

#[test]
fn bold_spanning_a_split_is_closed_and_reopened() {
    let text = format!("start **{}** end", ["bold"; 30].join(" "));
    let chunks = render_chunks(&text, Flavor::TelegramHtml, 64);
    assert!(chunks.len() > 2, "{chunks:?}");
    assert!(chunks[0].starts_with("start <b>bold"));
    for chunk in &chunks {
        assert!(chars(chunk) <= 64);
        check_telegram_html(chunk);
    }
    for chunk in &chunks[1..chunks.len() - 1] {
        assert!(
            chunk.starts_with("<b>bold") && chunk.ends_with("bold</b>"),
            "{chunk:?}"
        );
    }
    assert!(chunks.last().unwrap().ends_with("bold</b> end"));

    let chunks = render_chunks(&text, Flavor::DiscordMarkdown, 64);
    for chunk in &chunks[1..chunks.len() - 1] {
        assert!(
            chunk.starts_with("**bold") && chunk.ends_with("bold**"),
            "{chunk:?}"
        );
    }
    assert_eq!(
        render_chunks("**aaa bbb ccc**", Flavor::DiscordMarkdown, 12),
        ["**aaa bbb**", "**ccc**"]
    );
}

#[test]
fn a_word_longer_than_the_limit_is_cut_hard() {
    let word = "x".repeat(250);
    let chunks = render_chunks(&format!("a {word} b"), Flavor::DiscordMarkdown, 100);
    assert_eq!(
        chunks,
        [
            "a",
            &word[..100],
            &word[100..200],
            &format!("{} b", &word[200..])
        ]
    );

    // Never inside an entity: `&amp;` is 5 chars, the cuts fall between entities.
    let amps = "&".repeat(100);
    let chunks = render_chunks(&amps, Flavor::TelegramHtml, 64);
    for chunk in &chunks {
        assert!(chars(chunk) <= 64);
        check_telegram_html(chunk);
    }
    assert_eq!(chunks.concat(), "&amp;".repeat(100));
}

#[test]
fn cjk_counts_chars_not_bytes() {
    let text = "你好世界".repeat(100);
    for flavor in ALL {
        let chunks = render_chunks(&text, flavor, 100);
        assert_eq!(chunks.len(), 4);
        assert!(chunks.iter().all(|c| chars(c) == 100));
        assert_eq!(chunks.concat(), text);
    }
    let chunks = render_chunks(&format!("**{text}**"), Flavor::TelegramHtml, 100);
    assert!(
        chunks
            .iter()
            .all(|c| chars(c) <= 100 && c.starts_with("<b>") && c.ends_with("</b>"))
    );
}

#[test]
fn huge_link_url_falls_back_to_text() {
    let url = format!("https://x.io/{}", "p".repeat(200));
    let chunks = render_chunks(&format!("[link]({url})"), Flavor::TelegramHtml, 100);
    for chunk in &chunks {
        assert!(chars(chunk) <= 100);
        check_telegram_html(chunk);
    }
    // The URL, too long for a tag in a 100-char chunk, is text: a word cut hard.
    assert_eq!(chunks[0], "link");
    assert!(chunks[1].starts_with("(https://x.io/ppp"));
    assert!(chunks.last().unwrap().ends_with("ppp)"));
}

// ---- invariants ----

/// The visible text of a chunk, whitespace and markup characters removed (Telegram: tags
/// removed, entities decoded). What a split adds (reopened markup, a fence's language) stays: the whole
/// rendering's text must be a subsequence of the chunks'.
fn visible(chunk: &str, flavor: Flavor) -> String {
    let text = match flavor {
        Flavor::TelegramHtml => telegram_html_text(chunk),
        _ => chunk.to_owned(),
    };
    text.chars()
        .filter(|c| !c.is_whitespace() && !"*_~`>#-[]()|<".contains(*c))
        .collect()
}

fn is_subsequence(needle: &str, haystack: &str) -> bool {
    let mut hay = haystack.chars();
    needle.chars().all(|c| hay.any(|h| h == c))
}

/// The markup (and HTML, entities, blanks) [`markdownish`] text is made of.
const MARKUP: [&str; 17] = [
    "**",
    "*",
    "~~",
    "`",
    "```rust\n",
    "\n```\n",
    "\n",
    "\n\n",
    "- ",
    "1. ",
    "> ",
    "# ",
    "[l](https://x.io/a&b)",
    "<b>",
    "&",
    "| a | b |\n|---|---|\n| c | d |\n",
    " ",
];

fn markdownish() -> impl Strategy<Value = String> {
    proptest::collection::vec(
        prop_oneof![
            // Each piece of markup as likely as each kind of text.
            MARKUP.len() as u32 => proptest::sample::select(&MARKUP[..]).prop_map(str::to_owned),
            1 => "[a-z]{1,12}",
            1 => "[a-z ]{0,40}",
            1 => "[你好世界é\u{301}👍🏽]{1,8}",
            1 => any::<String>(),
        ],
        0..40,
    )
    .prop_map(|parts| parts.concat())
}

fn check_invariants(markdown: &str, flavor: Flavor, limit: usize) {
    let chunks = render_chunks(markdown, flavor, limit);
    for chunk in &chunks {
        assert!(
            chars(chunk) <= limit,
            "{flavor:?} {limit}: {chunk:?} too long"
        );
        assert!(!chunk.trim().is_empty(), "{flavor:?}: blank chunk");
        if flavor == Flavor::TelegramHtml {
            check_telegram_html(chunk);
        }
    }
    let whole: String = render_chunks(markdown, flavor, usize::MAX)
        .iter()
        .map(|c| visible(c, flavor))
        .collect::<String>()
        // A code block's language goes when a small limit leaves no room for it.
        .replace("rust", "");
    let split: String = chunks.iter().map(|c| visible(c, flavor)).collect();
    assert!(
        is_subsequence(&whole, &split),
        "{flavor:?} {limit}: text lost\nwhole: {whole:?}\nsplit: {split:?}"
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn chunks_keep_the_invariants(markdown in markdownish(), limit in 64usize..400, f in 0usize..4) {
        check_invariants(&markdown, ALL[f], limit);
    }

    #[test]
    fn tiny_limits_never_panic(markdown in markdownish(), limit in 0usize..64, f in 0usize..4) {
        for chunk in render_chunks(&markdown, ALL[f], limit) {
            prop_assert!(!chunk.trim().is_empty());
        }
    }
}

//! The Markdown renderers end to end: exact output per flavor for each construct, escaping,
//! splitting (at spaces, in code blocks, across bold, hard cuts, CJK), and a property test
//! of the invariants every chunk keeps.

use pincer_channels::markdown::{Flavor, escape_telegram_html, render_chunks};
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

fn chars(s: &str) -> usize {
    s.chars().count()
}

/// Telegram chunk text without its tags.
fn strip_tags(html: &str) -> String {
    let mut out = String::new();
    let mut in_tag = false;
    for c in html.chars() {
        match c {
            '<' => in_tag = true,
            '>' if in_tag => in_tag = false,
            c if !in_tag => out.push(c),
            _ => {}
        }
    }
    out
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
        assert_eq!(one(markdown, flavor), expected, "{flavor:?}");
    }
}

// ---- each construct, per flavor ----

#[test]
fn inline_formatting() {
    each(
        "**b** *i* ~~s~~ `c` [t](https://x.io/?a=1&b=\"2\")",
        [
            "<b>b</b> <i>i</i> <s>s</s> <code>c</code> \
             <a href=\"https://x.io/?a=1&amp;b=&quot;2&quot;\">t</a>",
            "**b** *i* ~~s~~ `c` [t](https://x.io/?a=1&b=\"2\")",
            "*b* _i_ ~s~ `c` <https://x.io/?a=1&amp;b=\"2\"|t>",
            "**b** *i* ~~s~~ `c` [t](https://x.io/?a=1&b=\"2\")",
        ],
    );
}

#[test]
fn nested_spans_keep_one_of_a_kind() {
    assert_eq!(tg("**a *b* c**"), "<b>a <i>b</i> c</b>");
    assert_eq!(slack("*a **b** c*"), "_a *b* c_");
    each(
        "# Title **bold**",
        [
            "<b>Title bold</b>",
            "# Title **bold**",
            "*Title bold*",
            "**Title bold**",
        ],
    );
}

#[test]
fn inline_code_with_backticks_gets_a_longer_fence() {
    assert_eq!(discord("``a`b``"), "``a`b``");
    assert_eq!(discord("`` `x` ``"), "`` `x` ``");
}

#[test]
fn links_a_platform_cannot_open_become_text() {
    each(
        "[t](ftp://x.io/f) [m](mailto:a@b.c)",
        [
            "t (ftp://x.io/f) <a href=\"mailto:a@b.c\">m</a>",
            "t (ftp://x.io/f) m (mailto:a@b.c)",
            "t (ftp://x.io/f) <mailto:a@b.c|m>",
            "t (ftp://x.io/f) m (mailto:a@b.c)",
        ],
    );
    assert_eq!(
        tg("[chat](tg://resolve?domain=x)"),
        "<a href=\"tg://resolve?domain=x\">chat</a>"
    );
    assert_eq!(tg("[js](javascript:alert(1))"), "js (javascript:alert(1))");
    assert_eq!(tg("see <https://x.io>"), "see https://x.io");
    // Telegram links can't contain code.
    assert_eq!(
        tg("[`code` here](https://x.io)"),
        "<a href=\"https://x.io\">code here</a>"
    );
    assert_eq!(
        discord("[a](<https://x.io/a (b)>)"),
        "[a](https://x.io/a%20%28b%29)"
    );
}

#[test]
fn images_are_alt_text_and_url() {
    let image = "![a *cat*](https://x.io/c.png)";
    each(image, ["a cat (https://x.io/c.png)"; 4]);
    assert_eq!(tg("![](https://x.io/c.png)"), "https://x.io/c.png");
}

#[test]
fn headings() {
    each(
        "# One\n\n## Two\n\n#### Four\n\ntext",
        [
            "<b>One</b>\n\n<b>Two</b>\n\n<b>Four</b>\n\ntext",
            "# One\n\n## Two\n\n### Four\n\ntext",
            "*One*\n\n*Two*\n\n*Four*\n\ntext",
            "**One**\n\n**Two**\n\n**Four**\n\ntext",
        ],
    );
}

#[test]
fn nested_lists() {
    each(
        "intro\n\n- a\n- b **bold**\n  - c\n    - d\n- e\n\nafter",
        [
            "intro\n\n• a\n• b <b>bold</b>\n  • c\n    • d\n• e\n\nafter",
            "intro\n\n- a\n- b **bold**\n  - c\n    - d\n- e\n\nafter",
            "intro\n\n• a\n• b *bold*\n  • c\n    • d\n• e\n\nafter",
            "intro\n\n- a\n- b **bold**\n  - c\n    - d\n- e\n\nafter",
        ],
    );
}

#[test]
fn ordered_lists_count_from_their_start() {
    each("1. a\n1. b\n1. c", ["1. a\n2. b\n3. c"; 4]);
    each(
        "7. a\n8. b\n   - x",
        [
            "7. a\n8. b\n  • x",
            "7. a\n8. b\n  - x",
            "7. a\n8. b\n  • x",
            "7. a\n8. b\n  - x",
        ],
    );
}

#[test]
fn loose_list_items_keep_their_paragraphs() {
    assert_eq!(tg("- one\n\n  more\n- two"), "• one\n\n  more\n• two");
}

#[test]
fn quotes() {
    each(
        "> quoted **b**\n> more\n>\n> second\n\nafter",
        [
            "<blockquote>quoted <b>b</b>\nmore\n\nsecond</blockquote>\n\nafter",
            "> quoted **b**\n> more\n> \n> second\n\nafter",
            "> quoted *b*\n> more\n> \n> second\n\nafter",
            "> quoted **b**\n> more\n> \n> second\n\nafter",
        ],
    );
}

#[test]
fn nested_quotes_are_one_quote() {
    assert_eq!(tg("> a\n>\n> > b"), "<blockquote>a\n\nb</blockquote>");
    assert_eq!(discord("> a\n>\n> > b"), "> a\n> \n> b");
}

#[test]
fn code_blocks() {
    each(
        "text\n\n```rust\nfn main() {\n    let x = a < b && c;\n}\n```\n\nafter",
        [
            "text\n\n<pre><code class=\"language-rust\">fn main() {\n    \
             let x = a &lt; b &amp;&amp; c;\n}</code></pre>\n\nafter",
            "text\n\n```rust\nfn main() {\n    let x = a < b && c;\n}\n```\n\nafter",
            "text\n\n```\nfn main() {\n    let x = a &lt; b &amp;&amp; c;\n}\n```\n\nafter",
            "text\n\n```rust\nfn main() {\n    let x = a < b && c;\n}\n```\n\nafter",
        ],
    );
}

#[test]
fn code_block_without_language_and_in_a_quote() {
    assert_eq!(tg("```\nx\n```"), "<pre>x</pre>");
    assert_eq!(tg("    indented\n    code"), "<pre>indented\ncode</pre>");
    assert_eq!(
        discord("> ```py\n> a\n> b\n> ```"),
        "> ```py\n> a\n> b\n> ```"
    );
    assert_eq!(tg("```\"><script>\nx\n```"), "<pre>x</pre>");
}

#[test]
fn code_block_in_a_list_item_starts_its_own_line() {
    assert_eq!(discord("- ```sh\n  ls\n  ```"), "- \n  ```sh\n  ls\n  ```");
    assert_eq!(
        tg("- ```sh\n  ls\n  ```"),
        "• \n  <pre><code class=\"language-sh\">ls</code></pre>"
    );
}

#[test]
fn tables_are_lines_of_cells() {
    let table = "| a | b |\n|---|---|\n| 1 | **2** |\n| 3 | 4 |";
    assert_eq!(tg(table), "a | b\n1 | <b>2</b>\n3 | 4");
    assert_eq!(discord(table), "a | b\n1 | **2**\n3 | 4");
}

#[test]
fn rules_and_breaks() {
    each("a\n\n---\n\nb", ["a\n\n———\n\nb"; 4]);
    assert_eq!(
        tg("line one\nline two  \nthree"),
        "line one\nline two\nthree"
    );
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
    let body: Vec<String> = chunks
        .iter()
        .map(|c| strip_tags(c).replace("&lt;", "<"))
        .collect();
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
/// removed). What a split adds (reopened markup, a fence's language) stays: the whole
/// rendering's text must be a subsequence of the chunks'.
fn visible(chunk: &str, flavor: Flavor) -> String {
    let text = match flavor {
        Flavor::TelegramHtml => strip_tags(chunk),
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

fn markdownish() -> impl Strategy<Value = String> {
    proptest::collection::vec(
        prop_oneof![
            Just("**".to_owned()),
            Just("*".to_owned()),
            Just("~~".to_owned()),
            Just("`".to_owned()),
            Just("```rust\n".to_owned()),
            Just("\n```\n".to_owned()),
            Just("\n".to_owned()),
            Just("\n\n".to_owned()),
            Just("- ".to_owned()),
            Just("1. ".to_owned()),
            Just("> ".to_owned()),
            Just("# ".to_owned()),
            Just("[l](https://x.io/a&b)".to_owned()),
            Just("<b>".to_owned()),
            Just("&".to_owned()),
            Just("| a | b |\n|---|---|\n| c | d |\n".to_owned()),
            Just(" ".to_owned()),
            "[a-z]{1,12}",
            "[a-z ]{0,40}",
            "[你好世界é\u{301}👍🏽]{1,8}",
            any::<String>(),
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

//! Arbitrary text through `render_chunks` with every flavor: never panics (nor hangs); no
//! chunk is empty or blank; with a limit of 64 or more no chunk is longer than the limit;
//! every Telegram chunk is well-formed HTML on its own: only the tags the renderer emits,
//! balanced, `<` only starting a tag and `&` only starting an entity.
//!
//! Input: byte 0 picks the limit (times 3: 0 to 765, so tiny limits are fuzzed too); the
//! rest is the Markdown (lossy UTF-8).
#![no_main]

use libfuzzer_sys::fuzz_target;
use pincer_channels::markdown::{Flavor, render_chunks};

const FLAVORS: [Flavor; 4] = [
    Flavor::TelegramHtml,
    Flavor::DiscordMarkdown,
    Flavor::SlackMrkdwn,
    Flavor::FeishuMarkdown,
];

const TAGS: [&str; 7] = ["b", "i", "s", "code", "pre", "a", "blockquote"];
const ENTITIES: [&str; 4] = ["&amp;", "&lt;", "&gt;", "&quot;"];

fn check_telegram(html: &str) {
    let mut stack: Vec<&str> = Vec::new();
    let mut rest = html;
    while let Some(i) = rest.find(['<', '&']) {
        let tail = &rest[i..];
        if let Some(after) = tail.strip_prefix('&') {
            assert!(
                ENTITIES.iter().any(|e| tail.starts_with(e)),
                "bare & in {html:?}"
            );
            rest = after;
            continue;
        }
        let Some(end) = tail.find('>') else {
            panic!("< not starting a tag in {html:?}");
        };
        let tag = &tail[1..end];
        assert!(!tag.contains('<'), "< inside a tag in {html:?}");
        if let Some(name) = tag.strip_prefix('/') {
            assert_eq!(stack.pop(), Some(name), "unbalanced </{name}> in {html:?}");
        } else {
            let name = tag.split(' ').next().unwrap_or_default();
            assert!(TAGS.contains(&name), "tag <{tag}> in {html:?}");
            if name == "a" {
                assert!(tag.starts_with("a href=\"") && tag.ends_with('"'));
                assert_eq!(tag.matches('"').count(), 2, "quote in href: {html:?}");
            }
            stack.push(name);
        }
        rest = &tail[end + 1..];
    }
    assert!(stack.is_empty(), "unclosed {stack:?} in {html:?}");
}

fuzz_target!(|data: &[u8]| {
    let [first, rest @ ..] = data else {
        return;
    };
    let limit = usize::from(*first) * 3;
    let markdown = String::from_utf8_lossy(rest);

    for flavor in FLAVORS {
        for chunk in render_chunks(&markdown, flavor, limit) {
            assert!(
                !chunk.trim().is_empty(),
                "{flavor:?}: blank chunk {chunk:?}"
            );
            if limit >= 64 {
                assert!(
                    chunk.chars().count() <= limit,
                    "{flavor:?}: chunk over {limit} chars: {chunk:?}"
                );
            }
            if flavor == Flavor::TelegramHtml {
                check_telegram(&chunk);
            }
        }
    }
});

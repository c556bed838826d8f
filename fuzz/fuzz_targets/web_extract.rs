//! Arbitrary bytes as a web page under a content type: web_fetch's extraction (kind by type
//! or first bytes, charset from the header, a `<meta>` or a guess, readability to Markdown
//! or text, the whole-body fallback, JSON) returns text or an error and never panics, and the
//! untrusted-content wrapper's escaping leaves no marker-like `<<<` or `>>>` in the text.
//!
//! The first byte picks the extract mode and a content type (one of a few, or the bytes up to
//! the first newline as a raw header value); the rest is the body.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pincer_web::fetch::{ExtractMode, extract, neutralize};

const TYPES: [Option<&str>; 8] = [
    None,
    Some("text/html"),
    Some("text/html; charset=iso-8859-1"),
    Some("application/json"),
    Some("text/plain; charset=utf-16"),
    Some("text/markdown"),
    Some("application/octet-stream"),
    Some("application/xhtml+xml; charset=shift_jis"),
];

fuzz_target!(|input: &[u8]| {
    let Some((&first, rest)) = input.split_first() else {
        return;
    };
    let mode = if first & 1 == 0 {
        ExtractMode::Markdown
    } else {
        ExtractMode::Text
    };
    let pick = usize::from(first >> 1);
    let (content_type, body): (Option<String>, &[u8]) = if pick < TYPES.len() {
        (TYPES[pick].map(str::to_owned), rest)
    } else {
        let end = rest.iter().position(|&b| b == b'\n').unwrap_or(rest.len());
        let header = String::from_utf8_lossy(&rest[..end]).into_owned();
        (Some(header), rest.get(end + 1..).unwrap_or_default())
    };
    if let Ok(page) = extract(
        body,
        content_type.as_deref(),
        "https://example.org/a/b",
        mode,
        None,
    ) {
        let safe = neutralize(&page.text);
        assert!(!safe.contains("<<<") && !safe.contains(">>>"));
        if let Some(title) = page.title {
            assert!(!neutralize(&title).contains("<<<"));
        }
    }
});

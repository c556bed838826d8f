//! Arbitrary bytes as a PDF someone sent: reading its text returns (text or an error) and
//! never panics to its caller, and what it returns keeps to the limits asked for.
//!
//! lopdf may panic inside; `pdf_text` catches that, which is the contract tested here, so the
//! init below swaps libfuzzer's abort-on-any-panic hook for a silent one. A panic that
//! escapes `pdf_text` still aborts: libfuzzer-sys catches it around every input and aborts.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pincer_turns::media_text::{PDF_MAX_PAGES, pdf_text};

const MAX_CHARS: usize = 2_000;

fuzz_target!(init: std::panic::set_hook(Box::new(|_| {})), |input: &[u8]| {
    if let Ok(doc) = pdf_text(input, MAX_CHARS) {
        assert!(doc.text.chars().count() <= MAX_CHARS);
        let pages = doc.pages.expect("a PDF says its pages");
        assert!(pages.read <= PDF_MAX_PAGES && pages.read <= pages.total, "{pages:?}");
    }
});

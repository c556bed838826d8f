//! Arbitrary text as the part of a request path under `/control/` (as sent, percent-encoded)
//! and as the Control UI's `index.html`: the path is refused or becomes segments that cannot
//! leave the root, and preparing the page or hashing its scripts never panics.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pincer_gateway::server::control_ui::files::{self, Wanted};

fuzz_target!(|input: &str| {
    if let Ok(Wanted::Path(segments)) = files::wanted(input) {
        assert!(!segments.is_empty());
        for segment in &segments {
            assert!(!segment.is_empty(), "{input:?}");
            assert!(!segment.starts_with('.'), "{input:?}: {segment:?}");
            assert!(
                !segment.contains(['/', '\\', '\0']),
                "{input:?}: {segment:?}"
            );
        }
        let _ = files::has_extension(&segments);
    }
    let page = files::prepare_index(input);
    assert!(page.len() >= input.len());
    let _ = files::inline_script_hashes(&page);
});

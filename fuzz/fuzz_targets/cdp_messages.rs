//! Arbitrary bytes as what a browser (or a hostile page) hands the browser tool: a CDP frame
//! (parsed into a response or an event, an event made into a console line), a snapshot
//! script's answer, a `Target.getTargets` answer, a key name. None of it panics, and a
//! snapshot keeps to the characters asked for.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pincer_browser::tool::cdp::{Incoming, parse_frame};
use pincer_browser::tool::conn::{console_line, target_infos};
use pincer_browser::tool::keys::parse_key;
use pincer_browser::tool::snapshot::{Snapshot, valid_ref};

const MAX_CHARS: usize = 500;

fuzz_target!(|input: &[u8]| {
    let text = String::from_utf8_lossy(input);
    if let Some(Incoming::Event(event)) = parse_frame(&text) {
        let _ = console_line(&event);
    }
    if let Ok(value) = serde_json::from_str::<serde_json::Value>(&text) {
        let snapshot = Snapshot::from_value(&value, MAX_CHARS);
        let used: usize = snapshot.lines.iter().map(|l| l.chars().count() + 1).sum();
        assert!(used <= MAX_CHARS, "{used}");
        let _ = snapshot.render();
        let _ = target_infos(&value);
    }
    let _ = parse_key(&text);
    let _ = valid_ref(&text);
});

//! Arbitrary text as a `tools.message.allowTargets` entry: parsing never panics, a parsed
//! rule prints back to an entry that parses to the same rule, and matching it against a
//! chat (split from the same input) never panics.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pincer_team::message::{AllowTargets, TargetRule, bare_chat_id};

fuzz_target!(|input: &[u8]| {
    let Ok(text) = std::str::from_utf8(input) else {
        return;
    };
    if let Ok(rule) = text.parse::<TargetRule>() {
        let again: TargetRule = rule.to_string().parse().expect("a printed rule parses");
        assert_eq!(again, rule);
        let (channel, to) = text.split_once(':').unwrap_or((text, ""));
        let _ = rule.matches(channel, to);
        let _ = bare_chat_id(to);
    }
    let entries: Vec<&str> = text.split('\n').collect();
    if let Ok(allow) = AllowTargets::parse(&entries) {
        assert_eq!(allow.rules().len(), entries.len());
    }
});

//! Arbitrary text as a SKILL.md: the frontmatter parser and the skill reader never panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pincer_turns::skills::{parse_frontmatter, parse_skill};

fuzz_target!(|input: &str| {
    let _ = parse_frontmatter(input);
    let _ = parse_skill(input);
});

//! Arbitrary text as `exec-approvals.json` and as what follows `/approve`: parsing never
//! panics; a parsed file written back parses to the same file; a parsed answer names a
//! one-word id.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pincer_tools::exec::approval::parse_approve_args;
use pincer_tools::exec::approvals_file::{command_pattern, parse};

fuzz_target!(|input: &[u8]| {
    let Ok(text) = std::str::from_utf8(input) else {
        return;
    };
    if let Ok(file) = parse(text, "exec-approvals.json") {
        let written = serde_json::to_string(&file).expect("a parsed file serialises");
        let again = parse(&written, "exec-approvals.json").expect("a written file parses");
        assert_eq!(again, file);
        for agent in file.agents.keys() {
            let _ = file.programs(agent);
            let _ = file.approves_command(agent, text);
        }
    }
    if let Ok((id, _)) = parse_approve_args(text) {
        assert!(
            !id.is_empty() && !id.contains(char::is_whitespace),
            "{id:?}"
        );
    }
    assert!(command_pattern(text).starts_with("=command:"));
});

//! The exec allowlist parser reads command lines a model wrote. It must never panic, and
//! whatever it accepts must run only allowlisted programs.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pincer_tools::exec::allowlist::{check, parse};

fuzz_target!(|input: &[u8]| {
    let Ok(line) = std::str::from_utf8(input) else { return };
    let _ = parse(line);
    let allowed = vec!["ls".to_owned(), "echo".to_owned(), "grep".to_owned(), "cat".to_owned()];
    if let Ok(programs) = check(line, &allowed) {
        for program in programs {
            assert!(allowed.contains(&program), "{line:?} let {program:?} through");
        }
    }
});

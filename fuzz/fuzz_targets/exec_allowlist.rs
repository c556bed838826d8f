//! The exec allowlist parser reads command lines a model wrote. It must never panic,
//! whatever it accepts must run only allowlisted programs, and an accepted line must pass
//! the independent quoting scan of `fuzz/checks/exec_allowlist.rs` (no `${...}` that the
//! shell could end early, no substitution, nothing that swallows the next line). The same
//! check runs under proptest in `crates/tools/tests/it/exec_allowlist_differential.rs`, which
//! also runs accepted lines under real `sh` and `bash`.
#![no_main]

use libfuzzer_sys::fuzz_target;

#[path = "../checks/exec_allowlist.rs"]
mod fuzz_check;

fuzz_target!(|input: &[u8]| {
    let Ok(line) = std::str::from_utf8(input) else {
        return;
    };
    fuzz_check::check(line);
});

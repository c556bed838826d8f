//! The `--policy` of `pincer sandbox-exec` (JSON a parent process wrote, or a file). It must
//! never panic; whatever it accepts must be valid (absolute, normalised paths, a workspace
//! that is not `/`, a workdir inside it) and survive a round trip through its JSON.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pincer_sandbox::SandboxPolicy;

fuzz_target!(|input: &[u8]| {
    let Ok(text) = std::str::from_utf8(input) else {
        return;
    };
    let Ok(policy) = SandboxPolicy::parse(text) else {
        return;
    };
    assert!(policy.validate().is_ok());
    assert!(policy.workspace.parent().is_some());
    assert!(policy.start_dir().starts_with(&policy.workspace));
    let again = SandboxPolicy::parse(&policy.to_json());
    assert_eq!(again.as_ref(), Ok(&policy));
});

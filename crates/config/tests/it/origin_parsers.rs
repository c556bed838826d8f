//! The origin and host parsers under proptest: the fuzz target's check
//! (`fuzz/checks/http_origin_host.rs`) on generated text shaped like origins and hosts.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use proptest::prelude::*;

#[path = "../../../../fuzz/checks/http_origin_host.rs"]
mod check;

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn origin_and_host_text(
        input in r"(\*\.|[a-zA-Z+.-]{0,6}://)?(\[[0-9a-fA-F:.%]{0,12}\]|[a-zA-Z0-9._*-]{0,16})(:[0-9+]{0,6})?[/?#@ .]?",
    ) {
        check::check(&input);
    }

    #[test]
    fn any_text(input in any::<String>()) {
        check::check(&input);
    }
}

#[test]
fn seeds() {
    for seed in [
        "http://127.0.0.1:18789",
        "https://Chat.Example.com.:443",
        "[::1]:18789",
        "null",
        "*.example.com",
        "chrome-extension://abcdef",
        "http://[::ffff:127.0.0.1]:80",
        "*",
    ] {
        check::check(seed);
    }
}

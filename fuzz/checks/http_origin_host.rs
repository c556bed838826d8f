//! The origin and host parsers' fuzz check, shared by `fuzz/fuzz_targets/http_origin_host.rs`
//! and `crates/config/tests/it/origin_parsers.rs` (which runs it under proptest in every
//! `cargo test`): parsing never panics, what parses is in normal form (lowercase, no
//! trailing dot, no port 0) and reads back equal from its written form, and a pattern
//! written from a value matches it.

use pincer_config::origin::{Host, HostPattern, HostPort, Origin, OriginPattern};

/// One input, read as each of the four kinds of value.
pub fn check(input: &str) {
    if let Ok(origin) = input.parse::<Origin>() {
        let written = origin.to_string();
        assert_eq!(written.parse::<Origin>().as_ref(), Ok(&origin), "{input:?}");
        assert_eq!(origin.scheme, origin.scheme.to_ascii_lowercase());
        assert_ne!(origin.port, Some(0));
        let pattern: OriginPattern = written
            .parse()
            .unwrap_or_else(|e| panic!("{written:?}: {e}"));
        assert!(pattern.matches(&origin), "{input:?}");
    }
    if let Ok(host) = input.parse::<HostPort>() {
        if let Host::Name(name) = &host.host {
            assert!(!name.is_empty() && !name.ends_with('.'), "{input:?}");
            assert_eq!(name, &name.to_ascii_lowercase());
        }
        let written = host.host.to_string();
        assert_eq!(Host::parse(&written).as_ref(), Ok(&host.host), "{input:?}");
        assert_ne!(host.port, Some(0));
        let pattern: HostPattern = written
            .parse()
            .unwrap_or_else(|e| panic!("{written:?}: {e}"));
        assert!(pattern.matches(&host.host), "{input:?}");
    }
    if let Ok(pattern) = input.parse::<HostPattern>() {
        let again = pattern.to_string().parse::<HostPattern>();
        assert_eq!(again.as_ref(), Ok(&pattern), "{input:?}");
    }
    if let Ok(pattern) = input.parse::<OriginPattern>() {
        let again = pattern.to_string().parse::<OriginPattern>();
        assert_eq!(again.as_ref(), Ok(&pattern), "{input:?}");
    }
}

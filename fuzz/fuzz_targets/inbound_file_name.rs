//! Arbitrary text as the name of a file a user sends on a channel: the inbox name made from
//! it is one plain path component (no separator, no leading dot, never empty), short enough,
//! and never panics.
#![no_main]

use std::path::{Component, Path};

use libfuzzer_sys::fuzz_target;
use pincer_channel_port::file_name::safe_name;

fuzz_target!(|input: &str| {
    let safe = safe_name(input);
    assert!(
        !safe.is_empty() && safe.len() <= 100,
        "{safe:?} from {input:?}"
    );
    assert!(
        !safe.starts_with('.') && !safe.contains(['/', '\\', '\0']),
        "{safe:?}"
    );
    let components: Vec<Component<'_>> = Path::new(&safe).components().collect();
    assert!(
        matches!(components.as_slice(), [Component::Normal(_)]),
        "{safe:?} from {input:?}"
    );
});

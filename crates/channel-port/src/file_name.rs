//! Names for files people send: whatever a sender calls a file, one plain, visible path
//! component of bounded length that adapters can stage under and the gateway can put in an
//! agent's inbox.

/// Longest file name kept (bytes, before a `-N` suffix).
pub const MAX_NAME: usize = 100;

/// A file name safe to create and to show: letters, digits, `.`, `-` and `_` kept, other
/// characters `_`; no leading dot (no hidden files, no `..`); at most [`MAX_NAME`] bytes
/// with the extension kept; `file` when nothing is left.
pub fn safe_name(name: &str) -> String {
    let base = name.rsplit(['/', '\\']).next().unwrap_or(name);
    let cleaned: String = base
        .chars()
        .map(|c| {
            if c.is_alphanumeric() || ".-_".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect();
    let cleaned = cleaned.trim_start_matches('.');
    if cleaned.is_empty() {
        return "file".to_owned();
    }
    if cleaned.len() <= MAX_NAME {
        return cleaned.to_owned();
    }
    let (stem, ext) = split_extension(cleaned);
    let ext = if ext.len() <= 16 { ext } else { "" };
    let mut end = MAX_NAME.saturating_sub(ext.len());
    while !stem.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}{ext}", &stem[..end])
}

/// `name` for the first attempt, then `stem-N.ext`.
pub fn numbered(name: &str, attempt: usize) -> String {
    if attempt == 1 {
        return name.to_owned();
    }
    let (stem, ext) = split_extension(name);
    format!("{stem}-{attempt}{ext}")
}

/// (`photo`, `.jpg`) for `photo.jpg`; the whole name and `""` without an extension.
fn split_extension(name: &str) -> (&str, &str) {
    match name.rfind('.') {
        Some(at) if at > 0 => name.split_at(at),
        _ => (name, ""),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    #[test]
    fn names_are_made_safe() {
        for (name, safe) in [
            ("photo.jpg", "photo.jpg"),
            ("../../etc/passwd", "passwd"),
            ("..\\x.txt", "x.txt"),
            ("..", "file"),
            (".bashrc", "bashrc"),
            ("a b;c$(x).pdf", "a_b_c__x_.pdf"),
            ("", "file"),
            ("ünï.txt", "ünï.txt"),
        ] {
            assert_eq!(safe_name(name), safe, "{name:?}");
        }
        let long = format!("{}.png", "é".repeat(80));
        let safe = safe_name(&long);
        assert!(safe.ends_with(".png") && safe.len() <= MAX_NAME, "{safe}");
        assert_eq!(numbered("a.tar.gz", 2), "a.tar-2.gz");
        assert_eq!(numbered("README", 3), "README-3");
    }

    proptest::proptest! {
        /// Any name a sender picks (separators, dots, control and multi-byte characters):
        /// one plain, visible path component, never too long.
        #[test]
        fn any_name_becomes_one_safe_component(name in "\\PC{0,300}|[./\\\\a-z]{0,12}") {
            let safe = safe_name(&name);
            proptest::prop_assert!(!safe.is_empty() && safe.len() <= MAX_NAME);
            proptest::prop_assert!(!safe.starts_with('.'));
            proptest::prop_assert!(!safe.contains(['/', '\\', '\0']));
            proptest::prop_assert_eq!(Path::new(&safe).components().count(), 1);
            let numbered = numbered(&safe, 7);
            proptest::prop_assert!(!numbered.contains('/') && !numbered.starts_with('.'));
        }
    }
}

//! What tests check about files on disk: permission bits, a directory's sorted listing, a
//! JSON file's value; and a picture to send ([`PIXEL_PNG`]). Each panics with the path when the file cannot be read: a test helper
//! whose failure is the test's.

use std::path::Path;

use serde_json::Value;

/// A whole PNG of one pixel (every CRC right: decoders take it), for tests that send a
/// picture.
pub const PIXEL_PNG: &[u8] = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\0\x01\0\0\0\x01\x08\x06\0\0\0\x1f\x15\xc4\x89\0\0\0\rIDATx\xdacd`\xf8_\x0f\0\x02\x87\x01\x80\xebG\xba\x92\0\0\0\0IEND\xaeB`\x82";

/// The permission bits of `path` (`0o600`, `0o700`, …).
#[cfg(unix)]
pub fn mode(path: &Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    match std::fs::metadata(path) {
        Ok(meta) => meta.permissions().mode() & 0o777,
        Err(e) => panic!("cannot stat {}: {e}", path.display()),
    }
}

/// The names of the entries of `dir`, sorted.
pub fn sorted_names(dir: &Path) -> Vec<String> {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) => panic!("cannot list {}: {e}", dir.display()),
    };
    let mut names: Vec<String> = entries
        .map(|entry| match entry {
            Ok(entry) => entry.file_name().to_string_lossy().into_owned(),
            Err(e) => panic!("cannot list {}: {e}", dir.display()),
        })
        .collect();
    names.sort();
    names
}

/// The JSON value the file at `path` holds.
pub fn read_json(path: &Path) -> Value {
    let bytes = match std::fs::read(path) {
        Ok(bytes) => bytes,
        Err(e) => panic!("cannot read {}: {e}", path.display()),
    };
    match serde_json::from_slice(&bytes) {
        Ok(value) => value,
        Err(e) => panic!("{} is not JSON: {e}", path.display()),
    }
}

/// Owned strings, for comparing with a `Vec<String>`.
pub fn strings(items: &[&str]) -> Vec<String> {
    items.iter().map(|item| item.to_string()).collect()
}

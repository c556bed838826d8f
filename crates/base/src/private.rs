//! Private files and directories: everything Pincer creates under `$PINCER_HOME` (state,
//! transcripts, indexes, locks, memory) is readable by its owner only — files 0600,
//! directories 0700 — whatever the process umask. Library code creates through these
//! helpers so the mode is set at creation, never fixed up afterwards (a file that was
//! briefly 0644 may already have been opened by someone else).

use std::fs::{DirBuilder, OpenOptions};
use std::io;
use std::path::Path;

/// The mode of every file Pincer creates under its home.
pub const PRIVATE_FILE_MODE: u32 = 0o600;
/// The mode of every directory Pincer creates under its home.
pub const PRIVATE_DIR_MODE: u32 = 0o700;

/// Where `pincer` keeps the user's own umask (octal, e.g. `022`) while it runs with 077
/// itself, for the processes it starts on the user's behalf.
pub const USER_UMASK_ENV: &str = "PINCER_USER_UMASK";

/// The user's umask as the `pincer` binary recorded it at start ([`USER_UMASK_ENV`]), if
/// it did: what `exec` should give the commands it runs, so files they create outside the
/// home get the user's usual modes rather than Pincer's private ones.
pub fn user_umask() -> Option<u32> {
    parse_umask(&std::env::var(USER_UMASK_ENV).ok()?)
}

/// An umask written in octal (`022`, `0077`); anything else is no umask.
fn parse_umask(text: &str) -> Option<u32> {
    u32::from_str_radix(text.trim(), 8)
        .ok()
        .filter(|mask| *mask <= 0o777)
}

/// `create_dir_all` whose newly created directories are 0700 (existing ones are left as
/// they are: they may be a user's).
pub fn create_private_dir_all(path: &Path) -> io::Result<()> {
    let mut builder = DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        builder.mode(PRIVATE_DIR_MODE);
    }
    builder.create(path)
}

/// `OpenOptions` that create a file as 0600 (the umask can only narrow it further).
pub fn private_open_options() -> OpenOptions {
    #[allow(unused_mut)]
    let mut options = OpenOptions::new();
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(PRIVATE_FILE_MODE);
    }
    options
}

#[cfg(all(test, unix))]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn umasks_are_octal_and_at_most_0777() {
        assert_eq!(parse_umask("022"), Some(0o022));
        assert_eq!(parse_umask(" 0077\n"), Some(0o077));
        assert_eq!(parse_umask("0"), Some(0));
        for bad in [
            "",
            "abc",
            "8",
            "-22",
            "1000",
            "0x22",
            "99999999999999999999",
        ] {
            assert_eq!(parse_umask(bad), None, "{bad:?}");
        }
    }

    fn mode(path: &Path) -> u32 {
        std::fs::metadata(path).unwrap().permissions().mode() & 0o777
    }

    #[test]
    fn new_directories_are_0700_and_existing_ones_untouched() {
        let tmp = tempfile::tempdir().unwrap();
        let existing = tmp.path().join("home");
        std::fs::create_dir(&existing).unwrap();
        std::fs::set_permissions(&existing, std::fs::Permissions::from_mode(0o755)).unwrap();
        create_private_dir_all(&existing.join("a/b")).unwrap();
        assert_eq!(mode(&existing), 0o755);
        assert_eq!(mode(&existing.join("a")), 0o700);
        assert_eq!(mode(&existing.join("a/b")), 0o700);
        create_private_dir_all(&existing.join("a/b")).unwrap();
    }

    #[test]
    fn new_files_are_0600() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("f");
        private_open_options()
            .write(true)
            .create_new(true)
            .open(&path)
            .unwrap();
        assert_eq!(mode(&path), 0o600);
    }
}

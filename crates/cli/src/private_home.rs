//! `$PINCER_HOME` is its owner's alone. Two layers: the libraries create every file 0600
//! and every directory 0700 explicitly (`pincer_base::private`), and the binary runs with
//! umask 077 so whatever they forget is private too. An existing home that others can
//! read (made by hand, by an older Pincer, by a restored backup) is tightened to 0700 at
//! start with one warning line; its contents are left alone — the workspace may hold
//! files the user shares on purpose.
//!
//! The user's own umask is kept in `PINCER_USER_UMASK` (octal) for the processes Pincer
//! starts on the user's behalf: a child `pincer` (RPC worker, daemon) inherits it and
//! keeps it, and `exec` can give it back to the commands the agent runs
//! (`pincer_base::user_umask`), so files they make outside the home are made as the user
//! would make them.

use std::path::Path;

use anyhow::{Context as _, Result};
use nix::sys::stat::{Mode, umask};
use pincer_base::{PRIVATE_DIR_MODE, USER_UMASK_ENV};

/// Sets the process umask to 077 and records the user's umask in `PINCER_USER_UMASK`
/// (unless a parent `pincer` recorded it already). Must run first thing in `main`, while
/// the process has a single thread.
pub fn restrict_umask() {
    let previous = umask(Mode::from_bits_truncate(0o077)).bits() & 0o777;
    let user = pincer_base::user_umask().unwrap_or(previous);
    // SAFETY: `set_var` is unsound only when another thread reads or writes the
    // environment at the same time. This runs as the first statement of `main`, before
    // the tokio runtime, the logger, the spinner or anything else has started a thread
    // (Rust starts none before `main`, and no static initialiser of ours spawns one), so
    // this is the only thread that exists.
    #[allow(unsafe_code)]
    unsafe {
        std::env::set_var(USER_UMASK_ENV, format!("{user:03o}"));
    }
}

/// Tightens an existing `home` to 0700 when its group or others have any access, warning
/// once (one line: what was found, what was done). A missing home is left for
/// [`crate::app::App::ensure_home`] to create 0700.
pub fn secure_home(home: &Path) -> Result<()> {
    use std::os::unix::fs::PermissionsExt;
    let meta = match std::fs::metadata(home) {
        Ok(meta) if meta.is_dir() => meta,
        _ => return Ok(()),
    };
    let mode = meta.permissions().mode() & 0o777;
    if mode & 0o077 == 0 {
        return Ok(());
    }
    std::fs::set_permissions(home, std::fs::Permissions::from_mode(PRIVATE_DIR_MODE))
        .with_context(|| format!("cannot make {} private (chmod 700)", home.display()))?;
    // Once per process without a flag: after this chmod the home is 0700, so a later call
    // returns above before reaching here.
    tracing::warn!(
        "{} was accessible to other users (mode {mode:03o}); changed it to 700",
        home.display()
    );
    Ok(())
}

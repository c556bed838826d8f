//! The files of one browser profile under `$PINCER_HOME/browser/<profile>/`: one place names
//! them, so the starter, the supervisor and `stop` from another process agree.

use std::path::{Path, PathBuf};

/// The profile directory and the files the runtime keeps in it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Paths {
    dir: PathBuf,
}

impl Paths {
    pub(crate) fn new(dir: PathBuf) -> Self {
        Self { dir }
    }

    /// `<home>/browser/<profile>/` (0700).
    pub(crate) fn dir(&self) -> &Path {
        &self.dir
    }

    /// Chromium's own profile (cookies, logins): kept across starts, used by nothing else.
    pub(crate) fn user_data(&self) -> PathBuf {
        self.dir.join("user-data")
    }

    /// The running browser's record: what other processes reuse.
    pub(crate) fn record(&self) -> PathBuf {
        self.dir.join("runtime.json")
    }

    /// Taken around check-or-start and stop, so two processes never start two browsers.
    pub(crate) fn lock(&self) -> PathBuf {
        self.dir.join("lock")
    }

    /// Its modification time is the browser's last use (the idle timeout's clock).
    pub(crate) fn last_used(&self) -> PathBuf {
        self.dir.join("last-used")
    }

    /// Chromium's standard error (bounded: rotated to `chromium.log.1`).
    pub(crate) fn log(&self) -> PathBuf {
        self.dir.join("chromium.log")
    }

    pub(crate) fn old_log(&self) -> PathBuf {
        self.dir.join("chromium.log.1")
    }

    /// The supervisor's own standard error.
    pub(crate) fn supervisor_log(&self) -> PathBuf {
        self.dir.join("supervisor.log")
    }

    /// Where Chromium writes the port it picked for `--remote-debugging-port=0`.
    pub(crate) fn devtools_active_port(&self) -> PathBuf {
        self.user_data().join("DevToolsActivePort")
    }

    /// The `--user-data-dir=` argument every process of this profile's Chromium carries.
    pub(crate) fn user_data_arg(&self) -> String {
        format!("--user-data-dir={}", self.user_data().display())
    }
}

//! Which Chromium to run: `browser.executablePath` when set, else the first of the usual
//! names on `PATH`, else the usual absolute install paths.

use std::path::{Path, PathBuf};

use crate::RuntimeError;

/// Names looked up on `PATH`, in order.
const NAMES: &[&str] = &[
    "chromium",
    "chromium-browser",
    "google-chrome-stable",
    "google-chrome",
    "chrome",
];

/// Where installers put it when `PATH` does not say (snap, Google's .deb, macOS apps).
const ABSOLUTE: &[&str] = &[
    "/usr/bin/chromium",
    "/usr/bin/chromium-browser",
    "/snap/bin/chromium",
    "/usr/bin/google-chrome-stable",
    "/usr/bin/google-chrome",
    "/opt/google/chrome/chrome",
    "/Applications/Google Chrome.app/Contents/MacOS/Google Chrome",
    "/Applications/Chromium.app/Contents/MacOS/Chromium",
];

#[expect(
    clippy::disallowed_methods,
    reason = "runs on the blocking pool: find_executable"
)]
fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

fn on_path(name: &str, path_var: Option<&std::ffi::OsStr>) -> Option<PathBuf> {
    std::env::split_paths(path_var?)
        .filter(|dir| dir.is_absolute())
        .map(|dir| dir.join(name))
        .find(|candidate| is_executable(candidate))
}

/// The executable to run. Blocking (stats files): call it on the blocking pool.
pub(crate) fn find_executable(configured: Option<&Path>) -> Result<PathBuf, RuntimeError> {
    let path_var = std::env::var_os("PATH");
    if let Some(configured) = configured {
        // A bare name is looked up on PATH, as a shell would.
        let found = if configured.components().count() == 1 && !configured.is_absolute() {
            on_path(&configured.to_string_lossy(), path_var.as_deref())
        } else {
            Some(configured.to_path_buf()).filter(|p| is_executable(p))
        };
        return found.ok_or_else(|| {
            RuntimeError::Start(format!(
                "browser.executablePath {}: no such executable file",
                configured.display()
            ))
        });
    }
    NAMES
        .iter()
        .find_map(|name| on_path(name, path_var.as_deref()))
        .or_else(|| {
            ABSOLUTE
                .iter()
                .map(PathBuf::from)
                .find(|p| is_executable(p))
        })
        .ok_or(RuntimeError::NoExecutable)
}

/// [`find_executable`] on the blocking pool.
pub(crate) async fn resolve(configured: Option<&Path>) -> Result<PathBuf, RuntimeError> {
    let configured = configured.map(Path::to_path_buf);
    tokio::task::spawn_blocking(move || find_executable(configured.as_deref()))
        .await
        .map_err(|e| RuntimeError::Start(format!("looking for the browser: {e}")))?
}

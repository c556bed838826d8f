//! Tabs per session: `<state_dir>/tabs.json` records which targets each session opened and
//! which one it last focused, so a later call from another process (`pincer tools invoke
//! browser snapshot` after `… open`) acts on the same tab, and sessions sharing the browser
//! do not see each other's tabs. Every change is a read/modify/write under
//! `tabs.json.lock` (a deadline, never a hang) and an atomic 0600 replace.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};

/// What is recorded for one session.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct SessionTabs {
    /// Its targets, oldest first.
    pub targets: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub focused: Option<String>,
}

impl SessionTabs {
    /// Keeps only the targets `alive` says still exist; the focus moves to the newest
    /// remaining tab when its own is gone.
    pub fn retain(&mut self, alive: impl Fn(&str) -> bool) {
        self.targets.retain(|t| alive(t));
        if self
            .focused
            .as_ref()
            .is_none_or(|f| !self.targets.contains(f))
        {
            self.focused = self.targets.last().cloned();
        }
    }

    pub fn add_focused(&mut self, target: &str) {
        if !self.targets.iter().any(|t| t == target) {
            self.targets.push(target.to_owned());
        }
        self.focused = Some(target.to_owned());
    }

    pub fn remove(&mut self, target: &str) {
        self.retain(|t| t != target);
    }
}

/// The whole file.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct TabsFile {
    pub sessions: BTreeMap<String, SessionTabs>,
}

/// Why the record could not be used.
#[derive(Debug, thiserror::Error)]
#[error("the browser's tab record {path} could not be used: {reason}")]
pub struct TabsError {
    pub path: String,
    pub reason: String,
}

const LOCK_TIMEOUT: Duration = Duration::from_secs(10);

/// The record under a state directory.
#[derive(Debug, Clone)]
pub struct TabStore {
    path: PathBuf,
}

impl TabStore {
    pub fn new(state_dir: &Path) -> Self {
        Self {
            path: state_dir.join("tabs.json"),
        }
    }

    /// Applies `change` to the file under its lock and returns what it returned. A missing
    /// or unreadable file reads as empty (it is a cache of what the browser has; a corrupt
    /// one is rewritten).
    pub async fn update<R: Send + 'static>(
        &self,
        change: impl FnOnce(&mut TabsFile) -> R + Send + 'static,
    ) -> Result<R, TabsError> {
        let path = self.path.clone();
        let shown = path.display().to_string();
        tokio::task::spawn_blocking(move || update_blocking(&path, change))
            .await
            .map_err(|e| TabsError {
                path: shown.clone(),
                reason: e.to_string(),
            })?
            .map_err(|reason| TabsError {
                path: shown,
                reason,
            })
    }

    /// One session's record, changed by `change`.
    pub async fn session<R: Send + 'static>(
        &self,
        key: &str,
        change: impl FnOnce(&mut SessionTabs) -> R + Send + 'static,
    ) -> Result<R, TabsError> {
        let key = key.to_owned();
        self.update(move |file| {
            let tabs = file.sessions.entry(key.clone()).or_default();
            let result = change(tabs);
            if tabs.targets.is_empty() {
                file.sessions.remove(&key);
            }
            result
        })
        .await
    }
}

#[expect(
    clippy::disallowed_methods,
    reason = "runs on the blocking pool: TabStore::update"
)]
fn update_blocking<R>(path: &Path, change: impl FnOnce(&mut TabsFile) -> R) -> Result<R, String> {
    let dir = path.parent().unwrap_or(Path::new("."));
    pincer_base::private::create_private_dir_all(dir).map_err(|e| e.to_string())?;
    let lock_path = path.with_extension("json.lock");
    let lock = pincer_base::private::private_open_options()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(&lock_path)
        .map_err(|e| format!("{}: {e}", lock_path.display()))?;
    pincer_base::lock::lock_within(&lock, LOCK_TIMEOUT).map_err(|e| {
        if e.kind() == std::io::ErrorKind::TimedOut {
            pincer_base::lock::LockTimeout {
                path: lock_path.clone(),
                waited: LOCK_TIMEOUT,
            }
            .to_string()
        } else {
            e.to_string()
        }
    })?;
    let _held = pincer_base::lock::HeldLock::new(lock);
    let mut file: TabsFile = match std::fs::read(path) {
        Ok(bytes) => serde_json::from_slice(&bytes).unwrap_or_default(),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => TabsFile::default(),
        Err(e) => return Err(e.to_string()),
    };
    let before = file.clone();
    let result = change(&mut file);
    if file != before {
        let bytes = serde_json::to_vec_pretty(&file).map_err(|e| e.to_string())?;
        pincer_base::atomic::AtomicWrite::new()
            .durable(false)
            .write(path, &bytes)
            .map_err(|e| e.to_string())?;
    }
    Ok(result)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_focus_follows_the_remaining_tabs() {
        let mut tabs = SessionTabs::default();
        tabs.add_focused("a");
        tabs.add_focused("b");
        tabs.add_focused("a");
        assert_eq!(tabs.targets, ["a", "b"]);
        assert_eq!(tabs.focused.as_deref(), Some("a"));
        tabs.remove("a");
        assert_eq!(tabs.focused.as_deref(), Some("b"));
        tabs.retain(|_| false);
        assert_eq!(tabs, SessionTabs::default());
    }
}

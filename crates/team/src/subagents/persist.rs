//! The sub-agent records on disk (`$PINCER_HOME/subagents/runs.json`, 0600, written
//! atomically after each change), and what a starting gateway does with them: a run the
//! last gateway left unfinished cannot go on (its turn died with that process), so it is
//! marked failed and announced to its requester — the user hears about it instead of
//! waiting for an answer that never comes.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::registry::{SpawnRecord, SpawnStatus};
use crate::Team;

/// The file's shape (versioned, so a later layout can read this one).
#[derive(Debug, Default, Serialize, Deserialize)]
struct Saved {
    version: u32,
    runs: Vec<SpawnRecord>,
}

/// Why the records could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum PersistError {
    #[error("cannot write {}: {source}", path.display())]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot read {}: {source}", path.display())]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{} is not a sub-agent list ({source}); it was set aside as {}", path.display(), aside.display())]
    Corrupt {
        path: PathBuf,
        aside: PathBuf,
        source: serde_json::Error,
    },
}

/// Writes `runs` to `path` (blocking).
pub fn save(path: &Path, runs: Vec<SpawnRecord>) -> Result<(), PersistError> {
    let write = |source| PersistError::Write {
        path: path.to_owned(),
        source,
    };
    if let Some(dir) = path.parent() {
        pincer_base::create_private_dir_all(dir).map_err(write)?;
    }
    let bytes = serde_json::to_vec_pretty(&Saved { version: 1, runs })
        .map_err(|e| write(std::io::Error::other(e)))?;
    pincer_base::write_atomic(path, &bytes).map_err(write)
}

/// The records at `path` (none when there is no file). A file that does not parse is moved
/// aside (never silently overwritten) and reported.
pub fn load(path: &Path) -> Result<Vec<SpawnRecord>, PersistError> {
    let bytes = match std::fs::read(path) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(source) => {
            return Err(PersistError::Read {
                path: path.to_owned(),
                source,
            });
        }
    };
    match serde_json::from_slice::<Saved>(&bytes) {
        Ok(saved) => Ok(saved.runs),
        Err(source) => {
            let aside = path.with_extension(format!("json.corrupt.{}", pincer_base::now_ms()));
            std::fs::rename(path, &aside).map_err(|source| PersistError::Write {
                path: aside.clone(),
                source,
            })?;
            Err(PersistError::Corrupt {
                path: path.to_owned(),
                aside,
                source,
            })
        }
    }
}

impl Team {
    /// Saves the records, if the team has a file (on the blocking pool; a failure is
    /// logged: the runs go on).
    pub(crate) async fn save(&self) {
        let Some(path) = self.state_file().map(Path::to_owned) else {
            return;
        };
        let runs = self.registry().snapshot();
        let saved = tokio::task::spawn_blocking(move || save(&path, runs)).await;
        match saved {
            Ok(Ok(())) => {}
            Ok(Err(e)) => tracing::warn!(error = %e, "sub-agent records not saved"),
            Err(e) => tracing::warn!(error = %e, "saving the sub-agent records failed"),
        }
    }

    /// Loads the saved records as the gateway starts: finished ones are listed again, and
    /// each one the last gateway left unfinished is marked failed and announced to its
    /// requester. Call it once the port is bound.
    pub async fn recover(self: &Arc<Self>) {
        let Some(path) = self.state_file().map(Path::to_owned) else {
            return;
        };
        let loaded = tokio::task::spawn_blocking(move || load(&path)).await;
        let runs = match loaded {
            Ok(Ok(runs)) => runs,
            Ok(Err(e)) => {
                tracing::warn!(error = %e, "sub-agent records not recovered");
                return;
            }
            Err(e) => {
                tracing::warn!(error = %e, "recovering the sub-agent records failed");
                return;
            }
        };
        let mut interrupted = Vec::new();
        for mut record in runs {
            if !record.status.is_finished() {
                record.status =
                    SpawnStatus::Failed("interrupted: the gateway stopped while it ran".to_owned());
                record.ended_at = Some(pincer_base::now_ms());
                if !record.delegated {
                    interrupted.push(record.clone());
                }
            }
            self.registry().insert(record);
        }
        self.registry()
            .sweep(self.settings().subagents.archive_after);
        self.save().await;
        let Some(port) = self.slot().get() else {
            return;
        };
        for record in interrupted {
            let port = Arc::clone(&port);
            tokio::spawn(async move { super::announce::announce(&port, &record, None).await });
        }
    }
}

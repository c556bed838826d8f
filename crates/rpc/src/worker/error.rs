//! The worker's errors. What a command fails with goes on the wire as the `error` field of
//! its response, written by [`wire_text`]: the error and its causes joined by `": "` — the
//! texts `pincer rpc` has always answered with, which clients and the interop script compare.

use std::path::PathBuf;

use crate::worker::host::HostError;

/// Why a command (or the worker's start) failed.
#[derive(Debug, thiserror::Error)]
pub enum WorkerError {
    /// `prompt` while a run goes on, without a `streamingBehavior` (pi's own text).
    #[error(
        "Agent is already processing. Specify streamingBehavior ('steer' or 'followUp') to \
         queue the message."
    )]
    Busy,
    #[error("cannot change the model while the agent is streaming; abort or wait first")]
    ModelWhileStreaming,
    #[error("cannot change auto-retry while the agent is streaming")]
    RetryWhileStreaming,
    /// A scoped model (`cycle_model`) that is not `provider/model`.
    #[error("configured model {0:?} is not provider/model")]
    NotProviderModel(String),
    #[error("unknown thinking level {0:?}: use off, minimal, low, medium, high or xhigh")]
    UnknownThinkingLevel(String),
    #[error("Session name cannot be empty")]
    EmptySessionName,
    /// `bash` could not start or read its command (the I/O error is part of the text, as
    /// it always was, and not a separate cause).
    #[error("cannot run the command: {0}")]
    Bash(std::io::Error),
    /// `fork` of an entry that is not a user message of the session (pi's text).
    #[error("Invalid entry ID for forking")]
    InvalidForkEntry,
    /// `clone` of a session without entries (pi's text).
    #[error("Cannot clone session: no current entry selected")]
    NothingToClone,
    /// `export_html` before the session file exists (pi's text).
    #[error("Nothing to export yet - start a conversation first")]
    NothingToExport,
    #[error("cannot write the export {}", path.display())]
    Export {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// The agent refused (`compact`).
    #[error(transparent)]
    Agent(#[from] pincer_agent::AgentError),
    /// The host could not compose the agent.
    #[error(transparent)]
    Host(#[from] HostError),
    #[error(transparent)]
    Session(#[from] SessionFileError),
}

/// What went wrong with the session file.
#[derive(Debug, thiserror::Error)]
pub enum SessionFileError {
    #[error("cannot open the session file {}", path.display())]
    Open {
        path: PathBuf,
        #[source]
        source: pincer_store::StoreError,
    },
    #[error("cannot create the session directory {}", dir.display())]
    CreateDir {
        dir: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot create the session file {}", path.display())]
    Create {
        path: PathBuf,
        #[source]
        source: pincer_store::StoreError,
    },
    #[error("the session file {} was not written", path.display())]
    NotWritten { path: PathBuf },
    #[error(transparent)]
    Write(#[from] pincer_store::StoreError),
    /// The blocking task that touched the file did not finish (it panicked).
    #[error("the session file's task failed")]
    Blocking(#[source] tokio::task::JoinError),
}

/// The text of `error` for pi's `error` field: its message, then each cause, joined by
/// `": "` (the shape `anyhow` prints with `{:#}`, which is what the worker always wrote).
pub fn wire_text(error: &dyn std::error::Error) -> String {
    pincer_base::error_chain(error)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wire_text_joins_the_causes() {
        let error = WorkerError::Session(SessionFileError::CreateDir {
            dir: PathBuf::from("/x/sessions"),
            source: std::io::Error::other("denied"),
        });
        assert_eq!(
            wire_text(&error),
            "cannot create the session directory /x/sessions: denied"
        );
    }

    #[test]
    fn bash_errors_carry_their_io_error_in_the_message_only() {
        let error = WorkerError::Bash(std::io::Error::other("no sh"));
        assert_eq!(wire_text(&error), "cannot run the command: no sh");
    }

    #[test]
    fn busy_is_pis_text() {
        assert_eq!(
            wire_text(&WorkerError::Busy),
            "Agent is already processing. Specify streamingBehavior ('steer' or 'followUp') \
             to queue the message."
        );
    }
}

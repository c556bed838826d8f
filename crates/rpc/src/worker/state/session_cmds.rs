//! The worker's session commands: a new session, another session file, a fork of this one
//! or a clone of its branch (pi's `fork`, `get_fork_messages`, `clone`), the session's
//! export as HTML (`export_html`), its name and its statistics. Every file read or write
//! happens on the blocking pool.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};

use super::{Worker, off_thread, on_session};
use crate::worker::error::{SessionFileError, WorkerError};
use crate::worker::export::{ExportPage, default_file_name, render};
use crate::worker::fork::{clone_branch, fork, fork_messages};
use crate::worker::parts::SessionStats;
use crate::worker::session_file::SessionFile;

type Result<T, E = WorkerError> = std::result::Result<T, E>;

impl Worker {
    /// `new_session`: a fresh session file (the old one stays); `{cancelled: false}`.
    pub async fn new_session(&mut self, parent_session: Option<String>) -> Result<Value> {
        self.agent.abort();
        self.agent.wait_for_idle().await;
        let config = self.current_config()?;
        let state = self.agent.state();
        let session = SessionFile::create(
            &self.options.session_dir,
            &self.options.cwd,
            parent_session,
            &state.model.provider,
            &state.model.id,
            state.thinking_level.as_str(),
        )?;
        // A new mutex, not a new value in the old one: a late append of the old agent
        // (already on the blocking pool) still goes to the old file.
        self.session = Arc::new(Mutex::new(session));
        self.session_key = self.find_session_key().await;
        self.install(config, Vec::new());
        Ok(json!({ "cancelled": false }))
    }

    /// `switch_session{sessionPath}`: continues another session file.
    pub async fn switch_session(&mut self, path: &Path) -> Result<Value> {
        self.agent.abort();
        self.agent.wait_for_idle().await;
        let path = path.to_owned();
        let session = off_thread(move || SessionFile::open(&path)).await??;
        let config = self.current_config()?;
        let messages = session.messages();
        // A new mutex, not a new value in the old one: a late append of the old agent
        // (already on the blocking pool) still goes to the old file.
        self.session = Arc::new(Mutex::new(session));
        self.session_key = self.find_session_key().await;
        self.install(config, messages);
        Ok(json!({ "cancelled": false }))
    }

    /// `get_session_stats`.
    pub fn get_session_stats(&self) -> Value {
        let messages = self.agent.state().messages;
        let mut stats = SessionStats::default();
        for message in &messages {
            stats.add(message);
        }
        let session = self.session();
        json!({
            "sessionFile": session.path().display().to_string(),
            "sessionId": session.id(),
            "userMessages": stats.user,
            "assistantMessages": stats.assistant,
            "toolCalls": stats.tool_calls,
            "toolResults": stats.tool_results,
            "totalMessages": messages.len(),
            "tokens": {
                "input": stats.input, "output": stats.output, "cacheRead": stats.cache_read,
                "cacheWrite": stats.cache_write,
                "total": stats.input + stats.output + stats.cache_read + stats.cache_write,
            },
            "cost": stats.cost,
        })
    }

    pub async fn set_session_name(&self, name: &str) -> Result<()> {
        let name = name.trim();
        if name.is_empty() {
            return Err(WorkerError::EmptySessionName);
        }
        let name = name.to_owned();
        Ok(on_session(&self.session, move |session| session.set_name(&name)).await??)
    }

    /// `fork{entryId}`: a new session holding this one's path up to the user message
    /// `entryId` (that message left out), continued from there; answers pi's
    /// `{text, cancelled}` with the message's text.
    pub async fn fork(&mut self, entry_id: &str) -> Result<Value> {
        let (dir, cwd, id) = (
            self.options.session_dir.clone(),
            self.options.cwd.clone(),
            entry_id.to_owned(),
        );
        let forked = on_session(&self.session, move |session| {
            session
                .written()
                .and_then(|transcript| fork(transcript, &id, &dir, &cwd))
        })
        .await?
        .ok_or(WorkerError::InvalidForkEntry)?;
        self.continue_in(forked.session).await?;
        Ok(json!({ "text": forked.text, "cancelled": false }))
    }

    /// `clone`: a new session holding the current branch whole, continued from there;
    /// answers pi's `{cancelled}`.
    pub async fn clone_session(&mut self) -> Result<Value> {
        let (dir, cwd) = (self.options.session_dir.clone(), self.options.cwd.clone());
        let cloned = on_session(&self.session, move |session| {
            clone_branch(session, &dir, &cwd)
        })
        .await?
        .ok_or(WorkerError::NothingToClone)?;
        self.continue_in(cloned).await?;
        Ok(json!({ "cancelled": false }))
    }

    /// Stops the run and goes on in `session` (a fork's or a clone's, not written yet):
    /// written now when it holds a conversation (pi writes a fork with a reply at once),
    /// otherwise with its first message, as every new session.
    async fn continue_in(&mut self, mut session: SessionFile) -> Result<()> {
        self.agent.abort();
        self.agent.wait_for_idle().await;
        let config = self.current_config()?;
        let session = off_thread(move || {
            if session.pending_has_messages() {
                session.transcript()?;
            }
            Ok::<_, SessionFileError>(session)
        })
        .await??;
        let messages = session.messages();
        // A new mutex, not a new value in the old one: a late append of the old agent
        // (already on the blocking pool) still goes to the old file.
        self.session = Arc::new(Mutex::new(session));
        self.session_key = self.find_session_key().await;
        self.install(config, messages);
        Ok(())
    }

    /// `get_fork_messages`: `{messages: [{entryId, text}]}`.
    pub async fn get_fork_messages(&self) -> Result<Value> {
        let messages =
            on_session(&self.session, |session| fork_messages(session.written())).await?;
        Ok(json!({ "messages": messages }))
    }

    /// `export_html{outputPath?}`: the session's current branch as one HTML page, written
    /// atomically to `outputPath` (relative to the worker's directory) or to pi's default
    /// name there; answers `{path}` with the path as given (or the default name), as pi does.
    pub async fn export_html(&self, output_path: Option<String>) -> Result<Value> {
        let state = self.agent.state();
        let cwd = self.options.cwd.clone();
        let (shown, html) = on_session(&self.session, move |session| {
            let name = session.name();
            let transcript = session.written().ok_or(WorkerError::NothingToExport)?;
            // An empty path is no path, as in pi.
            let shown = output_path.filter(|p| !p.is_empty()).unwrap_or_else(|| {
                let stem = transcript
                    .path()
                    .file_stem()
                    .map(|s| s.to_string_lossy().into_owned())
                    .unwrap_or_default();
                default_file_name(&stem)
            });
            let entries = transcript
                .leaf_id()
                .map(|leaf| transcript.branch(leaf))
                .unwrap_or_default();
            let html = render(&ExportPage {
                header: transcript.header(),
                name: name.as_deref(),
                entries: &entries,
                system_prompt: &state.system_prompt,
                tools: &state.tool_names,
            });
            Ok::<_, WorkerError>((shown, html))
        })
        .await??;
        let target = resolve(&cwd, &shown);
        off_thread(move || {
            pincer_base::write_atomic(&target, html.as_bytes()).map_err(|source| {
                WorkerError::Export {
                    path: target,
                    source,
                }
            })
        })
        .await??;
        Ok(json!({ "path": shown }))
    }
}

/// `path` taken relative to `cwd` when it is not absolute.
fn resolve(cwd: &Path, path: &str) -> PathBuf {
    let path = Path::new(path);
    if path.is_absolute() {
        path.to_owned()
    } else {
        cwd.join(path)
    }
}

//! The session files of `pincer rpc`, laid out as pi lays them out: one pi v3 JSONL file per
//! session in the session directory, named `<timestamp>_<sessionId>.jsonl` (the ISO time with
//! `:` and `.` turned into `-`), starting with the header, a `model_change` and a
//! `thinking_level_change` entry. `--continue` resumes the newest file of the directory,
//! `--session <file>` opens one file, and otherwise a new session starts — so pi and Pincer
//! workers can take turns on the same directory.

use std::path::{Path, PathBuf};

use anyhow::{Context as _, Result};
use pincer_ai::Message;
use pincer_store::{
    EntryBody, ModelChangeEntry, SessionHeader, SessionInfoEntry, ThinkingLevelChangeEntry,
    Transcript,
};

/// An open session of the worker.
pub struct SessionFile {
    pub transcript: Transcript,
}

impl SessionFile {
    /// A new session in `dir` (created 0700 if missing), its first entries recording
    /// `provider`/`model_id` and `thinking`.
    pub fn create(
        dir: &Path,
        cwd: &Path,
        parent_session: Option<String>,
        provider: &str,
        model_id: &str,
        thinking: &str,
    ) -> Result<Self> {
        create_private_dir(dir)
            .with_context(|| format!("cannot create the session directory {}", dir.display()))?;
        let id = pincer_store::ids::session_id();
        let mut header = SessionHeader::new(&id, cwd.display().to_string());
        header.parent_session = parent_session;
        let stamp = header.timestamp.replace([':', '.'], "-");
        let path = dir.join(format!("{stamp}_{id}.jsonl"));
        let mut transcript = Transcript::create(&path, header)
            .with_context(|| format!("cannot create the session file {}", path.display()))?;
        transcript.append_body(EntryBody::ModelChange(ModelChangeEntry {
            provider: provider.to_owned(),
            model_id: model_id.to_owned(),
        }))?;
        transcript.append_body(EntryBody::ThinkingLevelChange(ThinkingLevelChangeEntry {
            thinking_level: thinking.to_owned(),
        }))?;
        Ok(Self { transcript })
    }

    /// Opens the session file at `path` (a torn last line is repaired, as on every load).
    pub fn open(path: &Path) -> Result<Self> {
        let (transcript, report) = Transcript::open(path)
            .with_context(|| format!("cannot open the session file {}", path.display()))?;
        for issue in &report.invalid_lines {
            tracing::warn!(path = %path.display(), line = issue.line, error = %issue.error, "session file: invalid line skipped");
        }
        if let Some(repair) = &report.repaired_tail {
            tracing::warn!(path = %path.display(), ?repair, "session file: torn last line repaired");
        }
        Ok(Self { transcript })
    }

    /// The newest session file of `dir`, by name (names start with the creation time).
    pub fn newest_in(dir: &Path) -> Option<PathBuf> {
        let entries = std::fs::read_dir(dir).ok()?;
        entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "jsonl") && p.is_file())
            .max_by(|a, b| a.file_name().cmp(&b.file_name()))
    }

    pub fn path(&self) -> &Path {
        self.transcript.path()
    }

    pub fn id(&self) -> &str {
        &self.transcript.header().id
    }

    /// The conversation the model sees (compactions applied).
    pub fn messages(&self) -> Vec<Message> {
        self.transcript.context()
    }

    pub fn append_message(&mut self, message: Message) -> Result<()> {
        self.transcript.append_message(message)?;
        Ok(())
    }

    pub fn record_model(&mut self, provider: &str, model_id: &str) -> Result<()> {
        self.transcript
            .append_body(EntryBody::ModelChange(ModelChangeEntry {
                provider: provider.to_owned(),
                model_id: model_id.to_owned(),
            }))?;
        Ok(())
    }

    pub fn record_thinking(&mut self, level: &str) -> Result<()> {
        self.transcript
            .append_body(EntryBody::ThinkingLevelChange(ThinkingLevelChangeEntry {
                thinking_level: level.to_owned(),
            }))?;
        Ok(())
    }

    /// The name the last `session_info` entry gave the session.
    pub fn name(&self) -> Option<String> {
        self.transcript
            .entries()
            .iter()
            .rev()
            .find_map(|e| match &e.body {
                EntryBody::SessionInfo(info) => info.name.clone(),
                _ => None,
            })
    }

    pub fn set_name(&mut self, name: &str) -> Result<()> {
        self.transcript
            .append_body(EntryBody::SessionInfo(SessionInfoEntry {
                name: Some(name.to_owned()),
            }))?;
        Ok(())
    }
}

/// Creates `dir` and its parents, the new ones 0700 (sessions are private).
fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::DirBuilderExt as _;
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
}

//! The session files of `pincer rpc`, laid out as pi lays them out: one pi v3 JSONL file per
//! session in the session directory, named `<timestamp>_<sessionId>.jsonl` (the ISO time with
//! `:` and `.` turned into `-`), starting with the header, a `model_change` and a
//! `thinking_level_change` entry. `--continue` resumes the newest file of the directory,
//! `--session <file>` opens one file, and otherwise a new session starts — so pi and Pincer
//! workers can take turns on the same directory.

use std::path::{Path, PathBuf};

use pincer_ai::Message;
use pincer_store::{
    Entry, EntryBody, ModelChangeEntry, SessionHeader, SessionInfoEntry, ThinkingLevelChangeEntry,
    Transcript,
};

use crate::worker::error::SessionFileError;

type Result<T, E = SessionFileError> = std::result::Result<T, E>;

/// An open session of the worker. A new session is written only once its first message
/// is (as pi writes its files on the first reply): a worker that is started and pointed at
/// another session (`switch_session`, what the gateway's pool does) leaves no empty file
/// behind.
pub struct SessionFile {
    state: State,
}

enum State {
    /// Not on disk yet: the header and the entries to write first (with their ids and
    /// parents: a fork's carry those of the session it branched from).
    Pending {
        path: PathBuf,
        header: SessionHeader,
        entries: Vec<Entry>,
    },
    Open(Transcript),
}

impl SessionFile {
    /// A new session in `dir` (created 0700 when the file is), its first entries recording
    /// `provider`/`model_id` and `thinking`.
    pub fn create(
        dir: &Path,
        cwd: &Path,
        parent_session: Option<String>,
        provider: &str,
        model_id: &str,
        thinking: &str,
    ) -> Result<Self> {
        let mut session = Self::pending(dir, cwd, parent_session, Vec::new());
        session.record(EntryBody::ModelChange(ModelChangeEntry {
            provider: provider.to_owned(),
            model_id: model_id.to_owned(),
        }))?;
        session.record(EntryBody::ThinkingLevelChange(ThinkingLevelChangeEntry {
            thinking_level: thinking.to_owned(),
        }))?;
        Ok(session)
    }

    /// A session not on disk yet, named as pi names its files, holding `entries`.
    pub(crate) fn pending(
        dir: &Path,
        cwd: &Path,
        parent_session: Option<String>,
        entries: Vec<Entry>,
    ) -> Self {
        let id = pincer_store::ids::session_id();
        let mut header = SessionHeader::new(&id, cwd.display().to_string());
        header.parent_session = parent_session;
        let stamp = header.timestamp.replace([':', '.'], "-");
        let path = dir.join(format!("{stamp}_{id}.jsonl"));
        Self {
            state: State::Pending {
                path,
                header,
                entries,
            },
        }
    }

    /// Opens the session file at `path` (a torn last line is repaired, as on every load).
    pub fn open(path: &Path) -> Result<Self> {
        let (transcript, report) =
            Transcript::open(path).map_err(|source| SessionFileError::Open {
                path: path.to_owned(),
                source,
            })?;
        for issue in &report.invalid_lines {
            tracing::warn!(path = %path.display(), line = issue.line, error = %issue.error, "session file: invalid line skipped");
        }
        if let Some(repair) = &report.repaired_tail {
            tracing::warn!(path = %path.display(), ?repair, "session file: torn last line repaired");
        }
        Ok(Self {
            state: State::Open(transcript),
        })
    }

    /// The transcript, written to disk first if it is not yet.
    pub(crate) fn transcript(&mut self) -> Result<&mut Transcript> {
        if let State::Pending {
            path,
            header,
            entries,
        } = &mut self.state
        {
            let dir = path.parent().unwrap_or(Path::new("."));
            create_private_dir(dir).map_err(|source| SessionFileError::CreateDir {
                dir: dir.to_owned(),
                source,
            })?;
            let mut transcript =
                Transcript::create(path.clone(), header.clone()).map_err(|source| {
                    SessionFileError::Create {
                        path: path.clone(),
                        source,
                    }
                })?;
            // One fsync for them all (a fork may carry a long conversation).
            transcript.set_sync_each_append(false);
            for entry in entries.drain(..) {
                transcript.append(entry)?;
            }
            transcript.sync()?;
            transcript.set_sync_each_append(true);
            self.state = State::Open(transcript);
        }
        match &mut self.state {
            State::Open(transcript) => Ok(transcript),
            State::Pending { path, .. } => Err(SessionFileError::NotWritten { path: path.clone() }),
        }
    }

    /// Adds `body`: to the file, or to what is written with the first message.
    fn record(&mut self, body: EntryBody) -> Result<()> {
        match &mut self.state {
            State::Pending { entries, .. } => {
                let parent = entries.last().map(|e| e.id.clone());
                entries.push(Entry::new(parent, body));
            }
            State::Open(transcript) => {
                transcript.append_body(body)?;
            }
        }
        Ok(())
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
        match &self.state {
            State::Pending { path, .. } => path,
            State::Open(transcript) => transcript.path(),
        }
    }

    /// The entries waiting to be written with the first message (none once it is).
    pub(crate) fn pending_entries(&self) -> &[Entry] {
        match &self.state {
            State::Pending { entries, .. } => entries,
            State::Open(_) => &[],
        }
    }

    /// Whether the session is not on disk yet but holds messages (a fork's).
    pub(crate) fn pending_has_messages(&self) -> bool {
        match &self.state {
            State::Pending { entries, .. } => entries
                .iter()
                .any(|e| matches!(e.body, EntryBody::Message(_))),
            State::Open(_) => false,
        }
    }

    /// The transcript, when the session is on disk.
    pub(crate) fn written(&self) -> Option<&Transcript> {
        match &self.state {
            State::Pending { .. } => None,
            State::Open(transcript) => Some(transcript),
        }
    }

    pub fn id(&self) -> &str {
        match &self.state {
            State::Pending { header, .. } => &header.id,
            State::Open(transcript) => &transcript.header().id,
        }
    }

    /// The conversation the model sees (compactions applied).
    pub fn messages(&self) -> Vec<Message> {
        match &self.state {
            State::Pending { .. } => Vec::new(),
            State::Open(transcript) => transcript.context(),
        }
    }

    pub fn append_message(&mut self, message: Message) -> Result<()> {
        self.transcript()?.append_message(message)?;
        Ok(())
    }

    pub fn record_model(&mut self, provider: &str, model_id: &str) -> Result<()> {
        self.record(EntryBody::ModelChange(ModelChangeEntry {
            provider: provider.to_owned(),
            model_id: model_id.to_owned(),
        }))
    }

    pub fn record_thinking(&mut self, level: &str) -> Result<()> {
        self.record(EntryBody::ThinkingLevelChange(ThinkingLevelChangeEntry {
            thinking_level: level.to_owned(),
        }))
    }

    /// The name the last `session_info` entry gave the session.
    pub fn name(&self) -> Option<String> {
        let name_of = |body: &EntryBody| match body {
            EntryBody::SessionInfo(info) => info.name.clone(),
            _ => None,
        };
        match &self.state {
            State::Pending { entries, .. } => entries.iter().rev().find_map(|e| name_of(&e.body)),
            State::Open(transcript) => transcript
                .entries()
                .iter()
                .rev()
                .find_map(|e| name_of(&e.body)),
        }
    }

    pub fn set_name(&mut self, name: &str) -> Result<()> {
        self.record(EntryBody::SessionInfo(SessionInfoEntry {
            name: Some(name.to_owned()),
        }))
    }
}

/// Creates `dir` and its parents, the new ones 0700 (sessions are private).
fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    pincer_base::create_private_dir_all(dir)
}

//! A session transcript: one pi v3 JSONL file, a header line then tree entries.
//!
//! Loading is forgiving: a torn last line (a crash mid-append, a block of NULs) is truncated
//! away and reported; an invalid line elsewhere is reported and skipped but left in the file.
//! Appends take an exclusive lock on the file (std's `File::lock`, `flock` on Unix) for the
//! length of one write, so two handles or processes never interleave bytes; before writing,
//! an append reads whatever other writers added so the new entry's parent is the real leaf.

use std::collections::{HashMap, HashSet};
use std::fs::OpenOptions;
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use pincer_ai::{ContentBlock, Message, UserContent, UserMessage};
use serde_json::Value;

use crate::entry::{Entry, EntryBody, SessionHeader};
use crate::error::{Result, StoreError};

/// pi's text before a compaction summary (`messages.ts`).
pub const COMPACTION_SUMMARY_PREFIX: &str = "The conversation history before this point was compacted into the following summary:\n\n<summary>\n";
/// pi's text after a compaction summary.
pub const COMPACTION_SUMMARY_SUFFIX: &str = "\n</summary>";
/// pi's text before a branch summary.
pub const BRANCH_SUMMARY_PREFIX: &str =
    "The following is a summary of a branch that this conversation came back from:\n\n<summary>\n";
/// pi's text after a branch summary.
pub const BRANCH_SUMMARY_SUFFIX: &str = "</summary>";

/// A line that could not be read as an entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LineIssue {
    /// 1-based line number.
    pub line: usize,
    /// Byte offset of the line's start.
    pub offset: u64,
    pub error: String,
}

/// How a torn end of file was repaired.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TailRepair {
    /// The invalid last line was cut off: the file now ends at byte `new_len`. The cut
    /// bytes were saved to `saved_to` first, so nothing is lost.
    Truncated {
        line: usize,
        removed_bytes: u64,
        new_len: u64,
        error: String,
        saved_to: PathBuf,
    },
    /// The last line was valid but lacked its newline; one was appended.
    NewlineAdded { line: usize },
}

/// What [`Transcript::open`] found and fixed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LoadReport {
    /// Invalid lines before the last one, skipped (still in the file).
    pub invalid_lines: Vec<LineIssue>,
    /// The repair of the file's end, if it needed one.
    pub repaired_tail: Option<TailRepair>,
    /// Entries kept verbatim because their type or fields are not understood.
    pub unknown_entries: usize,
}

impl LoadReport {
    /// True when the file was read without any issue.
    pub fn is_clean(&self) -> bool {
        self.invalid_lines.is_empty() && self.repaired_tail.is_none()
    }
}

/// An open transcript: the header, the entries in file order and the current leaf.
#[derive(Debug, Clone)]
pub struct Transcript {
    path: PathBuf,
    header: SessionHeader,
    entries: Vec<Entry>,
    by_id: HashMap<String, usize>,
    /// Bytes of the file already read into `entries`.
    len: u64,
}

impl Transcript {
    /// Creates a new transcript holding only `header`, atomically; fails if `path` exists.
    pub fn create(path: impl Into<PathBuf>, header: SessionHeader) -> Result<Self> {
        let path = path.into();
        if path.exists() {
            return Err(StoreError::Exists { path });
        }
        let mut line = serde_json::to_vec(&header).map_err(|source| StoreError::Serialize {
            path: path.clone(),
            source,
        })?;
        line.push(b'\n');
        crate::atomic::write_atomic(&path, &line, None)?;
        Ok(Self {
            path,
            header,
            entries: Vec::new(),
            by_id: HashMap::new(),
            len: line.len() as u64,
        })
    }

    /// Opens a transcript, repairing a torn last line. Fails only on I/O errors or when the
    /// first line is not a session header.
    pub fn open(path: impl Into<PathBuf>) -> Result<(Self, LoadReport)> {
        let path = path.into();
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .open(&path)
            .map_err(|e| StoreError::io(&path, e))?;
        file.lock().map_err(|e| StoreError::io(&path, e))?;
        let mut bytes = Vec::new();
        file.read_to_end(&mut bytes)
            .map_err(|e| StoreError::io(&path, e))?;
        let mut report = LoadReport::default();
        let (header, body_start) = parse_header(&path, &bytes)?;
        let mut t = Self {
            path,
            header,
            entries: Vec::new(),
            by_id: HashMap::new(),
            len: 0,
        };
        let (consumed, tail) = t.ingest(&bytes, body_start, &mut report);
        t.len = consumed;
        if let Some((line, start, error)) = tail {
            let removed = bytes.len() as u64 - start;
            // Keep what is cut beside the transcript before cutting it.
            let saved_to = torn_path(&t.path);
            crate::atomic::write_atomic(&saved_to, &bytes[start as usize..], Some(0o600))?;
            file.set_len(start)
                .map_err(|e| StoreError::io(&t.path, e))?;
            file.sync_all().map_err(|e| StoreError::io(&t.path, e))?;
            tracing::warn!(path = %t.path.display(), line, removed, "repaired torn transcript tail");
            report.repaired_tail = Some(TailRepair::Truncated {
                line,
                removed_bytes: removed,
                new_len: start,
                error,
                saved_to,
            });
            t.len = start;
        } else if bytes.last().is_some_and(|b| *b != b'\n') {
            file.seek(SeekFrom::End(0))
                .and_then(|_| file.write_all(b"\n"))
                .and_then(|()| file.sync_all())
                .map_err(|e| StoreError::io(&t.path, e))?;
            t.len += 1;
            let line = bytes.iter().filter(|b| **b == b'\n').count() + 1;
            report.repaired_tail = Some(TailRepair::NewlineAdded { line });
        }
        for issue in &report.invalid_lines {
            tracing::warn!(path = %t.path.display(), line = issue.line, error = %issue.error, "skipped invalid transcript line");
        }
        Ok((t, report))
    }

    /// Parses the lines of `bytes[start..]` into entries. Returns the byte count consumed
    /// and, if the last line is invalid, its (line number, start offset, error).
    fn ingest(
        &mut self,
        bytes: &[u8],
        start: usize,
        report: &mut LoadReport,
    ) -> (u64, Option<(usize, u64, String)>) {
        let mut pos = start;
        let mut line_no = 1 + bytes[..start].iter().filter(|b| **b == b'\n').count();
        while pos < bytes.len() {
            let end = bytes[pos..]
                .iter()
                .position(|b| *b == b'\n')
                .map_or(bytes.len(), |i| pos + i);
            let line = &bytes[pos..end];
            let next = (end + 1).min(bytes.len());
            let is_last = next >= bytes.len();
            if !line.iter().all(u8::is_ascii_whitespace) {
                match serde_json::from_slice::<Entry>(line) {
                    Ok(entry) => {
                        if matches!(entry.body, EntryBody::Unknown { .. }) {
                            report.unknown_entries += 1;
                        }
                        self.push(entry);
                    }
                    Err(e) if is_last => {
                        return (pos as u64, Some((line_no, pos as u64, e.to_string())));
                    }
                    Err(e) => report.invalid_lines.push(LineIssue {
                        line: line_no,
                        offset: pos as u64,
                        error: e.to_string(),
                    }),
                }
            }
            pos = next;
            line_no += 1;
        }
        (pos as u64, None)
    }

    fn push(&mut self, entry: Entry) {
        self.by_id.insert(entry.id.clone(), self.entries.len());
        self.entries.push(entry);
    }

    /// Appends a new entry after the current leaf (fresh id, stamped now) and returns it.
    pub fn append_body(&mut self, body: EntryBody) -> Result<&Entry> {
        self.append_with(|leaf| Entry::new(leaf, body))
    }

    /// Appends `entry` as given (its `parentId` is not changed).
    pub fn append(&mut self, entry: Entry) -> Result<&Entry> {
        self.append_with(|_| entry)
    }

    fn append_with(&mut self, make: impl FnOnce(Option<String>) -> Entry) -> Result<&Entry> {
        let path = self.path.clone();
        let io = |e| StoreError::io(&path, e);
        let mut file = OpenOptions::new()
            .read(true)
            .append(true)
            .open(&path)
            .map_err(io)?;
        file.lock().map_err(io)?;
        // Catch up with lines other writers appended since we last looked.
        let file_len = file.metadata().map_err(io)?.len();
        let mut line = Vec::new();
        if file_len > self.len {
            let mut tail = Vec::new();
            file.seek(SeekFrom::Start(self.len)).map_err(io)?;
            file.read_to_end(&mut tail).map_err(io)?;
            let mut report = LoadReport::default();
            let (_, torn) = self.ingest(&tail, 0, &mut report);
            if let Some((_, _, error)) = torn {
                tracing::warn!(path = %path.display(), %error, "invalid line at the end of transcript");
            }
            self.len += tail.len() as u64;
            if tail.last().is_some_and(|b| *b != b'\n') {
                // Never glue our line to a torn one a crashed writer left behind.
                line.push(b'\n');
            }
        }
        let entry = make(self.leaf_id().map(str::to_owned));
        serde_json::to_writer(&mut line, &entry).map_err(|source| StoreError::Serialize {
            path: path.clone(),
            source,
        })?;
        line.push(b'\n');
        file.write_all(&line).map_err(io)?;
        file.flush().map_err(io)?;
        file.sync_data().map_err(io)?;
        self.len += line.len() as u64;
        self.push(entry);
        let _ = file.unlock();
        Ok(&self.entries[self.entries.len() - 1])
    }

    /// The file of this transcript.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The header line.
    pub fn header(&self) -> &SessionHeader {
        &self.header
    }

    /// All entries, in file order.
    pub fn entries(&self) -> &[Entry] {
        &self.entries
    }

    /// The entry with this id (the last one, if ids repeat).
    pub fn get(&self, id: &str) -> Option<&Entry> {
        self.by_id.get(id).map(|i| &self.entries[*i])
    }

    /// The id of the current leaf: the last entry of the file.
    pub fn leaf_id(&self) -> Option<&str> {
        self.entries.last().map(|e| e.id.as_str())
    }

    /// The entries from the root to `leaf_id`, following `parentId` (cycles are cut).
    pub fn branch(&self, leaf_id: &str) -> Vec<&Entry> {
        let mut path = Vec::new();
        let mut seen = HashSet::new();
        let mut cur = self.get(leaf_id);
        while let Some(e) = cur {
            if !seen.insert(e.id.as_str()) {
                break;
            }
            path.push(e);
            cur = e.parent_id.as_deref().and_then(|p| self.get(p));
        }
        path.reverse();
        path
    }

    /// The messages for the model from the current leaf; see [`Transcript::context_at`].
    pub fn context(&self) -> Vec<Message> {
        match self.leaf_id() {
            Some(leaf) => self.context_at(leaf),
            None => Vec::new(),
        }
    }

    /// The messages for the model on the path root → `leaf_id`, as pi's
    /// `buildSessionContext`: with a compaction on the path, its summary comes first, then
    /// the entries from `firstKeptEntryId` up to the compaction, then those after it.
    pub fn context_at(&self, leaf_id: &str) -> Vec<Message> {
        let path = self.branch(leaf_id);
        let compaction = path
            .iter()
            .enumerate()
            .rev()
            .find_map(|(i, e)| match &e.body {
                EntryBody::Compaction(c) => Some((i, e, c)),
                _ => None,
            });
        let mut out = Vec::new();
        match compaction {
            Some((idx, entry, c)) => {
                let text = format!(
                    "{COMPACTION_SUMMARY_PREFIX}{}{COMPACTION_SUMMARY_SUFFIX}",
                    c.summary
                );
                out.push(user_text(text, &entry.timestamp));
                let mut kept = false;
                for e in &path[..idx] {
                    kept |= e.id == c.first_kept_entry_id;
                    if kept {
                        push_message(&mut out, e);
                    }
                }
                for e in &path[idx + 1..] {
                    push_message(&mut out, e);
                }
            }
            None => path.iter().for_each(|e| push_message(&mut out, e)),
        }
        out
    }
}

fn parse_header(path: &Path, bytes: &[u8]) -> Result<(SessionHeader, usize)> {
    let bad = |reason: String| StoreError::BadHeader {
        path: path.to_path_buf(),
        reason,
    };
    let end = bytes
        .iter()
        .position(|b| *b == b'\n')
        .unwrap_or(bytes.len());
    if end == 0 {
        return Err(bad("empty first line".into()));
    }
    let value: Value = serde_json::from_slice(&bytes[..end]).map_err(|e| bad(e.to_string()))?;
    if value.get("type").and_then(Value::as_str) != Some("session") {
        return Err(bad("first line is not of type \"session\"".into()));
    }
    let header = serde_json::from_value(value).map_err(|e| bad(e.to_string()))?;
    Ok((header, (end + 1).min(bytes.len())))
}

fn user_text(text: String, iso: &str) -> Message {
    user(UserContent::Blocks(vec![ContentBlock::text(text)]), iso)
}

fn user(content: UserContent, iso: &str) -> Message {
    Message::User(UserMessage {
        content,
        timestamp: crate::ids::ms_from_iso(iso).unwrap_or(0),
    })
}

fn push_message(out: &mut Vec<Message>, e: &Entry) {
    match &e.body {
        EntryBody::Message(m) => out.push(m.message.clone()),
        EntryBody::CustomMessage(m) => {
            let content = match &m.content {
                UserContent::Text(t) => UserContent::Blocks(vec![ContentBlock::text(t.clone())]),
                blocks => blocks.clone(),
            };
            out.push(user(content, &e.timestamp));
        }
        EntryBody::BranchSummary(b) if !b.summary.is_empty() => {
            let text = format!(
                "{BRANCH_SUMMARY_PREFIX}{}{BRANCH_SUMMARY_SUFFIX}",
                b.summary
            );
            out.push(user_text(text, &e.timestamp));
        }
        _ => {}
    }
}

/// `<transcript>.torn.<ms>`: where the bytes cut from a torn tail are kept.
fn torn_path(path: &Path) -> PathBuf {
    let mut name = path
        .file_name()
        .map(|n| n.to_os_string())
        .unwrap_or_default();
    name.push(format!(".torn.{}", crate::ids::now_ms()));
    path.with_file_name(name)
}

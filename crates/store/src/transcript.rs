//! A session transcript: one pi v3 JSONL file, a header line then tree entries.
//!
//! Loading is forgiving: a torn last line (a crash mid-append, a block of NULs) is truncated
//! away and reported; an invalid line elsewhere is reported and skipped but left in the file;
//! a file of format version 1 or 2 is migrated to 3 (see [`crate::migrate`]). Appends take an
//! exclusive lock on the file (std's `File::lock`, `flock` on Unix) for the length of one
//! write, so two handles or processes never interleave bytes; before writing, an append reads
//! whatever other writers added so the new entry's parent is the real leaf.
//!
//! # Durability
//!
//! An append writes its whole line to the file (one `write` under the lock, `O_APPEND`)
//! before it returns. From then on the line is in the operating system's page cache: a
//! process that is killed, panics or exits loses nothing an append returned for. What an
//! `fsync` adds is surviving a power cut or a kernel crash:
//!
//! - with [`Transcript::set_sync_each_append`]`(true)` (the default) every append is
//!   fsynced before it returns;
//! - with `false`, appends are not fsynced; call [`Transcript::sync`] at a checkpoint (the
//!   end of a turn) to fsync everything appended so far. A power cut may then lose the
//!   appends since the last `sync`, never more, and never a line in the middle of the file:
//!   a line cut short by the power cut is repaired on the next open like any torn tail.

use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use pincer_ai::Message;
use serde_json::Value;

pub use crate::context::{
    BRANCH_SUMMARY_PREFIX, BRANCH_SUMMARY_SUFFIX, COMPACTION_SUMMARY_PREFIX,
    COMPACTION_SUMMARY_SUFFIX,
};
use crate::entry::{CURRENT_VERSION, Entry, EntryBody, MessageEntry, SessionHeader};
use crate::error::{Result, StoreError};
use crate::migrate::MigrationReport;

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
    /// The migration of an older format version to the current one, if the file needed it.
    pub migrated: Option<MigrationReport>,
    /// The index named this session but its transcript was gone; an empty one was created
    /// under the same id (the session is not reset: its settings and counts stay).
    pub recreated_missing: bool,
}

impl LoadReport {
    /// True when the file was read without any issue (a migration is not an issue).
    pub fn is_clean(&self) -> bool {
        self.invalid_lines.is_empty() && self.repaired_tail.is_none() && !self.recreated_missing
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
    /// Fsync every append before it returns.
    sync_each_append: bool,
    /// The file the appends not fsynced yet went to. A handle, not the path: a reset may
    /// rename the transcript before the turn ends, and the fsync must follow the data.
    unsynced: Option<Arc<File>>,
}

/// How often a lock is retried when the file keeps being replaced under it.
const MAX_REOPEN: usize = 16;

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
        // Conversations are private: 0600, like every other state file holding user data.
        crate::atomic::write_atomic(&path, &line, Some(0o600))?;
        Ok(Self::empty(path, header, line.len() as u64))
    }

    fn empty(path: PathBuf, header: SessionHeader, len: u64) -> Self {
        Self {
            path,
            header,
            entries: Vec::new(),
            by_id: HashMap::new(),
            len,
            sync_each_append: true,
            unsynced: None,
        }
    }

    /// Opens a transcript: migrates a file of an older format version (keeping the original
    /// as `<file>.v<N>.bak`) and repairs a torn last line. Fails only on I/O errors or when
    /// the first line is not a session header.
    pub fn open(path: impl Into<PathBuf>) -> Result<(Self, LoadReport)> {
        let path = path.into();
        let mut migrated = None;
        loop {
            let mut file = lock_current(&path, false)?;
            let mut bytes = Vec::new();
            file.read_to_end(&mut bytes)
                .map_err(|e| StoreError::io(&path, e))?;
            let (header, body_start) = parse_header(&path, &bytes)?;
            if header.version < CURRENT_VERSION && migrated.is_none() {
                migrated = Some(migrate_file(&path, &bytes, header.version)?);
                // Read the rewritten file afresh, under its own lock.
                continue;
            }
            let mut report = LoadReport {
                migrated,
                ..LoadReport::default()
            };
            let t = Self::load(path, header, file, &bytes, body_start, &mut report)?;
            return Ok((t, report));
        }
    }

    fn load(
        path: PathBuf,
        header: SessionHeader,
        mut file: File,
        bytes: &[u8],
        body_start: usize,
        report: &mut LoadReport,
    ) -> Result<Self> {
        let mut t = Self::empty(path, header, 0);
        let (consumed, tail) = t.ingest(bytes, body_start, report);
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
        Ok(t)
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
                match crate::entry::parse_line(line) {
                    // pi (0.73) re-appends the header and every earlier entry of a file
                    // it opened before that file had a reply: the first copy stands.
                    Ok(entry) if self.is_repeat(&entry) => {}
                    Err(_) if self.is_header_copy(line) => {}
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

    /// A copy of an entry already read (same id, same content).
    fn is_repeat(&self, entry: &Entry) -> bool {
        self.by_id
            .get(&entry.id)
            .is_some_and(|&i| self.entries.get(i) == Some(entry))
    }

    /// A copy of this transcript's header line.
    fn is_header_copy(&self, line: &[u8]) -> bool {
        serde_json::from_slice::<SessionHeader>(line).is_ok_and(|h| h == self.header)
    }

    fn push(&mut self, entry: Entry) {
        self.by_id.insert(entry.id.clone(), self.entries.len());
        self.entries.push(entry);
    }

    /// Appends a new entry after the current leaf (fresh id, stamped now) and returns it.
    pub fn append_body(&mut self, body: EntryBody) -> Result<&Entry> {
        self.append_with(|leaf| Entry::new(leaf, body))
    }

    /// Appends `message` as a `message` entry after the current leaf.
    pub fn append_message(&mut self, message: Message) -> Result<&Entry> {
        self.append_body(EntryBody::Message(MessageEntry { message }))
    }

    /// Appends `entry` as given (its `parentId` is not changed).
    pub fn append(&mut self, entry: Entry) -> Result<&Entry> {
        self.append_with(|_| entry)
    }

    fn append_with(&mut self, make: impl FnOnce(Option<String>) -> Entry) -> Result<&Entry> {
        let path = self.path.clone();
        let io = |e| StoreError::io(&path, e);
        let mut file = lock_current(&path, true)?;
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
                // Another writer died mid-line; our line goes after it, on a line of its own.
                tracing::error!(path = %path.display(), %error, "invalid line at the end of transcript");
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
        let _ = file.unlock();
        if self.sync_each_append {
            file.sync_data().map_err(io)?;
        } else {
            self.unsynced = Some(Arc::new(file));
        }
        self.len += line.len() as u64;
        self.push(entry);
        Ok(&self.entries[self.entries.len() - 1])
    }

    /// Whether each append is fsynced before it returns (true by default). With `false`,
    /// call [`Transcript::sync`] at the end of a turn; see the module's durability contract.
    pub fn set_sync_each_append(&mut self, sync_each_append: bool) {
        self.sync_each_append = sync_each_append;
    }

    /// Whether each append is fsynced before it returns.
    pub fn sync_each_append(&self) -> bool {
        self.sync_each_append
    }

    /// True when appends were written but not fsynced yet.
    pub fn has_unsynced_appends(&self) -> bool {
        self.unsynced.is_some()
    }

    /// Fsyncs every append made through this handle so far (a no-op when there is none).
    /// The last append's descriptor serves for all of them: an fsync flushes the file, not
    /// one descriptor, and it still reaches the data if the file was renamed meanwhile.
    pub fn sync(&mut self) -> Result<()> {
        if let Some(file) = &self.unsynced {
            file.sync_data()
                .map_err(|e| StoreError::io(&self.path, e))?;
            self.unsynced = None;
        }
        Ok(())
    }

    /// The file the appends not fsynced yet went to (for the store's group commit).
    pub(crate) fn unsynced_file(&self) -> Option<Arc<File>> {
        self.unsynced.clone()
    }

    /// Records that what [`Transcript::unsynced_file`] gave was made durable.
    pub(crate) fn mark_synced(&mut self) {
        self.unsynced = None;
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
}

/// Opens `path` (for appending, or for reading and writing) and locks it, making sure the
/// locked file is still the one at `path`: a migration may have renamed a new file over it
/// while we waited for the lock, and writing to the old one would lose the line.
fn lock_current(path: &Path, append: bool) -> Result<File> {
    let io = |e| StoreError::io(path, e);
    for _ in 0..MAX_REOPEN {
        let mut opts = OpenOptions::new();
        opts.read(true);
        if append {
            opts.append(true);
        } else {
            opts.write(true);
        }
        let file = opts.open(path).map_err(io)?;
        crate::sessions::lock_within(&file, path, crate::sessions::DEFAULT_LOCK_TIMEOUT)?;
        if is_current(&file, path).map_err(io)? {
            return Ok(file);
        }
    }
    Err(io(std::io::Error::other(
        "the file keeps being replaced while it is being locked",
    )))
}

/// Cuts the transcript at `path` back to its first `len` bytes, under the file's lock: a
/// heartbeat that only acknowledged leaves no turn behind (OpenClaw prunes those too, so
/// acks do not fill the context). Refused (`Ok(false)`) unless `len` ends a line and the
/// file is at least that long; a file rewritten meanwhile is thus left alone.
pub fn truncate_transcript(path: &Path, len: u64) -> Result<bool> {
    let io = |e| StoreError::io(path, e);
    let mut file = lock_current(path, false)?;
    let current = file.metadata().map_err(io)?.len();
    if len == 0 || current < len {
        return Ok(false);
    }
    let mut last = [0u8; 1];
    file.seek(SeekFrom::Start(len - 1)).map_err(io)?;
    file.read_exact(&mut last).map_err(io)?;
    if last[0] != b'\n' {
        return Ok(false);
    }
    if current > len {
        file.set_len(len).map_err(io)?;
        file.sync_data().map_err(io)?;
    }
    let _ = file.unlock();
    Ok(current > len)
}

#[cfg(unix)]
fn is_current(file: &File, path: &Path) -> std::io::Result<bool> {
    use std::os::unix::fs::MetadataExt;
    let held = file.metadata()?;
    // A missing path (the transcript was archived meanwhile) is an error for the caller.
    let now = std::fs::metadata(path)?;
    Ok(held.dev() == now.dev() && held.ino() == now.ino())
}

#[cfg(not(unix))]
fn is_current(_file: &File, path: &Path) -> std::io::Result<bool> {
    std::fs::metadata(path).map(|_| true)
}

/// Migrates `bytes` (the content of `path`, of `from_version`), keeping the original as a
/// backup first, then replacing the file atomically.
fn migrate_file(path: &Path, bytes: &[u8], from_version: u32) -> Result<MigrationReport> {
    let migrated = crate::migrate::migrate(path, bytes, from_version)?;
    let backup = crate::migrate::backup_path(path, from_version);
    crate::atomic::write_atomic(&backup, bytes, Some(0o600))?;
    crate::atomic::write_atomic(path, &migrated.bytes, Some(pincer_base::PRIVATE_FILE_MODE))?;
    tracing::info!(path = %path.display(), from_version, backup = %backup.display(), "migrated transcript to the current format version");
    Ok(MigrationReport {
        backup,
        ..migrated.report
    })
}

pub(crate) fn parse_header(path: &Path, bytes: &[u8]) -> Result<(SessionHeader, usize)> {
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

/// `<transcript>.torn.<ms>`: where the bytes cut from a torn tail are kept.
fn torn_path(path: &Path) -> PathBuf {
    let mut name = path
        .file_name()
        .map(|n| n.to_os_string())
        .unwrap_or_default();
    name.push(format!(".torn.{}", crate::ids::now_ms()));
    path.with_file_name(name)
}

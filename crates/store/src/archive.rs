//! Archived files of a session directory: their names and ages, and moving a transcript
//! aside instead of deleting it.
//!
//! Nothing in the store deletes a transcript directly: a reset renames it
//! `<id>.jsonl.reset.<ts>`, pruning or archiving a session `<id>.jsonl.deleted.<ts>` (`<ts>`
//! is the UTC time with `-` for `:`, e.g. `2024-12-03T14-00-00.123Z`, so names sort by
//! time and are valid on every file system); `sessions.compact` keeps the uncut transcript as
//! `<id>.jsonl.bak.<ts>`. Torn tails are kept as `<file>.torn.<ms>` and
//! atomic writes leave `.<name>.tmp.<id>` behind only on a crash. Only retention deletes
//! archives, once they are older than its `pruneAfter`.

use std::fs::Metadata;
use std::path::{Path, PathBuf};

use crate::error::{Result, StoreError};

/// The entries of the session directory `dir`; none when it does not exist (yet).
pub(crate) fn dir_entries(dir: &Path) -> Result<Vec<std::fs::DirEntry>> {
    match std::fs::read_dir(dir) {
        Ok(listing) => listing
            .map(|item| item.map_err(|e| StoreError::io(dir, e)))
            .collect(),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Vec::new()),
        Err(e) => Err(StoreError::io(dir, e)),
    }
}

/// The kinds of leftover files retention may delete once they are old enough.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ArchiveKind {
    /// `<id>.jsonl.reset.<ts>`
    Reset,
    /// `<id>.jsonl.deleted.<ts>`
    Deleted,
    /// `<file>.torn.<ms>`
    Torn,
    /// `<id>.jsonl.bak.<ts>`: a transcript as it was before `sessions.compact` cut it.
    CompactBackup,
    /// `.<name>.tmp.<id>`, left by an atomic write that crashed.
    StaleTemp,
}

/// `ms` as a timestamp for file names: ISO-8601 UTC with `-` instead of `:`.
pub(crate) fn file_stamp(ms: i64) -> String {
    crate::ids::iso_from_ms(ms).replace(':', "-")
}

/// The kind of archive `name` is, if it is one.
pub(crate) fn archive_kind(name: &str) -> Option<ArchiveKind> {
    if name.starts_with('.') {
        return name.contains(".tmp.").then_some(ArchiveKind::StaleTemp);
    }
    if name.contains(".jsonl.reset.") {
        Some(ArchiveKind::Reset)
    } else if name.contains(".jsonl.deleted.") {
        Some(ArchiveKind::Deleted)
    } else if name.contains(".torn.") {
        Some(ArchiveKind::Torn)
    } else if name.contains(".jsonl.bak.") {
        Some(ArchiveKind::CompactBackup)
    } else {
        None
    }
}

/// When the archive `name` was made: the time in its name, else the file's modification
/// time (a rename keeps the modification time of the last write, so the name is better).
pub(crate) fn archived_at(name: &str, kind: ArchiveKind, meta: &Metadata) -> Option<i64> {
    let stamp = match kind {
        ArchiveKind::Reset => name.rsplit_once(".reset.").map(|(_, s)| s),
        ArchiveKind::Deleted => name.rsplit_once(".deleted.").map(|(_, s)| s),
        ArchiveKind::Torn => name.rsplit_once(".torn.").map(|(_, s)| s),
        ArchiveKind::CompactBackup => name.rsplit_once(".bak.").map(|(_, s)| s),
        ArchiveKind::StaleTemp => None,
    };
    stamp.and_then(parse_stamp).or_else(|| modified_ms(meta))
}

/// A name's time: milliseconds since the epoch, or [`file_stamp`]'s form.
fn parse_stamp(s: &str) -> Option<i64> {
    if !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) {
        return s.parse().ok();
    }
    // 2024-12-03T14-00-00.123Z: the dashes at 13 and 16 stand for colons.
    let mut iso = s.as_bytes().to_vec();
    for at in [13, 16] {
        if iso.get(at) == Some(&b'-') {
            iso[at] = b':';
        }
    }
    crate::ids::ms_from_iso(std::str::from_utf8(&iso).ok()?)
}

/// The modification time of a file in milliseconds since the epoch.
pub(crate) fn modified_ms(meta: &Metadata) -> Option<i64> {
    let since = meta
        .modified()
        .ok()?
        .duration_since(std::time::UNIX_EPOCH)
        .ok()?;
    i64::try_from(since.as_millis()).ok()
}

/// `dir/<name>.<tag>.<stamp>`, with a counter added when that exists already.
pub(crate) fn stamped_path(dir: &Path, name: &str, tag: &str) -> PathBuf {
    let stamp = file_stamp(crate::ids::now_ms());
    let plain = dir.join(format!("{name}.{tag}.{stamp}"));
    if !plain.exists() {
        return plain;
    }
    (1u32..)
        .map(|n| dir.join(format!("{name}.{tag}.{stamp}.{n}")))
        .find(|p| !p.exists())
        .unwrap_or(plain)
}

/// Renames `path` to `<name>.<tag>.<stamp>` beside it; `None` when there is no such file.
pub(crate) fn move_aside(path: &Path, tag: &str) -> Result<Option<PathBuf>> {
    let (Some(dir), Some(name)) = (path.parent(), path.file_name()) else {
        return Ok(None);
    };
    if !path.exists() {
        return Ok(None);
    }
    let to = stamped_path(dir, &name.to_string_lossy(), tag);
    std::fs::rename(path, &to).map_err(|e| StoreError::io(path, e))?;
    crate::atomic::sync_dir(dir)?;
    Ok(Some(to))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_stamps() {
        assert_eq!(file_stamp(1_733_234_400_123), "2024-12-03T14-00-00.123Z");
        assert_eq!(
            parse_stamp("2024-12-03T14-00-00.123Z"),
            Some(1_733_234_400_123)
        );
        assert_eq!(parse_stamp("1733234400123"), Some(1_733_234_400_123));
        assert_eq!(parse_stamp("yesterday"), None);
        assert_eq!(parse_stamp(""), None);
        assert_eq!(archive_kind("a.jsonl.reset.x"), Some(ArchiveKind::Reset));
        assert_eq!(
            archive_kind("a.jsonl.deleted.x"),
            Some(ArchiveKind::Deleted)
        );
        assert_eq!(archive_kind("a.jsonl.torn.1"), Some(ArchiveKind::Torn));
        assert_eq!(
            archive_kind(".sessions.json.tmp.0a1b2c3d"),
            Some(ArchiveKind::StaleTemp)
        );
        assert_eq!(archive_kind("a.jsonl"), None);
        assert_eq!(archive_kind("a.jsonl.v1.bak"), None);
        assert_eq!(archive_kind("sessions.json.corrupt.x"), None);
        assert_eq!(archive_kind(".hidden"), None);
    }
}

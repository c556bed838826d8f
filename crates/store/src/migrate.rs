//! Migration of pi session files of format version 1 and 2 to version 3, as pi's
//! `migrateToCurrentVersion` (`session-manager.ts`) does it:
//!
//! - **v1 → v2**: entries had no tree. Every entry (every JSON object line but the header and
//!   other `session` lines) gets a fresh 8-hex id (pi overwrites any id it finds) and the
//!   previous entry as its `parentId`, so the file becomes one linear chain. A compaction's
//!   `firstKeptEntryIndex` (an index into the file's parsed lines, header included) becomes
//!   `firstKeptEntryId`, the id of that line's entry; it is dropped without replacement when
//!   it does not point at an entry, as pi drops it.
//! - **v2 → v3**: the message role `hookMessage` was renamed `custom`.
//!
//! The header's `version` becomes 3. Differences from pi, all so that nothing is lost:
//! lines that are not JSON objects are kept verbatim where they were (pi drops unparsable
//! lines when it rewrites), ids are unique within the file (pi's collision check in this
//! path checks an empty set), `firstKeptEntryIndex` may point forward, and a v1 entry
//! without a `timestamp` gets the previous entry's (or the header's), since an entry this
//! crate cannot read would cut the chain for every entry after it.
//!
//! [`Transcript::open`](crate::Transcript::open) runs this on any file older than version 3:
//! it keeps the original bytes as `<file>.v<N>.bak` and replaces the file atomically.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use serde::ser::{Serialize, SerializeMap, Serializer};
use serde_json::{Map, Value};

use crate::entry::CURRENT_VERSION;
use crate::error::{Result, StoreError};

/// What opening an old transcript changed, reported in
/// [`LoadReport::migrated`](crate::LoadReport::migrated).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MigrationReport {
    /// The version the file had.
    pub from_version: u32,
    /// The version it has now.
    pub to_version: u32,
    /// Where the original bytes were kept (`<file>.v<N>.bak`).
    pub backup: PathBuf,
    /// Entries given an id and a parent (v1 files).
    pub ids_assigned: usize,
    /// Compactions whose `firstKeptEntryIndex` became a `firstKeptEntryId`.
    pub compactions_relinked: usize,
    /// v1 entries without a timestamp that got their predecessor's.
    pub timestamps_filled: usize,
    /// Messages whose role `hookMessage` became `custom`.
    pub roles_renamed: usize,
    /// Lines that are not JSON objects, kept as they were.
    pub lines_kept_verbatim: usize,
}

/// The migrated bytes of a file and what changed (the backup path is filled in later).
pub(crate) struct Migrated {
    pub bytes: Vec<u8>,
    pub report: MigrationReport,
}

/// One line of the file: parsed JSON, or bytes kept as they are.
enum Line<'a> {
    Json(Value),
    Raw(&'a [u8]),
}

/// Key order when writing a header: pi's fields first (as pi writes them), the rest sorted.
const HEADER_ORDER: &[&str] = crate::entry::HEADER_FIELDS;
const ENTRY_ORDER: &[&str] = &["type", "id", "parentId", "timestamp"];

struct Ordered<'a> {
    map: &'a Map<String, Value>,
    first: &'static [&'static str],
}

impl Serialize for Ordered<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        let mut out = s.serialize_map(Some(self.map.len()))?;
        for key in self.first {
            if let Some(v) = self.map.get(*key) {
                out.serialize_entry(key, v)?;
            }
        }
        for (k, v) in self.map {
            if !self.first.contains(&k.as_str()) {
                out.serialize_entry(k, v)?;
            }
        }
        out.end()
    }
}

/// Migrates the bytes of a transcript whose header (the first line) says `from_version`
/// (below [`CURRENT_VERSION`]) to the current version. Never fails on content: what it
/// cannot read it keeps.
pub(crate) fn migrate(path: &Path, bytes: &[u8], from_version: u32) -> Result<Migrated> {
    let mut report = MigrationReport {
        from_version,
        to_version: CURRENT_VERSION,
        backup: PathBuf::new(),
        ids_assigned: 0,
        compactions_relinked: 0,
        timestamps_filled: 0,
        roles_renamed: 0,
        lines_kept_verbatim: 0,
    };
    // (line, ends with a newline)
    let mut lines: Vec<(Line<'_>, bool)> = Vec::new();
    // pi numbers the lines that parse as JSON (blank and broken lines skipped): its
    // `firstKeptEntryIndex` is a position in that list. json_lines[n] = index in `lines`.
    let mut json_lines: Vec<usize> = Vec::new();
    for (raw, newline) in split_lines(bytes) {
        let line = if raw.iter().all(u8::is_ascii_whitespace) {
            Line::Raw(raw)
        } else {
            match serde_json::from_slice::<Value>(raw) {
                Ok(v) => {
                    json_lines.push(lines.len());
                    if !v.is_object() {
                        report.lines_kept_verbatim += 1;
                        Line::Raw(raw)
                    } else {
                        Line::Json(v)
                    }
                }
                Err(_) => {
                    report.lines_kept_verbatim += 1;
                    Line::Raw(raw)
                }
            }
        };
        lines.push((line, newline));
    }
    if from_version < 2 {
        v1_to_v2(&mut lines, &json_lines, &mut report);
    }
    v2_to_v3(&mut lines, &mut report);
    set_header_version(&mut lines);

    let mut out = Vec::with_capacity(bytes.len() + lines.len() * 40);
    for (i, (line, newline)) in lines.iter().enumerate() {
        match line {
            Line::Raw(raw) => out.extend_from_slice(raw),
            Line::Json(v) => {
                let first = if i == 0 { HEADER_ORDER } else { ENTRY_ORDER };
                let written = match v {
                    Value::Object(map) => serde_json::to_writer(&mut out, &Ordered { map, first }),
                    other => serde_json::to_writer(&mut out, other),
                };
                written.map_err(|source| StoreError::Serialize {
                    path: path.to_path_buf(),
                    source,
                })?;
            }
        }
        if *newline {
            out.push(b'\n');
        }
    }
    Ok(Migrated { bytes: out, report })
}

/// The lines of `bytes` without their `\n`, each with whether it had one.
fn split_lines(bytes: &[u8]) -> impl Iterator<Item = (&[u8], bool)> {
    let mut rest = Some(bytes);
    std::iter::from_fn(move || {
        let b = rest?;
        match b.iter().position(|c| *c == b'\n') {
            Some(i) => {
                rest = Some(&b[i + 1..]).filter(|r| !r.is_empty());
                Some((&b[..i], true))
            }
            None => {
                rest = None;
                Some((b, false))
            }
        }
    })
}

fn is_session_line(map: &Map<String, Value>) -> bool {
    map.get("type").and_then(Value::as_str) == Some("session")
}

fn v1_to_v2(lines: &mut [(Line<'_>, bool)], json_lines: &[usize], report: &mut MigrationReport) {
    let header_ts = match lines.first() {
        Some((Line::Json(h), _)) => h.get("timestamp").cloned(),
        _ => None,
    };
    let mut last_ts = header_ts.filter(Value::is_string);
    let mut ids = HashSet::new();
    let mut prev: Option<String> = None;
    // First every entry gets its id, so a compaction can point at any of them.
    for (line, _) in lines.iter_mut().skip(1) {
        let Line::Json(Value::Object(map)) = line else {
            continue;
        };
        if is_session_line(map) {
            continue;
        }
        let id = loop {
            let id = crate::ids::entry_id();
            if ids.insert(id.clone()) {
                break id;
            }
        };
        map.insert("id".into(), Value::String(id.clone()));
        map.insert(
            "parentId".into(),
            prev.take().map_or(Value::Null, Value::String),
        );
        prev = Some(id);
        report.ids_assigned += 1;
        match map.get("timestamp") {
            Some(ts @ Value::String(_)) => last_ts = Some(ts.clone()),
            _ => {
                if let Some(ts) = &last_ts {
                    map.insert("timestamp".into(), ts.clone());
                    report.timestamps_filled += 1;
                }
            }
        }
    }
    // Then compactions trade the index of their first kept line for that entry's id.
    for i in 1..lines.len() {
        let index = match &lines[i].0 {
            Line::Json(Value::Object(map))
                if map.get("type").and_then(Value::as_str) == Some("compaction") =>
            {
                match map.get("firstKeptEntryIndex") {
                    // A JavaScript number: 2.0 indexes like 2, 2.5 and -1 index nothing.
                    Some(Value::Number(n)) => n.as_u64().or_else(|| {
                        n.as_f64()
                            .filter(|f| f.fract() == 0.0 && *f >= 0.0 && *f < 9.0e15)
                            .map(|f| f as u64)
                    }),
                    _ => continue,
                }
            }
            _ => continue,
        };
        let target = index
            .and_then(|n| usize::try_from(n).ok())
            .and_then(|n| json_lines.get(n))
            .and_then(|at| match &lines[*at].0 {
                Line::Json(Value::Object(t)) if !is_session_line(t) => t.get("id").cloned(),
                _ => None,
            });
        if let (Line::Json(Value::Object(map)), _) = &mut lines[i] {
            map.remove("firstKeptEntryIndex");
            if let Some(id) = target {
                map.insert("firstKeptEntryId".into(), id);
                report.compactions_relinked += 1;
            }
        }
    }
}

fn v2_to_v3(lines: &mut [(Line<'_>, bool)], report: &mut MigrationReport) {
    for (line, _) in lines.iter_mut().skip(1) {
        let Line::Json(Value::Object(map)) = line else {
            continue;
        };
        if map.get("type").and_then(Value::as_str) != Some("message") {
            continue;
        }
        if let Some(Value::Object(message)) = map.get_mut("message")
            && message.get("role").and_then(Value::as_str) == Some("hookMessage")
        {
            message.insert("role".into(), Value::String("custom".into()));
            report.roles_renamed += 1;
        }
    }
}

/// pi stamps the version on every `session` line, not only the first.
fn set_header_version(lines: &mut [(Line<'_>, bool)]) {
    for (line, _) in lines.iter_mut() {
        if let Line::Json(Value::Object(map)) = line
            && is_session_line(map)
        {
            map.insert("version".into(), Value::from(CURRENT_VERSION));
        }
    }
}

/// `<file>.v<N>.bak`, or `<file>.v<N>.bak.<ms>` when that exists (a backup is never
/// overwritten).
pub(crate) fn backup_path(path: &Path, from_version: u32) -> PathBuf {
    let mut name = path
        .file_name()
        .map(|n| n.to_os_string())
        .unwrap_or_default();
    name.push(format!(".v{from_version}.bak"));
    let plain = path.with_file_name(&name);
    if !plain.exists() {
        return plain;
    }
    name.push(format!(".{}", crate::ids::now_ms()));
    path.with_file_name(name)
}

//! Truncating a session transcript to its last lines (`sessions.compact`, OpenClaw's
//! line-based compaction, as opposed to the agent's summarising one).
//!
//! The header line always stays; of the entries, the last `max_lines` stay. An entry whose
//! parent was cut becomes a root (`parentId: null`) so the kept tree is self-contained; every
//! other kept line is written back byte for byte. The original file is copied aside first
//! (`<id>.jsonl.bak.<time>`, deleted by session maintenance once older than `pruneAfter`,
//! like the other archives), then the short version replaces it atomically (temp file,
//! fsync, rename), all under the transcript's exclusive lock: an append from another handle
//! or process waits for the lock, then finds the path replaced and appends to the new file
//! (see `pincer_store::transcript`). Nothing here knows about turns: the caller makes sure
//! none is running.
#![expect(
    clippy::disallowed_methods,
    reason = "blocking file work: sessions.compact runs it on the blocking pool (spawn_blocking)"
)]

use std::collections::HashSet;
use std::fs::OpenOptions;
use std::io::Read;
use std::path::{Path, PathBuf};

use pincer_store::StoreError;
use serde_json::Value;

/// Why a transcript could not be truncated.
#[derive(Debug, thiserror::Error)]
pub enum TrimError {
    #[error("cannot read {path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{path} has no session header line")]
    NoHeader { path: PathBuf },
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// What truncating did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Trimmed {
    /// The transcript already had at most `max_lines` entries: untouched.
    AlreadyShort { kept: usize },
    /// The transcript now holds the header and its last `kept` entries; the original is at
    /// `archived`.
    Truncated { kept: usize, archived: PathBuf },
}

/// Keeps the header and the last `max_lines` entry lines of the transcript at `path`.
pub fn trim_transcript(path: &Path, max_lines: usize, now_ms: i64) -> Result<Trimmed, TrimError> {
    let io = |source| TrimError::Io {
        path: path.to_path_buf(),
        source,
    };
    let mut file = OpenOptions::new()
        .read(true)
        .write(true)
        .open(path)
        .map_err(io)?;
    // Held until `file` drops at the end: appenders wait, then see the replaced path.
    pincer_base::lock_within(&file, pincer_base::DEFAULT_LOCK_TIMEOUT).map_err(|e| {
        match e.kind() {
            std::io::ErrorKind::TimedOut => {
                TrimError::Store(StoreError::LockTimeout(pincer_base::LockTimeout {
                    path: path.to_path_buf(),
                    waited: pincer_base::DEFAULT_LOCK_TIMEOUT,
                }))
            }
            _ => io(e),
        }
    })?;
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes).map_err(io)?;
    let mut lines = bytes
        .split(|b| *b == b'\n')
        .map(|line| line.strip_suffix(b"\r").unwrap_or(line))
        .filter(|line| !line.iter().all(u8::is_ascii_whitespace));
    let header = lines.next().ok_or_else(|| TrimError::NoHeader {
        path: path.to_path_buf(),
    })?;
    let entries: Vec<&[u8]> = lines.collect();
    let max_lines = max_lines.max(1);
    if entries.len() <= max_lines {
        return Ok(Trimmed::AlreadyShort {
            kept: entries.len(),
        });
    }
    let kept = &entries[entries.len() - max_lines..];
    let mut out = Vec::with_capacity(bytes.len());
    out.extend_from_slice(header);
    out.push(b'\n');
    for line in rerooted(kept) {
        out.extend_from_slice(&line);
        out.push(b'\n');
    }
    let archived = archive_path(path, now_ms);
    pincer_store::write_atomic(&archived, &bytes, Some(0o600))?;
    pincer_store::write_atomic(path, &out, Some(0o600))?;
    drop(file);
    Ok(Trimmed::Truncated {
        kept: kept.len(),
        archived,
    })
}

/// The kept lines, with `parentId` cleared where the parent was cut. Lines that are not
/// entries (invalid JSON the store skips) stay as they are.
fn rerooted(kept: &[&[u8]]) -> Vec<Vec<u8>> {
    let parsed: Vec<Option<Value>> = kept
        .iter()
        .map(|line| serde_json::from_slice::<Value>(line).ok())
        .collect();
    let ids: HashSet<&str> = parsed
        .iter()
        .flatten()
        .filter_map(|v| v.get("id").and_then(Value::as_str))
        .collect();
    kept.iter()
        .zip(&parsed)
        .map(|(line, value)| {
            let orphan = value.as_ref().and_then(|v| {
                let parent = v.get("parentId")?.as_str()?;
                (!ids.contains(parent)).then(|| v.clone())
            });
            match orphan {
                Some(mut entry) => {
                    entry["parentId"] = Value::Null;
                    serde_json::to_vec(&entry).unwrap_or_else(|_| line.to_vec())
                }
                None => line.to_vec(),
            }
        })
        .collect()
}

/// `<file>.bak.<UTC time with '-' for ':'>`, beside the transcript (OpenClaw's `.bak`).
fn archive_path(path: &Path, now_ms: i64) -> PathBuf {
    let stamp = pincer_store::ids::iso_from_ms(now_ms).replace(':', "-");
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "transcript.jsonl".into());
    path.with_file_name(format!("{name}.bak.{stamp}"))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn line(id: &str, parent: Option<&str>) -> String {
        serde_json::json!({"type": "label", "id": id, "parentId": parent, "timestamp": "t", "targetId": id})
            .to_string()
    }

    #[test]
    fn keeps_the_header_and_the_last_entries_and_reroots_the_first() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.jsonl");
        let header = r#"{"type":"session","version":3,"id":"s","timestamp":"t","cwd":"/"}"#;
        let body = [
            line("a", None),
            line("b", Some("a")),
            line("c", Some("b")),
            line("d", Some("c")),
        ];
        let original = format!("{header}\n{}\n\n", body.join("\n"));
        std::fs::write(&path, &original).unwrap();
        let done = trim_transcript(&path, 2, 0).unwrap();
        let Trimmed::Truncated { kept, archived } = done else {
            panic!("{done:?}")
        };
        assert_eq!(kept, 2);
        assert_eq!(std::fs::read_to_string(&archived).unwrap(), original);
        let text = std::fs::read_to_string(&path).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], header);
        assert_eq!(lines.len(), 3);
        let c: Value = serde_json::from_str(lines[1]).unwrap();
        assert_eq!(
            (c["id"].as_str(), &c["parentId"]),
            (Some("c"), &Value::Null)
        );
        assert_eq!(
            lines[2], body[3],
            "lines with their parent kept stay byte for byte"
        );
        assert_eq!(
            trim_transcript(&path, 5, 0).unwrap(),
            Trimmed::AlreadyShort { kept: 2 }
        );
    }

    #[test]
    fn a_file_without_header_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("e.jsonl");
        std::fs::write(&path, "\n\n").unwrap();
        assert!(matches!(
            trim_transcript(&path, 1, 0),
            Err(TrimError::NoHeader { .. })
        ));
    }
}

//! The on-disk shapes of the pairing files (OpenClaw's, plus a top-level `accountId` on a
//! request) and how they are read and written.
//!
//! Reading is strict about shape and lenient about extras: a file that is not JSON, or whose
//! `requests`/`allowFrom` is not what it should be, is [`PairingError::Corrupt`] and is never
//! written over (every change reads first, so the error stops it); fields Pincer does not
//! know are kept through a rewrite, for a newer writer. A missing or blank file is empty.
#![expect(
    clippy::disallowed_methods,
    reason = "blocking file work, only called by the pairing store (run on the blocking pool)"
)]

use std::fs;
use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::error::{PairingError, is_valid_name};

/// The only file version there is.
const VERSION: u64 = 1;

/// A file's `version` (a file without one is version 1, the one Pincer writes).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub(crate) struct Version(pub u64);

impl Default for Version {
    fn default() -> Self {
        Self(VERSION)
    }
}

/// `<channel>-pairing.json`.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub(crate) struct PairingFile {
    #[serde(default)]
    pub version: Version,
    #[serde(default)]
    pub requests: Vec<RequestRecord>,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// One pending request.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct RequestRecord {
    /// The sender id.
    pub id: String,
    pub code: String,
    /// ISO 8601 UTC with milliseconds (JavaScript's `toISOString`).
    pub created_at: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_seen_at: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub account_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub meta: Option<Value>,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `<channel>-allowFrom.json` and `<channel>-<account>-allowFrom.json`.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct AllowFromFile {
    #[serde(default)]
    pub version: Version,
    #[serde(default)]
    pub allow_from: Vec<AllowEntry>,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// An allow-from entry as found in the file: a hand-edited file may hold a Telegram id as
/// a JSON number (OpenClaw reads those with `String(v)`); Pincer writes strings.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(untagged)]
pub(crate) enum AllowEntry {
    Text(String),
    Number(serde_json::Number),
}

impl AllowEntry {
    pub fn as_string(&self) -> String {
        match self {
            Self::Text(s) => s.trim().to_string(),
            Self::Number(n) => n.to_string(),
        }
    }
}

impl AllowFromFile {
    /// The entries, trimmed, without blanks or duplicates, in file order.
    pub fn entries(&self) -> Vec<String> {
        let mut out: Vec<String> = Vec::with_capacity(self.allow_from.len());
        for entry in self.allow_from.iter().map(AllowEntry::as_string) {
            if !entry.is_empty() && !out.contains(&entry) {
                out.push(entry);
            }
        }
        out
    }

    pub fn set_entries(&mut self, entries: Vec<String>) {
        self.allow_from = entries.into_iter().map(AllowEntry::Text).collect();
    }
}

/// Reads a pairing file; missing or blank is empty.
pub(crate) fn read_pairing(path: &Path) -> Result<PairingFile, PairingError> {
    let Some(file) = read_json::<PairingFile>(path)? else {
        return Ok(PairingFile::default());
    };
    check_version(path, file.version.0)?;
    for (i, req) in file.requests.iter().enumerate() {
        let problem = if req.id.trim().is_empty() {
            Some("an empty id")
        } else if req.code.trim().is_empty() {
            Some("an empty code")
        } else if req.account_id.as_deref().is_some_and(|a| !is_valid_name(a)) {
            Some("an invalid accountId")
        } else {
            None
        };
        if let Some(problem) = problem {
            return Err(PairingError::Corrupt {
                path: path.to_path_buf(),
                message: format!("request {i} has {problem}"),
            });
        }
    }
    Ok(file)
}

/// Reads an allow-from file; missing or blank is empty.
pub(crate) fn read_allow_from(path: &Path) -> Result<AllowFromFile, PairingError> {
    let Some(file) = read_json::<AllowFromFile>(path)? else {
        return Ok(AllowFromFile::default());
    };
    check_version(path, file.version.0)?;
    Ok(file)
}

fn check_version(path: &Path, version: u64) -> Result<(), PairingError> {
    if version == VERSION {
        Ok(())
    } else {
        // A newer format may hold entries this code would drop on its next write.
        Err(PairingError::Corrupt {
            path: path.to_path_buf(),
            message: format!("unsupported version {version}"),
        })
    }
}

fn read_json<T: serde::de::DeserializeOwned>(path: &Path) -> Result<Option<T>, PairingError> {
    let bytes = match fs::read(path) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(PairingError::io(path, e)),
    };
    // A blank file holds no entries to lose.
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Ok(None);
    }
    serde_json::from_slice(&bytes)
        .map(Some)
        .map_err(|e| PairingError::Corrupt {
            path: path.to_path_buf(),
            message: e.to_string(),
        })
}

/// Writes `value` as pretty JSON with a trailing newline (OpenClaw's
/// `JSON.stringify(v, null, 2) + "\n"`), atomically, mode 0600.
pub(crate) fn write_json<T: Serialize>(path: &Path, value: &T) -> Result<(), PairingError> {
    let mut bytes = serde_json::to_vec_pretty(value)
        .map_err(|e| PairingError::io(path, std::io::Error::other(e)))?;
    bytes.push(b'\n');
    pincer_store::write_atomic(path, &bytes, Some(0o600)).map_err(|e| match e {
        pincer_store::StoreError::Io { path, source } => PairingError::Io { path, source },
        other => PairingError::io(path, std::io::Error::other(other.to_string())),
    })
}

/// Creates `dir` (and parents) with mode 0700 when missing: these files decide who may
/// talk to the assistant. An existing directory keeps its mode.
pub(crate) fn create_private_dir(dir: &Path) -> Result<(), PairingError> {
    pincer_base::create_private_dir_all(dir).map_err(|e| PairingError::io(dir, e))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn unknown_fields_survive_a_round_trip() {
        let text = r#"{"version":1,"requests":[{"id":"1","code":"ABCDEFGH","createdAt":"2026-01-01T00:00:00.000Z","x":true}],"note":"kept"}"#;
        let file: PairingFile = serde_json::from_str(text).unwrap();
        let back = serde_json::to_value(&file).unwrap();
        assert_eq!(back["note"], "kept");
        assert_eq!(back["requests"][0]["x"], true);
        assert!(back["requests"][0].get("lastSeenAt").is_none());
    }

    #[test]
    fn allow_from_numbers_become_strings_and_duplicates_go() {
        let file: AllowFromFile =
            serde_json::from_str(r#"{"version":1,"allowFrom":[123," 456 ","123","",456]}"#)
                .unwrap();
        assert_eq!(file.entries(), vec!["123".to_string(), "456".to_string()]);
        assert!(serde_json::from_str::<AllowFromFile>(r#"{"allowFrom":[true]}"#).is_err());
        assert!(serde_json::from_str::<AllowFromFile>(r#"{"allowFrom":"123"}"#).is_err());
    }
}

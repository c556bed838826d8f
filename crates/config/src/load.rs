//! Reading, checking and writing `pincer.json5`. Loading is strict and in this order:
//! JSON5 syntax → the raw document (kept as written) → `${ENV}` substitution → typed
//! loading (unknown keys, wrong types, bad values) → the cross-field rules. Each failure
//! names the file, the line and column, and the key path. Saving runs the same checks
//! on the new document before anything touches the disk, then writes it atomically, 0600.

use std::io::Read;
use std::path::{Path, PathBuf};

use pincer_ai::env::EnvSource;
use serde_json::Value;

use crate::env_subst::substitute;
use crate::error::{ConfigError, ConfigIssue};
use crate::keypath::KeyPath;
use crate::locate::locate;
use crate::raw::parse_raw;
use crate::strict_de::StrictValue;
use crate::types::PincerConfig;
use crate::validate::check;

/// The largest config file read (a hand-written config is a few KiB).
pub const MAX_CONFIG_BYTES: u64 = 4 * 1024 * 1024;

/// A checked config and the document it came from.
#[derive(Debug, Clone, PartialEq)]
pub struct ParsedConfig {
    /// The typed config, `${ENV}` references substituted.
    pub config: PincerConfig,
    /// The document as written: references not substituted, comments gone.
    pub raw: Value,
}

/// A config loaded from a file.
#[derive(Debug, Clone, PartialEq)]
pub struct LoadedConfig {
    /// The typed config, `${ENV}` references substituted.
    pub config: PincerConfig,
    /// The document as written (an empty object when the file does not exist).
    pub raw: Value,
    /// The file it was read from.
    pub path: PathBuf,
    /// False when there was no file and `config` is the defaults.
    pub exists: bool,
}

/// Loads and checks the config at `path`. A missing file gives the defaults.
pub fn load(path: &Path, env: &dyn EnvSource) -> Result<LoadedConfig, ConfigError> {
    let Some(text) = read_text(path)? else {
        return Ok(LoadedConfig {
            config: PincerConfig::default(),
            raw: Value::Object(serde_json::Map::new()),
            path: path.to_path_buf(),
            exists: false,
        });
    };
    let parsed = parse_str(&text, &path.display().to_string(), env)?;
    Ok(LoadedConfig {
        config: parsed.config,
        raw: parsed.raw,
        path: path.to_path_buf(),
        exists: true,
    })
}

/// The document at `path` as written, without the typed checks (`None` if there is no
/// file): what `config get/set/unset` edit, so a config that fails the checks can still
/// be inspected and repaired. Syntax errors are still errors.
pub fn read_raw(path: &Path) -> Result<Option<Value>, ConfigError> {
    read_text(path)?
        .map(|text| parse_raw(&text, &path.display().to_string()))
        .transpose()
}

/// Parses and checks config text. `origin` names it in errors (usually the file's path).
pub fn parse_str(
    text: &str,
    origin: &str,
    env: &dyn EnvSource,
) -> Result<ParsedConfig, ConfigError> {
    let raw = parse_raw(text, origin)?;
    let config = check_raw(&raw, origin, env, Some(text))?;
    Ok(ParsedConfig { config, raw })
}

/// Checks `raw` with the loading rules and, if it passes, writes it to `path` as pretty
/// JSON (JSON is JSON5), atomically and with mode 0600. An invalid document is refused
/// and the file is left as it was; issues then name key paths but no lines (the text
/// that would have been written is not the user's). Comments in the old file are not
/// kept: the document holds none (json5 has no comment-preserving round trip).
pub fn save(path: &Path, raw: &Value, env: &dyn EnvSource) -> Result<PincerConfig, ConfigError> {
    let config = check_raw(raw, &path.display().to_string(), env, None)?;
    let write_error = |source| ConfigError::Write {
        path: path.to_path_buf(),
        source,
    };
    let mut bytes = serde_json::to_vec_pretty(raw)
        .map_err(|e| write_error(std::io::Error::other(format!("cannot serialise: {e}"))))?;
    bytes.push(b'\n');
    pincer_base::AtomicWrite::new()
        .mode(pincer_base::FileMode::Exact(0o600))
        .write(path, &bytes)
        .map_err(write_error)?;
    Ok(config)
}

/// Substitution, typed loading and the rules. `text`, when given, is where positions
/// are looked up.
fn check_raw(
    raw: &Value,
    origin: &str,
    env: &dyn EnvSource,
    text: Option<&str>,
) -> Result<PincerConfig, ConfigError> {
    let issue = |path: KeyPath, message: String| ConfigIssue {
        position: text.and_then(|t| locate(t, &path)),
        path,
        message,
    };
    if !raw.is_object() {
        let found = match raw {
            Value::Array(_) => "an array",
            Value::String(_) => "a string",
            Value::Number(_) => "a number",
            Value::Bool(_) => "a boolean",
            _ => "null",
        };
        let message = format!("the config must be an object ({{ … }}), found {found}");
        return Err(ConfigError::invalid(
            origin,
            issue(KeyPath::root(), message),
        ));
    }
    let resolved = substitute(raw, env).map_err(|missing| ConfigError::Invalid {
        origin: origin.to_owned(),
        issues: missing
            .into_iter()
            .map(|m| {
                let message = format!(
                    "environment variable {} is not set or empty (referenced as ${{{}}})",
                    m.name, m.name
                );
                issue(m.path, message)
            })
            .collect(),
    })?;
    let config: PincerConfig =
        serde_path_to_error::deserialize(StrictValue(&resolved)).map_err(|e| {
            let path = KeyPath::from_serde(e.path());
            ConfigError::invalid(origin, issue(path, e.into_inner().0))
        })?;
    let violations = check(&config);
    if !violations.is_empty() {
        return Err(ConfigError::Invalid {
            origin: origin.to_owned(),
            issues: violations
                .into_iter()
                .map(|v| issue(v.path, v.message))
                .collect(),
        });
    }
    Ok(config)
}

/// The file's text, `None` if it does not exist. Bounded, and UTF-8 or a clear error.
fn read_text(path: &Path) -> Result<Option<String>, ConfigError> {
    let read_error = |source| ConfigError::Read {
        path: path.to_path_buf(),
        source,
    };
    let file = match std::fs::File::open(path) {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(read_error(e)),
    };
    let mut bytes = Vec::new();
    file.take(MAX_CONFIG_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(read_error)?;
    if bytes.len() as u64 > MAX_CONFIG_BYTES {
        return Err(ConfigError::TooLarge {
            path: path.to_path_buf(),
            limit: MAX_CONFIG_BYTES,
        });
    }
    String::from_utf8(bytes).map(Some).map_err(|e| {
        let valid = e.utf8_error().valid_up_to();
        let bytes = e.into_bytes();
        let text = String::from_utf8_lossy(&bytes[..valid]);
        ConfigError::Syntax {
            origin: path.display().to_string(),
            position: crate::error::SourcePosition::at_offset(&text, valid),
            message: "the file is not UTF-8 text".to_owned(),
        }
    })
}

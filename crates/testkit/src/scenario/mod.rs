//! The scenario: the script a mock server follows (rules, default reply, pacing, instant mode),
//! its builder API, strict JSON loading and validation.

mod builder;
mod fault;
mod matcher;
mod reply;

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use builder::builder;
pub use fault::Fault;
pub use matcher::Match;
pub use reply::{Reply, StopReason, ToolCallSpec, UsageSpec};

/// Characters per delta when neither the reply nor the scenario sets `chunkSize`.
pub const DEFAULT_CHUNK_SIZE: usize = 4;

/// A complete script for a mock server.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default, deny_unknown_fields)]
pub struct Scenario {
    /// Rules, tried in order; the first that matches (and has uses left) answers.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub rules: Vec<Rule>,
    /// Reply when no rule matches. Absent: instant mode if set, else echo
    /// `"mock: " + last user text`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub default: Option<Reply>,
    /// Characters per text / thinking / arguments delta (default 4).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub chunk_size: Option<usize>,
    /// Milliseconds between chunks (default 0).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub delay_ms: Option<u64>,
    /// Re-chunk the raw HTTP body into pieces of this many bytes (splits UTF-8 sequences and
    /// SSE lines across chunks).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub byte_chunk: Option<usize>,
    /// Benchmark mode: unmatched requests get `tokens` one-token text deltas, pre-rendered.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub instant: Option<InstantMode>,
}

/// Benchmark mode settings.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct InstantMode {
    /// Number of text deltas per reply.
    pub tokens: usize,
    /// The text of each delta (default `"tok "`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub token: Option<String>,
}

/// One scripted answer: a condition, then a reply and/or a fault.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default, deny_unknown_fields)]
pub struct Rule {
    /// The condition (`"match"` in JSON); absent matches everything.
    #[serde(rename = "match")]
    pub when: Match,
    /// The reply; absent uses the scenario's default reply.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reply: Option<Reply>,
    /// Faults to inject.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fault: Option<Fault>,
    /// Apply at most this many times, then skip the rule.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub times: Option<u32>,
}

impl Rule {
    /// A rule for requests matching `when`.
    pub fn when(when: Match) -> Self {
        Self {
            when,
            ..Self::default()
        }
    }

    /// A rule for every request.
    pub fn any() -> Self {
        Self::default()
    }

    /// Sets the reply.
    pub fn reply(mut self, reply: Reply) -> Self {
        self.reply = Some(reply);
        self
    }

    /// Sets (or combines into) the fault.
    pub fn fault(mut self, fault: Fault) -> Self {
        self.fault = Some(match self.fault.take() {
            Some(existing) => existing.and(fault),
            None => fault,
        });
        self
    }

    /// Applies the rule at most `n` times.
    pub fn times(mut self, n: u32) -> Self {
        self.times = Some(n);
        self
    }
}

builder!(Scenario {
    /// Sets the default reply.
    set default_reply(default: Reply);
    /// Sets characters per delta.
    set chunk_size(chunk_size: usize);
    /// Sets milliseconds between chunks.
    set delay_ms(delay_ms: u64);
    /// Re-chunks the HTTP body into pieces of this many bytes.
    set byte_chunk(byte_chunk: usize);
});

/// Why a scenario could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum ScenarioError {
    /// The file could not be read.
    #[error("cannot read scenario file {}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The text is not a valid scenario document (syntax, unknown field, wrong type).
    #[error("invalid scenario JSON{}: {source}", where_(.path))]
    Json {
        /// The file, when loaded from one.
        path: Option<PathBuf>,
        /// The parse error, with line and column.
        source: serde_json::Error,
    },
    /// The document parsed but a value is out of range.
    #[error("invalid scenario{}: {message}", where_(.path))]
    Invalid {
        /// The file, when loaded from one.
        path: Option<PathBuf>,
        /// What is wrong, naming the field.
        message: String,
    },
}

fn where_(path: &Option<PathBuf>) -> String {
    path.as_ref()
        .map(|p| format!(" in {}", p.display()))
        .unwrap_or_default()
}

impl ScenarioError {
    /// Line (1-based) of a JSON error.
    pub fn line(&self) -> Option<usize> {
        match self {
            ScenarioError::Json { source, .. } => Some(source.line()),
            _ => None,
        }
    }

    /// Column (1-based) of a JSON error.
    pub fn column(&self) -> Option<usize> {
        match self {
            ScenarioError::Json { source, .. } => Some(source.column()),
            _ => None,
        }
    }

    fn with_path(self, file: &Path) -> Self {
        match self {
            ScenarioError::Json { source, .. } => ScenarioError::Json {
                path: Some(file.to_path_buf()),
                source,
            },
            ScenarioError::Invalid { message, .. } => ScenarioError::Invalid {
                path: Some(file.to_path_buf()),
                message,
            },
            other => other,
        }
    }
}

impl Scenario {
    /// An empty scenario: every request gets the echo reply.
    pub fn new() -> Self {
        Self::default()
    }

    /// Benchmark mode: every unmatched reply is `tokens` text deltas of `"tok "`.
    pub fn instant(tokens: usize) -> Self {
        Self {
            instant: Some(InstantMode {
                tokens,
                token: None,
            }),
            ..Self::default()
        }
    }

    /// Appends a rule.
    pub fn rule(mut self, rule: Rule) -> Self {
        self.rules.push(rule);
        self
    }

    /// Parses and validates a scenario document. Unknown fields are errors.
    pub fn from_json_str(text: &str) -> Result<Self, ScenarioError> {
        let scenario: Scenario = serde_json::from_str(text)
            .map_err(|source| ScenarioError::Json { path: None, source })?;
        scenario.validate()?;
        Ok(scenario)
    }

    /// Reads, parses and validates a scenario file; errors name the file.
    pub fn from_file(path: impl AsRef<Path>) -> Result<Self, ScenarioError> {
        let path = path.as_ref();
        let text = std::fs::read_to_string(path).map_err(|source| ScenarioError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        Self::from_json_str(&text).map_err(|err| err.with_path(path))
    }

    /// Checks values serde cannot: sizes at least 1, statuses in range, header values
    /// printable, tool arguments objects.
    pub fn validate(&self) -> Result<(), ScenarioError> {
        let invalid = |message: String| ScenarioError::Invalid {
            path: None,
            message,
        };
        positive(self.chunk_size, "chunkSize").map_err(invalid)?;
        positive(self.byte_chunk, "byteChunk").map_err(invalid)?;
        if let Some(reply) = &self.default {
            validate_reply(reply, "default").map_err(invalid)?;
        }
        for (i, rule) in self.rules.iter().enumerate() {
            let at = format!("rules[{i}]");
            if rule.times == Some(0) {
                return Err(invalid(format!("{at}.times must be at least 1")));
            }
            if let Some(reply) = &rule.reply {
                validate_reply(reply, &format!("{at}.reply")).map_err(invalid)?;
            }
            if let Some(fault) = &rule.fault {
                validate_fault(fault, &format!("{at}.fault")).map_err(invalid)?;
            }
        }
        Ok(())
    }
}

fn positive(value: Option<usize>, name: &str) -> Result<(), String> {
    match value {
        Some(0) => Err(format!("{name} must be at least 1")),
        _ => Ok(()),
    }
}

fn validate_reply(reply: &Reply, at: &str) -> Result<(), String> {
    positive(reply.chunk_size, &format!("{at}.chunkSize"))?;
    for (i, call) in reply.tool_calls.iter().enumerate() {
        if call.name.is_empty() {
            return Err(format!("{at}.toolCalls[{i}].name must not be empty"));
        }
        if !call.arguments.is_object() {
            return Err(format!(
                "{at}.toolCalls[{i}].arguments must be a JSON object"
            ));
        }
    }
    Ok(())
}

fn validate_fault(fault: &Fault, at: &str) -> Result<(), String> {
    for (name, value, max) in [
        ("embedDims", fault.embed_dims, crate::embed::MAX_DIMS),
        ("embedCount", fault.embed_count, crate::embed::MAX_INPUTS),
    ] {
        if value.is_some_and(|value| value > max) {
            return Err(format!("{at}.{name} must be at most {max}"));
        }
    }
    if let Some(status) = fault.status
        && !(100..=599).contains(&status)
    {
        return Err(format!(
            "{at}.status {status} is not an HTTP status (100..=599)"
        ));
    }
    for (name, value) in [
        ("retryAfter", &fault.retry_after),
        ("retryAfterMs", &fault.retry_after_ms),
        ("contentType", &fault.content_type),
    ] {
        if let Some(value) = value
            && axum::http::HeaderValue::from_str(value).is_err()
        {
            return Err(format!("{at}.{name} {value:?} is not a valid header value"));
        }
    }
    positive(fault.keep_alive_every, &format!("{at}.keepAliveEvery"))
}

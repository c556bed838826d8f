//! `grep {pattern, path?, glob?, ignoreCase?, literal?, context?, limit=100}`: ripgrep's
//! engine (grep-searcher, grep-regex) over the tree walked by `ignore`: `.gitignore` and
//! `.ignore` respected (with or without a git repository), hidden and binary files skipped,
//! symlinks not followed. Matches print as `path:line: text`, context lines as
//! `path-line- text`; lines are cut to 500 characters and the output to 50 KB.

use grep_regex::RegexMatcherBuilder;
use grep_searcher::{BinaryDetection, Searcher, SearcherBuilder, Sink, SinkContext, SinkMatch};
use ignore::WalkBuilder;
use ignore::overrides::OverrideBuilder;
use pincer_agent::{ToolError, ToolOutput};
use serde::Deserialize;
use serde_json::json;
use tokio_util::sync::CancellationToken;

use super::truncate::{GREP_MAX_LINE_CHARS, LineBudget, MAX_BYTES, cut_line};
use super::{io_error, resolve};
use crate::paths::PathPolicy;

/// Default number of matches `grep` shows.
pub const DEFAULT_GREP_LIMIT: usize = 100;

/// Arguments of `grep`.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct GrepArgs {
    /// Regular expression to search for (Rust regex syntax), or a plain string with
    /// `literal: true`.
    pub pattern: String,
    /// Directory or file to search, relative to the workspace (default: the workspace).
    #[serde(default)]
    pub path: Option<String>,
    /// Only search files matching this glob, e.g. `*.rs` or `src/**/*.ts`.
    #[serde(default)]
    pub glob: Option<String>,
    /// Match case-insensitively.
    #[serde(default)]
    pub ignore_case: Option<bool>,
    /// Treat the pattern as a literal string instead of a regular expression.
    #[serde(default)]
    pub literal: Option<bool>,
    /// Lines of context to show before and after each match.
    #[serde(default)]
    pub context: Option<usize>,
    /// Maximum number of matches to return (default 100).
    #[serde(default)]
    pub limit: Option<usize>,
}

const DESCRIPTION: &str = "Search file contents for a regular expression (or a literal string). \
Respects .gitignore and skips hidden and binary files. Prints `path:line: text` per match, \
context lines as `path-line- text`. Returns at most limit matches (default 100).";

path_tool! {
    /// The `grep` tool.
    GrepTool {
        args: GrepArgs,
        name: "grep",
        label: "Grep",
        description: DESCRIPTION,
        cancellable: search,
    }
}

fn search(
    policy: &PathPolicy,
    args: GrepArgs,
    cancel: &CancellationToken,
) -> Result<ToolOutput, ToolError> {
    let user_path = args.path.as_deref().unwrap_or(".");
    let root = resolve(policy, user_path)?;
    std::fs::metadata(&root).map_err(|e| io_error("search", user_path, &e))?;
    let matcher = RegexMatcherBuilder::new()
        .case_insensitive(args.ignore_case.unwrap_or(false))
        .fixed_strings(args.literal.unwrap_or(false))
        .line_terminator(Some(b'\n'))
        .build(&args.pattern)
        .map_err(|e| ToolError::failed(format!("invalid pattern: {e}")))?;
    let context = args.context.unwrap_or(0);
    let limit = args.limit.unwrap_or(DEFAULT_GREP_LIMIT).max(1);
    let mut searcher = SearcherBuilder::new()
        .line_number(true)
        .before_context(context)
        .after_context(context)
        .binary_detection(BinaryDetection::quit(0))
        .build();

    let mut walk = WalkBuilder::new(&root);
    walk.hidden(true)
        .git_ignore(true)
        .require_git(false)
        .follow_links(false)
        .sort_by_file_path(|a, b| a.cmp(b));
    if let Some(glob) = &args.glob {
        let mut overrides = OverrideBuilder::new(&root);
        overrides
            .add(glob)
            .map_err(|e| ToolError::failed(format!("invalid glob {glob}: {e}")))?;
        let overrides = overrides
            .build()
            .map_err(|e| ToolError::failed(format!("invalid glob {glob}: {e}")))?;
        walk.overrides(overrides);
    }

    let mut sink = Collector::new(limit);
    for entry in walk.build() {
        if cancel.is_cancelled() {
            return Err(ToolError::Aborted);
        }
        let Ok(entry) = entry else { continue };
        if !entry.file_type().is_some_and(|t| t.is_file()) {
            continue;
        }
        sink.start_file(policy.display(entry.path()), context > 0);
        // Unreadable files are skipped, as ripgrep does.
        let _ = searcher.search_path(&matcher, entry.path(), &mut sink);
        sink.finish_file();
        if sink.limit_reached {
            break;
        }
    }
    Ok(sink.into_output(limit))
}

/// Gathers output lines; a file's lines are kept only if it turns out not to be binary.
struct Collector {
    limit: usize,
    lines: Vec<String>,
    matches: usize,
    files: usize,
    limit_reached: bool,
    file: FileState,
}

#[derive(Default)]
struct FileState {
    shown: String,
    separate: bool,
    lines: Vec<String>,
    matches: usize,
    binary: bool,
}

impl Collector {
    fn new(limit: usize) -> Self {
        Self {
            limit,
            lines: Vec::new(),
            matches: 0,
            files: 0,
            limit_reached: false,
            file: FileState::default(),
        }
    }

    fn start_file(&mut self, shown: String, separate: bool) {
        self.file = FileState {
            shown,
            separate,
            ..FileState::default()
        };
    }

    fn finish_file(&mut self) {
        let file = std::mem::take(&mut self.file);
        if file.binary {
            self.matches -= file.matches;
            self.limit_reached = false;
            return;
        }
        if file.lines.is_empty() {
            return;
        }
        self.files += 1;
        if file.separate && !self.lines.is_empty() {
            self.lines.push("--".to_owned());
        }
        self.lines.extend(file.lines);
    }

    fn line(&mut self, separator: char, number: Option<u64>, bytes: &[u8]) {
        let text = String::from_utf8_lossy(bytes);
        let text = text.trim_end_matches(['\n', '\r']);
        let (text, _) = cut_line(text, GREP_MAX_LINE_CHARS);
        let number = number.unwrap_or(0);
        self.file.lines.push(format!(
            "{}{separator}{number}{separator} {text}",
            self.file.shown
        ));
    }

    fn into_output(self, limit: usize) -> ToolOutput {
        if self.matches == 0 {
            return ToolOutput::text("No matches found")
                .with_details(json!({"matches": 0, "files": 0, "limitReached": false}));
        }
        let mut budget = LineBudget::new(usize::MAX, MAX_BYTES);
        for line in self.lines {
            if !budget.push(line) {
                break;
            }
        }
        let mut text = budget.join();
        let mut notes = Vec::new();
        if self.limit_reached {
            notes.push(format!(
                "{limit} matches limit reached. Use limit={} for more, or refine the pattern",
                limit.saturating_mul(2)
            ));
        }
        if budget.exhausted() {
            notes.push("50KB output limit reached; refine the pattern or path".to_owned());
        }
        if !notes.is_empty() {
            text.push_str(&format!("\n\n[{}]", notes.join(". ")));
        }
        ToolOutput::text(text).with_details(json!({
            "matches": self.matches,
            "files": self.files,
            "limitReached": self.limit_reached,
            "truncated": budget.exhausted(),
        }))
    }
}

impl Sink for Collector {
    type Error = std::io::Error;

    fn matched(&mut self, _: &Searcher, mat: &SinkMatch<'_>) -> Result<bool, Self::Error> {
        if self.matches >= self.limit {
            self.limit_reached = true;
            return Ok(false);
        }
        self.matches += 1;
        self.file.matches += 1;
        self.line(':', mat.line_number(), mat.bytes());
        Ok(true)
    }

    fn context(&mut self, _: &Searcher, ctx: &SinkContext<'_>) -> Result<bool, Self::Error> {
        self.line('-', ctx.line_number(), ctx.bytes());
        Ok(true)
    }

    fn context_break(&mut self, _: &Searcher) -> Result<bool, Self::Error> {
        if !self.file.lines.is_empty() {
            self.file.lines.push("--".to_owned());
        }
        Ok(true)
    }

    fn binary_data(&mut self, _: &Searcher, _: u64) -> Result<bool, Self::Error> {
        self.file.binary = true;
        Ok(false)
    }
}

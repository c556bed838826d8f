//! The memory tools (OpenClaw's `memory_search` and `memory_get`): searching the agent's
//! Markdown memory (`MEMORY.md`, `memory/*.md`) through its index, and reading a window of
//! lines of one memory file. Both answer JSON the model reads. The index is opened on the
//! first call (a turn that never searches memory never touches SQLite) and, unless a
//! watcher keeps it current, brought up to date before each search (with the embedder's
//! time bounded, so a search never waits long on an unreachable provider).

use std::path::PathBuf;
use std::sync::Arc;

use futures_util::future::BoxFuture;
use pincer_agent::{AgentTool, ToolContext, ToolError, ToolOutput, TypedTool, typed};
use pincer_memory::{MemoryError, MemoryIndex, SearchMode, SearchOptions, read_memory_async};
use serde::Deserialize;
use serde_json::{Value, json};
use tokio::sync::OnceCell;

/// Opens an agent's index.
pub type OpenIndex =
    Arc<dyn Fn() -> BoxFuture<'static, Result<MemoryIndex, MemoryError>> + Send + Sync>;

/// An agent's memory as the tools see it.
#[derive(Clone)]
pub struct MemorySource {
    workspace: PathBuf,
    open: OpenIndex,
    index: Arc<OnceCell<MemoryIndex>>,
    options: SearchOptions,
    sync_before_search: bool,
}

impl MemorySource {
    /// The memory of `workspace`, its index opened by `open` when first needed, searched
    /// with `options` (the tools' `maxResults` / `minScore` override them per call).
    pub fn new(workspace: PathBuf, open: OpenIndex, options: SearchOptions) -> Self {
        Self {
            workspace,
            open,
            index: Arc::new(OnceCell::new()),
            options,
            sync_before_search: true,
        }
    }

    /// An index already open (and kept current by a watcher: no sync before searches).
    pub fn watched(workspace: PathBuf, index: MemoryIndex, options: SearchOptions) -> Self {
        let opened = index.clone();
        Self {
            workspace,
            open: Arc::new(move || {
                let index = opened.clone();
                Box::pin(async move { Ok(index) })
            }),
            index: Arc::new(OnceCell::new_with(Some(index))),
            options,
            sync_before_search: false,
        }
    }

    async fn index(&self) -> Result<&MemoryIndex, MemoryError> {
        self.index.get_or_try_init(|| (self.open)()).await
    }
}

/// `memory_search` and `memory_get` over `source`.
pub fn memory_tools(source: MemorySource) -> Vec<Arc<dyn AgentTool>> {
    vec![
        typed(MemorySearch {
            source: source.clone(),
        }),
        typed(MemoryGet { source }),
    ]
}

/// `memory_search` arguments.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct MemorySearchArgs {
    /// What to look for, in words (any language).
    pub query: String,
    /// How many results at most (default 6, at most 50).
    #[serde(default)]
    pub max_results: Option<usize>,
    /// Drop results scoring below this, 0..1 (default 0.35).
    #[serde(default)]
    pub min_score: Option<f32>,
}

/// Most results one call may ask for.
const MAX_RESULTS: usize = 50;

struct MemorySearch {
    source: MemorySource,
}

impl TypedTool for MemorySearch {
    type Args = MemorySearchArgs;

    const NAME: &'static str = "memory_search";
    const DESCRIPTION: &'static str = "Search your long-term memory (MEMORY.md and memory/*.md) for notes about the user, past \
         decisions, people, dates and preferences before answering questions about them. Returns \
         the best matching snippets with their file path, line range and score; read more of a \
         file with memory_get.";

    async fn run(
        &self,
        args: MemorySearchArgs,
        _ctx: ToolContext,
    ) -> Result<ToolOutput, ToolError> {
        let query = args.query.trim();
        if query.is_empty() {
            return Err(ToolError::failed("query is empty: say what to look for"));
        }
        let mut options = self.source.options.clone();
        if let Some(max) = args.max_results {
            options.max_results = max.clamp(1, MAX_RESULTS);
        }
        if let Some(min) = args.min_score {
            options.min_score = min.clamp(0.0, 1.0);
        }
        let index = self.source.index().await.map_err(failed)?;
        // Bounded: an unreachable embedder must not hold up the turn (see
        // `sync_for_search`); what is indexed can be searched anyway.
        if self.source.sync_before_search
            && let Err(e) = index.sync_for_search().await
        {
            tracing::warn!(error = %e, "memory sync before search failed");
        }
        let found = index.search(query, &options).await.map_err(failed)?;
        let results: Vec<Value> = found
            .results
            .iter()
            .map(|hit| {
                json!({
                    "path": hit.path,
                    "startLine": hit.start_line,
                    "endLine": hit.end_line,
                    "score": round3(hit.score),
                    "heading": hit.heading,
                    "snippet": hit.snippet,
                })
            })
            .collect();
        let mut answer = json!({ "results": results, "mode": "hybrid" });
        if let SearchMode::KeywordOnly { reason } = &found.mode {
            answer["mode"] = json!("keyword-only");
            answer["reason"] = json!(reason);
        }
        Ok(ToolOutput::text(answer.to_string()).with_details(answer))
    }
}

/// `memory_get` arguments.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct MemoryGetArgs {
    /// `MEMORY.md` or a file under `memory/` (as memory_search gives it).
    pub path: String,
    /// The first line to read, 1-based (default 1).
    #[serde(default)]
    pub from: Option<usize>,
    /// How many lines (default: the rest of the file).
    #[serde(default)]
    pub lines: Option<usize>,
}

struct MemoryGet {
    source: MemorySource,
}

impl TypedTool for MemoryGet {
    type Args = MemoryGetArgs;

    const NAME: &'static str = "memory_get";
    const DESCRIPTION: &'static str = "Read lines of a memory file (MEMORY.md or memory/*.md), e.g. around a memory_search \
         result: path, from (1-based line), lines.";

    async fn run(&self, args: MemoryGetArgs, _ctx: ToolContext) -> Result<ToolOutput, ToolError> {
        let text = read_memory_async(&self.source.workspace, &args.path, args.from, args.lines)
            .await
            .map_err(failed)?;
        let answer = json!({
            "path": text.path,
            "from": text.from,
            "to": text.to,
            "totalLines": text.total_lines,
            "truncated": text.truncated,
            "text": text.text,
        });
        Ok(ToolOutput::text(answer.to_string()).with_details(answer))
    }
}

fn failed(e: MemoryError) -> ToolError {
    ToolError::failed(e.to_string())
}

/// Scores to three decimals: more is noise to the model.
fn round3(score: f32) -> f64 {
    (f64::from(score) * 1000.0).round() / 1000.0
}

//! `pincer memory index|search|status`: an agent's Markdown memory from the terminal —
//! bring its index up to date, search it as the `memory_search` tool does, and say what is
//! indexed (and what could not be).

use std::process::ExitCode;

use anyhow::{Result, bail};
use clap::Subcommand;
use pincer_memory::{MemoryIndex, SearchMode};
use serde_json::json;

use crate::app::App;
use crate::memory_setup::{AgentMemory, search_options};

#[derive(Debug, Subcommand)]
pub enum MemoryCommand {
    /// Index the agent's memory files now (only what changed since the last time).
    Index {
        /// The agent (default: the default agent).
        #[arg(long, value_name = "ID")]
        agent: Option<String>,
        /// Print JSON: what the sync did.
        #[arg(long)]
        json: bool,
    },
    /// Search the agent's memory (MEMORY.md and memory/*.md).
    Search {
        /// What to look for.
        #[arg(value_name = "QUERY")]
        query: String,
        /// The agent (default: the default agent).
        #[arg(long, value_name = "ID")]
        agent: Option<String>,
        /// How many results at most (default: memorySearch.query.maxResults, else 6).
        #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=100))]
        max_results: Option<u64>,
        /// Drop results scoring below this, 0..1 (default 0.35).
        #[arg(long, value_name = "SCORE")]
        min_score: Option<f32>,
        /// Print JSON `{mode, reason?, results: [...]}`.
        #[arg(long)]
        json: bool,
    },
    /// What is indexed, with which embedder, and any files that could not be.
    Status {
        /// The agent (default: the default agent).
        #[arg(long, value_name = "ID")]
        agent: Option<String>,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
}

pub async fn run(app: &App, command: MemoryCommand) -> Result<ExitCode> {
    match command {
        MemoryCommand::Index { agent, json } => {
            let (_, index) = open(app, agent.as_deref()).await?;
            let report = index.sync().await?;
            if json {
                println!("{}", serde_json::to_string_pretty(&report)?);
            } else {
                if let Some(why) = &report.rebuilt {
                    println!("rebuilt the index: {why}");
                }
                println!(
                    "{} memory files: {} indexed, {} removed; {} chunks written, {} embedded, {} reused",
                    report.files_scanned,
                    report.files_indexed,
                    report.files_removed,
                    report.chunks_written,
                    report.texts_embedded,
                    report.embeddings_reused,
                );
                if report.embed_failures > 0 {
                    println!(
                        "{} chunks could not be embedded: they are found by keywords only (see `pincer memory status`)",
                        report.embed_failures
                    );
                }
                for (path, problem) in &report.problems {
                    println!("  {path}: {problem}");
                }
            }
            Ok(ExitCode::SUCCESS)
        }
        MemoryCommand::Search {
            query,
            agent,
            max_results,
            min_score,
            json,
        } => {
            if query.trim().is_empty() {
                bail!("the query is empty: say what to look for");
            }
            let (memory, index) = open(app, agent.as_deref()).await?;
            if let Err(e) = index.sync().await {
                eprintln!("warning: the index could not be brought up to date: {e:#}");
            }
            let mut options = search_options(&memory.config);
            if let Some(max) = max_results.and_then(|m| usize::try_from(m).ok()) {
                options.max_results = max;
            }
            if let Some(min) = min_score {
                options.min_score = min.clamp(0.0, 1.0);
            }
            let found = index.search(&query, &options).await?;
            if json {
                println!("{}", serde_json::to_string_pretty(&found)?);
                return Ok(ExitCode::SUCCESS);
            }
            if let SearchMode::KeywordOnly { reason } = &found.mode {
                eprintln!("keyword-only search: {reason}");
            }
            if found.results.is_empty() {
                println!("no memory matches {query:?}");
            }
            for hit in &found.results {
                let heading = if hit.heading.is_empty() {
                    String::new()
                } else {
                    format!("  {}", hit.heading)
                };
                println!(
                    "{:.3}  {}:{}-{}{heading}",
                    hit.score, hit.path, hit.start_line, hit.end_line
                );
                for line in hit.snippet.lines() {
                    println!("       {line}");
                }
            }
            Ok(ExitCode::SUCCESS)
        }
        MemoryCommand::Status { agent, json } => {
            let (memory, index) = open(app, agent.as_deref()).await?;
            let status = index.status().await?;
            if json {
                let mut value = serde_json::to_value(&status)?;
                value["agentId"] = json!(memory.agent_id);
                println!("{}", serde_json::to_string_pretty(&value)?);
                return Ok(ExitCode::SUCCESS);
            }
            println!(
                "agent {}: {} memory files, {} chunks ({} with vectors)",
                memory.agent_id, status.files, status.chunks, status.embedded_chunks
            );
            println!("search: {}", status.search_mode);
            if let Some(embedder) = &status.embedder {
                let dims = status
                    .dims
                    .map(|d| format!(", {d} dims"))
                    .unwrap_or_default();
                println!("embedder: {embedder}{dims}");
            }
            println!(
                "index: {} ({} KiB), last indexed {}",
                status.db_path.display(),
                status.db_bytes.div_ceil(1024),
                status
                    .last_sync_ms
                    .map_or("never".to_owned(), pincer_base::time::iso_from_ms)
            );
            if let Some(error) = &status.embed_error {
                println!("embedding error: {error}");
            }
            if let Some(moved) = &status.recovered_from {
                println!(
                    "a corrupt index was moved to {} and rebuilt",
                    moved.display()
                );
            }
            for problem in &status.problems {
                println!(
                    "  {} ({}): {}",
                    problem.path, problem.status, problem.problem
                );
            }
            Ok(ExitCode::SUCCESS)
        }
    }
}

async fn open(app: &App, agent: Option<&str>) -> Result<(AgentMemory, MemoryIndex)> {
    let agent_id = app.agent_id(agent)?;
    let Some(memory) = AgentMemory::of(app, &agent_id) else {
        bail!(
            "memory is off for agent {agent_id} (memorySearch.enabled is false in {})",
            app.config_path.display()
        );
    };
    let index = memory.open(app).await?;
    Ok((memory, index))
}

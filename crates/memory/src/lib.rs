//! pincer-memory: an agent's memory. The Markdown in its workspace is the source of truth
//! (`MEMORY.md`, `memory/*.md`); this crate keeps a derived, rebuildable index of it in
//! SQLite (FTS5 with the trigram tokenizer, so Chinese is found, plus embedding vectors)
//! and searches it hybrid (vector and keyword scores combined). It never writes the
//! Markdown.
//!
//! Entry points: [`MemoryIndex::open`], [`MemoryIndex::sync`], [`MemoryIndex::search`],
//! [`MemoryIndex::status`], [`read_memory`] (for `memory_get`) and, with the `watch`
//! feature, [`MemoryWatcher`].

pub mod chunk;
mod db;
pub mod embedder;
mod error;
mod get;
mod index;
mod query;
mod scan;
mod search;
mod status;
mod sync;
#[cfg(feature = "watch")]
mod watch;

#[cfg(feature = "local-embeddings")]
pub mod local;

pub use chunk::{Chunk, ChunkSettings, chunk_markdown, estimate_tokens};
pub use embedder::{EmbedError, Embedder};
pub use error::MemoryError;
pub use get::{MAX_GET_CHARS, MemoryText, read_memory, read_memory_async};
pub use index::{IndexSettings, MemoryIndex};
pub use scan::FileProblem;
pub use search::{SearchHit, SearchMode, SearchOptions, SearchResults};
pub use status::{FileStatus, MemoryStatus};
pub use sync::SyncReport;
#[cfg(feature = "watch")]
pub use watch::{MemoryWatcher, WatchSettings};

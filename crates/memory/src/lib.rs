//! pincer-memory: an agent's memory. The Markdown in its workspace is the source of truth
//! (`MEMORY.md`, `memory/*.md`); this crate keeps a derived, rebuildable index of it in
//! SQLite (FTS5 with the trigram tokenizer, so Chinese is found, plus embedding vectors)
//! and searches it hybrid (vector and keyword scores combined). It never writes the
//! Markdown.

pub mod embedder;

#[cfg(feature = "local-embeddings")]
pub mod local;

pub use embedder::{EmbedError, Embedder};

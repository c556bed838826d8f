//! Hybrid search: vector candidates (brute-force cosine over every embedded chunk, held in
//! memory as one contiguous normalised matrix) and keyword candidates (FTS5 BM25, see
//! `query.rs`), `candidate_multiplier × max_results` of each, merged by chunk:
//! `score = vector_weight·cosine + text_weight·text` (weights normalised to sum 1). A chunk
//! the embedder failed on scores by its text alone, so it can still be found. Then
//! optional temporal decay (dated notes only), the `min_score` filter, optional MMR, and
//! the top `max_results`. Without an embedder, or when the query cannot be embedded, the
//! search is keyword-only (score = text score) and the results say why. Text scores are
//! relative to the best keyword match (see `rank`).

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::Ordering;

use rusqlite::OptionalExtension;
use serde::Serialize;

use crate::db::{self, Db};
use crate::error::MemoryError;
use crate::index::{DbFailure, Inner, MemoryIndex};
use crate::query;
use crate::scan::dated_note_day;

/// Snippets are cut to this many characters.
const SNIPPET_CHARS: usize = 700;

/// How to search.
#[derive(Debug, Clone, PartialEq)]
pub struct SearchOptions {
    /// How many hits at most (default 6).
    pub max_results: usize,
    /// Hits scoring below this are dropped (default 0.35).
    pub min_score: f32,
    /// Weight of the vector score (default 0.7).
    pub vector_weight: f32,
    /// Weight of the keyword score (default 0.3).
    pub text_weight: f32,
    /// Candidates taken from each side, as a multiple of `max_results` (default 4).
    pub candidate_multiplier: usize,
    /// MMR diversification with this λ (relevance vs novelty; OpenClaw's is 0.7). Off by
    /// default.
    pub mmr_lambda: Option<f32>,
    /// Temporal decay of dated notes with this half-life in days (OpenClaw's is 30). Off by
    /// default. `MEMORY.md` and undated files never decay.
    pub temporal_decay_half_life_days: Option<f32>,
    /// "Now" for decay, in ms since the epoch (default: the system clock).
    pub now_ms: Option<i64>,
}

impl Default for SearchOptions {
    fn default() -> Self {
        Self {
            max_results: 6,
            min_score: 0.35,
            vector_weight: 0.7,
            text_weight: 0.3,
            candidate_multiplier: 4,
            mmr_lambda: None,
            temporal_decay_half_life_days: None,
            now_ms: None,
        }
    }
}

/// How the results were found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "mode", rename_all = "kebab-case")]
pub enum SearchMode {
    /// Vectors and keywords combined.
    Hybrid,
    /// Keywords only, and why.
    KeywordOnly {
        /// Why vectors were not used.
        reason: String,
    },
}

/// One result.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SearchHit {
    /// Workspace-relative path (`MEMORY.md`, `memory/2026-01-02.md`).
    pub path: String,
    /// First line, 1-based.
    pub start_line: usize,
    /// Last line, inclusive.
    pub end_line: usize,
    /// Combined score, 0..1.
    pub score: f32,
    /// The chunk's text, cut to about 700 characters.
    pub snippet: String,
    /// The heading path at the chunk's start.
    pub heading: String,
}

/// Search results.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SearchResults {
    /// Hybrid or keyword-only (with the reason).
    #[serde(flatten)]
    pub mode: SearchMode,
    /// Best first.
    pub results: Vec<SearchHit>,
}

/// Every embedded chunk's vector, contiguous, for the brute-force scan.
pub(crate) struct VectorCache {
    generation: u64,
    data_version: i64,
    embedder: Option<String>,
    dims: usize,
    ids: Vec<i64>,
    data: Vec<f32>,
}

impl MemoryIndex {
    /// Searches memory (see the module doc).
    pub async fn search(
        &self,
        query: &str,
        options: &SearchOptions,
    ) -> Result<SearchResults, MemoryError> {
        let query = query.trim().to_owned();
        let options = options.clone();
        let (query_vector, mut mode) = match &self.inner.embedder {
            None => (None, keyword_only("no embedding provider is configured")),
            Some(_) if query.is_empty() => (None, SearchMode::Hybrid),
            Some(embedder) => match self.embed_query(embedder.as_ref(), &query).await {
                Err(why) => (None, keyword_only(&why)),
                Ok(Ok(mut vectors)) if vectors.len() == 1 => match db::normalise(vectors.remove(0))
                {
                    Some(v) => (Some(v), SearchMode::Hybrid),
                    None => (
                        None,
                        keyword_only("the query embedding is zero or not finite"),
                    ),
                },
                Ok(Ok(vectors)) => {
                    let why = format!(
                        "the embedder returned {} vectors for the query",
                        vectors.len()
                    );
                    (None, keyword_only(&why))
                }
                Ok(Err(e)) => {
                    self.inner.note_embedder(Err(&e.to_string()));
                    (
                        None,
                        keyword_only(&format!("the query could not be embedded: {e}")),
                    )
                }
            },
        };
        if query.is_empty() {
            return Ok(SearchResults {
                mode,
                results: Vec::new(),
            });
        }
        let embedder_id = self.embedder_id().map(str::to_owned);
        self.with_db(move |inner, db| {
            let mut vector_hits = Vec::new();
            if let Some(qv) = &query_vector {
                let cache = vector_cache(inner, db)?;
                let candidates = candidates(&options);
                if cache.embedder != embedder_id {
                    mode = keyword_only("the index was embedded with another model; it is re-embedded on the next sync");
                } else if cache.ids.is_empty() {
                    mode = keyword_only("no chunk has an embedding yet (see memory status)");
                } else if cache.dims != qv.len() {
                    let why = format!("the query embedding has {} dimensions, the index {}", qv.len(), cache.dims);
                    mode = keyword_only(&why);
                } else {
                    vector_hits = cache.top(qv, candidates);
                }
            }
            let text_hits = query::text_candidates(&db.conn, &query, candidates(&options))?;
            rank(db, &mode, &options, &vector_hits, &text_hits).map(|results| SearchResults { mode, results })
        })
        .await
    }
}

impl MemoryIndex {
    /// The query's vector from the embedder, unless it is cooling down after a failure or
    /// does not answer within [`crate::IndexSettings::search_embed_timeout`] (then `Err`
    /// with why: the search goes on by keyword instead of holding up the turn).
    async fn embed_query(
        &self,
        embedder: &dyn crate::Embedder,
        query: &str,
    ) -> Result<Result<Vec<Vec<f32>>, crate::EmbedError>, String> {
        if let Some(why) = self.inner.embedder_down() {
            return Err(format!("the query could not be embedded: {why}"));
        }
        let texts = [query.to_owned()];
        let limit = self.inner.settings.search_embed_timeout;
        match tokio::time::timeout(limit, embedder.embed_now(&texts)).await {
            Ok(answer) => {
                if answer.is_ok() {
                    self.inner.note_embedder(Ok(()));
                }
                Ok(answer)
            }
            Err(_) => {
                let why = format!("no answer within {} s", limit.as_secs_f64());
                self.inner.note_embedder(Err(&why));
                Err(format!(
                    "the query could not be embedded: the embedding provider gave {why}"
                ))
            }
        }
    }
}

fn keyword_only(reason: &str) -> SearchMode {
    SearchMode::KeywordOnly {
        reason: reason.to_owned(),
    }
}

fn candidates(options: &SearchOptions) -> usize {
    options.max_results.clamp(1, 200) * options.candidate_multiplier.clamp(1, 20)
}

/// The vector cache, reloaded when this process or another has written since.
fn vector_cache(inner: &Inner, db: &Db) -> Result<Arc<VectorCache>, DbFailure> {
    let generation = inner.generation.load(Ordering::SeqCst);
    let data_version: i64 = db.conn.query_row("PRAGMA data_version", [], |r| r.get(0))?;
    let mut slot = inner
        .cache
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some(cache) = slot.as_ref()
        && cache.generation == generation
        && cache.data_version == data_version
    {
        return Ok(Arc::clone(cache));
    }
    let embedder = db.meta_get("embedder")?;
    let dims: usize = db
        .meta_get("dims")?
        .and_then(|d| d.parse().ok())
        .unwrap_or(0);
    let mut ids = Vec::new();
    let mut data = Vec::new();
    if dims > 0 {
        let mut stmt = db.conn.prepare(
            "SELECT id, embedding FROM chunks WHERE embedding IS NOT NULL AND dims = ?1",
        )?;
        let mut rows = stmt.query([dims as i64])?;
        while let Some(row) = rows.next()? {
            let Ok(blob) = row.get_ref(1)?.as_blob() else {
                continue;
            };
            if blob.len() != dims * 4 {
                continue;
            }
            ids.push(row.get(0)?);
            data.extend(
                blob.chunks_exact(4)
                    .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])),
            );
        }
    }
    let cache = Arc::new(VectorCache {
        generation,
        data_version,
        embedder,
        dims,
        ids,
        data,
    });
    *slot = Some(Arc::clone(&cache));
    Ok(cache)
}

impl VectorCache {
    /// The `k` chunks most similar to `query` (normalised), best first.
    fn top(&self, query: &[f32], k: usize) -> Vec<(i64, f32)> {
        let mut scored: Vec<(f32, usize)> = self
            .data
            .chunks_exact(self.dims)
            .map(|row| dot(row, query))
            .enumerate()
            .map(|(i, s)| (s, i))
            .collect();
        let by_score = |a: &(f32, usize), b: &(f32, usize)| b.0.total_cmp(&a.0);
        if scored.len() > k && k > 0 {
            scored.select_nth_unstable_by(k - 1, by_score);
            scored.truncate(k);
        }
        scored.sort_unstable_by(by_score);
        scored
            .into_iter()
            .filter_map(|(s, i)| self.ids.get(i).map(|id| (*id, s)))
            .collect()
    }
}

/// Dot product with eight independent accumulators, so the compiler can vectorise it
/// (a single running sum is a dependency chain it may not reorder).
fn dot(a: &[f32], b: &[f32]) -> f32 {
    let mut acc = [0.0f32; 8];
    let (a8, a_rest) = a.split_at(a.len() - a.len() % 8);
    let (b8, b_rest) = b.split_at(b.len().min(a8.len()));
    for (x, y) in a8.chunks_exact(8).zip(b8.chunks_exact(8)) {
        for i in 0..8 {
            acc[i] += x[i] * y[i];
        }
    }
    let tail: f32 = a_rest.iter().zip(b_rest).map(|(x, y)| x * y).sum();
    acc.iter().sum::<f32>() + tail
}

/// A chunk row fetched for a candidate.
struct Row {
    path: String,
    start_line: usize,
    end_line: usize,
    heading: String,
    text: String,
    embedded: bool,
}

/// Merges candidates, scores, decays, filters, diversifies and cuts.
fn rank(
    db: &Db,
    mode: &SearchMode,
    options: &SearchOptions,
    vector_hits: &[(i64, f32)],
    text_hits: &[(i64, f32)],
) -> Result<Vec<SearchHit>, DbFailure> {
    let mut merged: HashMap<i64, (f32, f32)> = HashMap::new();
    for (id, s) in vector_hits {
        merged.entry(*id).or_default().0 = s.max(0.0);
    }
    for (id, s) in text_hits {
        merged.entry(*id).or_default().1 = *s;
    }
    let (vw, tw) = {
        let (v, t) = (options.vector_weight.max(0.0), options.text_weight.max(0.0));
        if v + t > 0.0 {
            (v / (v + t), t / (v + t))
        } else {
            (0.7, 0.3)
        }
    };
    let hybrid = matches!(mode, SearchMode::Hybrid);
    // Keyword scores are relative to the best keyword match: BM25's scale depends on the
    // corpus (a small memory has small IDFs), so absolute scores would keep every keyword
    // match under `min_score` there (OpenClaw's `1/(1+rank)` is 1 for every match; this
    // keeps their order).
    let best_text = text_hits.iter().map(|(_, s)| *s).fold(0.0f32, f32::max);
    let text_scale = if best_text > 0.0 {
        1.0 / best_text
    } else {
        1.0
    };
    let today = options
        .now_ms
        .unwrap_or_else(db::now_ms)
        .div_euclid(86_400_000);
    let mut stmt = db.conn.prepare_cached(
        "SELECT path, start_line, end_line, heading, text, embedding IS NOT NULL FROM chunks WHERE id = ?1",
    )?;
    let mut scored = Vec::new();
    for (id, (vs, ts)) in merged {
        let row = stmt
            .query_row([id], |r| {
                Ok(Row {
                    path: r.get(0)?,
                    start_line: usize::try_from(r.get::<_, i64>(1)?).unwrap_or(0),
                    end_line: usize::try_from(r.get::<_, i64>(2)?).unwrap_or(0),
                    heading: r.get(3)?,
                    text: r.get(4)?,
                    embedded: r.get(5)?,
                })
            })
            .optional()?;
        let Some(row) = row else { continue };
        let ts = ts * text_scale;
        let mut score = if hybrid && row.embedded {
            vw * vs + tw * ts
        } else {
            ts
        };
        if let (Some(half_life), Some(day)) = (
            options.temporal_decay_half_life_days,
            dated_note_day(&row.path),
        ) && half_life > 0.0
        {
            let age = (today - day).max(0) as f32;
            score *= 0.5f32.powf(age / half_life);
        }
        if score >= options.min_score && score > 0.0 {
            scored.push((score, row));
        }
    }
    scored.sort_by(|a, b| {
        b.0.total_cmp(&a.0)
            .then_with(|| a.1.path.cmp(&b.1.path))
            .then_with(|| a.1.start_line.cmp(&b.1.start_line))
    });
    let max = options.max_results.max(1);
    let picked = match options.mmr_lambda {
        Some(lambda) => mmr(scored, lambda.clamp(0.0, 1.0), max),
        None => scored.into_iter().take(max).collect(),
    };
    Ok(picked
        .into_iter()
        .map(|(score, row)| SearchHit {
            path: row.path,
            start_line: row.start_line,
            end_line: row.end_line,
            score,
            snippet: snippet(&row.text),
            heading: row.heading,
        })
        .collect())
}

/// Maximal marginal relevance: repeatedly takes the hit with the best
/// `λ·score − (1−λ)·max similarity to those taken`, similarity being the Jaccard overlap
/// of their word/character-bigram sets (cheap, and works without vectors).
fn mmr(scored: Vec<(f32, Row)>, lambda: f32, max: usize) -> Vec<(f32, Row)> {
    let mut pool: Vec<(f32, Row, Vec<String>)> = scored
        .into_iter()
        .map(|(s, r)| {
            let tokens = query::similarity_tokens(&r.text);
            (s, r, tokens)
        })
        .collect();
    let mut taken: Vec<(f32, Row, Vec<String>)> = Vec::new();
    while taken.len() < max && !pool.is_empty() {
        let mut best = (0usize, f32::NEG_INFINITY);
        for (i, (score, _, tokens)) in pool.iter().enumerate() {
            let redundancy = taken
                .iter()
                .map(|(_, _, t)| query::jaccard(tokens, t))
                .fold(0.0f32, f32::max);
            let value = lambda * score - (1.0 - lambda) * redundancy;
            if value > best.1 {
                best = (i, value);
            }
        }
        taken.push(pool.remove(best.0));
    }
    taken.into_iter().map(|(s, r, _)| (s, r)).collect()
}

/// The first ~700 characters, cut at a character boundary, with an ellipsis when cut.
fn snippet(text: &str) -> String {
    match text.char_indices().nth(SNIPPET_CHARS) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_owned(),
    }
}

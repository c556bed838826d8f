//! Benchmarks: indexing 10,000 chunks with an instant mocked embedder, and query latency
//! (p50/p99 over individually timed queries, plus criterion) at 10,000 and 100,000
//! chunks. Synthetic corpus: pseudo-words, one ~50-token section per chunk, 256-dim
//! hashed vectors.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use futures_util::future::BoxFuture;
use pincer_memory::{
    ChunkSettings, EmbedError, Embedder, IndexSettings, MemoryIndex, SearchOptions,
};

const DIMS: usize = 256;

struct Instant256;

fn rng(state: &mut u64) -> u64 {
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    *state
}

fn embed(text: &str) -> Vec<f32> {
    let mut v = vec![0.0f32; DIMS];
    for word in text.split_whitespace() {
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for b in word.bytes() {
            h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
        v[(h % DIMS as u64) as usize] += 1.0;
    }
    v
}

impl Embedder for Instant256 {
    fn id(&self) -> &str {
        "bench/hash-256"
    }
    fn embed<'a>(
        &'a self,
        texts: &'a [String],
    ) -> BoxFuture<'a, Result<Vec<Vec<f32>>, EmbedError>> {
        Box::pin(async move { Ok(texts.iter().map(|t| embed(t)).collect()) })
    }
}

fn vocabulary() -> Vec<String> {
    let syllables = [
        "ka", "lo", "mi", "ne", "ru", "sa", "te", "vo", "zi", "pa", "qu", "do", "fe", "gi", "hu",
        "ji",
    ];
    let mut words = Vec::new();
    for a in syllables {
        for b in syllables {
            for c in syllables {
                words.push(format!("{a}{b}{c}"));
            }
        }
    }
    words
}

/// Writes `chunks` sections (one chunk each) into files of 50 sections.
fn write_corpus(ws: &std::path::Path, chunks: usize, vocab: &[String]) {
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    std::fs::create_dir_all(ws.join("memory")).unwrap();
    for file in 0..chunks.div_ceil(50) {
        let mut text = String::new();
        for section in 0..50.min(chunks - file * 50) {
            text.push_str(&format!("## Section {file}-{section}\n"));
            for _ in 0..30 {
                text.push_str(&vocab[(rng(&mut state) % vocab.len() as u64) as usize]);
                text.push(' ');
            }
            text.push_str("\n\n");
        }
        std::fs::write(ws.join(format!("memory/notes-{file:05}.md")), text).unwrap();
    }
}

fn settings() -> IndexSettings {
    IndexSettings {
        chunking: ChunkSettings {
            max_tokens: 60,
            overlap_tokens: 10,
        },
        ..IndexSettings::default()
    }
}

async fn build(dir: &std::path::Path, chunks: usize, vocab: &[String]) -> (MemoryIndex, Duration) {
    let ws = dir.join("ws");
    write_corpus(&ws, chunks, vocab);
    let index = MemoryIndex::open(
        dir.join("index.sqlite"),
        &ws,
        Some(Arc::new(Instant256)),
        settings(),
    )
    .await
    .unwrap();
    let started = Instant::now();
    index.sync().await.unwrap();
    (index, started.elapsed())
}

fn queries(vocab: &[String], n: usize) -> Vec<String> {
    let mut state = 0x1234_5678u64;
    (0..n)
        .map(|_| {
            (0..3)
                .map(|_| vocab[(rng(&mut state) % vocab.len() as u64) as usize].clone())
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect()
}

async fn percentiles(index: &MemoryIndex, queries: &[String]) -> (Duration, Duration) {
    let options = SearchOptions {
        min_score: 0.0,
        ..SearchOptions::default()
    };
    index.search(&queries[0], &options).await.unwrap(); // loads the vector cache
    let mut times = Vec::new();
    for q in queries {
        let started = Instant::now();
        let results = index.search(q, &options).await.unwrap();
        times.push(started.elapsed());
        assert!(!results.results.is_empty());
    }
    times.sort();
    let at = |p: f64| times[((times.len() as f64 - 1.0) * p).round() as usize];
    (at(0.5), at(0.99))
}

fn bench(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let vocab = vocabulary();
    let qs = queries(&vocab, 300);
    let options = SearchOptions {
        min_score: 0.0,
        ..SearchOptions::default()
    };
    for chunks in [10_000usize, 100_000] {
        let dir = tempfile::tempdir().unwrap();
        let (index, took) = rt.block_on(build(dir.path(), chunks, &vocab));
        let status = rt.block_on(index.status()).unwrap();
        let (p50, p99) = rt.block_on(percentiles(&index, &qs));
        println!(
            "memory: {} chunks ({} embedded, db {:.1} MB): index {:.2?}, query p50 {:.2?} p99 {:.2?}",
            status.chunks,
            status.embedded_chunks,
            status.db_bytes as f64 / 1e6,
            took,
            p50,
            p99
        );
        let mut group = c.benchmark_group(format!("memory_{chunks}"));
        group
            .sample_size(20)
            .measurement_time(Duration::from_secs(5));
        let mut i = 0;
        group.bench_function("search", |b| {
            b.iter(|| {
                i = (i + 1) % qs.len();
                rt.block_on(index.search(&qs[i], &options)).unwrap()
            })
        });
        group.finish();
    }
    // Indexing 10,000 chunks from scratch, repeated (each run a fresh directory).
    let mut group = c.benchmark_group("memory_index");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(20));
    group.bench_function("sync_10k_chunks", |b| {
        b.iter_with_setup(
            || tempfile::tempdir().unwrap(),
            |dir| rt.block_on(build(dir.path(), 10_000, &vocab)).1,
        )
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);

//! Shared test helpers: a deterministic embedder (hashed bag of words and CJK bigrams,
//! 256 dims, normalised) that counts its calls, and a fixture corpus in English and
//! Chinese.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use futures_util::future::BoxFuture;
use pincer_memory::{ChunkSettings, EmbedError, Embedder, IndexSettings, MemoryIndex};

pub const DIMS: usize = 256;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Behaviour {
    Ok,
    Fail,
    /// Vectors of the wrong size for texts containing this word.
    WrongDimsFor(&'static str),
}

pub struct TestEmbedder {
    pub id: String,
    pub behaviour: Behaviour,
    pub calls: AtomicUsize,
    pub texts: AtomicUsize,
}

impl TestEmbedder {
    pub fn new(id: &str, behaviour: Behaviour) -> Arc<Self> {
        Arc::new(Self {
            id: id.into(),
            behaviour,
            calls: AtomicUsize::new(0),
            texts: AtomicUsize::new(0),
        })
    }
    pub fn texts(&self) -> usize {
        self.texts.load(Ordering::SeqCst)
    }
}

fn fnv(s: &str) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in s.as_bytes() {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

/// Features: lowercase ASCII words (≥3 letters, crude plural strip) and CJK bigrams.
pub fn features(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut word = String::new();
    let mut cjk: Vec<char> = Vec::new();
    let flush_cjk = |cjk: &mut Vec<char>, out: &mut Vec<String>| {
        if cjk.len() == 1 {
            out.push(cjk.iter().collect());
        }
        for w in cjk.windows(2) {
            out.push(w.iter().collect());
        }
        cjk.clear();
    };
    for c in text.chars().chain(std::iter::once(' ')) {
        if c.is_ascii_alphanumeric() {
            word.push(c.to_ascii_lowercase());
            flush_cjk(&mut cjk, &mut out);
        } else {
            if word.len() >= 3 {
                out.push(word.trim_end_matches('s').to_owned());
            }
            word.clear();
            if pincer_memory::chunk::is_cjk(c) && c.is_alphanumeric() {
                cjk.push(c);
            } else {
                flush_cjk(&mut cjk, &mut out);
            }
        }
    }
    out
}

pub fn embed_text(text: &str, dims: usize) -> Vec<f32> {
    let mut v = vec![0.0f32; dims];
    for f in features(text) {
        let h = fnv(&f);
        let i = (h % dims as u64) as usize;
        v[i] += if h >> 63 == 0 { 1.0 } else { -1.0 };
    }
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    if norm > 0.0 {
        v.iter_mut().for_each(|x| *x /= norm);
    } else {
        v[0] = 1.0;
    }
    v
}

impl Embedder for TestEmbedder {
    fn id(&self) -> &str {
        &self.id
    }
    fn embed<'a>(
        &'a self,
        texts: &'a [String],
    ) -> BoxFuture<'a, Result<Vec<Vec<f32>>, EmbedError>> {
        Box::pin(async move {
            self.calls.fetch_add(1, Ordering::SeqCst);
            match self.behaviour {
                Behaviour::Fail => Err(EmbedError::Provider("connection refused (test)".into())),
                Behaviour::Ok => {
                    self.texts.fetch_add(texts.len(), Ordering::SeqCst);
                    Ok(texts.iter().map(|t| embed_text(t, DIMS)).collect())
                }
                Behaviour::WrongDimsFor(word) => {
                    self.texts.fetch_add(texts.len(), Ordering::SeqCst);
                    Ok(texts
                        .iter()
                        .map(|t| embed_text(t, if t.contains(word) { DIMS / 2 } else { DIMS }))
                        .collect())
                }
            }
        })
    }
}

pub const MEMORY_MD: &str = "# Preferences

## Food
The user is vegetarian and loves spicy Sichuan tofu. Allergic to peanuts, so never
suggest satay or pad thai with peanuts.

## Work
Prefers Rust for backend services. Edits code in Neovim with the gruvbox colour theme
and a split terminal. Likes small pull requests.

## Family
Partner is called Sam; they have a cat named Miso who hates the vacuum cleaner.
";

pub const PROJECTS_MD: &str = "# Projects

## Pincer
Pincer is a personal AI agent gateway written in Rust. Memory lives in Markdown and is
indexed in SQLite with FTS5 and embedding vectors.

## Garden robot
An Arduino robot that waters the balcony plants when the soil moisture sensor reads dry.
Uses a small pump and a relay.

## Budget spreadsheet
Monthly budget tracking in a spreadsheet: rent, groceries, savings goal for a new bicycle.
";

pub const TRIP_MD: &str = "# Trip planning

Booked flights to Lisbon for the RustConf Europe conference in March. Hotel near Alfama,
three nights. Remember to buy a travel adapter and print the boarding passes.
";

pub const GARDEN_MD: &str = "# Garden log

Planted tomatoes and basil on the balcony. Water every morning; the tomatoes need a cage
once they pass thirty centimetres.
";

pub const ZH_MD: &str = "# 记忆

## 家庭
用户的女儿叫小雨，今年七岁，喜欢画画和游泳。周末常去公园。

## 工作
用户在上海的一家银行工作，负责风险管理系统的开发，团队有十二个人。

## 健康
每周跑步三次，正在准备杭州马拉松，目标是四小时以内完成。
";

/// Writes the corpus into `ws` and returns the files (path → bytes).
pub fn write_corpus(ws: &Path) {
    write(ws, "MEMORY.md", MEMORY_MD);
    write(ws, "memory/projects.md", PROJECTS_MD);
    write(ws, "memory/2026-01-10.md", TRIP_MD);
    write(ws, "memory/garden.md", GARDEN_MD);
    write(ws, "memory/zh/家庭与工作.md", ZH_MD);
}

pub fn write(ws: &Path, rel: &str, text: impl AsRef<[u8]>) {
    let path = ws.join(rel);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// Small chunks so each section of the corpus is its own chunk.
pub fn settings() -> IndexSettings {
    IndexSettings {
        chunking: ChunkSettings {
            max_tokens: 60,
            overlap_tokens: 10,
        },
        ..IndexSettings::default()
    }
}

pub struct Env {
    pub dir: tempfile::TempDir,
}

impl Env {
    pub fn new() -> Self {
        let env = Self {
            dir: tempfile::tempdir().unwrap(),
        };
        std::fs::create_dir_all(env.ws()).unwrap();
        env
    }
    pub fn ws(&self) -> PathBuf {
        self.dir.path().join("workspace")
    }
    pub fn db(&self) -> PathBuf {
        self.dir.path().join("home/memory/main.sqlite")
    }
    pub async fn open(
        &self,
        embedder: Option<Arc<TestEmbedder>>,
        settings: IndexSettings,
    ) -> MemoryIndex {
        let embedder = embedder.map(|e| e as Arc<dyn Embedder>);
        MemoryIndex::open(self.db(), self.ws(), embedder, settings)
            .await
            .unwrap()
    }
    /// A workspace holding the test corpus ([`write_corpus`]).
    pub fn with_corpus() -> Self {
        let env = Self::new();
        write_corpus(&env.ws());
        env
    }
    /// The index with a `test/hash-256` embedder behaving as `behaviour`, under
    /// [`settings`]; the embedder too, to look at its calls.
    pub async fn open_behaving(&self, behaviour: Behaviour) -> (MemoryIndex, Arc<TestEmbedder>) {
        let embedder = TestEmbedder::new("test/hash-256", behaviour);
        (
            self.open(Some(embedder.clone()), settings()).await,
            embedder,
        )
    }
    /// The index with a working hash embedder (`test/hash-256`) and `settings`.
    pub async fn open_hashed(&self, settings: IndexSettings) -> MemoryIndex {
        self.open(
            Some(TestEmbedder::new("test/hash-256", Behaviour::Ok)),
            settings,
        )
        .await
    }
    /// Every file under the workspace with its bytes (to prove nothing was modified).
    pub fn snapshot(&self) -> BTreeMap<PathBuf, Vec<u8>> {
        let mut out = BTreeMap::new();
        let mut stack = vec![self.ws()];
        while let Some(dir) = stack.pop() {
            for entry in std::fs::read_dir(dir).unwrap().flatten() {
                let path = entry.path();
                let meta = std::fs::symlink_metadata(&path).unwrap();
                if meta.is_dir() {
                    stack.push(path);
                } else if meta.is_file() {
                    out.insert(path.clone(), std::fs::read(&path).unwrap());
                }
            }
        }
        out
    }
}

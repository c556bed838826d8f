//! The offline embedder: a model2vec static model (e.g. potion-base-8M) loaded from a
//! local directory the user supplies (`tokenizer.json`, `model.safetensors`, `config.json`).
//! It never downloads anything. Loading checks the files and reports what is missing or
//! broken; embedding is CPU-bound, so it runs on tokio's blocking pool, and a panic inside
//! the model code becomes an error, never a crash.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};

use futures_util::FutureExt;
use futures_util::future::BoxFuture;
use model2vec_rs::model::StaticModel;

use crate::embedder::{EmbedError, Embedder};

/// The files a model2vec directory must hold.
pub const MODEL_FILES: [&str; 3] = ["tokenizer.json", "model.safetensors", "config.json"];

/// Tokens per text the model looks at (model2vec's own default); the index's chunks are
/// ~400 tokens, so nothing of a chunk is cut.
const MAX_TOKENS: usize = 512;

/// Why a local model could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum LocalModelError {
    /// The path does not exist or is not a directory.
    #[error("local embedding model: {path} is not a directory")]
    NotADirectory { path: PathBuf },
    /// A required file is missing.
    #[error(
        "local embedding model: {path} has no {file} (a model2vec directory holds tokenizer.json, model.safetensors and config.json)"
    )]
    MissingFile { path: PathBuf, file: &'static str },
    /// A file could not be read.
    #[error("local embedding model: cannot read {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    /// The files are there but are not a model2vec model.
    #[error("local embedding model: {path} is not a usable model2vec model: {reason}")]
    Invalid { path: PathBuf, reason: String },
}

/// A model2vec model in memory. Cloning is cheap (the model is shared).
#[derive(Debug, Clone)]
pub struct LocalEmbedder {
    model: StaticModel,
    id: String,
    dim: usize,
}

impl LocalEmbedder {
    /// Loads the model in `dir`. Only these three files are read; nothing is fetched.
    pub fn load(dir: &Path) -> Result<Self, LocalModelError> {
        if !dir.is_dir() {
            return Err(LocalModelError::NotADirectory {
                path: dir.to_path_buf(),
            });
        }
        let mut contents = Vec::with_capacity(MODEL_FILES.len());
        for file in MODEL_FILES {
            let path = dir.join(file);
            if !path.is_file() {
                return Err(LocalModelError::MissingFile {
                    path: dir.to_path_buf(),
                    file,
                });
            }
            let bytes = std::fs::read(&path).map_err(|source| LocalModelError::Read {
                path: path.clone(),
                source,
            })?;
            contents.push(bytes);
        }
        let invalid = |reason: String| LocalModelError::Invalid {
            path: dir.to_path_buf(),
            reason,
        };
        let [tokenizer, weights, config] = <[Vec<u8>; 3]>::try_from(contents)
            .map_err(|_| invalid("internal: wrong number of files".into()))?;
        // The parsers are third-party code fed with user files: a panic there is a bad file.
        let loaded = catch_unwind(AssertUnwindSafe(|| {
            StaticModel::from_bytes(&tokenizer, &weights, &config, None)
        }))
        .map_err(|_| invalid("the model code panicked while reading it".into()))?
        .map_err(|e| invalid(format!("{e:#}")))?;
        let dim = loaded.dim();
        if dim == 0 {
            return Err(invalid("the embedding table has no columns".into()));
        }
        let name = std::fs::canonicalize(dir)
            .ok()
            .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
            .or_else(|| dir.file_name().map(|n| n.to_string_lossy().into_owned()))
            .unwrap_or_else(|| "model".to_owned());
        Ok(Self {
            model: loaded,
            id: format!("local/{name}"),
            dim,
        })
    }

    /// Length of every vector this model produces.
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// Embeds on the calling thread (for callers already off the async runtime).
    /// A text with no known token gets a zero vector.
    pub fn embed_blocking(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let vectors = catch_unwind(AssertUnwindSafe(|| {
            self.model
                .encode_with_args(texts, Some(MAX_TOKENS), texts.len().max(1))
        }))
        .map_err(|_| EmbedError::Provider(format!("{}: the model code panicked", self.id)))?;
        if vectors.len() != texts.len() || vectors.iter().any(|v| v.len() != self.dim) {
            return Err(EmbedError::WrongShape(format!(
                "{}: {} vectors for {} texts",
                self.id,
                vectors.len(),
                texts.len()
            )));
        }
        Ok(vectors)
    }
}

impl Embedder for LocalEmbedder {
    fn id(&self) -> &str {
        &self.id
    }

    fn embed<'a>(
        &'a self,
        texts: &'a [String],
    ) -> BoxFuture<'a, Result<Vec<Vec<f32>>, EmbedError>> {
        let this = self.clone();
        let texts = texts.to_vec();
        async move {
            tokio::task::spawn_blocking(move || this.embed_blocking(&texts))
                .await
                .map_err(|e| EmbedError::Provider(format!("local embedding task failed: {e}")))?
        }
        .boxed()
    }
}

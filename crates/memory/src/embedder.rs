//! The embedding port: what the index needs from an embedding model. Implemented by the
//! HTTP providers (OpenAI-compatible, Gemini, Ollama; composed in the binary over
//! pincer-ai's embedding client) and by the offline local model2vec embedder.

use futures_util::future::BoxFuture;

/// Why embedding failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EmbedError {
    /// The provider could not be reached or answered with an error (retrying later may
    /// help).
    #[error("embedding provider failed: {0}")]
    Provider(String),
    /// The provider answered, but not with one vector of the expected size per text.
    #[error("embedding provider gave a wrong answer: {0}")]
    WrongShape(String),
}

/// An embedding model.
pub trait Embedder: Send + Sync {
    /// A stable identity of the model and its settings (e.g. `openai/text-embedding-3-small`
    /// or `local/potion-base-8M`): when it changes, every chunk is embedded again.
    fn id(&self) -> &str;

    /// One vector per text, in order, all of the same length.
    fn embed<'a>(&'a self, texts: &'a [String])
    -> BoxFuture<'a, Result<Vec<Vec<f32>>, EmbedError>>;

    /// [`Embedder::embed`] for a caller that is waiting (a search inside a turn): one
    /// attempt, no retries, so an unreachable provider fails at once and the search falls
    /// back to keywords. The index also bounds it with
    /// [`crate::IndexSettings::search_embed_timeout`].
    fn embed_now<'a>(
        &'a self,
        texts: &'a [String],
    ) -> BoxFuture<'a, Result<Vec<Vec<f32>>, EmbedError>> {
        self.embed(texts)
    }
}

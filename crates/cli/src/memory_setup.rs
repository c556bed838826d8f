//! An agent's memory from the configuration: `memorySearch` (defaults merged with the
//! agent's own), the embedder it names (OpenAI-compatible, Gemini, Ollama over pincer-ai's
//! embedding client, at the base URL the chat client would use for that provider unless
//! `remote.baseUrl` says otherwise; a local model2vec model; or none — keyword-only search), and the index
//! at `$PINCER_HOME/memory/<agentId>.sqlite` over the agent's workspace.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context as _, Result, bail};
use futures_util::future::BoxFuture;
use pincer_ai::embeddings::{EmbeddingClient, EmbeddingConfig, EmbeddingProvider};
use pincer_config::{MemoryProviderName, MemorySearchConfig};
use pincer_memory::{
    ChunkSettings, EmbedError, Embedder, IndexSettings, MemoryIndex, SearchOptions,
};
use pincer_tools::MemorySource;

use crate::app::App;

/// An agent's memory settings, resolved.
pub struct AgentMemory {
    pub agent_id: String,
    pub workspace: PathBuf,
    pub db_path: PathBuf,
    pub config: MemorySearchConfig,
}

impl AgentMemory {
    /// The agent's memory, or `None` when `memorySearch.enabled` is false.
    pub fn of(app: &App, agent_id: &str) -> Option<Self> {
        let config = MemorySearchConfig::merged(
            app.config.agents.defaults.memory_search.as_ref(),
            app.agent_entry(agent_id)
                .and_then(|a| a.memory_search.as_ref()),
        );
        if config.enabled == Some(false) {
            return None;
        }
        Some(Self {
            agent_id: agent_id.to_owned(),
            workspace: app.workspace(agent_id),
            db_path: app.home.join("memory").join(format!("{agent_id}.sqlite")),
            config,
        })
    }

    /// Opens the index (creating it, or rebuilding a corrupt one).
    pub async fn open(&self, app: &App) -> Result<MemoryIndex> {
        let embedder = embedder(app, &self.config)?;
        MemoryIndex::open(
            self.db_path.clone(),
            self.workspace.clone(),
            embedder,
            index_settings(&self.config),
        )
        .await
        .with_context(|| format!("cannot open the memory index {}", self.db_path.display()))
    }

    /// What the memory tools search: the index, opened on the first call.
    pub fn source(self, app: &App) -> Result<MemorySource> {
        // Resolved now so a misconfigured provider fails the turn's setup, not a tool call.
        let embedder = embedder(app, &self.config)?;
        let (db, workspace, settings) = (
            self.db_path.clone(),
            self.workspace.clone(),
            index_settings(&self.config),
        );
        Ok(MemorySource::new(
            self.workspace.clone(),
            Arc::new(move || {
                let (db, workspace, embedder, settings) = (
                    db.clone(),
                    workspace.clone(),
                    embedder.clone(),
                    settings.clone(),
                );
                Box::pin(async move { MemoryIndex::open(db, workspace, embedder, settings).await })
            }),
            search_options(&self.config),
        ))
    }
}

/// What a turn of `agent_id` does about memory: per-session memory in its workspace (used
/// when the session's `memoryEnabled` is on), and the pre-compaction flush of
/// `agents.defaults.compaction.memoryFlush` unless it is disabled, `memorySearch` is off,
/// or `flush` is false (heartbeat turns: they are not the user's conversation).
pub fn turn_memory(
    app: &App,
    agent_id: &str,
    workspace: &std::path::Path,
    flush: bool,
) -> pincer_turns::session_memory::TurnMemory {
    use pincer_turns::memory_flush::MemoryFlushSettings;
    let config = app
        .config
        .agents
        .defaults
        .compaction
        .as_ref()
        .and_then(|c| c.memory_flush.clone())
        .unwrap_or_default();
    let enabled =
        flush && config.enabled != Some(false) && AgentMemory::of(app, agent_id).is_some();
    let flush = enabled.then(|| {
        let defaults = MemoryFlushSettings::default();
        MemoryFlushSettings {
            soft_threshold_tokens: config
                .soft_threshold_tokens
                .unwrap_or(defaults.soft_threshold_tokens),
            prompt: config.prompt.unwrap_or(defaults.prompt),
            system_prompt: config.system_prompt.unwrap_or(defaults.system_prompt),
        }
    });
    pincer_turns::session_memory::TurnMemory {
        workspace: workspace.to_path_buf(),
        flush,
    }
}

/// The search options of `memorySearch.query`.
pub fn search_options(config: &MemorySearchConfig) -> SearchOptions {
    let mut options = SearchOptions::default();
    let Some(query) = &config.query else {
        return options;
    };
    if let Some(max) = query.max_results {
        options.max_results = max.max(1);
    }
    if let Some(min) = query.min_score {
        options.min_score = min as f32;
    }
    if let Some(hybrid) = &query.hybrid {
        if let Some(w) = hybrid.vector_weight {
            options.vector_weight = w as f32;
        }
        if let Some(w) = hybrid.text_weight {
            options.text_weight = w as f32;
        }
        if let Some(m) = hybrid.candidate_multiplier {
            options.candidate_multiplier = m.max(1);
        }
        if let Some(mmr) = &hybrid.mmr
            && mmr.enabled == Some(true)
        {
            options.mmr_lambda = Some(mmr.lambda.unwrap_or(0.7) as f32);
        }
        if let Some(decay) = &hybrid.temporal_decay
            && decay.enabled == Some(true)
        {
            options.temporal_decay_half_life_days =
                Some(decay.half_life_days.unwrap_or(30.0) as f32);
        }
    }
    options
}

fn index_settings(config: &MemorySearchConfig) -> IndexSettings {
    let mut settings = IndexSettings::default();
    if let Some(chunking) = &config.chunking {
        settings.chunking = ChunkSettings {
            max_tokens: chunking.tokens.unwrap_or(settings.chunking.max_tokens),
            overlap_tokens: chunking.overlap.unwrap_or(settings.chunking.overlap_tokens),
        };
    }
    settings
}

/// How long the watcher waits for a burst of edits to end (`sync.watchDebounceMs`).
pub fn watch_debounce(config: &MemorySearchConfig) -> Option<Duration> {
    let sync = config.sync.as_ref();
    if sync.and_then(|s| s.watch) == Some(false) {
        return None;
    }
    Some(Duration::from_millis(
        sync.and_then(|s| s.watch_debounce_ms).unwrap_or(1500),
    ))
}

/// The embedder `memorySearch` names; `None` for keyword-only search. Without a
/// `provider`, OpenAI when its key is at hand, else none.
pub fn embedder(app: &App, config: &MemorySearchConfig) -> Result<Option<Arc<dyn Embedder>>> {
    let remote_key = config
        .remote
        .as_ref()
        .and_then(|r| r.api_key.clone())
        .filter(|k| !k.is_empty());
    let provider = match config.provider {
        Some(provider) => provider,
        None if remote_key.is_some()
            || pincer_ai::env::env_api_key(app.env.as_ref(), "openai").is_some() =>
        {
            MemoryProviderName::Openai
        }
        None => MemoryProviderName::None,
    };
    let (provider, default_model) = match provider {
        MemoryProviderName::None => return Ok(None),
        MemoryProviderName::Local => return local_embedder(app, config).map(Some),
        MemoryProviderName::Openai => (EmbeddingProvider::OpenAi, "text-embedding-3-small"),
        MemoryProviderName::Gemini => (EmbeddingProvider::Gemini, "gemini-embedding-001"),
        MemoryProviderName::Ollama => (EmbeddingProvider::Ollama, "nomic-embed-text"),
    };
    let mut embedding = EmbeddingConfig::new(
        provider,
        config
            .model
            .clone()
            .unwrap_or_else(|| default_model.to_owned()),
    );
    embedding.base_url = config
        .remote
        .as_ref()
        .and_then(|r| r.base_url.clone())
        .filter(|u| !u.is_empty())
        .or_else(|| provider_base_url(app, provider));
    embedding.api_key = remote_key.or_else(|| {
        pincer_ai::env::env_api_key(app.env.as_ref(), provider.key_provider())
            .map(pincer_base::Secret::new)
    });
    embedding.dimensions = config.dimensions;
    let http = reqwest::Client::builder()
        .connect_timeout(Duration::from_secs(10))
        .build()
        .context("cannot build the HTTP client for embeddings")?;
    // Searches inside a turn call once and fall back to keywords; syncs retry.
    let mut eager = embedding.clone();
    eager.retry.max_retries = 0;
    let client = |config| {
        EmbeddingClient::new(http.clone(), config).map_err(|e| {
            anyhow::anyhow!("memorySearch: {} (set memorySearch.remote.apiKey or the provider's key variable, or provider: \"none\" for keyword-only search)", e.message)
        })
    };
    Ok(Some(Arc::new(RemoteEmbedder {
        patient: client(embedding)?,
        eager: client(eager)?,
    })))
}

/// The base URL the chat client would use for the embedding provider's catalog provider:
/// `models.providers.<p>.baseUrl`, else its SDK variable (`OPENAI_BASE_URL`,
/// `GEMINI_BASE_URL`). `None`: the provider's default. Ollama's chat URL is its
/// OpenAI-compatible `…/v1`; its embedding API is at the root.
fn provider_base_url(app: &App, provider: EmbeddingProvider) -> Option<String> {
    let name = provider.key_provider();
    let url = app
        .config
        .models
        .providers
        .get(name)
        .and_then(|p| p.base_url.clone())
        .or_else(|| pincer_ai::env::env_base_url(app.env.as_ref(), name))
        .filter(|u| !u.trim().is_empty())?;
    Some(match provider {
        EmbeddingProvider::Ollama => {
            let url = url.trim_end_matches('/');
            url.strip_suffix("/v1").unwrap_or(url).to_owned()
        }
        _ => url,
    })
}

#[cfg(feature = "local-embeddings")]
fn local_embedder(app: &App, config: &MemorySearchConfig) -> Result<Arc<dyn Embedder>> {
    let Some(path) = config.local.as_ref().and_then(|l| l.model_path.as_deref()) else {
        bail!("memorySearch.provider is \"local\" but local.modelPath is not set");
    };
    let dir = crate::app::expand_home(path, app.env.as_ref());
    let model = pincer_memory::local::LocalEmbedder::load(&dir)
        .with_context(|| format!("memorySearch.local.modelPath {path}"))?;
    Ok(Arc::new(model))
}

#[cfg(not(feature = "local-embeddings"))]
fn local_embedder(_app: &App, _config: &MemorySearchConfig) -> Result<Arc<dyn Embedder>> {
    bail!(
        "memorySearch.provider is \"local\", but this build has no local embeddings: rebuild with `cargo install --features local-embeddings`, or use provider \"openai\", \"gemini\", \"ollama\" or \"none\""
    )
}

/// pincer-ai's embedding client as the memory index's embedder: `patient` (with the
/// configured retries) for syncs, `eager` (one attempt) for a search that is waiting.
struct RemoteEmbedder {
    patient: EmbeddingClient,
    eager: EmbeddingClient,
}

impl Embedder for RemoteEmbedder {
    fn id(&self) -> &str {
        self.patient.id()
    }

    fn embed<'a>(
        &'a self,
        texts: &'a [String],
    ) -> BoxFuture<'a, Result<Vec<Vec<f32>>, EmbedError>> {
        Box::pin(embed_with(&self.patient, texts))
    }

    fn embed_now<'a>(
        &'a self,
        texts: &'a [String],
    ) -> BoxFuture<'a, Result<Vec<Vec<f32>>, EmbedError>> {
        Box::pin(embed_with(&self.eager, texts))
    }
}

async fn embed_with(
    client: &EmbeddingClient,
    texts: &[String],
) -> Result<Vec<Vec<f32>>, EmbedError> {
    client.embed(texts).await.map_err(|e| {
        if e.is_wrong_answer() {
            EmbedError::WrongShape(e.message)
        } else {
            EmbedError::Provider(e.message)
        }
    })
}

/// The gateway's memory watchers, one per agent whose memory is on and watched: each
/// indexes at start and again after every burst of edits, and its index becomes what the
/// agent's memory tools search. Stopped when dropped. An agent
/// whose index cannot be opened is logged and skipped (its tools still open it on demand
/// and say what is wrong).
pub async fn start_watchers(app: &App) -> Vec<pincer_memory::MemoryWatcher> {
    let mut watchers = Vec::new();
    for agent_id in pincer_turns::router::known_agent_ids(&app.config) {
        let Some(memory) = AgentMemory::of(app, &agent_id) else {
            continue;
        };
        let Some(debounce) = watch_debounce(&memory.config) else {
            continue;
        };
        // The workspace is made at the agent's first turn; watching needs it now.
        if let Err(e) = pincer_base::create_private_dir_all(&memory.workspace) {
            tracing::warn!(agent = %agent_id, error = %e, "cannot create the workspace; memory is not watched");
            continue;
        }
        match memory.open(app).await {
            Ok(index) => {
                // The tools search the watched index: it is kept current, so no sync
                // before each search.
                app.set_memory_source(
                    &agent_id,
                    MemorySource::watched(
                        memory.workspace.clone(),
                        index.clone(),
                        search_options(&memory.config),
                    ),
                );
                watchers.push(pincer_memory::MemoryWatcher::start(
                    index,
                    pincer_memory::WatchSettings {
                        debounce,
                        ..Default::default()
                    },
                ));
            }
            Err(e) => {
                tracing::warn!(agent = %agent_id, error = %format!("{e:#}"), "memory is not watched")
            }
        }
    }
    watchers
}

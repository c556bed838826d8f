//! `memorySearch` (in `agents.defaults` and each `agents.list[]` entry, the agent's own
//! winning field by field): how an agent's Markdown memory is indexed and searched, in
//! OpenClaw's shape — the embedding provider (or none: keyword-only search), chunking,
//! the hybrid query's weights, and re-indexing on file changes.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::keypath::KeyPath;

/// Where embeddings come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum MemoryProviderName {
    /// An OpenAI-compatible `/embeddings` endpoint (`remote.baseUrl`, default OpenAI's).
    Openai,
    /// Google's Gemini API (`batchEmbedContents`).
    Gemini,
    /// A local Ollama server (`/api/embed`).
    Ollama,
    /// A model2vec model in a local directory (`local.modelPath`): offline.
    Local,
    /// No embeddings: keyword search only.
    None,
}

/// `memorySearch`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct MemorySearchConfig {
    /// Off: no index, no memory tools (default on).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enabled: Option<bool>,
    /// Default: `openai` when an OpenAI key is available, else keyword-only (`none`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider: Option<MemoryProviderName>,
    /// The embedding model (default per provider, e.g. `text-embedding-3-small`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Ask the model for vectors of this size (OpenAI `dimensions`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dimensions: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub remote: Option<MemoryRemoteConfig>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub local: Option<MemoryLocalConfig>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chunking: Option<MemoryChunkingConfig>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub query: Option<MemoryQueryConfig>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sync: Option<MemorySyncConfig>,
}

/// `memorySearch.remote`: the embedding API's address and key.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct MemoryRemoteConfig {
    /// E.g. `https://api.openai.com/v1`, `http://127.0.0.1:11434`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_url: Option<String>,
    /// E.g. `"${OPENAI_API_KEY}"` (default: the provider's usual environment variable).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_key: Option<pincer_base::Secret>,
}

/// `memorySearch.local`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct MemoryLocalConfig {
    /// A model2vec model directory (`config.json`, `tokenizer.json`, `model.safetensors`),
    /// e.g. a download of `minishlab/potion-base-8M`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_path: Option<String>,
}

/// `memorySearch.chunking` (changing it rebuilds the index).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct MemoryChunkingConfig {
    /// Tokens per chunk (default 400).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tokens: Option<usize>,
    /// Tokens shared by neighbouring chunks (default 80).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub overlap: Option<usize>,
}

/// `memorySearch.query`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct MemoryQueryConfig {
    /// Hits returned (default 6).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_results: Option<usize>,
    /// Hits scoring less are dropped (default 0.35).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_score: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hybrid: Option<MemoryHybridConfig>,
}

/// `memorySearch.query.hybrid`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct MemoryHybridConfig {
    /// Default 0.7.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vector_weight: Option<f64>,
    /// Default 0.3.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text_weight: Option<f64>,
    /// Candidates taken from each side per hit wanted (default 4).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub candidate_multiplier: Option<usize>,
    /// Diversify the hits (maximal marginal relevance; off by default).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mmr: Option<MemoryMmrConfig>,
    /// Older dated notes (`memory/YYYY-MM-DD.md`) score less (off by default).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temporal_decay: Option<MemoryDecayConfig>,
}

/// `…hybrid.mmr`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct MemoryMmrConfig {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enabled: Option<bool>,
    /// Relevance against diversity, 0..1 (default 0.7).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lambda: Option<f64>,
}

/// `…hybrid.temporalDecay`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct MemoryDecayConfig {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enabled: Option<bool>,
    /// Default 30.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub half_life_days: Option<f64>,
}

/// `memorySearch.sync`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct MemorySyncConfig {
    /// Re-index when the files change (default true; a rescan happens at start anyway).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub watch: Option<bool>,
    /// Default 1500.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub watch_debounce_ms: Option<u64>,
}

/// `agents.defaults.compaction` (OpenClaw's key, with pi's compaction settings): when a
/// session's older messages are summarised, and the pre-compaction memory flush.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CompactionConfig {
    /// Compact automatically when the context nears the model's window (default true;
    /// `/compact` always works).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enabled: Option<bool>,
    /// Tokens kept free for the next reply: compaction starts when less is left (default
    /// 16384, pi's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reserve_tokens: Option<u64>,
    /// Recent tokens kept verbatim after compaction (default 20000, pi's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub keep_recent_tokens: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_flush: Option<MemoryFlushConfig>,
}

/// `compaction.memoryFlush`: a silent agent turn before auto-compaction that asks the agent
/// to store durable memories under `memory/` (OpenClaw's).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct MemoryFlushConfig {
    /// Default true (skipped anyway when `memorySearch.enabled` is false or the agent has
    /// no tool that writes files).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enabled: Option<bool>,
    /// How far below the compaction threshold the flush starts, in tokens (default 4000).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub soft_threshold_tokens: Option<u64>,
    /// The flush turn's user message (default OpenClaw's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt: Option<String>,
    /// Appended to the system prompt of the flush turn (default OpenClaw's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system_prompt: Option<String>,
}

impl MemorySearchConfig {
    /// `own` over `defaults`, field by field at every depth.
    pub fn merged(defaults: Option<&Self>, own: Option<&Self>) -> Self {
        let to_value = |c: Option<&Self>| c.and_then(|c| serde_json::to_value(c).ok());
        match (to_value(defaults), to_value(own)) {
            (Some(mut base), Some(over)) => {
                deep_merge(&mut base, over);
                serde_json::from_value(base).unwrap_or_else(|_| own.cloned().unwrap_or_default())
            }
            (_, Some(_)) => own.cloned().unwrap_or_default(),
            (Some(_), None) => defaults.cloned().unwrap_or_default(),
            (None, None) => Self::default(),
        }
    }
}

fn deep_merge(base: &mut Value, over: Value) {
    match (base, over) {
        (Value::Object(base), Value::Object(over)) => {
            for (key, value) in over {
                match base.get_mut(&key) {
                    Some(existing) => deep_merge(existing, value),
                    None => {
                        base.insert(key, value);
                    }
                }
            }
        }
        (base, over) => *base = over,
    }
}

pub(crate) fn check_memory(
    config: &MemorySearchConfig,
    at: &KeyPath,
    fail: &mut impl FnMut(KeyPath, String),
) {
    if let Some(chunking) = &config.chunking {
        let tokens = chunking.tokens.unwrap_or(400);
        let overlap = chunking.overlap.unwrap_or(80);
        if !(32..=8192).contains(&tokens) {
            fail(
                at.key("chunking").key("tokens"),
                "must be between 32 and 8192".to_owned(),
            );
        }
        if overlap >= tokens {
            fail(
                at.key("chunking").key("overlap"),
                format!("must be less than the chunk size ({tokens} tokens)"),
            );
        }
    }
    let hybrid = config.query.as_ref().and_then(|q| q.hybrid.as_ref());
    if let Some(hybrid) = hybrid {
        for (key, weight) in [
            ("vectorWeight", hybrid.vector_weight),
            ("textWeight", hybrid.text_weight),
        ] {
            if weight.is_some_and(|w| !(0.0..=1.0).contains(&w)) {
                fail(
                    at.key("query").key("hybrid").key(key),
                    "must be between 0 and 1".to_owned(),
                );
            }
        }
        if let Some(lambda) = hybrid.mmr.as_ref().and_then(|m| m.lambda)
            && !(0.0..=1.0).contains(&lambda)
        {
            fail(
                at.key("query").key("hybrid").key("mmr").key("lambda"),
                "must be between 0 and 1".to_owned(),
            );
        }
    }
    if config.provider == Some(MemoryProviderName::Local)
        && config
            .local
            .as_ref()
            .and_then(|l| l.model_path.as_deref())
            .is_none_or(str::is_empty)
    {
        fail(
            at.key("provider"),
            "\"local\" needs local.modelPath: a model2vec model directory (config.json, tokenizer.json, model.safetensors)".to_owned(),
        );
    }
}

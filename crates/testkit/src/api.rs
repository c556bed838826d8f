//! The wire protocols the mock server speaks, as one small enum shared by matching, recording
//! and rendering.

use serde::{Deserialize, Serialize};

/// One LLM wire protocol. The serialized names are pi's `api` identifiers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Api {
    /// OpenAI Chat Completions (`/v1/chat/completions`).
    #[serde(rename = "openai-completions")]
    OpenAiCompletions,
    /// OpenAI Responses (`/v1/responses`).
    #[serde(rename = "openai-responses")]
    OpenAiResponses,
    /// Anthropic Messages (`/v1/messages`).
    #[serde(rename = "anthropic-messages")]
    AnthropicMessages,
    /// Google Generative AI (`/v1beta/models/{model}:streamGenerateContent`).
    #[serde(rename = "google-generative-ai")]
    GoogleGenerativeAi,
    /// pi's proxy stream (`/api/stream`).
    #[serde(rename = "proxy")]
    Proxy,
    /// Amazon Bedrock `ConverseStream` (`/model/{modelId}/converse-stream`), answered in AWS's
    /// binary event stream; requests must carry a SigV4 `Authorization` or a bearer key.
    #[serde(rename = "bedrock-converse-stream")]
    BedrockConverseStream,
    /// OpenAI-compatible embeddings (`/v1/embeddings`).
    #[serde(rename = "openai-embeddings")]
    OpenAiEmbeddings,
    /// Gemini batch embeddings (`/v1beta/models/{model}:batchEmbedContents`).
    #[serde(rename = "google-embeddings")]
    GoogleEmbeddings,
    /// Ollama embeddings (`/api/embed`).
    #[serde(rename = "ollama-embeddings")]
    OllamaEmbeddings,
    /// OpenAI-compatible speech to text (`/v1/audio/transcriptions`, multipart).
    #[serde(rename = "openai-transcriptions")]
    OpenAiTranscriptions,
}

impl Api {
    /// Every streaming chat protocol, in a stable order (the embedding endpoints are in
    /// [`Api::EMBEDDINGS`]: they answer one JSON document and take no chat faults).
    pub const ALL: [Api; 5] = [
        Api::OpenAiCompletions,
        Api::OpenAiResponses,
        Api::AnthropicMessages,
        Api::GoogleGenerativeAi,
        Api::Proxy,
    ];

    /// Every embedding protocol, in a stable order.
    pub const EMBEDDINGS: [Api; 3] = [
        Api::OpenAiEmbeddings,
        Api::GoogleEmbeddings,
        Api::OllamaEmbeddings,
    ];

    /// Whether this is an embedding endpoint (answers vectors, not a conversation).
    pub fn is_embeddings(self) -> bool {
        Self::EMBEDDINGS.contains(&self)
    }

    /// pi's identifier for the protocol (the serialized name).
    pub fn as_str(self) -> &'static str {
        match self {
            Api::OpenAiCompletions => "openai-completions",
            Api::OpenAiResponses => "openai-responses",
            Api::AnthropicMessages => "anthropic-messages",
            Api::GoogleGenerativeAi => "google-generative-ai",
            Api::Proxy => "proxy",
            Api::BedrockConverseStream => "bedrock-converse-stream",
            Api::OpenAiEmbeddings => "openai-embeddings",
            Api::GoogleEmbeddings => "google-embeddings",
            Api::OllamaEmbeddings => "ollama-embeddings",
            Api::OpenAiTranscriptions => "openai-transcriptions",
        }
    }
}

impl std::fmt::Display for Api {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

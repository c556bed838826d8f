//! What Pincer knows about a model: which wire API it speaks, where, what it costs, how big
//! its context is, and the compatibility quirks of OpenAI-compatible servers.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::types::Usage;

/// The wire APIs built into Pincer. Others can be registered at run time under any name.
pub mod apis {
    pub const OPENAI_COMPLETIONS: &str = "openai-completions";
    pub const OPENAI_RESPONSES: &str = "openai-responses";
    /// The Responses protocol of ChatGPT's Codex backend (openai-codex sign-ins).
    pub const OPENAI_CODEX_RESPONSES: &str = "openai-codex-responses";
    /// The Responses protocol of an Azure OpenAI resource (deployments, `api-version`).
    pub const AZURE_OPENAI_RESPONSES: &str = "azure-openai-responses";
    pub const ANTHROPIC_MESSAGES: &str = "anthropic-messages";
    pub const GOOGLE_GENERATIVE_AI: &str = "google-generative-ai";
    /// Gemini on Vertex AI (Application Default Credentials or an express-mode key).
    pub const GOOGLE_VERTEX: &str = "google-vertex";
    /// Gemini through Google Cloud Code Assist (a `google-gemini-cli` sign-in).
    pub const GOOGLE_GEMINI_CLI: &str = "google-gemini-cli";
    /// The offline provider that needs no key (see `providers::stub`).
    pub const STUB: &str = "stub";
    /// pi's proxy (`streamProxy`): a configured provider whose models are other providers'
    /// models reached through a proxy server (see `providers::proxy`).
    pub const PROXY: &str = "proxy";
    /// Amazon Bedrock's `ConverseStream` (provider `amazon-bedrock`, see `providers::bedrock`).
    pub const BEDROCK_CONVERSE_STREAM: &str = "bedrock-converse-stream";
}

/// Kinds of input a model accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum InputKind {
    Text,
    Image,
}

/// Price in USD per million tokens.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ModelCost {
    pub input: f64,
    pub output: f64,
    #[serde(default)]
    pub cache_read: f64,
    #[serde(default)]
    pub cache_write: f64,
}

impl ModelCost {
    /// Fill in `usage.cost`: price per million tokens times tokens, per kind, and the total.
    pub fn apply(&self, usage: &mut Usage) {
        let per_token = |price: f64, tokens: u64| price / 1_000_000.0 * tokens as f64;
        usage.cost.input = per_token(self.input, usage.input);
        usage.cost.output = per_token(self.output, usage.output);
        usage.cost.cache_read = per_token(self.cache_read, usage.cache_read);
        usage.cost.cache_write = per_token(self.cache_write, usage.cache_write);
        usage.cost.total =
            usage.cost.input + usage.cost.output + usage.cost.cache_read + usage.cost.cache_write;
    }
}

/// Which field carries the output-token limit on an OpenAI-compatible server.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum MaxTokensField {
    #[serde(rename = "max_completion_tokens")]
    MaxCompletionTokens,
    #[serde(rename = "max_tokens")]
    MaxTokens,
}

/// How an OpenAI-compatible server wants reasoning requested.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ThinkingFormat {
    Openai,
    Zai,
    Qwen,
}

/// Compatibility overrides for OpenAI-compatible servers (pi's `OpenAICompletionsCompat`).
/// Every field is optional: what is not set is detected from the provider and base URL.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Compat {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub supports_store: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub supports_developer_role: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub supports_reasoning_effort: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub supports_usage_in_streaming: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tokens_field: Option<MaxTokensField>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requires_tool_result_name: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requires_assistant_after_tool_result: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requires_thinking_as_text: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requires_mistral_tool_ids: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thinking_format: Option<ThinkingFormat>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub open_router_routing: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vercel_gateway_routing: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub supports_strict_mode: Option<bool>,
    /// Keys newer pi versions know and Pincer does not (kept so nothing is lost on a round trip).
    #[serde(flatten)]
    pub other: BTreeMap<String, Value>,
}

/// A model: where it lives, what wire API it speaks, what it costs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Model {
    pub id: String,
    pub name: String,
    pub api: String,
    pub provider: String,
    pub base_url: String,
    #[serde(default)]
    pub reasoning: bool,
    pub input: Vec<InputKind>,
    pub cost: ModelCost,
    pub context_window: u64,
    pub max_tokens: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub headers: Option<BTreeMap<String, String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compat: Option<Compat>,
}

impl Model {
    /// `provider/id`, the form users type.
    pub fn reference(&self) -> String {
        format!("{}/{}", self.provider, self.id)
    }

    /// Fill in `usage.cost` from this model's prices (pi's `calculateCost`).
    pub fn apply_cost(&self, usage: &mut Usage) {
        self.cost.apply(usage);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cost_is_price_per_million_times_tokens() {
        let model: Model = serde_json::from_str(
            r#"{"id":"m","name":"M","api":"openai-completions","provider":"p","baseUrl":"http://x",
               "input":["text"],"cost":{"input":3,"output":15,"cacheRead":0.3,"cacheWrite":3.75},
               "contextWindow":1000,"maxTokens":100}"#,
        )
        .unwrap();
        let mut usage = Usage {
            input: 1_000_000,
            output: 2_000,
            cache_read: 10_000,
            cache_write: 0,
            total_tokens: 1_012_000,
            ..Usage::default()
        };
        model.apply_cost(&mut usage);
        let close = |a: f64, b: f64| (a - b).abs() < 1e-12;
        assert!(close(usage.cost.input, 3.0), "{usage:?}");
        assert!(close(usage.cost.output, 0.03), "{usage:?}");
        assert!(close(usage.cost.cache_read, 0.003), "{usage:?}");
        assert!(close(usage.cost.total, 3.033), "{usage:?}");
    }

    #[test]
    fn unknown_model_keys_are_rejected_but_unknown_compat_keys_kept() {
        let bad = serde_json::from_str::<Model>(
            r#"{"id":"m","name":"M","api":"a","provider":"p","baseUrl":"u","input":[],
               "cost":{"input":0,"output":0},"contextWindow":1,"maxTokens":1,"contextWindw":2}"#,
        );
        assert!(bad.unwrap_err().to_string().contains("contextWindw"));
        let compat: Compat =
            serde_json::from_str(r#"{"supportsStore":false,"newThing":1}"#).unwrap();
        assert_eq!(compat.supports_store, Some(false));
        assert_eq!(compat.other.get("newThing"), Some(&serde_json::json!(1)));
    }
}

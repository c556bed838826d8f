//! Block streaming of replies to chat channels, in OpenClaw's keys: `agents.defaults.
//! blockStreamingDefault` (`on`/`off`, default off), `blockStreamingBreak` (`text_end`,
//! the default, or `message_end`), `blockStreamingChunk` and `blockStreamingCoalesce`; and
//! per channel (and account) `blockStreaming` (`true`/`false`, over the default),
//! `blockStreamingCoalesce` (over the agents' one) and `textChunkLimit` (the most chars of
//! one streamed message). How they combine is the gateway's (`block_delivery`).

use std::num::NonZeroUsize;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// `agents.defaults.blockStreamingDefault`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum BlockStreamingDefault {
    On,
    #[default]
    Off,
}

/// `agents.defaults.blockStreamingBreak`: when a reply's blocks go out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum BlockStreamingBreak {
    /// Each block as soon as the chunker has it; the rest when the text ends.
    #[default]
    TextEnd,
    /// All blocks of an assistant message once it ended.
    MessageEnd,
}

/// `blockStreamingChunk.breakPreference`. Pincer's chunker always prefers a paragraph
/// break, then a line break, a sentence end, a space; OpenClaw's other preferences are not
/// implemented, so they are refused rather than ignored.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum BreakPreference {
    #[default]
    Paragraph,
}

/// `agents.defaults.blockStreamingChunk`: the size of the blocks a streamed reply is cut
/// into.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct BlockStreamingChunkConfig {
    /// A block ends at the first paragraph break past this many chars (default 800).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_chars: Option<NonZeroUsize>,
    /// No block is longer (default 1200; never above the channel's `textChunkLimit`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_chars: Option<NonZeroUsize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub break_preference: Option<BreakPreference>,
}

/// `blockStreamingCoalesce`: how consecutive blocks are merged before they are sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct BlockStreamingCoalesceConfig {
    /// Text shorter than this waits for more, or for the reply's end (default the chunk's
    /// `minChars`; 1500 on Slack and Discord).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_chars: Option<NonZeroUsize>,
    /// No merged message is longer (default and cap: the channel's `textChunkLimit`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_chars: Option<NonZeroUsize>,
    /// Merged text goes once no block came for this long (default 1000; 0: only by size).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idle_ms: Option<u64>,
}

/// The block-streaming keys of a channel or account section.
#[derive(Debug, Clone, Copy, Default)]
pub struct StreamingFields {
    pub block_streaming: Option<bool>,
    pub block_streaming_coalesce: Option<BlockStreamingCoalesceConfig>,
    pub text_chunk_limit: Option<NonZeroUsize>,
}

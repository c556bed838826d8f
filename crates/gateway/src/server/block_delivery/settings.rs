//! Whether a channel account streams replies in blocks, and the sizes it uses, from the
//! config as OpenClaw resolves them: the account's (or channel's) `blockStreaming` over
//! `agents.defaults.blockStreamingDefault` (off); blocks of `blockStreamingChunk` (800–1200
//! chars) capped by the channel's `textChunkLimit` (4000; Discord 2000); coalescing by the
//! channel's `blockStreamingCoalesce`, else the agents' (a whole object, not field by field),
//! with `minChars` falling back to 1500 on Slack and Discord, else to the blocks' `minChars`,
//! `maxChars` to the text limit and `idleMs` to 1000.

use std::time::Duration;

use pincer_config::{AgentDefaults, BlockStreamingBreak, BlockStreamingDefault, StreamingFields};

use pincer_turns::chunker::coalesce::{
    CHATTY_CHANNEL_COALESCE_MIN_CHARS, CoalesceConfig, DEFAULT_COALESCE_IDLE,
};
use pincer_turns::chunker::{
    ChunkerConfig, DEFAULT_MAX_CHARS, DEFAULT_MIN_CHARS, DEFAULT_TEXT_CHUNK_LIMIT,
};

/// OpenClaw's `textChunkLimit` for Discord, whose messages hold 2000 chars.
const DISCORD_TEXT_CHUNK_LIMIT: usize = 2000;

/// When a reply's blocks go out (`blockStreamingBreak`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BlockBreak {
    /// Each block as soon as the chunker cut it.
    TextEnd,
    /// An assistant message's blocks once the message ended.
    MessageEnd,
}

/// Block streaming of one channel account.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BlockStreaming {
    pub break_at: BlockBreak,
    pub chunk: ChunkerConfig,
    pub coalesce: CoalesceConfig,
}

impl BlockStreaming {
    /// The settings of an account of `channel` (`telegram`, `discord`, …) whose section has
    /// `fields`; `None` when its replies are sent whole.
    pub fn resolve(
        defaults: &AgentDefaults,
        channel: &str,
        fields: StreamingFields,
    ) -> Option<Self> {
        let on = fields
            .block_streaming
            .unwrap_or(defaults.block_streaming_default == Some(BlockStreamingDefault::On));
        if !on {
            return None;
        }
        let text_limit = fields.text_chunk_limit.map_or(
            match channel {
                "discord" => DISCORD_TEXT_CHUNK_LIMIT,
                _ => DEFAULT_TEXT_CHUNK_LIMIT,
            },
            usize::from,
        );
        let chunk_cfg = defaults.block_streaming_chunk.unwrap_or_default();
        let chunk = ChunkerConfig {
            min_chars: chunk_cfg.min_chars.map_or(DEFAULT_MIN_CHARS, usize::from),
            max_chars: chunk_cfg.max_chars.map_or(DEFAULT_MAX_CHARS, usize::from),
        }
        .capped(text_limit);
        let coalesce_cfg = fields
            .block_streaming_coalesce
            .or(defaults.block_streaming_coalesce)
            .unwrap_or_default();
        let chatty = matches!(channel, "slack" | "discord");
        let max_chars = coalesce_cfg
            .max_chars
            .map_or(text_limit, usize::from)
            .min(text_limit);
        let min_chars = coalesce_cfg
            .min_chars
            .map(usize::from)
            .or(chatty.then_some(CHATTY_CHANNEL_COALESCE_MIN_CHARS))
            .unwrap_or(chunk.min_chars)
            .min(max_chars);
        let idle = coalesce_cfg
            .idle_ms
            .map_or(DEFAULT_COALESCE_IDLE, Duration::from_millis);
        let break_at = match defaults.block_streaming_break.unwrap_or_default() {
            BlockStreamingBreak::TextEnd => BlockBreak::TextEnd,
            BlockStreamingBreak::MessageEnd => BlockBreak::MessageEnd,
        };
        Some(Self {
            break_at,
            chunk,
            coalesce: CoalesceConfig {
                min_chars,
                max_chars,
                idle,
            },
        })
    }
}

#[cfg(test)]
mod tests {
    use std::num::NonZeroUsize;

    use pincer_config::BlockStreamingCoalesceConfig;

    use super::*;

    fn on() -> AgentDefaults {
        AgentDefaults {
            block_streaming_default: Some(BlockStreamingDefault::On),
            ..AgentDefaults::default()
        }
    }

    fn sizes(s: BlockStreaming) -> (usize, usize, usize, usize, u128) {
        (
            s.chunk.min_chars,
            s.chunk.max_chars,
            s.coalesce.min_chars,
            s.coalesce.max_chars,
            s.coalesce.idle.as_millis(),
        )
    }

    #[test]
    fn off_unless_the_default_or_the_channel_says_on() {
        let none = StreamingFields::default();
        assert_eq!(
            BlockStreaming::resolve(&AgentDefaults::default(), "telegram", none),
            None
        );
        let channel_on = StreamingFields {
            block_streaming: Some(true),
            ..none
        };
        assert!(
            BlockStreaming::resolve(&AgentDefaults::default(), "telegram", channel_on).is_some()
        );
        let channel_off = StreamingFields {
            block_streaming: Some(false),
            ..none
        };
        assert_eq!(
            BlockStreaming::resolve(&on(), "telegram", channel_off),
            None
        );
    }

    #[test]
    fn openclaws_sizes_per_channel() {
        let none = StreamingFields::default();
        let telegram = BlockStreaming::resolve(&on(), "telegram", none).unwrap();
        assert_eq!(telegram.break_at, BlockBreak::TextEnd);
        assert_eq!(sizes(telegram), (800, 1200, 800, 4000, 1000));
        let discord = BlockStreaming::resolve(&on(), "discord", none).unwrap();
        assert_eq!(sizes(discord), (800, 1200, 1500, 2000, 1000));
        let slack = BlockStreaming::resolve(&on(), "slack", none).unwrap();
        assert_eq!(sizes(slack), (800, 1200, 1500, 4000, 1000));
    }

    #[test]
    fn the_text_limit_caps_everything_and_a_channels_coalesce_replaces_the_agents() {
        let defaults = AgentDefaults {
            block_streaming_break: Some(BlockStreamingBreak::MessageEnd),
            block_streaming_coalesce: Some(BlockStreamingCoalesceConfig {
                min_chars: NonZeroUsize::new(100),
                max_chars: None,
                idle_ms: Some(0),
            }),
            ..on()
        };
        let limited = StreamingFields {
            text_chunk_limit: NonZeroUsize::new(500),
            ..StreamingFields::default()
        };
        let s = BlockStreaming::resolve(&defaults, "feishu", limited).unwrap();
        assert_eq!(s.break_at, BlockBreak::MessageEnd);
        assert_eq!(sizes(s), (500, 500, 100, 500, 0));
        let own = StreamingFields {
            block_streaming_coalesce: Some(BlockStreamingCoalesceConfig {
                idle_ms: Some(250),
                ..BlockStreamingCoalesceConfig::default()
            }),
            ..limited
        };
        let s = BlockStreaming::resolve(&defaults, "feishu", own).unwrap();
        assert_eq!(sizes(s), (500, 500, 500, 500, 250));
    }
}

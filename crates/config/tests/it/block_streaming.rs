//! The block-streaming keys: OpenClaw's `agents.defaults.blockStreaming*` and the channels'
//! `blockStreaming` / `blockStreamingCoalesce` / `textChunkLimit` (an account inheriting
//! them from its channel), and what is refused, with its key and line.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::num::NonZeroUsize;

use pincer_ai::env::MapEnv;
use pincer_config::*;

fn parse(text: &str) -> Result<PincerConfig, String> {
    parse_str(text, "pincer.json5", &MapEnv::default())
        .map(|parsed| parsed.config)
        .map_err(|e| e.to_string())
}

fn n(value: usize) -> Option<NonZeroUsize> {
    NonZeroUsize::new(value)
}

#[test]
fn off_by_default() {
    let config = parse("{}").unwrap();
    let defaults = &config.agents.defaults;
    assert_eq!(defaults.block_streaming_default, None);
    assert_eq!(BlockStreamingDefault::default(), BlockStreamingDefault::Off);
    assert_eq!(BlockStreamingBreak::default(), BlockStreamingBreak::TextEnd);
}

#[test]
fn the_agent_defaults_parse_in_openclaws_shape() {
    let config = parse(
        "{agents: {defaults: {\n  blockStreamingDefault: 'on',\n  blockStreamingBreak: 'message_end',\n  \
         blockStreamingChunk: {minChars: 200, maxChars: 900, breakPreference: 'paragraph'},\n  \
         blockStreamingCoalesce: {minChars: 300, maxChars: 2000, idleMs: 0},\n}}}",
    )
    .unwrap();
    let defaults = &config.agents.defaults;
    assert_eq!(
        defaults.block_streaming_default,
        Some(BlockStreamingDefault::On)
    );
    assert_eq!(
        defaults.block_streaming_break,
        Some(BlockStreamingBreak::MessageEnd)
    );
    assert_eq!(
        defaults.block_streaming_chunk,
        Some(BlockStreamingChunkConfig {
            min_chars: n(200),
            max_chars: n(900),
            break_preference: Some(BreakPreference::Paragraph),
        })
    );
    assert_eq!(
        defaults.block_streaming_coalesce,
        Some(BlockStreamingCoalesceConfig {
            min_chars: n(300),
            max_chars: n(2000),
            idle_ms: Some(0),
        })
    );
}

#[test]
fn a_channel_account_inherits_the_channels_streaming_keys() {
    let config = parse(
        "{channels: {discord: {\n  token: 'a', blockStreaming: true, textChunkLimit: 1500,\n  \
         blockStreamingCoalesce: {idleMs: 250},\n  \
         accounts: {quiet: {token: 'b', blockStreaming: false}},\n}}}",
    )
    .unwrap();
    let discord = config.channels.discord.unwrap();
    let accounts = enabled_accounts(&discord);
    // (account id, blockStreaming, textChunkLimit, blockStreamingCoalesce.idleMs)
    type Streaming = (
        Option<String>,
        Option<bool>,
        Option<NonZeroUsize>,
        Option<u64>,
    );
    let fields: Vec<Streaming> = accounts
        .iter()
        .map(|(id, c)| {
            let s = c.streaming();
            (
                id.clone(),
                s.block_streaming,
                s.text_chunk_limit,
                s.block_streaming_coalesce.and_then(|c| c.idle_ms),
            )
        })
        .collect();
    assert_eq!(
        fields,
        [
            (None, Some(true), n(1500), Some(250)),
            (Some("quiet".to_owned()), Some(false), n(1500), Some(250)),
        ]
    );
}

#[test]
fn bad_values_are_refused_with_their_key() {
    let cases = [
        (
            "{agents: {defaults: {blockStreamingDefault: 'yes'}}}",
            "agents.defaults.blockStreamingDefault",
        ),
        (
            "{agents: {defaults: {blockStreamingBreak: 'paragraph'}}}",
            "agents.defaults.blockStreamingBreak",
        ),
        (
            "{agents: {defaults: {blockStreamingChunk: {minChars: 0}}}}",
            "agents.defaults.blockStreamingChunk.minChars",
        ),
        (
            "{agents: {defaults: {blockStreamingChunk: {breakPreference: 'newline'}}}}",
            "agents.defaults.blockStreamingChunk.breakPreference",
        ),
        (
            "{agents: {defaults: {blockStreamingCoalesce: {idle: 5}}}}",
            "agents.defaults.blockStreamingCoalesce",
        ),
        (
            "{channels: {telegram: {botToken: 'x', textChunkLimit: 0}}}",
            "channels.telegram.textChunkLimit",
        ),
        (
            "{channels: {slack: {blockStreaming: 'on'}}}",
            "channels.slack.blockStreaming",
        ),
    ];
    for (text, key) in cases {
        let err = parse(text).unwrap_err();
        assert!(err.contains(key), "{text}: {err}");
    }
}

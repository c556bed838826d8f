//! A run's broadcast events as the coalescer's pieces: the assistant's text deltas of one
//! run through a [`BlockChunker`] per assistant message, with the message's end (its next
//! message beginning, a tool call starting, the run ending) as OpenClaw's `text_end`.
//!
//! The events are the gateway's `agent` events: an `assistant` event carries the `delta`
//! and the message's `text` so far, so a delta that is the whole text starts a message.

use super::settings::{BlockBreak, BlockStreaming};
use crate::server::runs::GatewayEvent;
use pincer_turns::chunker::coalesce::Piece;
use pincer_turns::chunker::{Block, BlockChunker};

pub(super) struct TextStream {
    settings: BlockStreaming,
    /// The chunker of the message being streamed.
    chunker: Option<BlockChunker>,
    /// `message_end`: the message's blocks, held until it ends.
    held: Vec<Block>,
    /// The text of the message being streamed, so far.
    current: String,
}

impl TextStream {
    pub(super) fn new(settings: BlockStreaming) -> Self {
        Self {
            settings,
            chunker: None,
            held: Vec::new(),
            current: String::new(),
        }
    }

    /// The pieces one event of run `run_id` completes (none for other runs' events).
    pub(super) fn on_event(&mut self, event: &GatewayEvent, run_id: &str) -> Vec<Piece> {
        let payload = &event.payload;
        if event.event != "agent" || payload["runId"].as_str() != Some(run_id) {
            return Vec::new();
        }
        let data = &payload["data"];
        match payload["stream"].as_str() {
            Some("assistant") => {
                let (Some(delta), Some(text)) = (data["delta"].as_str(), data["text"].as_str())
                else {
                    return Vec::new();
                };
                let mut out = Vec::new();
                if text.len() == delta.len() {
                    out.extend(self.end_text());
                }
                out.extend(self.push(delta));
                out
            }
            Some("tool") if data["phase"] == "start" => self.end_text(),
            _ => Vec::new(),
        }
    }

    fn push(&mut self, delta: &str) -> Vec<Piece> {
        self.current.push_str(delta);
        let config = self.settings.chunk;
        let blocks = self
            .chunker
            .get_or_insert_with(|| BlockChunker::new(config))
            .push_blocks(delta);
        match self.settings.break_at {
            BlockBreak::TextEnd => blocks.into_iter().map(Piece::Block).collect(),
            BlockBreak::MessageEnd => {
                self.held.extend(blocks);
                Vec::new()
            }
        }
    }

    /// The message ended: its remaining blocks and the `text_end` after them.
    pub(super) fn end_text(&mut self) -> Vec<Piece> {
        self.current.clear();
        let Some(chunker) = self.chunker.take() else {
            return Vec::new();
        };
        let mut blocks = std::mem::take(&mut self.held);
        blocks.extend(chunker.finish_blocks());
        if blocks.is_empty() {
            return Vec::new();
        }
        let mut out: Vec<Piece> = blocks.into_iter().map(Piece::Block).collect();
        out.push(Piece::TextEnd);
        out
    }

    /// Events were lost (the reader fell behind the broadcast): the rest of the reply is
    /// taken from its final text. When that text goes on from the message being streamed,
    /// only what follows is added; otherwise the lost part crossed into a later message,
    /// and the final message is sent whole.
    pub(super) fn recover(&mut self, final_text: &str) -> Vec<Piece> {
        let mut out = Vec::new();
        let rest = match final_text.strip_prefix(self.current.as_str()) {
            Some(rest) if self.chunker.is_some() => rest,
            _ => {
                out.extend(self.end_text());
                final_text
            }
        };
        out.extend(self.push(rest));
        out
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use serde_json::json;

    use super::*;
    use pincer_turns::chunker::ChunkerConfig;
    use pincer_turns::chunker::coalesce::CoalesceConfig;

    fn settings(break_at: BlockBreak) -> BlockStreaming {
        BlockStreaming {
            break_at,
            chunk: ChunkerConfig {
                min_chars: 5,
                max_chars: 100,
            },
            coalesce: CoalesceConfig {
                min_chars: 1,
                max_chars: 100,
                idle: Duration::ZERO,
            },
        }
    }

    fn assistant(run: &str, text: &str, delta: &str) -> GatewayEvent {
        GatewayEvent::new(
            "agent",
            json!({"runId": run, "stream": "assistant", "data": {"text": text, "delta": delta}}),
        )
    }

    fn tool_start(run: &str) -> GatewayEvent {
        GatewayEvent::new(
            "agent",
            json!({"runId": run, "stream": "tool", "data": {"phase": "start", "name": "read"}}),
        )
    }

    fn shown(pieces: Vec<Piece>) -> Vec<String> {
        pieces
            .into_iter()
            .map(|p| match p {
                Piece::Block(b) => b.text().to_owned(),
                Piece::TextEnd => "<end>".to_owned(),
            })
            .collect()
    }

    /// Feeds `events`, then ends the reply; everything that came out.
    fn run(break_at: BlockBreak, events: &[GatewayEvent]) -> Vec<String> {
        let mut stream = TextStream::new(settings(break_at));
        let mut out = Vec::new();
        for event in events {
            out.extend(shown(stream.on_event(event, "r1")));
            out.push("|".to_owned());
        }
        out.extend(shown(stream.end_text()));
        out
    }

    #[test]
    fn blocks_as_they_are_cut_and_each_message_ends_its_text() {
        let events = [
            assistant("r1", "First para.", "First para."),
            assistant("r1", "First para.\n\nMore", "\n\nMore"),
            assistant("r2", "Another run's text", "Another run's text"),
            tool_start("r1"),
            assistant("r1", "Second", "Second"),
            assistant("r1", "Second message.", " message."),
        ];
        assert_eq!(
            run(BlockBreak::TextEnd, &events),
            [
                "|",
                "First para.\n\n",
                "|",
                "|",
                "More",
                "<end>",
                "|",
                "|",
                "|",
                "Second message.",
                "<end>",
            ]
        );
    }

    #[test]
    fn message_end_holds_a_messages_blocks_until_it_ended() {
        let events = [
            assistant("r1", "First para.", "First para."),
            assistant("r1", "First para.\n\nMore", "\n\nMore"),
            assistant("r1", "Next", "Next"),
        ];
        assert_eq!(
            run(BlockBreak::MessageEnd, &events),
            [
                "|",
                "|",
                "First para.\n\n",
                "More",
                "<end>",
                "|",
                "Next",
                "<end>",
            ]
        );
    }

    #[test]
    fn lost_events_are_made_up_from_the_final_text() {
        let mut stream = TextStream::new(settings(BlockBreak::TextEnd));
        assert!(
            stream
                .on_event(&assistant("r1", "Hello", "Hello"), "r1")
                .is_empty()
        );
        // The final text goes on from what was streamed: only the rest is added.
        let mut out = shown(stream.recover("Hello there.\n\nBye."));
        out.extend(shown(stream.end_text()));
        assert_eq!(out, ["Hello there.\n\n", "Bye.", "<end>"]);

        // The final text is another message: the streamed one ends, the final one goes whole.
        let mut stream = TextStream::new(settings(BlockBreak::TextEnd));
        assert!(
            stream
                .on_event(&assistant("r1", "Let me look", "Let me look"), "r1")
                .is_empty()
        );
        let mut out = shown(stream.recover("Found it."));
        out.extend(shown(stream.end_text()));
        assert_eq!(out, ["Let me look", "<end>", "Found it.", "<end>"]);
    }
}

//! Where to cut the conversation (pi's `findCutPoint`): everything before the cut is
//! summarised, everything from it on is kept verbatim.
//!
//! Walking back from the newest message, estimated tokens are added up until at least
//! `keep_recent_tokens` are reached; the cut goes to the nearest user or assistant message
//! at or after that point. A cut never lands on a tool result: results directly follow the
//! assistant message that called them, so a call and its results always end up on the same
//! side. Like pi, when the budget is crossed on a tool result the cut moves forward to the
//! next user/assistant message (the oversized result is summarised with its call); when
//! there is no such message, Pincer cuts at the call instead of keeping everything.
//!
//! A cut at an assistant message falls inside a turn: the turn's prefix (from its user
//! message up to the cut) is then summarised separately (pi's split turn).

use pincer_ai::Message;

use super::prompt::is_summary_message;
use super::tokens::estimate_tokens;

/// Where the conversation is cut.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CutPoint {
    /// Index of the first message kept verbatim.
    pub first_kept_index: usize,
    /// When the cut falls inside a turn: the index of the user message that starts it.
    pub turn_start_index: Option<usize>,
}

impl CutPoint {
    /// Whether the cut splits a turn (it is at an assistant message with the turn's user
    /// message before it).
    pub fn is_split_turn(&self) -> bool {
        self.turn_start_index.is_some()
    }
}

/// The index where the compactable history starts: after a leading summary of an earlier
/// compaction (which is carried as `<previous-summary>` instead of being re-summarised).
pub fn history_start(messages: &[Message]) -> usize {
    usize::from(messages.first().is_some_and(is_summary_message))
}

fn is_valid_cut(message: &Message) -> bool {
    !matches!(message, Message::ToolResult(_))
}

/// Find the cut that keeps about `keep_recent_tokens` of the most recent messages (see the
/// module documentation). A `first_kept_index` equal to [`history_start`] means there is
/// nothing to summarise.
pub fn find_cut_point(messages: &[Message], keep_recent_tokens: u64) -> CutPoint {
    let start = history_start(messages);
    let cuts: Vec<usize> = (start..messages.len())
        .filter(|&i| is_valid_cut(&messages[i]))
        .collect();
    let Some(&first_cut) = cuts.first() else {
        return CutPoint {
            first_kept_index: start,
            turn_start_index: None,
        };
    };

    let mut cut = first_cut;
    let mut kept = 0u64;
    for i in (start..messages.len()).rev() {
        kept += estimate_tokens(&messages[i]);
        if kept >= keep_recent_tokens {
            cut = cuts
                .iter()
                .copied()
                .find(|&c| c >= i)
                .or_else(|| cuts.iter().copied().rev().find(|&c| c < i))
                .unwrap_or(first_cut);
            break;
        }
    }

    let turn_start_index = match &messages[cut] {
        Message::User(_) => None,
        _ => (start..cut)
            .rev()
            .find(|&i| matches!(messages[i], Message::User(_))),
    };
    CutPoint {
        first_kept_index: cut,
        turn_start_index,
    }
}

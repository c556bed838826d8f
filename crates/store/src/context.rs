//! The context for the model, rebuilt from a transcript as pi's `buildSessionContext`: the
//! path from the leaf to the root, with the latest compaction's summary first, then the
//! entries it kept, then those after it; branch summaries and custom messages enter as user
//! messages with pi's wrapping text.

use std::collections::HashSet;

use pincer_ai::{ContentBlock, Message, UserContent, UserMessage};

use crate::entry::{Entry, EntryBody};
use crate::transcript::Transcript;

/// pi's text before a compaction summary (`messages.ts`).
pub const COMPACTION_SUMMARY_PREFIX: &str = "The conversation history before this point was compacted into the following summary:\n\n<summary>\n";
/// pi's text after a compaction summary.
pub const COMPACTION_SUMMARY_SUFFIX: &str = "\n</summary>";
/// pi's text before a branch summary.
pub const BRANCH_SUMMARY_PREFIX: &str =
    "The following is a summary of a branch that this conversation came back from:\n\n<summary>\n";
/// pi's text after a branch summary.
pub const BRANCH_SUMMARY_SUFFIX: &str = "</summary>";

impl Transcript {
    /// The entries from the root to `leaf_id`, following `parentId` (cycles are cut).
    pub fn branch(&self, leaf_id: &str) -> Vec<&Entry> {
        let mut path = Vec::new();
        let mut seen = HashSet::new();
        let mut cur = self.get(leaf_id);
        while let Some(e) = cur {
            if !seen.insert(e.id.as_str()) {
                break;
            }
            path.push(e);
            cur = e.parent_id.as_deref().and_then(|p| self.get(p));
        }
        path.reverse();
        path
    }

    /// The messages for the model from the current leaf; see [`Transcript::context_at`].
    pub fn context(&self) -> Vec<Message> {
        match self.leaf_id() {
            Some(leaf) => self.context_at(leaf),
            None => Vec::new(),
        }
    }

    /// The messages for the model on the path root → `leaf_id`, as pi's
    /// `buildSessionContext`: with a compaction on the path, its summary comes first, then
    /// the entries from `firstKeptEntryId` up to the compaction, then those after it.
    pub fn context_at(&self, leaf_id: &str) -> Vec<Message> {
        let path = self.branch(leaf_id);
        let compaction = path
            .iter()
            .enumerate()
            .rev()
            .find_map(|(i, e)| match &e.body {
                EntryBody::Compaction(c) => Some((i, e, c)),
                _ => None,
            });
        let mut out = Vec::new();
        match compaction {
            Some((idx, entry, c)) => {
                let text = format!(
                    "{COMPACTION_SUMMARY_PREFIX}{}{COMPACTION_SUMMARY_SUFFIX}",
                    c.summary
                );
                out.push(user_text(text, &entry.timestamp));
                let mut kept = false;
                for e in &path[..idx] {
                    kept |= e.id == c.first_kept_entry_id;
                    if kept {
                        push_message(&mut out, e);
                    }
                }
                for e in &path[idx + 1..] {
                    push_message(&mut out, e);
                }
            }
            None => path.iter().for_each(|e| push_message(&mut out, e)),
        }
        out
    }
}

fn user_text(text: String, iso: &str) -> Message {
    user(UserContent::Blocks(vec![ContentBlock::text(text)]), iso)
}

fn user(content: UserContent, iso: &str) -> Message {
    Message::User(UserMessage {
        content,
        timestamp: crate::ids::ms_from_iso(iso).unwrap_or(0),
    })
}

fn push_message(out: &mut Vec<Message>, e: &Entry) {
    match &e.body {
        EntryBody::Message(m) => out.push(m.message.clone()),
        EntryBody::CustomMessage(m) => {
            let content = match &m.content {
                UserContent::Text(t) => UserContent::Blocks(vec![ContentBlock::text(t.clone())]),
                blocks => blocks.clone(),
            };
            out.push(user(content, &e.timestamp));
        }
        EntryBody::BranchSummary(b) if !b.summary.is_empty() => {
            let text = format!(
                "{BRANCH_SUMMARY_PREFIX}{}{BRANCH_SUMMARY_SUFFIX}",
                b.summary
            );
            out.push(user_text(text, &e.timestamp));
        }
        _ => {}
    }
}

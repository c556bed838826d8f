//! Threads and forum posts. Discord gives a message in a thread the thread's id as its
//! `channel_id` and nothing else that says "thread"; the channel object does (`type` 10, 11
//! or 12 with a `parent_id`). Each guild channel is looked up once (`GET /channels/{id}`)
//! and remembered, so a thread becomes a [`ThreadRef::Thread`] of its parent channel: the
//! parent's access rules apply (`groupAllowFrom`, `groups`), the session key gets
//! `:thread:<id>`, and replies go to the thread.

use std::collections::HashMap;
use std::sync::Mutex;

use serde::Deserialize;

use super::rest::DiscordRest;

/// `GUILD_NEWS_THREAD`, `GUILD_PUBLIC_THREAD` (also forum and media posts),
/// `GUILD_PRIVATE_THREAD`.
const THREAD_TYPES: [u64; 3] = [10, 11, 12];

/// Channels remembered at most; a bot in more channels than this looks some up again.
const MAX_KNOWN: usize = 10_000;

#[derive(Debug, Deserialize)]
struct ChannelObject {
    #[serde(rename = "type", default)]
    kind: u64,
    parent_id: Option<String>,
}

/// Channel id → the parent channel when it is a thread.
#[derive(Default)]
pub(super) struct ThreadParents {
    known: Mutex<HashMap<String, Option<String>>>,
}

impl ThreadParents {
    /// The parent of `channel_id` when it is a thread. A failed lookup is not remembered
    /// (the next message asks again) and treats the channel as a plain one meanwhile.
    pub(super) async fn parent_of(&self, rest: &DiscordRest, channel_id: &str) -> Option<String> {
        if let Some(known) = self.lock().get(channel_id) {
            return known.clone();
        }
        let path = format!("/channels/{}", super::path_id(channel_id).ok()?);
        let channel: ChannelObject = match rest.get(&path).await {
            Ok(channel) => channel,
            Err(e) => {
                tracing::warn!(error = %e, channel_id, "cannot look up a Discord channel");
                return None;
            }
        };
        let parent = THREAD_TYPES
            .contains(&channel.kind)
            .then_some(channel.parent_id)
            .flatten();
        let mut known = self.lock();
        if known.len() >= MAX_KNOWN {
            known.clear();
        }
        known.insert(channel_id.to_owned(), parent.clone());
        parent
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Option<String>>> {
        self.known.lock().unwrap_or_else(|e| e.into_inner())
    }
}

//! Helpers the store's test modules share: a store in a temp dir, listing a directory,
//! reading a context back as short texts, a message as an entry body, a stub assistant reply.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;

use pincer_ai::{AssistantMessage, ContentBlock, Message};
use pincer_store::{EntryBody, MessageEntry, SessionStore};

/// A store at `<dir>/sessions` whose new sessions record `/work` as their cwd.
pub fn store(dir: &Path) -> SessionStore {
    SessionStore::new(dir.join("sessions")).with_cwd("/work")
}

/// The texts of a context: user texts prefixed `u:`, assistant texts `a:`, tool results
/// `t:` and the tool's name.
pub fn texts(ctx: &[Message]) -> Vec<String> {
    ctx.iter()
        .map(|m| match m {
            Message::User(u) => format!("u:{}", u.text()),
            Message::Assistant(a) => format!("a:{}", a.text()),
            Message::ToolResult(r) => format!("t:{}", r.tool_name),
        })
        .collect()
}

/// A message as an entry body.
pub fn msg(message: Message) -> EntryBody {
    EntryBody::Message(MessageEntry { message })
}

/// An assistant reply of the stub model saying `text`.
pub fn assistant(text: &str) -> Message {
    Message::Assistant(AssistantMessage {
        content: vec![ContentBlock::text(text)],
        provider: "stub".into(),
        model: "stub".into(),
        ..Default::default()
    })
}

//! Telegram's message actions besides sending (the `message` tool's `react`, `edit`,
//! `delete`): `setMessageReaction`, `editMessageText` (the same HTML rendering as
//! `sendMessage`, one message's worth) and `deleteMessage`.

use std::time::Duration;

use pincer_channel_port::{ChannelError, ChatRef};
use serde_json::{Value, json};

use super::{CHANNEL, TelegramAdapter};
use crate::markdown::{Flavor, render_chunks, telegram_html_text};

/// What Telegram's adapter can do besides `send`.
pub(super) const ACTIONS: &[&str] = &["react", "edit", "delete"];

fn api_error(message: impl Into<String>) -> ChannelError {
    ChannelError::Api {
        channel: CHANNEL.into(),
        message: message.into(),
    }
}

/// A Telegram message id (an integer).
fn message_id(id: &str) -> Result<i64, ChannelError> {
    id.trim()
        .parse()
        .map_err(|_| api_error(format!("{id:?} is not a Telegram message id (a number)")))
}

impl TelegramAdapter {
    pub(super) async fn set_reaction(
        &self,
        chat: &ChatRef,
        id: &str,
        emoji: &str,
        remove: bool,
    ) -> Result<(), ChannelError> {
        let reaction = if remove {
            json!([])
        } else {
            json!([{ "type": "emoji", "emoji": emoji }])
        };
        let params = json!({
            "chat_id": chat.id, "message_id": message_id(id)?, "reaction": reaction,
        });
        let _: Value = self
            .api
            .call("setMessageReaction", &params, Duration::ZERO)
            .await?;
        Ok(())
    }

    pub(super) async fn edit_text(
        &self,
        chat: &ChatRef,
        id: &str,
        text: &str,
    ) -> Result<(), ChannelError> {
        let limit = if text.chars().any(|c| c.len_utf16() > 1) {
            Flavor::TelegramHtml.limit() / 2
        } else {
            Flavor::TelegramHtml.limit()
        };
        let chunks = render_chunks(text, Flavor::TelegramHtml, limit);
        let [html] = chunks.as_slice() else {
            return Err(api_error(
                "the new text is longer than one Telegram message; edit with less text",
            ));
        };
        let mut params = json!({
            "chat_id": chat.id, "message_id": message_id(id)?, "text": html,
            "parse_mode": "HTML", "link_preview_options": { "is_disabled": true },
        });
        let edited: Result<Value, _> = self
            .api
            .call("editMessageText", &params, Duration::ZERO)
            .await;
        match edited {
            Ok(_) => Ok(()),
            // The same text again: nothing to change, which is what was asked.
            Err(ChannelError::Api { message, .. })
                if message.contains("message is not modified") =>
            {
                Ok(())
            }
            Err(ChannelError::Api { message: why, .. }) if why.contains("can't parse entities") => {
                tracing::warn!(%why, "telegram refused the HTML of an edit; sending plain text");
                params["text"] = json!(telegram_html_text(html));
                if let Some(map) = params.as_object_mut() {
                    map.remove("parse_mode");
                }
                let _: Value = self
                    .api
                    .call("editMessageText", &params, Duration::ZERO)
                    .await?;
                Ok(())
            }
            Err(e) => Err(e),
        }
    }

    pub(super) async fn delete_message(
        &self,
        chat: &ChatRef,
        id: &str,
    ) -> Result<(), ChannelError> {
        let params = json!({ "chat_id": chat.id, "message_id": message_id(id)? });
        let _: Value = self
            .api
            .call("deleteMessage", &params, Duration::ZERO)
            .await?;
        Ok(())
    }
}

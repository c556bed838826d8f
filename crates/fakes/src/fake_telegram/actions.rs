//! `editMessageText`, `setMessageReaction` and `deleteMessage`: checked like Telegram (the
//! message must exist in the chat; only the bot's own messages can be edited; an edit to
//! the same text is refused with "message is not modified") and recorded.

use serde_json::{Value, json};

use super::api::{ApiError, ApiResult, MAX_TEXT, chat_id, int, utf16_len, visible_text};
use super::params::Params;
use super::state::{EditedMessage, Reaction, Shared};

fn message_id(params: &Params) -> Result<i64, ApiError> {
    int(params, "message_id")?.ok_or_else(|| ApiError::bad_request("message_id is empty"))
}

pub(super) fn edit_message_text(shared: &Shared, params: &Params) -> ApiResult {
    let chat_id = chat_id(params)?;
    let message_id = message_id(params)?;
    let parse_mode = params.str("parse_mode").filter(|mode| !mode.is_empty());
    let text = params.str("text").unwrap_or_default();
    if text.trim().is_empty() {
        return Err(ApiError::bad_request("message text is empty"));
    }
    let plain_text = visible_text(&text, parse_mode.as_deref())?;
    if utf16_len(&plain_text) > MAX_TEXT {
        return Err(ApiError::bad_request("MESSAGE_TOO_LONG"));
    }
    let bot_id = shared.config.bot_id;
    shared.update(|inner| {
        let Some(message) = inner.message_mut(chat_id, message_id) else {
            return Err(ApiError::bad_request("message to edit not found"));
        };
        if message.pointer("/from/id").and_then(Value::as_i64) != Some(bot_id) {
            return Err(ApiError::bad_request("message can't be edited"));
        }
        if message.get("text").and_then(Value::as_str) == Some(plain_text.as_str()) {
            return Err(ApiError::bad_request(
                "message is not modified: specified new message content and reply markup \
                 are exactly the same as a current content and reply markup of the message",
            ));
        }
        message["text"] = json!(plain_text);
        message["edit_date"] = json!(super::state::now());
        let answer = message.clone();
        inner.edited_messages.push(EditedMessage {
            chat_id,
            message_id,
            text,
            plain_text,
            parse_mode,
        });
        Ok(answer)
    })
}

pub(super) fn set_message_reaction(shared: &Shared, params: &Params) -> ApiResult {
    let chat_id = chat_id(params)?;
    let message_id = message_id(params)?;
    let reaction = params
        .json("reaction")
        .map_err(ApiError::bad_request)?
        .unwrap_or(Value::Array(Vec::new()));
    let Some(types) = reaction.as_array() else {
        return Err(ApiError::bad_request(
            "can't parse reaction types JSON object",
        ));
    };
    let mut emoji = Vec::new();
    for entry in types {
        match (
            entry.get("type").and_then(Value::as_str),
            entry.get("emoji"),
        ) {
            (Some("emoji"), Some(Value::String(e))) if !e.is_empty() => emoji.push(e.clone()),
            _ => return Err(ApiError::bad_request("REACTION_INVALID")),
        }
    }
    shared.update(|inner| {
        if inner.message(chat_id, message_id).is_none() {
            return Err(ApiError::bad_request("message to react not found"));
        }
        inner.reactions.push(Reaction {
            chat_id,
            message_id,
            emoji,
        });
        Ok(Value::Bool(true))
    })
}

pub(super) fn delete_message(shared: &Shared, params: &Params) -> ApiResult {
    let chat_id = chat_id(params)?;
    let message_id = message_id(params)?;
    shared.update(|inner| {
        if !inner.forget_message(chat_id, message_id) {
            return Err(ApiError::bad_request("message to delete not found"));
        }
        inner.deleted_messages.push((chat_id, message_id));
        Ok(Value::Bool(true))
    })
}

//! Sending: `POST /open-apis/im/v1/messages?receive_id_type=…`, replies
//! (`…/messages/{message_id}/reply`), and the image / file uploads whose keys messages
//! refer to. The checks are Feishu's that an adapter could get wrong: `content` must be a
//! JSON *string* holding an object, the `receive_id` must fit its `receive_id_type`, image
//! and file keys must have been uploaded, sizes are limited.

use bytes::Bytes;
use serde_json::{Map, Value};
use std::collections::HashMap;

use axum::response::{IntoResponse, Response};

use super::rest::{
    ApiError, MAX_CARD, MAX_CONTENT, MAX_FILE, MAX_IMAGE, error_response as error, receive_chat,
    record_sent,
};
use super::state::{SentMessage, Shared, Upload, UploadKind};
use crate::multipart::Part;

const FILE_TYPES: [&str; 7] = ["opus", "mp4", "pdf", "doc", "xls", "ppt", "stream"];

fn invalid(what: &str) -> ApiError {
    ApiError::new(
        400,
        230_001,
        &format!("Your request contains an invalid request parameter: {what}"),
    )
}

/// `msg_type` and the parsed `content` of a send or reply body, checked.
fn message_body(
    shared: &Shared,
    body: &Bytes,
) -> Result<(Map<String, Value>, String, Value), ApiError> {
    let Ok(Value::Object(request)) = serde_json::from_slice::<Value>(body) else {
        return Err(ApiError::new(
            400,
            99_992_402,
            "field validation failed: body is not a JSON object",
        ));
    };
    let msg_type = request
        .get("msg_type")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    let Some(raw) = request.get("content").and_then(Value::as_str) else {
        return Err(ApiError::new(
            400,
            99_992_402,
            "field validation failed: content must be a string (JSON text)",
        ));
    };
    let Ok(content @ Value::Object(_)) = serde_json::from_str::<Value>(raw) else {
        return Err(invalid("content is not a JSON object"));
    };
    let limit = if msg_type == "interactive" {
        MAX_CARD
    } else {
        MAX_CONTENT
    };
    if raw.len() > limit {
        return Err(ApiError::new(
            400,
            230_025,
            "The length of the message content reaches its limit.",
        ));
    }
    // An image or file message names a key the fake handed out for that kind of upload.
    let check_uploaded = |kind: UploadKind, field: &str| {
        let key = content[field].as_str().unwrap_or_default();
        let known = shared.read(|inner| {
            inner
                .uploads
                .iter()
                .any(|upload| upload.kind == kind && upload.key == key)
        });
        if known {
            Ok(())
        } else {
            Err(ApiError::new(
                400,
                230_001,
                &format!("invalid {field} {key:?}"),
            ))
        }
    };
    match msg_type.as_str() {
        "text" => {
            if content["text"].as_str().is_none_or(str::is_empty) {
                return Err(invalid("text content without text"));
            }
        }
        "image" => check_uploaded(UploadKind::Image, "image_key")?,
        "file" => check_uploaded(UploadKind::File, "file_key")?,
        "interactive" => {
            let elements = content["body"]["elements"]
                .as_array()
                .or_else(|| content["elements"].as_array());
            if elements.is_none_or(Vec::is_empty) {
                return Err(ApiError::new(
                    400,
                    230_099,
                    "Failed to create card content: no elements",
                ));
            }
        }
        "post" | "audio" | "media" | "sticker" | "share_chat" | "share_user" | "system" => {}
        other => return Err(invalid(&format!("msg_type {other:?}"))),
    }
    Ok((request, msg_type, content))
}

/// `POST /open-apis/im/v1/messages?receive_id_type=…`.
pub(crate) fn create(shared: &Shared, query: &HashMap<String, String>, body: &Bytes) -> Response {
    let (request, msg_type, content) = match message_body(shared, body) {
        Ok(parts) => parts,
        Err(err) => return err.into_response(),
    };
    let receive_id_type = query.get("receive_id_type").cloned().unwrap_or_default();
    let receive_id = request
        .get("receive_id")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    let chat_id = match receive_chat(&receive_id_type, &receive_id) {
        Ok(chat_id) => chat_id,
        Err(err) => return err.into_response(),
    };
    record_sent(
        shared,
        SentMessage {
            message_id: String::new(),
            receive_id: Some(receive_id),
            receive_id_type: Some(receive_id_type),
            chat_id,
            msg_type,
            content,
            reply_to: None,
            reply_in_thread: false,
            thread_id: None,
            uuid: request
                .get("uuid")
                .and_then(Value::as_str)
                .map(str::to_owned),
            body: Value::Object(request),
        },
    )
}

/// `POST /open-apis/im/v1/messages/{message_id}/reply`.
pub(crate) fn reply(shared: &Shared, message_id: &str, body: &Bytes) -> Response {
    let (request, msg_type, content) = match message_body(shared, body) {
        Ok(parts) => parts,
        Err(err) => return err.into_response(),
    };
    let Some(original) = shared.read(|inner| inner.messages.get(message_id).cloned()) else {
        return error(
            400,
            230_011,
            "The message was not found or has been recalled.",
        );
    };
    let reply_in_thread = match request.get("reply_in_thread") {
        None | Some(Value::Null) => false,
        Some(Value::Bool(flag)) => *flag,
        Some(_) => return error(400, 99_992_402, "field validation failed: reply_in_thread"),
    };
    let thread_id = original
        .thread_id
        .clone()
        .or_else(|| reply_in_thread.then(|| format!("omt_{message_id}")));
    record_sent(
        shared,
        SentMessage {
            message_id: String::new(),
            receive_id: None,
            receive_id_type: None,
            chat_id: original.chat_id,
            msg_type,
            content,
            reply_to: Some(message_id.to_owned()),
            reply_in_thread,
            thread_id,
            uuid: request
                .get("uuid")
                .and_then(Value::as_str)
                .map(str::to_owned),
            body: Value::Object(request),
        },
    )
}

/// The text fields and the one file part of an upload.
fn form(
    content_type: &str,
    body: &Bytes,
    file_field: &str,
) -> Result<(HashMap<String, String>, Part), ApiError> {
    let Some(boundary) = crate::multipart::boundary(content_type) else {
        return Err(ApiError::new(
            400,
            99_992_402,
            "field validation failed: not multipart/form-data",
        ));
    };
    let parts = crate::multipart::parse(body, &boundary)
        .map_err(|message| ApiError::new(400, 99_992_402, &message))?;
    let mut fields = HashMap::new();
    let mut file = None;
    for part in parts {
        if part.name == file_field {
            file = Some(part);
        } else {
            fields.insert(
                part.name.clone(),
                String::from_utf8_lossy(&part.data).into_owned(),
            );
        }
    }
    let file = file.ok_or_else(|| {
        ApiError::new(
            400,
            99_992_402,
            &format!("field validation failed: {file_field} is required"),
        )
    })?;
    Ok((fields, file))
}

/// `POST /open-apis/im/v1/images` (`image_type=message`, `image=<file>`).
pub(crate) fn upload_image(shared: &Shared, content_type: &str, body: &Bytes) -> Response {
    let (fields, file) = match form(content_type, body, "image") {
        Ok(form) => form,
        Err(err) => return err.into_response(),
    };
    let image_type = fields.get("image_type").cloned().unwrap_or_default();
    if !matches!(image_type.as_str(), "message" | "avatar") {
        return invalid(&format!("image_type {image_type:?}")).into_response();
    }
    let name = file.file_name.clone().unwrap_or_default();
    store_upload(shared, UploadKind::Image, name, image_type, &file)
}

/// `POST /open-apis/im/v1/files` (`file_type`, `file_name`, `file=<file>`).
pub(crate) fn upload_file(shared: &Shared, content_type: &str, body: &Bytes) -> Response {
    let (fields, file) = match form(content_type, body, "file") {
        Ok(form) => form,
        Err(err) => return err.into_response(),
    };
    let file_type = fields.get("file_type").cloned().unwrap_or_default();
    if !FILE_TYPES.contains(&file_type.as_str()) {
        return invalid(&format!("file_type {file_type:?}")).into_response();
    }
    let Some(name) = fields
        .get("file_name")
        .filter(|name| !name.is_empty())
        .cloned()
    else {
        return error(
            400,
            99_992_402,
            "field validation failed: file_name is required",
        );
    };
    store_upload(shared, UploadKind::File, name, file_type, &file)
}

/// Checks an upload's size, stores it under a new key and answers with the key.
fn store_upload(
    shared: &Shared,
    kind: UploadKind,
    name: String,
    type_field: String,
    file: &Part,
) -> Response {
    let (max, prefix, key_field) = match kind {
        UploadKind::Image => (MAX_IMAGE, "img_v3_fake", "image_key"),
        UploadKind::File => (MAX_FILE, "file_v3_fake", "file_key"),
    };
    if file.data.is_empty() {
        return error(400, 234_010, "File's size can't be 0.");
    }
    if file.data.len() > max {
        return error(400, 234_006, "The file size exceed the max value.");
    }
    let key = shared.update(|inner| {
        let key = format!("{prefix}{:x}", inner.take_id());
        inner.uploads.push(Upload {
            kind,
            key: key.clone(),
            name,
            type_field,
            content_type: file.content_type.clone(),
            bytes: file.data.to_vec(),
        });
        key
    });
    super::rest::ok_response(serde_json::json!({ key_field: key }))
}

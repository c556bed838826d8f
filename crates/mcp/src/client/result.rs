//! What an MCP tool returned, as content the model reads: text blocks stay text, images
//! become image blocks, embedded resources become text (with their URI) or images,
//! resource links and audio become a line of text. The text is capped (a server can answer
//! with megabytes) and says where it was cut. `isError` results become a tool failure
//! carrying the same text.

use pincer_agent::{ToolError, ToolOutput};
use pincer_ai::{ContentBlock, ImageContent};
use rmcp::model::{CallToolResult, ContentBlock as McpBlock, ResourceContents};

/// Default cap on the text of one result, in bytes.
pub const DEFAULT_MAX_RESULT_TEXT: usize = 100 * 1024;
/// Most images kept from one result (each is sent to the model).
const MAX_IMAGES: usize = 8;
/// Largest image kept, in base64 characters (about 7.5 MB of image).
const MAX_IMAGE_BASE64: usize = 10 * 1024 * 1024;

/// The result of `tools/call` as a tool outcome; `max_text` caps the text.
pub fn map_call_result(result: CallToolResult, max_text: usize) -> Result<ToolOutput, ToolError> {
    let is_error = result.is_error.unwrap_or(false);
    let mut text = TextCap::new(max_text);
    let mut images: Vec<ContentBlock> = Vec::new();
    let mut push_image = |data: String, mime_type: String, text: &mut TextCap| {
        if images.len() >= MAX_IMAGES || data.len() > MAX_IMAGE_BASE64 {
            text.push(&format!(
                "[image {mime_type} left out: too many or too large]"
            ));
        } else {
            images.push(ContentBlock::Image(ImageContent { data, mime_type }));
        }
    };
    for block in result.content {
        match block {
            McpBlock::Text(t) => text.push(&t.text),
            McpBlock::Image(i) => push_image(i.data, i.mime_type, &mut text),
            McpBlock::Audio(a) => text.push(&format!(
                "[audio {} ({} bytes base64) not shown]",
                a.mime_type,
                a.data.len()
            )),
            McpBlock::Resource(r) => match r.resource {
                ResourceContents::TextResourceContents {
                    uri, text: body, ..
                } => {
                    text.push(&format!("[resource {uri}]\n{body}"));
                }
                ResourceContents::BlobResourceContents {
                    uri,
                    mime_type,
                    blob,
                    ..
                } => {
                    let mime = mime_type.unwrap_or_default();
                    if mime.starts_with("image/") {
                        push_image(blob, mime, &mut text);
                    } else {
                        text.push(&format!(
                            "[resource {uri}: {} ({} bytes base64) not shown]",
                            if mime.is_empty() { "binary" } else { &mime },
                            blob.len()
                        ));
                    }
                }
                _ => text.push("[resource of an unknown kind left out]"),
            },
            McpBlock::ResourceLink(link) => {
                let mut line = format!("[resource link {}: {}", link.uri, link.name);
                if let Some(d) = &link.description {
                    line.push_str(" — ");
                    line.push_str(d);
                }
                line.push(']');
                text.push(&line);
            }
            // Content kinds newer than this client: say so rather than drop them silently.
            _ => text.push("[content of an unknown kind left out]"),
        }
    }
    if text.is_empty()
        && images.is_empty()
        && let Some(structured) = result.structured_content
    {
        text.push(&structured.to_string());
    }
    let truncated = text.truncated;
    let body = text.finish();
    if is_error {
        let message = if body.is_empty() {
            "the MCP tool reported an error without a message".to_owned()
        } else {
            body
        };
        return Err(ToolError::Failed(message));
    }
    let mut content = Vec::new();
    if !body.is_empty() {
        content.push(ContentBlock::text(body));
    }
    content.extend(images);
    if content.is_empty() {
        content.push(ContentBlock::text("(no output)"));
    }
    let mut output = ToolOutput {
        content,
        details: None,
    };
    if truncated {
        output = output.with_details(serde_json::json!({ "truncated": true }));
    }
    Ok(output)
}

/// Text joined block by block, cut at a byte cap on a character boundary.
struct TextCap {
    out: String,
    max: usize,
    truncated: bool,
    dropped: usize,
}

impl TextCap {
    fn new(max: usize) -> Self {
        Self {
            out: String::new(),
            max,
            truncated: false,
            dropped: 0,
        }
    }

    fn is_empty(&self) -> bool {
        self.out.is_empty() && !self.truncated
    }

    fn push(&mut self, text: &str) {
        let sep = usize::from(!self.out.is_empty());
        if self.truncated {
            self.dropped += text.len() + sep;
            return;
        }
        let room = self.max.saturating_sub(self.out.len() + sep);
        if sep == 1 && room > 0 {
            self.out.push('\n');
        }
        if text.len() <= room {
            self.out.push_str(text);
            return;
        }
        let mut cut = room;
        while !text.is_char_boundary(cut) {
            cut -= 1;
        }
        self.out.push_str(&text[..cut]);
        self.dropped += text.len() - cut;
        self.truncated = true;
    }

    fn finish(mut self) -> String {
        if self.truncated {
            self.out.push_str(&format!(
                "\n[output truncated: {} more bytes not shown (limit {} bytes)]",
                self.dropped, self.max
            ));
        }
        self.out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn parse(value: serde_json::Value) -> CallToolResult {
        serde_json::from_value(value).unwrap()
    }

    #[test]
    fn text_images_and_resources() {
        let out = map_call_result(
            parse(json!({"content": [
                {"type": "text", "text": "hello"},
                {"type": "image", "data": "iVBO", "mimeType": "image/png"},
                {"type": "resource", "resource": {"uri": "test://1", "text": "body", "mimeType": "text/plain"}},
                {"type": "resource", "resource": {"uri": "test://2", "blob": "R0lG", "mimeType": "image/gif"}},
                {"type": "resource_link", "uri": "file:///x", "name": "x", "description": "a file"}
            ]})),
            1000,
        )
        .unwrap();
        assert_eq!(
            out.text_content(),
            "hello\n[resource test://1]\nbody\n[resource link file:///x: x — a file]"
        );
        assert_eq!(
            out.content[1..],
            [
                ContentBlock::Image(ImageContent {
                    data: "iVBO".into(),
                    mime_type: "image/png".into()
                }),
                ContentBlock::Image(ImageContent {
                    data: "R0lG".into(),
                    mime_type: "image/gif".into()
                }),
            ]
        );
    }

    #[test]
    fn errors_and_truncation() {
        let err = map_call_result(
            parse(json!({"content": [{"type": "text", "text": "no such file"}], "isError": true})),
            1000,
        );
        assert_eq!(err, Err(ToolError::Failed("no such file".into())));
        let out = map_call_result(
            parse(json!({"content": [{"type": "text", "text": "héllo world"}, {"type": "text", "text": "more"}]})),
            2,
        )
        .unwrap();
        assert_eq!(
            out.text_content(),
            "h\n[output truncated: 16 more bytes not shown (limit 2 bytes)]"
        );
        assert_eq!(out.details, Some(json!({"truncated": true})));
        let empty = map_call_result(parse(json!({"content": []})), 10).unwrap();
        assert_eq!(empty.text_content(), "(no output)");
        let structured = map_call_result(
            parse(json!({"content": [], "structuredContent": {"a": 1}})),
            100,
        )
        .unwrap();
        assert_eq!(structured.text_content(), "{\"a\":1}");
    }
}

//! What the two OpenAI wire APIs (Chat Completions and Responses) share: image data URLs,
//! reasoning-effort selection, request headers, the classification of errors that arrive
//! inside a stream, and lenient borrowed JSON field types for the decoders' hot paths.

use std::borrow::Cow;
use std::fmt;
use std::marker::PhantomData;

use serde::Deserialize;
use serde::de::{self, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::Value;

use crate::error::{ErrorKind, is_context_overflow};
use crate::model::{InputKind, Model};
use crate::options::StreamOptions;
use crate::providers::common_headers;
use crate::types::{ContentBlock, Context, ImageContent, Message, ThinkingLevel, UserContent};

/// `data:` URL of an image, the form both APIs take inline images in.
pub(crate) fn data_url(image: &ImageContent) -> String {
    format!("data:{};base64,{}", image.mime_type, image.data)
}

pub(crate) fn accepts_images(model: &Model) -> bool {
    model.input.contains(&InputKind::Image)
}

/// The output-token limit pi sends: the caller's, else the model's capped at 32k
/// (pi's `buildBaseOptions`). `None` when that is zero.
pub(crate) fn max_output_tokens(model: &Model, options: &StreamOptions) -> Option<u64> {
    options
        .max_tokens
        .filter(|n| *n > 0)
        .or(Some(model.max_tokens.min(32_000)))
        .filter(|n| *n > 0)
}

/// The temperature as JSON. Going through the shortest decimal form keeps `0.7` from
/// becoming `0.699999988079071` on the wire.
pub(crate) fn temperature_json(temperature: f32) -> Value {
    let value = temperature
        .to_string()
        .parse::<f64>()
        .unwrap_or(f64::from(temperature));
    serde_json::Number::from_f64(value).map_or(Value::Null, Value::Number)
}

/// The `reasoning_effort` for a thinking level, or `None` when thinking is off. `xhigh`
/// only goes to models known to take it and is `high` elsewhere (pi's `supportsXhigh`).
pub(crate) fn reasoning_effort(
    model: &Model,
    level: Option<ThinkingLevel>,
) -> Option<&'static str> {
    match level? {
        ThinkingLevel::Xhigh if supports_xhigh(model) => Some("xhigh"),
        level => level.effort(),
    }
}

fn supports_xhigh(model: &Model) -> bool {
    ["gpt-5.2", "gpt-5.3", "gpt-5.4", "opus-4-6", "opus-4.6"]
        .iter()
        .any(|p| model.id.contains(p))
}

/// Headers of a request: the common ones, `authorization` when there is a key (local
/// servers often need none), and GitHub Copilot's per-request headers. Headers the model
/// or caller set explicitly win.
pub(crate) fn request_headers(
    model: &Model,
    context: &Context,
    options: &StreamOptions,
    api_key: Option<&str>,
) -> Vec<(String, String)> {
    let mut headers = common_headers(model, options);
    let mut add = |name: &str, value: String| {
        if !headers.iter().any(|(n, _)| n.eq_ignore_ascii_case(name)) {
            headers.push((name.to_owned(), value));
        }
    };
    if let Some(key) = api_key.filter(|k| !k.is_empty()) {
        add("authorization", format!("Bearer {key}"));
    }
    if model.provider == "github-copilot" {
        // Copilot bills user-initiated and agent follow-up requests differently.
        let agent = context
            .messages
            .last()
            .is_some_and(|m| !matches!(m, Message::User(_)));
        add(
            "X-Initiator",
            if agent { "agent" } else { "user" }.to_owned(),
        );
        add("Openai-Intent", "conversation-edits".to_owned());
        if has_images(context) {
            add("Copilot-Vision-Request", "true".to_owned());
        }
    }
    headers
}

fn has_images(context: &Context) -> bool {
    context.messages.iter().any(|m| match m {
        Message::User(u) => match &u.content {
            UserContent::Blocks(blocks) => {
                blocks.iter().any(|b| matches!(b, ContentBlock::Image(_)))
            }
            UserContent::Text(_) => false,
        },
        Message::ToolResult(r) => r
            .content
            .iter()
            .any(|b| matches!(b, ContentBlock::Image(_))),
        Message::Assistant(_) => false,
    })
}

/// Kind of an error the server reported inside a stream (an `error` object in a chunk, or a
/// failed response), from its code and message.
pub(crate) fn stream_error_kind(code: Option<&Value>, message: &str) -> ErrorKind {
    let code_text = match code {
        Some(Value::String(s)) => s.to_ascii_lowercase(),
        Some(Value::Number(n)) => n.to_string(),
        _ => String::new(),
    };
    let lower = message.to_ascii_lowercase();
    if is_context_overflow(&lower) || is_context_overflow(&code_text) {
        ErrorKind::ContextOverflow
    } else if code_text == "429" || code_text.contains("rate_limit") || lower.contains("rate limit")
    {
        ErrorKind::RateLimited { retry_after: None }
    } else if matches!(code_text.as_str(), "503" | "529")
        || code_text.contains("overloaded")
        || lower.contains("overloaded")
    {
        ErrorKind::Overloaded
    } else {
        ErrorKind::Server
    }
}

/// A string field that borrows from the input when it can (no escapes in it), and reads
/// anything that is not a string as absent: OpenAI-compatible servers put odd values in
/// optional fields, and one odd field must not break a whole reply.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct Text<'a>(pub Option<Cow<'a, str>>);

impl Text<'_> {
    /// The string, when present and not empty.
    pub fn non_empty(&self) -> Option<&str> {
        self.0.as_deref().filter(|s| !s.is_empty())
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for Text<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(TextVisitor(PhantomData))
    }
}

struct TextVisitor<'a>(PhantomData<&'a ()>);

impl<'de: 'a, 'a> Visitor<'de> for TextVisitor<'a> {
    type Value = Text<'a>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a string")
    }
    fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
        Ok(Text(Some(Cow::Borrowed(v))))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
        Ok(Text(Some(Cow::Owned(v.to_owned()))))
    }
    fn visit_string<E: de::Error>(self, v: String) -> Result<Self::Value, E> {
        Ok(Text(Some(Cow::Owned(v))))
    }
    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
        Ok(Text(None))
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> {
        Ok(Text(None))
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self::Value, E> {
        Ok(Text(None))
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
        Ok(Text(None))
    }
    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(Text(None))
    }
    fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(Text(None))
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_any(self)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(Text(None))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(Text(None))
    }
}

/// A token count that tolerates `null`, floats, negatives and numeric strings (all seen
/// from compatible servers): whatever is not a sensible count reads as 0.
pub(crate) fn tokens<'de, D: Deserializer<'de>>(deserializer: D) -> Result<u64, D::Error> {
    struct TokensVisitor;
    impl<'de> Visitor<'de> for TokensVisitor {
        type Value = u64;
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("a token count")
        }
        fn visit_u64<E: de::Error>(self, v: u64) -> Result<u64, E> {
            Ok(v)
        }
        fn visit_i64<E: de::Error>(self, v: i64) -> Result<u64, E> {
            Ok(u64::try_from(v).unwrap_or(0))
        }
        fn visit_f64<E: de::Error>(self, v: f64) -> Result<u64, E> {
            // `as` saturates, and NaN becomes 0.
            Ok(if v > 0.0 { v as u64 } else { 0 })
        }
        fn visit_str<E: de::Error>(self, v: &str) -> Result<u64, E> {
            Ok(v.trim().parse().unwrap_or(0))
        }
        fn visit_bool<E: de::Error>(self, _: bool) -> Result<u64, E> {
            Ok(0)
        }
        fn visit_unit<E: de::Error>(self) -> Result<u64, E> {
            Ok(0)
        }
        fn visit_none<E: de::Error>(self) -> Result<u64, E> {
            Ok(0)
        }
        fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<u64, D::Error> {
            d.deserialize_any(self)
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<u64, A::Error> {
            while seq.next_element::<IgnoredAny>()?.is_some() {}
            Ok(0)
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<u64, A::Error> {
            while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
            Ok(0)
        }
    }
    deserializer.deserialize_any(TokensVisitor)
}

/// If `full` extends what was streamed, the part still missing. Servers that skip deltas
/// (or drop one) send the whole content again when an item finishes.
pub(crate) fn missing_suffix<'f>(streamed: &str, full: &'f str) -> Option<&'f str> {
    // A matched prefix ends on a character boundary, so the slice is always valid.
    full.strip_prefix(streamed).filter(|rest| !rest.is_empty())
}

#[cfg(test)]
mod tests;

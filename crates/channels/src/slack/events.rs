//! Slack Socket Mode frames as the adapter reads them — `hello`, `disconnect`, and the
//! envelopes (`events_api`, `slash_commands`, `interactive`, …) that must each be acked —
//! and the parts of the `message` / `app_mention` events the adapter uses. Pure functions,
//! fuzzed: a frame is an error only when it is not a JSON object at all; anything with an
//! `envelope_id` is an [`Envelope`] (so it is acked) even when its payload is odd, and an
//! event the adapter does not take is [`Event::Skipped`] with the reason.
//!
//! Also Slack's text format back to plain text ([`plain_text`]): `&lt; &gt; &amp;`,
//! `<https://x|label>`, `<@U1>`, `<#C1|name>`, `<!here>`, with the bot's own mention removed.

use serde::Deserialize;
use serde_json::Value;

/// One decoded Socket Mode frame.
#[derive(Debug, Clone, PartialEq)]
pub enum SocketFrame {
    /// The connection is ready.
    Hello { app_id: Option<String> },
    /// Slack will close this connection (`refresh_requested`, `warning`, `link_disabled`).
    Disconnect { reason: String },
    /// Something to ack (and, for `events_api`, maybe a message).
    Envelope(Box<Envelope>),
    /// A frame of a type the adapter does not know, without an envelope id.
    Skipped { why: String },
}

/// An envelope: acked with `{"envelope_id": …}` whatever it holds.
#[derive(Debug, Clone, PartialEq)]
pub struct Envelope {
    pub envelope_id: String,
    /// `events_api`, `slash_commands`, `interactive`, …
    pub kind: String,
    /// 0 the first time; more when Slack redelivers an envelope nobody acked.
    pub retry_attempt: u64,
    /// The workspace (`payload.team_id`).
    pub team_id: Option<String>,
    pub event: Event,
}

/// What an envelope carries, as far as the adapter cares.
#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    Message(Box<MessageEvent>),
    Skipped { why: String },
}

/// `message` (a post, in any conversation) or `app_mention` (a post mentioning the bot in
/// a channel; Slack sends both for one post when the app subscribes to both).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MessageKind {
    Message,
    AppMention,
}

/// A user's post.
#[derive(Debug, Clone, PartialEq)]
pub struct MessageEvent {
    pub kind: MessageKind,
    /// The conversation: `D…` (DM), `C…` (channel), `G…` (private channel or group DM).
    pub channel: String,
    /// `im`, `mpim`, `channel`, `group` (absent on `app_mention`).
    pub channel_type: Option<String>,
    pub user: String,
    /// As Slack sends it (escaped, with `<…>` links and mentions).
    pub text: String,
    /// The message's timestamp, its id within the conversation.
    pub ts: String,
    /// The thread's parent `ts`, when the post is in a thread.
    pub thread_ts: Option<String>,
    pub team: Option<String>,
    pub files: Vec<SlackFile>,
}

/// A file shared with a message.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct SlackFile {
    #[serde(default)]
    pub id: String,
    pub name: Option<String>,
    pub mimetype: Option<String>,
    #[serde(default)]
    pub size: u64,
    /// Needs the bot token (`files:read`).
    pub url_private_download: Option<String>,
    pub url_private: Option<String>,
}

impl SlackFile {
    /// Where to download it from (`None`: a file Slack hides, e.g. over the plan's limit).
    pub fn url(&self) -> Option<&str> {
        self.url_private_download
            .as_deref()
            .or(self.url_private.as_deref())
            .filter(|u| !u.is_empty())
    }
}

/// Message subtypes that are a user's post: none, a file shared with it, a thread reply
/// also sent to the channel. Edits, deletes, joins, bot messages … are not for the agent.
pub const POST_SUBTYPES: [&str; 2] = ["file_share", "thread_broadcast"];

pub use crate::frame_error::FrameError;

/// What a Socket Mode frame that cannot be read at all is not.
const FRAME: &str = "Socket Mode frame";

/// Decodes one text frame of the Socket Mode WebSocket.
pub fn decode_frame(text: &str) -> Result<SocketFrame, FrameError> {
    decode_value(&crate::frame_error::parse_json(text, FRAME)?)
}

/// Decodes one frame already parsed as JSON.
pub fn decode_value(value: &Value) -> Result<SocketFrame, FrameError> {
    let object = crate::frame_error::json_object(value, FRAME)?;
    let kind = object.get("type").and_then(Value::as_str).unwrap_or("");
    // Anything with an envelope id is acked, even of a type we do not know.
    if let Some(envelope_id) = object.get("envelope_id").and_then(Value::as_str) {
        let payload = object.get("payload").unwrap_or(&Value::Null);
        let event = if kind == "events_api" {
            decode_callback(payload)
        } else {
            Event::Skipped {
                why: format!("{kind:?} envelopes are not handled"),
            }
        };
        return Ok(SocketFrame::Envelope(Box::new(Envelope {
            envelope_id: envelope_id.to_owned(),
            kind: kind.to_owned(),
            retry_attempt: object
                .get("retry_attempt")
                .and_then(Value::as_u64)
                .unwrap_or(0),
            team_id: str_field(payload, "team_id"),
            event,
        })));
    }
    Ok(match kind {
        "hello" => SocketFrame::Hello {
            app_id: value
                .pointer("/connection_info/app_id")
                .and_then(Value::as_str)
                .map(str::to_owned),
        },
        "disconnect" => SocketFrame::Disconnect {
            reason: str_field(value, "reason").unwrap_or_default(),
        },
        other => SocketFrame::Skipped {
            why: format!("a {other:?} frame without an envelope id"),
        },
    })
}

fn str_field(value: &Value, name: &str) -> Option<String> {
    value.get(name).and_then(Value::as_str).map(str::to_owned)
}

/// The `event` of an `event_callback` payload.
fn decode_callback(payload: &Value) -> Event {
    let skipped = |why: String| Event::Skipped { why };
    if payload.get("type").and_then(Value::as_str) != Some("event_callback") {
        return skipped("an events_api payload that is not an event_callback".into());
    }
    let Some(event) = payload.get("event").filter(|e| e.is_object()) else {
        return skipped("an event_callback without an event".into());
    };
    let kind = match event.get("type").and_then(Value::as_str) {
        Some("message") => MessageKind::Message,
        Some("app_mention") => MessageKind::AppMention,
        Some(other) => return skipped(format!("{other} events are not handled")),
        None => return skipped("an event without a type".into()),
    };
    if let Some(subtype) = event.get("subtype").and_then(Value::as_str)
        && !POST_SUBTYPES.contains(&subtype)
    {
        return skipped(format!("message subtype {subtype} is not a post"));
    }
    if event.get("bot_id").is_some_and(|b| !b.is_null()) {
        return skipped("a bot's message".into());
    }
    let field = |name: &str| str_field(event, name).filter(|s| !s.is_empty());
    let (Some(channel), Some(user), Some(ts)) = (field("channel"), field("user"), field("ts"))
    else {
        return skipped("a message without a channel, user or ts".into());
    };
    let files = match event.get("files") {
        None | Some(Value::Null) => Vec::new(),
        Some(files) => match Vec::<SlackFile>::deserialize(files) {
            Ok(files) => files,
            Err(e) => return skipped(format!("malformed files: {e}")),
        },
    };
    Event::Message(Box::new(MessageEvent {
        kind,
        channel,
        channel_type: field("channel_type"),
        user,
        text: str_field(event, "text").unwrap_or_default(),
        thread_ts: field("thread_ts").filter(|t| *t != ts),
        ts,
        team: field("team"),
        files,
    }))
}

/// The frame acking `envelope_id`.
pub fn ack_frame(envelope_id: &str) -> String {
    serde_json::json!({ "envelope_id": envelope_id }).to_string()
}

/// Whether `text` (as Slack sends it) mentions user `user_id`: `<@U1>` or `<@U1|name>`.
pub fn mentions(text: &str, user_id: &str) -> bool {
    text.contains(&format!("<@{user_id}>")) || text.contains(&format!("<@{user_id}|"))
}

/// Slack's message text as plain text for the agent, without the mentions of `drop_user`
/// (the bot): entities decoded, `<url|label>` as `label (url)` (or just the label when it
/// is the URL), `<url>` as the URL, `<@U1|ann>` as `@ann` (`@U1` without a name),
/// `<#C1|general>` as `#general`, `<!here>` as `@here`, `<!subteam^S1|@team>` and
/// `<!date^…|fallback>` as their label. Trimmed.
pub fn plain_text(text: &str, drop_user: Option<&str>) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(open) = rest.find('<') {
        out.push_str(&decode_entities(&rest[..open]));
        let after = &rest[open + 1..];
        let Some(close) = after.find('>') else {
            // Not Slack's markup (it escapes a literal `<`): keep it as it is.
            out.push_str(&decode_entities(&rest[open..]));
            rest = "";
            break;
        };
        let inner = &after[..close];
        rest = &after[close + 1..];
        let (target, label) = match inner.split_once('|') {
            Some((target, label)) => (target, Some(decode_entities(label))),
            None => (inner, None),
        };
        if let Some(user) = target.strip_prefix('@') {
            if drop_user.is_some_and(|bot| bot == user) {
                // The bot's own mention, and one space after it.
                rest = rest.strip_prefix(' ').unwrap_or(rest);
                continue;
            }
            out.push('@');
            out.push_str(label.as_deref().unwrap_or(user));
        } else if let Some(channel) = target.strip_prefix('#') {
            out.push('#');
            out.push_str(label.as_deref().unwrap_or(channel));
        } else if let Some(special) = target.strip_prefix('!') {
            match label {
                Some(label) => out.push_str(&label),
                None => {
                    out.push('@');
                    out.push_str(special.split('^').next().unwrap_or(special));
                }
            }
        } else {
            let url = decode_entities(target);
            match label {
                Some(label) if !label.is_empty() && !same_link(&url, &label) => {
                    out.push_str(&format!("{label} ({url})"));
                }
                _ if url.starts_with("mailto:") => out.push_str(&url["mailto:".len()..]),
                Some(label) if !label.is_empty() => out.push_str(&label),
                _ => out.push_str(&url),
            }
        }
    }
    out.push_str(&decode_entities(rest));
    out.trim().to_owned()
}

/// Whether a link's label only repeats its URL (`<http://x.com|x.com>`, `<mailto:a@b|a@b>`).
fn same_link(url: &str, label: &str) -> bool {
    let bare = ["https://", "http://", "mailto:"]
        .iter()
        .find_map(|scheme| url.strip_prefix(scheme))
        .unwrap_or(url);
    label == url || label == bare || label.trim_end_matches('/') == bare.trim_end_matches('/')
}

/// `&lt;` `&gt;` `&amp;` decoded (the only entities Slack uses).
fn decode_entities(text: &str) -> String {
    if !text.contains('&') {
        return text.to_owned();
    }
    text.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&")
}

#[cfg(test)]
#[path = "events_tests.rs"]
mod tests;

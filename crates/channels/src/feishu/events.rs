//! Feishu events as the adapter reads them (schema 2.0 JSON, from a long-connection data
//! frame or an HTTP callback after decryption): the envelope ([`decode_event`]), the one
//! event handled (`im.message.receive_v1`), the message contents (`text`, rich-text `post`,
//! `image`, `file`: [`decode_content`]) and the `@_user_N` mention placeholders
//! ([`resolve_mentions`]).
//!
//! Decoding is lenient where Feishu may leave a field out (every string defaults to empty)
//! and strict only about what makes an event unusable: a body that is not a JSON object is
//! an [`EventError`], an unknown event type or a malformed message is
//! [`EventKind::Skipped`] (acknowledged and ignored: redelivery would not fix it).

use serde::Deserialize;
use serde_json::Value;

/// A decoded callback or long-connection event.
#[derive(Debug, Clone, PartialEq)]
pub struct Event {
    /// `header.event_id` (empty for a URL verification).
    pub event_id: String,
    /// The verification token the event carries (`header.token`, or `token` of a URL
    /// verification and of schema 1.0 events).
    pub token: Option<String>,
    pub kind: EventKind,
}

/// What an event is.
#[derive(Debug, Clone, PartialEq)]
pub enum EventKind {
    /// The console checking the request URL: answer `{"challenge": …}`.
    UrlVerification { challenge: String },
    /// `im.message.receive_v1`.
    MessageReceived(Box<MessageEvent>),
    /// Another event type, or a message event whose body does not decode.
    Skipped { why: String },
}

/// A body that is not an event at all.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("not a Feishu event: {0}")]
pub struct EventError(pub String);

/// `event` of `im.message.receive_v1`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct MessageEvent {
    pub sender: Sender,
    pub message: ReceivedMessage,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(default)]
pub struct Sender {
    pub sender_id: UserIds,
    /// `user` for people; `app` / `bot` otherwise.
    pub sender_type: String,
    pub tenant_key: String,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(default)]
pub struct UserIds {
    pub open_id: String,
    pub user_id: String,
    pub union_id: String,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(default)]
pub struct ReceivedMessage {
    pub message_id: String,
    pub root_id: String,
    pub parent_id: String,
    pub chat_id: String,
    pub thread_id: String,
    /// `p2p` or `group`.
    pub chat_type: String,
    pub message_type: String,
    /// The content, itself a JSON string.
    pub content: String,
    #[serde(deserialize_with = "crate::support::null_as_default")]
    pub mentions: Vec<Mention>,
}

/// One `@` in a message: its placeholder in the text (`@_user_1`) and whom it names.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(default)]
pub struct Mention {
    pub key: String,
    pub id: UserIds,
    pub name: String,
}

/// The event type the adapter handles.
pub const MESSAGE_RECEIVE: &str = "im.message.receive_v1";

/// Decodes an event's JSON (already decrypted).
pub fn decode_event(bytes: &[u8]) -> Result<Event, EventError> {
    let value: Value =
        serde_json::from_slice(bytes).map_err(|e| EventError(format!("invalid JSON ({e})")))?;
    let Some(object) = value.as_object() else {
        return Err(EventError("not an object".into()));
    };
    let text = |v: Option<&Value>| v.and_then(Value::as_str).map(str::to_owned);
    if object.get("type").and_then(Value::as_str) == Some("url_verification") {
        let challenge = text(object.get("challenge"))
            .ok_or_else(|| EventError("a url_verification without a challenge".into()))?;
        return Ok(Event {
            event_id: String::new(),
            token: text(object.get("token")),
            kind: EventKind::UrlVerification { challenge },
        });
    }
    if object.contains_key("encrypt") {
        return Err(EventError(
            "an encrypted event (set the encrypt key to read it)".into(),
        ));
    }
    let header = object.get("header");
    let Some(header) = header.and_then(Value::as_object) else {
        // Schema 1.0 (`{"uuid", "token", "event": {"type"}}`): not subscribed to by the
        // adapter; taken only to be acknowledged.
        let kind = object
            .get("event")
            .and_then(|e| e.get("type"))
            .and_then(Value::as_str)
            .unwrap_or("unknown");
        return Ok(Event {
            event_id: text(object.get("uuid")).unwrap_or_default(),
            token: text(object.get("token")),
            kind: EventKind::Skipped {
                why: format!("a schema 1.0 {kind} event"),
            },
        });
    };
    let event_id = text(header.get("event_id")).unwrap_or_default();
    let token = text(header.get("token"));
    let event_type = header
        .get("event_type")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let kind = if event_type == MESSAGE_RECEIVE {
        match object.get("event").map(MessageEvent::deserialize) {
            Some(Ok(event)) if !event.message.message_id.is_empty() => {
                EventKind::MessageReceived(Box::new(event))
            }
            Some(Ok(_)) => EventKind::Skipped {
                why: "a message event without a message_id".into(),
            },
            Some(Err(e)) => EventKind::Skipped {
                why: format!("malformed {MESSAGE_RECEIVE}: {e}"),
            },
            None => EventKind::Skipped {
                why: format!("{MESSAGE_RECEIVE} without an event"),
            },
        }
    } else {
        EventKind::Skipped {
            why: format!("{event_type:?} events are not handled"),
        }
    };
    Ok(Event {
        event_id,
        token,
        kind,
    })
}

/// A file a message carries, to download with the message resource API.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resource {
    /// `img_…` or `file_…`.
    pub key: String,
    /// `image` or `file` (the `type` query parameter of the download).
    pub kind: ResourceKind,
    pub file_name: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ResourceKind {
    Image,
    File,
}

impl ResourceKind {
    pub fn as_str(self) -> &'static str {
        match self {
            ResourceKind::Image => "image",
            ResourceKind::File => "file",
        }
    }
}

/// A message's text (mention placeholders still in it) and files.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Content {
    pub text: String,
    pub resources: Vec<Resource>,
}

/// Why a message's content is not taken.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ContentError {
    #[error("{0} messages are not handled")]
    Unsupported(String),
    #[error("malformed {kind} content: {why}")]
    Malformed { kind: String, why: String },
}

/// Decodes `content` (a JSON string) of a message of type `message_type`.
pub fn decode_content(message_type: &str, content: &str) -> Result<Content, ContentError> {
    let malformed = |why: String| ContentError::Malformed {
        kind: message_type.to_owned(),
        why,
    };
    if !matches!(message_type, "text" | "post" | "image" | "file") {
        return Err(ContentError::Unsupported(message_type.to_owned()));
    }
    let value: Value = serde_json::from_str(content).map_err(|e| malformed(e.to_string()))?;
    let field = |name: &str| value.get(name).and_then(Value::as_str).map(str::to_owned);
    match message_type {
        "text" => Ok(Content {
            text: field("text").ok_or_else(|| malformed("no text".into()))?,
            resources: Vec::new(),
        }),
        "image" => Ok(Content {
            text: String::new(),
            resources: vec![Resource {
                key: field("image_key").ok_or_else(|| malformed("no image_key".into()))?,
                kind: ResourceKind::Image,
                file_name: None,
            }],
        }),
        "file" => Ok(Content {
            text: String::new(),
            resources: vec![Resource {
                key: field("file_key").ok_or_else(|| malformed("no file_key".into()))?,
                kind: ResourceKind::File,
                file_name: field("file_name").filter(|n| !n.is_empty()),
            }],
        }),
        _ => decode_post(&value).ok_or_else(|| malformed("no content paragraphs".into())),
    }
}

/// A rich-text post: `{"title", "content": [[element…]…]}`, possibly under a locale key
/// (`{"zh_cn": {…}}`; the first of zh_cn, en_us, ja_jp, else any). Paragraphs become
/// lines; `at` elements keep their placeholder for [`resolve_mentions`].
fn decode_post(value: &Value) -> Option<Content> {
    let post = if value.get("content").is_some() {
        value
    } else {
        let object = value.as_object()?;
        ["zh_cn", "en_us", "ja_jp"]
            .iter()
            .find_map(|l| object.get(*l))
            .or_else(|| object.values().find(|v| v.get("content").is_some()))?
    };
    let paragraphs = post.get("content")?.as_array()?;
    let mut lines = Vec::new();
    if let Some(title) = post.get("title").and_then(Value::as_str)
        && !title.trim().is_empty()
    {
        lines.push(title.to_owned());
    }
    let mut resources = Vec::new();
    for paragraph in paragraphs {
        let mut line = String::new();
        for element in paragraph.as_array().into_iter().flatten() {
            post_element(element, &mut line, &mut resources);
        }
        lines.push(line);
    }
    Some(Content {
        text: lines.join("\n").trim().to_owned(),
        resources,
    })
}

fn post_element(element: &Value, line: &mut String, resources: &mut Vec<Resource>) {
    let get = |name: &str| element.get(name).and_then(Value::as_str).unwrap_or("");
    match get("tag") {
        "text" => line.push_str(get("text")),
        "a" => {
            let (text, href) = (get("text"), get("href"));
            if text.is_empty() || text == href {
                line.push_str(href);
            } else if href.is_empty() {
                line.push_str(text);
            } else {
                line.push_str(&format!("{text} ({href})"));
            }
        }
        "at" => {
            let id = get("user_id");
            if id.starts_with("@_") {
                line.push_str(id);
            } else if !get("user_name").is_empty() {
                line.push('@');
                line.push_str(get("user_name"));
            }
        }
        "img" if !get("image_key").is_empty() => resources.push(Resource {
            key: get("image_key").to_owned(),
            kind: ResourceKind::Image,
            file_name: None,
        }),
        "media" if !get("file_key").is_empty() => resources.push(Resource {
            key: get("file_key").to_owned(),
            kind: ResourceKind::File,
            file_name: None,
        }),
        "code_block" => {
            line.push_str(&format!("```{}\n{}\n```", get("language"), get("text")));
        }
        "emotion" => line.push_str(&format!(":{}:", get("emoji_type"))),
        "hr" => line.push_str("———"),
        _ => {}
    }
}

/// `text` with its mention placeholders resolved: the bot's removed (with one space after
/// it), anyone else's as `@name`; and whether the bot was mentioned. Longer keys go first,
/// so `@_user_1` never eats the start of `@_user_10`.
pub fn resolve_mentions(text: &str, mentions: &[Mention], bot_open_id: &str) -> (String, bool) {
    let mut sorted: Vec<&Mention> = mentions.iter().filter(|m| !m.key.is_empty()).collect();
    sorted.sort_by_key(|m| std::cmp::Reverse(m.key.len()));
    let mut out = text.to_owned();
    let mut mentioned = false;
    for mention in sorted {
        if !bot_open_id.is_empty() && mention.id.open_id == bot_open_id {
            if out.contains(&mention.key) {
                mentioned = true;
            }
            out = out
                .replace(&format!("{} ", mention.key), "")
                .replace(&mention.key, "");
        } else {
            let name = if mention.name.is_empty() {
                "someone"
            } else {
                &mention.name
            };
            out = out.replace(&mention.key, &format!("@{name}"));
        }
    }
    (out.trim().to_owned(), mentioned)
}

#[cfg(test)]
mod tests {
    use super::*;

    const RECEIVE: &str = r#"{"schema":"2.0","header":{"event_id":"ev1","event_type":"im.message.receive_v1","create_time":"1700000000000","token":"vtok","app_id":"cli_a","tenant_key":"tk"},
   "event":{"sender":{"sender_id":{"union_id":"on_1","user_id":"u1","open_id":"ou_1"},"sender_type":"user","tenant_key":"tk"},
    "message":{"message_id":"om_1","root_id":"","parent_id":"","create_time":"1700000000000","chat_id":"oc_1","thread_id":"","chat_type":"p2p","message_type":"text",
     "content":"{\"text\":\"@_user_1 hello\"}",
     "mentions":[{"key":"@_user_1","id":{"union_id":"on_b","user_id":"","open_id":"ou_bot"},"name":"Pincer","tenant_key":"tk"}]}}}"#;

    #[test]
    fn a_message_event() {
        let event = decode_event(RECEIVE.as_bytes()).unwrap();
        assert_eq!(event.event_id, "ev1");
        assert_eq!(event.token.as_deref(), Some("vtok"));
        let EventKind::MessageReceived(message) = event.kind else {
            panic!("{:?}", event.kind);
        };
        assert_eq!(message.sender.sender_id.open_id, "ou_1");
        assert_eq!(message.sender.sender_type, "user");
        assert_eq!(message.message.message_id, "om_1");
        assert_eq!(message.message.chat_type, "p2p");
        let content = decode_content(&message.message.message_type, &message.message.content);
        let content = content.unwrap();
        assert_eq!(content.text, "@_user_1 hello");
        assert_eq!(
            resolve_mentions(&content.text, &message.message.mentions, "ou_bot"),
            ("hello".to_owned(), true)
        );
        assert_eq!(
            resolve_mentions(&content.text, &message.message.mentions, "ou_other"),
            ("@Pincer hello".to_owned(), false)
        );
    }

    #[test]
    fn url_verification_and_others() {
        let event =
            decode_event(br#"{"challenge":"c1","token":"vt","type":"url_verification"}"#).unwrap();
        assert_eq!(
            event.kind,
            EventKind::UrlVerification {
                challenge: "c1".into()
            }
        );
        assert_eq!(event.token.as_deref(), Some("vt"));
        let other = decode_event(
            br#"{"schema":"2.0","header":{"event_id":"e","event_type":"im.chat.member.bot.added_v1","token":"t"},"event":{}}"#,
        )
        .unwrap();
        assert!(matches!(other.kind, EventKind::Skipped { .. }));
        let broken = decode_event(
            br#"{"schema":"2.0","header":{"event_type":"im.message.receive_v1"},"event":{"sender":7,"message":{}}}"#,
        )
        .unwrap();
        assert!(
            matches!(broken.kind, EventKind::Skipped { .. }),
            "{broken:?}"
        );
        let old = decode_event(br#"{"uuid":"u","token":"t","event":{"type":"message"}}"#).unwrap();
        assert_eq!(old.token.as_deref(), Some("t"));
        assert!(matches!(old.kind, EventKind::Skipped { .. }));
    }

    #[test]
    fn non_events_are_errors() {
        assert!(decode_event(b"").is_err());
        assert!(decode_event(b"[1]").is_err());
        assert!(decode_event(b"\xff").is_err());
        assert!(decode_event(br#"{"type":"url_verification"}"#).is_err());
        assert_eq!(
            decode_event(br#"{"encrypt":"abc"}"#)
                .unwrap_err()
                .to_string(),
            "not a Feishu event: an encrypted event (set the encrypt key to read it)"
        );
    }

    #[test]
    fn contents() {
        assert_eq!(
            decode_content("image", r#"{"image_key":"img_1"}"#).unwrap(),
            Content {
                text: String::new(),
                resources: vec![Resource {
                    key: "img_1".into(),
                    kind: ResourceKind::Image,
                    file_name: None
                }]
            }
        );
        assert_eq!(
            decode_content("file", r#"{"file_key":"file_1","file_name":"a.pdf"}"#)
                .unwrap()
                .resources[0]
                .file_name
                .as_deref(),
            Some("a.pdf")
        );
        assert_eq!(
            decode_content("sticker", "{}"),
            Err(ContentError::Unsupported("sticker".into()))
        );
        assert!(matches!(
            decode_content("text", "not json"),
            Err(ContentError::Malformed { .. })
        ));
        assert!(matches!(
            decode_content("image", "{}"),
            Err(ContentError::Malformed { .. })
        ));
        assert!(decode_content("post", r#"{"zh_cn":7}"#).is_err());
    }

    #[test]
    fn posts() {
        let post = r#"{"zh_cn":{"title":"Plan","content":[
            [{"tag":"at","user_id":"@_user_1","user_name":"Pincer"},{"tag":"text","text":" see "},{"tag":"a","text":"docs","href":"https://x.y"}],
            [{"tag":"img","image_key":"img_2"},{"tag":"text","text":"done"},{"tag":"unknown"}]]}}"#;
        let content = decode_content("post", post).unwrap();
        assert_eq!(content.text, "Plan\n@_user_1 see docs (https://x.y)\ndone");
        assert_eq!(content.resources.len(), 1);
        assert_eq!(content.resources[0].key, "img_2");
        let plain = decode_content(
            "post",
            r#"{"title":"","content":[[{"tag":"text","text":"hi"}]]}"#,
        )
        .unwrap();
        assert_eq!(plain.text, "hi");
    }

    #[test]
    fn mention_keys_do_not_overlap() {
        let mention = |key: &str, open_id: &str, name: &str| Mention {
            key: key.into(),
            id: UserIds {
                open_id: open_id.into(),
                ..UserIds::default()
            },
            name: name.into(),
        };
        let mentions = [
            mention("@_user_1", "ou_a", "Ann"),
            mention("@_user_10", "ou_bot", "Bot"),
        ];
        assert_eq!(
            resolve_mentions("@_user_10 ask @_user_1", &mentions, "ou_bot"),
            ("ask @Ann".to_owned(), true)
        );
        assert_eq!(
            resolve_mentions("no mention", &mentions, "ou_bot"),
            ("no mention".to_owned(), false)
        );
        assert_eq!(
            resolve_mentions("@_user_1 hi", &mentions, ""),
            ("@Ann hi".to_owned(), false)
        );
    }
}

//! What tests inject: a user's post, as the `message` event Slack sends (and, when it
//! mentions the bot in a channel, the `app_mention` Slack sends for the same post), each in
//! its own `events_api` envelope; its files, served back at `/files/<id>`.

use bytes::Bytes;
use serde_json::{Value, json};

use super::state::{Inner, Shared};

/// A post by a user, injected with
/// [`FakeSlack::inject_message`](super::FakeSlack::inject_message).
#[derive(Debug, Clone, PartialEq)]
pub struct InjectSlackMessage {
    pub user: String,
    pub channel: String,
    /// `im`, `mpim`, `channel` or `group`.
    pub channel_type: String,
    pub text: String,
    /// Puts `<@BOT> ` in front of the text (when not already there); in a channel also
    /// sends `app_mention`.
    pub mention_bot: bool,
    pub thread_ts: Option<String>,
    /// `None`: the fake's next ts.
    pub ts: Option<String>,
    pub files: Vec<InjectSlackFile>,
    /// `None`: the fake's team.
    pub team: Option<String>,
    /// A subtype other than `file_share` (which files set), e.g. `message_changed`.
    pub subtype: Option<String>,
    /// Makes it a bot's post.
    pub bot_id: Option<String>,
}

/// A file shared with an injected post.
#[derive(Debug, Clone, PartialEq)]
pub struct InjectSlackFile {
    pub name: String,
    pub mime: String,
    pub bytes: Bytes,
    /// The `size` the event declares (default: the real size).
    pub declared_size: Option<u64>,
}

impl InjectSlackMessage {
    /// A DM from `user` in DM channel `channel` (`D…`).
    pub fn dm(
        user: impl Into<String>,
        channel: impl Into<String>,
        text: impl Into<String>,
    ) -> Self {
        Self {
            user: user.into(),
            channel: channel.into(),
            channel_type: "im".into(),
            text: text.into(),
            mention_bot: false,
            thread_ts: None,
            ts: None,
            files: Vec::new(),
            team: None,
            subtype: None,
            bot_id: None,
        }
    }

    /// A post by `user` in channel `channel` (`C…`).
    pub fn channel(
        user: impl Into<String>,
        channel: impl Into<String>,
        text: impl Into<String>,
    ) -> Self {
        Self::dm(user, channel, text).channel_type("channel")
    }

    /// `channel_type` (`mpim` for a group DM, `group` for a private channel).
    pub fn channel_type(mut self, channel_type: impl Into<String>) -> Self {
        self.channel_type = channel_type.into();
        self
    }

    pub fn mentioning_bot(mut self) -> Self {
        self.mention_bot = true;
        self
    }

    pub fn file(
        mut self,
        name: impl Into<String>,
        bytes: impl Into<Bytes>,
        mime: impl Into<String>,
    ) -> Self {
        self.files.push(InjectSlackFile {
            name: name.into(),
            mime: mime.into(),
            bytes: bytes.into(),
            declared_size: None,
        });
        self
    }

    /// A file whose event says it has `size` bytes (to test refusals by declared size).
    pub fn file_declaring(
        mut self,
        name: impl Into<String>,
        bytes: impl Into<Bytes>,
        size: u64,
    ) -> Self {
        self.files.push(InjectSlackFile {
            name: name.into(),
            mime: "application/octet-stream".into(),
            bytes: bytes.into(),
            declared_size: Some(size),
        });
        self
    }
}

crate::fake_support::some_setters!(InjectSlackMessage {
    thread_ts => thread_ts,
    ts => ts,
    team => team,
    subtype => subtype,
    bot_id => bot_id,
});

/// The events of `message` (`message`, then `app_mention` for a mention outside a DM);
/// stores its files and, for a DM, the user's DM channel.
pub(crate) fn events(
    shared: &Shared,
    inner: &mut Inner,
    message: InjectSlackMessage,
) -> Vec<Value> {
    let bot = &shared.config.bot_user_id;
    let ts = message.ts.clone().unwrap_or_else(|| inner.take_ts());
    let team = message
        .team
        .clone()
        .unwrap_or_else(|| shared.config.team_id.clone());
    let mut text = message.text.clone();
    if message.mention_bot && !text.contains(&format!("<@{bot}")) {
        text = format!("<@{bot}> {text}");
    }
    if message.channel_type == "im" {
        inner
            .dm_channels
            .insert(message.user.clone(), message.channel.clone());
    }
    let files: Vec<Value> = message
        .files
        .iter()
        .map(|file| {
            let id = inner.take_id("F");
            inner
                .files
                .insert(id.clone(), (file.mime.clone(), file.bytes.clone()));
            let url = format!("{}/files/{id}", shared.base_url);
            json!({
                "id": id, "created": 1_700_000_000, "timestamp": 1_700_000_000,
                "name": file.name, "title": file.name, "mimetype": file.mime,
                "filetype": file.name.rsplit_once('.').map_or("binary", |(_, ext)| ext),
                "user": message.user, "mode": "hosted", "is_external": false,
                "size": file.declared_size.unwrap_or(file.bytes.len() as u64),
                "url_private": url, "url_private_download": format!("{url}?download=1"),
            })
        })
        .collect();
    let client_msg_id = inner.take_id("msg-").to_lowercase();
    let mut event = json!({
        "client_msg_id": client_msg_id, "type": "message", "text": text, "user": message.user,
        "ts": ts, "team": team, "blocks": [], "channel": message.channel, "event_ts": ts,
        "channel_type": message.channel_type,
    });
    if let Some(thread_ts) = &message.thread_ts {
        event["thread_ts"] = json!(thread_ts);
        event["parent_user_id"] = json!(message.user);
    }
    if !files.is_empty() {
        event["files"] = json!(files);
        event["upload"] = json!(false);
        event["display_as_bot"] = json!(false);
        event["subtype"] = json!("file_share");
    }
    if let Some(subtype) = &message.subtype {
        event["subtype"] = json!(subtype);
    }
    if let Some(bot_id) = &message.bot_id {
        event["bot_id"] = json!(bot_id);
    }
    let mut out = vec![event.clone()];
    if message.mention_bot && message.channel_type != "im" {
        let mut mention = event;
        if let Some(object) = mention.as_object_mut() {
            object.insert("type".into(), json!("app_mention"));
            object.remove("channel_type");
        }
        out.push(mention);
    }
    out
}

/// An `events_api` envelope around `event` (without its `retry_*` fields, set per
/// delivery).
pub(crate) fn envelope(shared: &Shared, inner: &mut Inner, event: Value) -> (String, Value) {
    let envelope_id = format!("{}-fake-envelope", inner.take_id("").to_lowercase());
    let event_id = inner.take_id("Ev");
    let frame = json!({
        "envelope_id": envelope_id,
        "type": "events_api",
        "accepts_response_payload": false,
        "payload": {
            "token": "fake-verification-token",
            "team_id": shared.config.team_id,
            "context_team_id": shared.config.team_id,
            "api_app_id": shared.config.app_id,
            "event": event,
            "type": "event_callback",
            "event_id": event_id,
            "event_time": 1_700_000_000,
            "authorizations": [{
                "enterprise_id": null, "team_id": shared.config.team_id,
                "user_id": shared.config.bot_user_id, "is_bot": true,
                "is_enterprise_install": false,
            }],
            "is_ext_shared_channel": false,
        },
    });
    (envelope_id, frame)
}
